package history

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// TestRecordCurveRows: on both stores, a load curve's row keeps its rate
// and the closed-loop row its capacity and objective; the empty ones stay
// empty.
func TestRecordCurveRows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		closed := testAttempt("20261205_120000", 1, 200000)[0]
		capacity := 150000.5
		closed.CapacityQPS, closed.SLO = &capacity, "p99<1ms"
		phase := closed
		rate := 100000.25
		phase.CapacityQPS, phase.SLO, phase.Rate, phase.RateSpec = nil, "", &rate, "50%"
		want := []results.Row{closed, phase}
		got, _ := recordAndRead(t, loc, "20261205_120000", want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rows read back differ:\n got %+v\nwant %+v", got, want)
		}
	})
}

// recordAndRead records one run of the given attempts in the store at
// loc and returns its detail rows as read back (without their positions)
// and each row's environment.
func recordAndRead(t *testing.T, loc, runID string, attempts ...[]results.Row) ([]results.Row, []int64) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := s.NewRecorder(RunInfo{})
	if err := rec.BeginRun(ctx, runID, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, rows := range attempts {
		if err := rec.Attempt(ctx, rows, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Finish(ctx, false); err != nil {
		t.Fatal(err)
	}
	r, err := s.findRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	got, envs, err := s.detailOf(ctx, r.id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Pos = results.Pos{}
	}
	return got, envs
}
