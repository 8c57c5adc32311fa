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

// The open loop's timing. A worker sends in rounds: each round sends
// every request of its connections whose intended time has come, each
// connection's together in one write, and the next round comes when the
// earliest next request is due but at least Coalesce after this one, so
// that a worker wakes at most once per Coalesce to send however high the
// rate (a wake-up per request cost more CPU than the server's work at
// pipeline 1 on two cores). A request waits at most Coalesce for its
// round; its latency runs from its intended time, so the wait is counted.
//
// Between rounds a worker sleeps, and a timed sleep ends tens of
// microseconds late on a virtual machine even at 1 ns timer slack
// (BenchmarkOpenLoop): a worker therefore polls for the last SpinAhead
// before a round, and for SpinAwait (a loopback round trip with room to
// spare) while awaiting replies, as long as its polling stays within
// PollBudget of its time (Poller); past it, it only sleeps. Tests and
// benchmarks change them.
var (
	Coalesce   = 50 * time.Microsecond
	SpinAhead  = 50 * time.Microsecond
	SpinAwait  = 200 * time.Microsecond
	PollBudget = 0.1
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

// NextRound is the time of a worker's round after one at last, when its
// connections' earliest next request is due at next: next, but not
// before Coalesce after last.
func NextRound(last, next int64) int64 { return max(next, last+int64(Coalesce)) }

// Sleep returns how long a worker may block before its next round at
// next: until then, or SpinAhead before it when it polls, at most
// maxWait.
func Sleep(now, next int64, maxWait time.Duration, poll bool) int64 {
	d := min(next-now, int64(maxWait))
	if poll {
		d -= int64(SpinAhead)
	}
	return max(d, 0)
}

// Polls reports whether a worker whose connection awaits replies, and
// heard from the server at heard, polls rather than sleeps at now.
func Polls(now, heard int64) bool { return now-heard < int64(SpinAwait) }

// PollWindow is the span over which a Poller keeps its worker's polling
// within PollBudget.
const PollWindow = 10 * time.Millisecond

// A Poller keeps a worker's polling within PollBudget of its time, per
// PollWindow: polling is cheap only on an idle CPU, and on a busy one it
// takes the time of the server measured.
type Poller struct {
	start, spent int64
}

// Allow reports whether the worker may poll at now.
func (p *Poller) Allow(now int64) bool {
	if now-p.start >= int64(PollWindow) {
		p.start, p.spent = now, 0
	}
	return float64(p.spent) < PollBudget*float64(PollWindow)
}

// Polled counts a poll from start to end that found nothing to do.
func (p *Poller) Polled(start, end int64) { p.spent += max(end-start, 0) }
