package adaptive

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/stats"
)

// TestOrder: a block's slices are the sides rotated by one place a block,
// then mirrored, so that each side takes each place in turn.
func TestOrder(t *testing.T) {
	ss := []string{"A", "B", "C"}
	for block, want := range map[int][]string{
		1: {"A", "B", "C", "C", "B", "A"},
		2: {"B", "C", "A", "A", "C", "B"},
		4: {"A", "B", "C", "C", "B", "A"},
	} {
		if got := Order(ss, block); !slices.Equal(got, want) {
			t.Errorf("block %d: %v, want %v", block, got, want)
		}
	}
	if got := Order([]string(nil), 1); len(got) != 0 {
		t.Errorf("no sides: %v", got)
	}
	if !slices.Equal(ss, []string{"A", "B", "C"}) {
		t.Errorf("the sides were changed: %v", ss)
	}
}

// TestSliceSize: a slice is its time at the rate, at least 20 round
// trips a connection, after a tenth of that (a round trip a connection at
// least) unmeasured; a write slice and its warmup at most half the
// keyspace (two slices a block).
func TestSliceSize(t *testing.T) {
	for _, tt := range []struct {
		qps          float64
		write        bool
		want, warmup int64
	}{
		{100_000, false, 50_000, 5_000},         // 0.5 s at 100,000 req/s
		{100, false, 20 * 128 * 2, 2 * 128 * 2}, // the fewest round trips
		{1e6, true, 200_000 - 18_181, 18_181},   // half the keyspace
	} {
		n, w := SliceSize(tt.qps, 500*time.Millisecond, 128, 2, 400_000, tt.write)
		if n != tt.want || w != tt.warmup {
			t.Errorf("%v req/s (write %v): %d requests after %d, want %d after %d", tt.qps, tt.write, n, w, tt.want, tt.warmup)
		}
	}
}

// TestPercentAndBlocks: percentages print without a trailing zero, an
// infinite one as ∞; the blocks expected follow 1.96·sd/√n, never fewer
// than the rule's least.
func TestPercentAndBlocks(t *testing.T) {
	for f, want := range map[float64]string{0.03: "3%", 0.042: "4.2%", math.Inf(1): "∞"} {
		if got := Percent(f); got != want {
			t.Errorf("Percent(%v) = %s, want %s", f, got, want)
		}
	}
	if n := ExpectedBlocks(0.04, 0.01); n != 62 {
		t.Errorf("sd 4%%, ±1%%: %d blocks, want 62", n)
	}
	if n := ExpectedBlocks(0.001, 0.03); n != stats.DefaultMinPairs {
		t.Errorf("a tiny spread: %d blocks, want the rule's least, %d", n, stats.DefaultMinPairs)
	}
}
