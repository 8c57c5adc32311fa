package measure

import "time"

// Mode is the request mix of a measurement, as the detail CSV's mode
// column records it (package results adds the column's other values, a
// workload's and the recovery mode's). The load generator runs it; the
// report and the runner read it back: it lives here, below both.
type Mode string

// The modes.
const (
	// ModeSet sends only the write command.
	ModeSet Mode = "set"
	// ModeGet sends only the read command.
	ModeGet Mode = "get"
	// ModeMixed sends writes with a given probability and reads otherwise.
	ModeMixed Mode = "mixed"
)

// MaxSendLag is the send lag p99 above which an open-loop measurement's
// requests left late: its latencies then include the client's own
// queueing, not only the server's. The load generator warns past it; the
// report counts such rounds as late.
const MaxSendLag = time.Millisecond
