package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/measure"
)

// TestPhase: a phase at a rate spaces each connection's requests by
// conns/rate, the connections offset by 1/rate each, so that together
// they send at the rate; a replay's pace scales the capture's times; a
// phase without requests ends at its deadline.
func TestPhase(t *testing.T) {
	ph := NewPhase(1000, 0, time.Second, 4, 2000, 0)
	if !ph.Open() || ph.Deadline != 1000+int64(time.Second) || ph.Interval != 2e6 {
		t.Fatalf("phase %+v: want open, deadline 1s on, 2ms between a connection's requests", ph)
	}
	var due []int64
	for seq := range uint64(2) {
		for g := range int64(4) {
			due = append(due, ph.Due(Offset(g, 2000), seq))
		}
	}
	for i := 1; i < len(due); i++ {
		if d := due[i] - due[i-1]; d != 500_000 {
			t.Errorf("send times %v: step %d is %d ns, want 500000 (1/rate)", due, i, d)
		}
	}
	closed := NewPhase(0, 100, time.Second, 4, 0, 0)
	if closed.Open() || closed.Deadline != 0 {
		t.Errorf("closed loop %+v", closed)
	}
	replay := NewPhase(0, 100, 0, 1, 0, 2)
	if !replay.Open() || replay.Paced(int64(time.Second)) != int64(500*time.Millisecond) {
		t.Errorf("replay at speed 2: %+v", replay)
	}
}

// TestSleep: a worker sleeps until its next round, or SpinAhead before
// it when it polls, at most maxWait, and polls while a server it just
// heard from is replying.
func TestSleep(t *testing.T) {
	ms := int64(time.Millisecond)
	if got := Sleep(0, ms, time.Second, true); got != ms-int64(SpinAhead) {
		t.Errorf("next round in 1ms, polling: sleep %d ns", got)
	}
	if got := Sleep(0, ms, time.Second, false); got != ms {
		t.Errorf("next round in 1ms, not polling: sleep %d ns, want 1ms", got)
	}
	if got := Sleep(0, int64(time.Hour), 100*time.Millisecond, true); got != int64(100*time.Millisecond-SpinAhead) {
		t.Errorf("next round in an hour: sleep %d ns, want maxWait less SpinAhead", got)
	}
	if got := Sleep(0, int64(SpinAhead)/2, time.Second, true); got != 0 {
		t.Errorf("next round within SpinAhead: sleep %d ns, want 0", got)
	}
	if got := Sleep(ms, 0, time.Second, false); got != 0 {
		t.Errorf("round past: sleep %d ns, want 0", got)
	}
	if !Polls(int64(SpinAwait)/2, 0) || Polls(2*int64(SpinAwait), 0) {
		t.Error("Polls: want true within SpinAwait of the last reply, false after")
	}
}

// TestNextRound: a round comes when the earliest request is due, but
// never sooner than Coalesce after the last, so that the requests due
// meanwhile leave together.
func TestNextRound(t *testing.T) {
	q := int64(Coalesce)
	for _, tc := range []struct {
		last, next, want int64
	}{
		{0, 10 * q, 10 * q}, // a sparse schedule: at the request's time
		{0, q / 3, q},       // a dense one: Coalesce after the last round
		{5 * q, q, 6 * q},   // a request overdue: still not before then
	} {
		if got := NextRound(tc.last, tc.next); got != tc.want {
			t.Errorf("NextRound(%d, %d) = %d, want %d", tc.last, tc.next, got, tc.want)
		}
	}
}

// TestPoller: a worker may poll until its polling reaches PollBudget of
// the window, and again in the next window.
func TestPoller(t *testing.T) {
	var p Poller
	budget := int64(PollBudget * float64(PollWindow))
	if !p.Allow(0) {
		t.Fatal("a fresh poller refuses")
	}
	p.Polled(0, budget-1)
	if !p.Allow(budget - 1) {
		t.Error("refused under the budget")
	}
	p.Polled(budget-1, budget+10)
	if p.Allow(budget + 10) {
		t.Error("allowed past the budget")
	}
	if !p.Allow(int64(PollWindow)) {
		t.Error("refused in the next window")
	}
	p.Polled(5, 1) // an end before its start counts nothing
	if !p.Allow(int64(PollWindow) + 1) {
		t.Error("a backwards poll counted")
	}
}

// TestBehindSchedule: a send lag p99 above MaxSendLag warns, naming the
// lag; below, no warning.
func TestBehindSchedule(t *testing.T) {
	if err := BehindSchedule(measure.Latency{P99: 999, Max: 5000}); err != nil {
		t.Errorf("p99 999us: %v", err)
	}
	if err := BehindSchedule(measure.Latency{P50: 10, P99: 1500, Max: 5000}); !errors.Is(err, ErrBehindSchedule) {
		t.Errorf("p99 1500us: %v, want ErrBehindSchedule", err)
	}
}
