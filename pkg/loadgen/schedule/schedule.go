// Package schedule is the load generator's open-loop timetable: when each
// request of a connection is meant to leave in a phase at a rate, or a
// replayed command at its captured pace; how long a worker may sleep
// before the next one (Phase.Sleep); and whether the requests left on
// time (BehindSchedule). Latency in an open loop is measured from the
// intended send time, so a client that falls behind shows it here.
package schedule

import (
	"errors"
	"fmt"
	"time"

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

// BehindSchedule returns the warning wrapping ErrBehindSchedule for an
// open loop's send lag summary (µs), or nil.
func BehindSchedule(lag measure.Latency) error {
	if lag.P99 <= float64(MaxSendLag.Microseconds()) {
		return nil
	}
	return fmt.Errorf("%w: requests left up to %.0f us late (send lag p50 %.0f us, p99 %.0f us, above %v); "+
		"the latencies include it: use more connections or a larger pipeline, or a lower rate",
		ErrBehindSchedule, lag.Max, lag.P50, lag.P99, MaxSendLag)
}

// The open loop's polling windows (see Phase.Sleep): a timed sleep ends
// late on a virtual machine even with 1 ns timer slack
// (BenchmarkOpenLoop), so a worker polls for the last SpinAhead before a
// send, and for SpinAwait (a loopback round trip with room to spare)
// while awaiting replies. Tests and benchmarks change them.
var (
	SpinAhead = 50 * time.Microsecond
	SpinAwait = 200 * time.Microsecond
)

// Phase is one timed part of a run: the warmup or the measured run.
type Phase struct {
	// Start is its start, in ns on the run's clock.
	Start int64
	// Deadline, when not 0, is the time at or after which no request is
	// scheduled.
	Deadline int64
	// Interval is the open-loop time between two requests of one
	// connection, in ns; 0 for a closed loop.
	Interval float64
	// Pace, when positive, sends a replay at its captured pace: run time
	// per ns of the capture's (1 / the replay's speed).
	Pace float64
}

// NewPhase returns the phase that starts at start: bounded by d when
// requests is 0, at rate requests per second in total over conns
// connections (0: a closed loop), or at a replay's speed (0: as fast as
// possible).
func NewPhase(start, requests int64, d time.Duration, conns int64, rate, replaySpeed float64) *Phase {
	ph := &Phase{Start: start}
	if requests == 0 {
		ph.Deadline = start + int64(d)
	}
	if rate > 0 {
		ph.Interval = float64(conns) * 1e9 / rate
	}
	if replaySpeed > 0 {
		ph.Pace = 1 / replaySpeed
	}
	return ph
}

// Open reports whether the phase sends on a schedule (a rate or a
// replay's pace) rather than a batch per reply.
func (ph *Phase) Open() bool { return ph.Interval > 0 || ph.Pace > 0 }

// Offset is the schedule's offset of connection g (its global index) at
// rate: g/rate, so that the connections' requests interleave.
func Offset(g int64, rate float64) float64 { return float64(g) * 1e9 / max(rate, 1) }

// Due is the intended send time of request seq of a connection whose
// schedule is offset.
func (ph *Phase) Due(offset float64, seq uint64) int64 {
	return ph.Start + int64(offset+float64(seq)*ph.Interval)
}

// Paced is the intended send time of a replayed command captured at ns
// after the capture's first.
func (ph *Phase) Paced(at int64) int64 { return ph.Start + int64(float64(at)*ph.Pace) }

// Sleep returns how long a worker may block before next, the earliest
// intended send time of its connections: until SpinAhead before it, at
// most maxWait. A worker does not sleep at all while a connection awaits
// replies from a server it heard from less than SpinAwait ago (Polls). It
// polls instead of sleeping there because waking from a sleep takes tens
// of microseconds on a virtual machine, and that delay would count as
// send lag or as the server's latency.
func Sleep(now, next int64, maxWait time.Duration) int64 {
	return max(min(next-now, int64(maxWait))-int64(SpinAhead), 0)
}

// Polls reports whether a worker whose connection awaits replies, and
// heard from the server at heard, polls rather than sleeps at now.
func Polls(now, heard int64) bool { return now-heard < int64(SpinAwait) }
