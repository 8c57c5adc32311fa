package attempt

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
)

// TestNodeSpreads: node rows pooled by scenario, each shard's share and
// p99 over the attempts, the hot shard and its ratio to an even share.
func TestNodeSpreads(t *testing.T) {
	got := NodeSpreads(fixture.NodeRows())
	if len(got) != 2 {
		t.Fatalf("%d spreads, want 2: %+v", len(got), got)
	}
	for _, tc := range []struct {
		s        NodeSpread
		mode     string
		attempts int
		share    []float64
		p99      []float64
		hot      int
		ratio    float64
	}{
		{got[0], "get", 1, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, []float64{50, 50, 50}, 0, 1},
		{got[1], "set", 2, []float64{0.25, 0.5, 0.25}, []float64{105, 305, 110}, 1, 1.5},
	} {
		s := tc.s
		near := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 })
		}
		if s.Mode != tc.mode || s.Shards != 3 || s.Attempts != tc.attempts || !near(s.Share, tc.share) || !near(s.P99, tc.p99) ||
			s.Hot != tc.hot || s.HotRatio-tc.ratio > 1e-9 || tc.ratio-s.HotRatio > 1e-9 {
			t.Errorf("%+v, want mode %s, %d attempts, share %v, p99 %v, hot %d (%.2f×)", s, tc.mode, tc.attempts, tc.share, tc.p99, tc.hot, tc.ratio)
		}
	}
}
