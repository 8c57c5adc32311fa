package attempt

import (
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
}
