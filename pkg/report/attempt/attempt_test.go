package attempt

import (
	"math"
	"slices"
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// TestEvents: an interval ends where the next begins, the last one a
// median interval later; each server event spans its intervals, by name.
func TestEvents(t *testing.T) {
	rows := []results.SeriesRow{
		{TS: 0, Events: ""}, {TS: 0.1, Events: results.EventPersistJob}, {TS: 0.2, Events: results.EventPersistJob},
		{TS: 0.3, Events: ""},
	}
	if ends := IntervalEnds(rows); !slices.Equal(ends, []float64{0.1, 0.2, 0.3, 0.4}) {
		t.Errorf("ends %v", ends)
	}
	evs := Events(rows)
	if len(evs) != 1 || evs[0] != (Event{Event: results.EventPersistJob, Intervals: 2, FromS: 0.1, ToS: 0.3}) {
		t.Errorf("events %+v", evs)
	}
	if _, ok, err := HeatmapOf(rows); ok || err != nil {
		t.Errorf("a heatmap of rows without histograms: %v %v", ok, err)
	}

	// The last interval, cut short by the phase's end, ends where its
	// requests at its rate take it; an adaptive run's slice is a single
	// such interval.
	qps := 1000.0
	rows[3].Requests, rows[3].QPS = 50, &qps
	if ends := IntervalEnds(rows); ends[3] != 0.35 {
		t.Errorf("ends %v: want the last at 0.35", ends)
	}
	slice := []results.SeriesRow{{TS: 0, Requests: 454546, QPS: new(963077.47), Events: "aof_rewrite"}}
	if evs := Events(slice); len(evs) != 1 || evs[0].FromS != 0 || math.Abs(evs[0].ToS-0.472) > 0.001 {
		t.Errorf("a slice's events %+v: want aof_rewrite from 0 to 0.472", evs)
	}
}
