// Package adaptive is the design of an adaptive run of "kvbench run"
// (--precision): the order of a block's slices (Order), a slice's size
// (SliceSize), the comparisons still open (Open) and the blocks a
// comparison is expected to need (ExpectedBlocks).
//
// An adaptive run measures what it compares close together in time. On a shared machine the noise drifts slowly:
// measurements a second apart agree far better than the same scenario in
// two rounds twenty seconds apart. So the servers of one mode, every
// target and strategy, run side by side, each started once (and
// prefilled for reads), and are measured in short slices, block after
// block. A block measures every scenario still needed twice, in a
// mirrored order (A B C C B A, the first half rotated by one place each
// block), so that a drift that is linear over the block hits every
// scenario alike, and every scenario takes every place in turn; a
// comparison pairs its two scenarios block by block (the difference of
// their mean log QPS in the block) and its interval is the signed-rank
// interval over the blocks (stats.LogRatioInterval). The run stops when
// every comparison's interval is within ±Precision (stats.Precision,
// never on fewer than stats.DefaultMinPairs blocks) or when MaxTime has
// gone, and says which comparisons did not get there.
//
// A write slice writes keys no slice wrote before: keys from the last
// slice's end, so a refusing insert (RSET) never meets its own key.
// When the next block would take a server past the keyspace, every
// server of the mode is started afresh together, so that they stay in
// step: each slice of a block finds its server as full as the slices of
// the other scenarios find theirs, in the mirrored order.
//
// A slice the machine disturbed (machine.DefaultRule: steal, or another
// process's CPU) is written with its reason in the disturbed column and
// left out of the comparisons.
package adaptive

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Slice sizes.
const (
	// sliceBatches is the fewest round trips of a slice per connection:
	// fewer, and the connections' start weighs on its rate.
	sliceBatches = 20
	// SlicesPerBlock is how often a block measures each scenario (the
	// mirrored order).
	SlicesPerBlock = 2
	// SliceWarmup is the part of a slice sent first and not measured, on
	// the same connections: a server measured after another on the same
	// CPU finds its caches taken, and the connections are new.
	SliceWarmup = 0.1
)

// Order is the slices of a block (from 1) of the sides ss: ss rotated
// left by block-1 places, then the same reversed (A B C C B A). Block
// after block each side takes each place of the order in turn (a cyclic
// Latin square), so that none is always first, or always the middle one
// whose two slices follow each other.
func Order[T any](ss []T, block int) []T {
	order := rotated(ss, block-1)
	return slices.Concat(order, reversed(order))
}

// rotated is ss rotated left by n.
func rotated[T any](ss []T, n int) []T {
	if len(ss) == 0 {
		return nil
	}
	n %= len(ss)
	return slices.Concat(ss[n:], ss[:n])
}

// reversed is a reversed copy of ss.
func reversed[T any](ss []T) []T {
	out := slices.Clone(ss)
	slices.Reverse(out)
	return out
}

// ComparisonName is "kvstore/persist_no vs kvstore/nopersist".
func ComparisonName(c report.Comparison) string {
	return c.Target + "/" + c.Strategy + " vs " + c.AgainstTarget + "/" + c.AgainstStrategy
}

// BlockLine is the log line of a block's end: the comparisons still open
// and the widest interval among them, against precision, with left the
// time left as the log writes it.
func BlockLine(mode string, block int, all, open []report.Comparison, precision float64, left string) string {
	widest := 0.0
	for _, c := range open {
		widest = math.Max(widest, c.Ratio.HalfWidth())
	}
	switch {
	case len(all) == 0:
		return fmt.Sprintf("%s block %d: nothing to compare (one strategy, one target)", mode, block)
	case len(open) == 0:
		return fmt.Sprintf("%s block %d: every comparison within ±%s", mode, block, Percent(precision))
	case math.IsInf(widest, 1):
		return fmt.Sprintf("%s block %d: %d of %d comparisons open (too few blocks for an interval); %s left", mode, block, len(open), len(all), left)
	}
	return fmt.Sprintf("%s block %d: %d of %d comparisons open, the widest ±%s; %s left", mode, block, len(open), len(all), Percent(widest), left)
}

// Open are the QPS comparisons of a report (all) and those whose
// interval is not yet precise enough by rule (open).
func Open(cs []report.Comparison, rule stats.Precision) (all, open []report.Comparison) {
	for _, c := range cs {
		if c.Metric != report.CompareQPS {
			continue
		}
		all = append(all, c)
		if !rule.Reached(c.Ratio) {
			open = append(open, c)
		}
	}
	return all, open
}

// Percent formats a fraction as "3%" or "4.2%".
func Percent(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "∞"
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f*100), "0"), ".") + "%"
}

// SliceSize is a slice at qps requests per second and its warmup: the
// slice Slice long, at least sliceBatches round trips per connection;
// before it, sent on the same connections and not measured, SliceWarmup
// of that (a round trip per connection at least). For writes, warmup and
// slice together are at most the keyspace's share of one slice of a
// block.
func SliceSize(qps float64, slice time.Duration, pipeline, connections int, keyspace int64, write bool) (requests, warmup int64) {
	n := int64(qps * slice.Seconds())
	n = max(n, int64(sliceBatches*pipeline*connections))
	w := max(int64(float64(n)*SliceWarmup), int64(pipeline*connections))
	if room := keyspace / SlicesPerBlock; write && n+w > room {
		w = min(w, room/11)
		n = room - w
	}
	return max(n, 1), w
}

// AssumedSpread is the standard deviation of a block's log-ratio that an
// estimate assumes when no earlier adaptive run measured it: about what
// one CPU shared by server and load generator gives on a small shared
// machine (docs/run.md).
const AssumedSpread = 0.04

// ExpectedBlocks is how many blocks a comparison whose blocks' log-ratios
// spread by sd needs to reach ±precision: the normal approximation of the
// interval's half-width, 1.96·sd/√n, never fewer than the rule's least.
func ExpectedBlocks(sd, precision float64) int {
	n := int(math.Ceil(math.Pow(1.96*sd/precision, 2)))
	return max(n, stats.DefaultMinPairs)
}
