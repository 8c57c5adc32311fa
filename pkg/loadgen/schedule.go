package loadgen

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/pkg/measure"
)

// ErrBehindSchedule is wrapped by the warning of an open-loop run whose
// requests left late: its send lag p99 exceeds MaxSendLag. Its latencies
// then include the client's own delay (or, with every pipeline slot busy,
// the server's backlog).
var ErrBehindSchedule = errors.New("behind schedule")

// MaxSendLag is the send lag p99 above which an open-loop run warns that
// the client did not keep its schedule (measure.MaxSendLag).
const MaxSendLag = measure.MaxSendLag

// behindSchedule returns the warning for a send lag summary (in µs), or nil.
func behindSchedule(lag measure.Latency) error {
	if lag.P99 <= float64(MaxSendLag.Microseconds()) {
		return nil
	}
	return fmt.Errorf("%w: requests left up to %.0f us late (send lag p50 %.0f us, p99 %.0f us, above %v); "+
		"the latencies include it: use more connections or a larger pipeline, or a lower rate",
		ErrBehindSchedule, lag.Max, lag.P50, lag.P99, MaxSendLag)
}

// BehindSchedule returns the warning wrapping ErrBehindSchedule for an
// open loop's send lag summary (Result.SendLag), or nil.
func BehindSchedule(lag measure.Latency) error { return behindSchedule(lag) }
