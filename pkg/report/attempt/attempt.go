// Package attempt is what the files "kvbench run" writes beside the
// detail CSV say of each attempt, as values for the report: when each
// interval of its series ends (IntervalEnds), the server events seen in
// them (Events), its latency over time (HeatmapOf), and, for a cluster,
// how its masters shared the load (NodeSpreads, from the nodes CSV).
package attempt

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// IntervalEnds are the end of each row of an attempt's series, in
// seconds from its phase's start: the next row's start; the last one's
// start plus its length, from its requests and rate (the phase cuts it
// short), or else plus the median length. An adaptive run's slice is one
// row, whose length only its rate tells.
func IntervalEnds(rows []results.SeriesRow) []float64 {
	var steps []float64
	for i := 1; i < len(rows); i++ {
		if d := rows[i].TS - rows[i-1].TS; d > 0 {
			steps = append(steps, d)
		}
	}
	step := 0.0
	if len(steps) > 0 {
		step = stats.Median(steps)
	}
	ends := make([]float64, len(rows))
	for i, r := range rows {
		switch {
		case i+1 < len(rows):
			ends[i] = rows[i+1].TS
		case r.QPS != nil && *r.QPS > 0 && r.Requests > 0:
			ends[i] = r.TS + float64(r.Requests) / *r.QPS
		default:
			ends[i] = r.TS + step
		}
	}
	return ends
}

// Event is a server event seen in an attempt's intervals (the series
// CSV's events column): a rewrite, a snapshot, a delayed fsync, the
// persistence job set off.
type Event struct {
	Event string
	// Intervals counts the intervals it was seen in; FromS is where the
	// first of them began and ToS where the last ended, in seconds from
	// the phase's start.
	Intervals  int
	FromS, ToS float64
}

// Events are the server events of an attempt's series rows, by name.
func Events(rows []results.SeriesRow) []Event {
	ends := IntervalEnds(rows)
	byEvent := make(map[string]*Event)
	var order []string
	for i, s := range rows {
		for _, e := range results.SplitEvents(s.Events) {
			ev := byEvent[e]
			if ev == nil {
				ev = &Event{Event: e, FromS: s.TS}
				byEvent[e] = ev
				order = append(order, e)
			}
			ev.Intervals++
			ev.ToS = ends[i]
		}
	}
	slices.Sort(order)
	var out []Event
	for _, e := range order {
		out = append(out, *byEvent[e])
	}
	return out
}

// Heatmap is an attempt's latency over time: per interval of its series,
// how many requests took each latency, and the spans of its persistence
// job.
type Heatmap struct {
	Target, Strategy, Mode string
	Round                  int
	// Job is the persistence job (bgsave, rewrite).
	Job string
	// Starts and Ends are the intervals, in seconds from the phase's
	// start; BoundsUs the latency buckets' edges in µs (log spaced, one
	// more than the buckets); Counts[i][b] the requests of interval i in
	// bucket b.
	Starts, Ends []float64
	BoundsUs     []float64
	Counts       [][]int64
	// Spans are the job's spans, from the first to the end of the last
	// interval of each run of intervals marked persist_job.
	Spans [][2]float64
}

// bucketsPerDecade is the resolution of a heatmap's latency axis.
const bucketsPerDecade = 8

// HeatmapOf is the heatmap of an attempt's series rows; false when none
// carries a histogram.
func HeatmapOf(rows []results.SeriesRow) (Heatmap, bool, error) {
	var h Heatmap
	hists := make([]*hdrhistogram.Histogram, len(rows))
	lo, hi := math.Inf(1), 0.0
	for i, s := range rows {
		if s.LatencyHist == "" {
			continue
		}
		d, err := hdrhistogram.Decode([]byte(s.LatencyHist))
		if err != nil {
			return h, false, fmt.Errorf("%s: latency_hist: %w", s.Pos, err)
		}
		if d.TotalCount() == 0 {
			continue
		}
		hists[i] = d
		lo, hi = min(lo, float64(d.Min())/1e3), max(hi, float64(d.Max())/1e3)
	}
	if hi == 0 {
		return h, false, nil
	}
	first := math.Floor(math.Log10(max(lo, 1)) * bucketsPerDecade)
	last := math.Ceil(math.Log10(max(hi, 1)*1.0001) * bucketsPerDecade)
	for b := first; b <= max(last, first+1); b++ {
		h.BoundsUs = append(h.BoundsUs, math.Pow(10, b/bucketsPerDecade))
	}
	ends := IntervalEnds(rows)
	var span *[2]float64
	for i, s := range rows {
		h.Starts, h.Ends = append(h.Starts, s.TS), append(h.Ends, ends[i])
		counts := make([]int64, len(h.BoundsUs)-1)
		if d := hists[i]; d != nil {
			for _, bar := range d.Distribution() {
				if bar.Count == 0 {
					continue
				}
				us := float64(bar.From+bar.To) / 2 / 1e3
				b := int(math.Floor(math.Log10(max(us, 1))*bucketsPerDecade - first))
				counts[min(max(b, 0), len(counts)-1)] += bar.Count
			}
		}
		h.Counts = append(h.Counts, counts)
		if slices.Contains(results.SplitEvents(s.Events), results.EventPersistJob) {
			if span == nil {
				h.Spans = append(h.Spans, [2]float64{s.TS, ends[i]})
				span = &h.Spans[len(h.Spans)-1]
			}
			span[1] = ends[i]
		} else {
			span = nil
		}
	}
	return h, true, nil
}

// NodeSpread is how one scenario of a cluster target (target, strategy,
// mode) spread its load and latency over the masters, from the nodes CSV.
// A shard is a master's place in slot order: every attempt runs on a fresh
// cluster, so shard i of each attempt is pooled.
type NodeSpread struct {
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
	// Shards is the number of masters; Attempts the attempts pooled.
	Shards   int `json:"shards"`
	Attempts int `json:"attempts"`
	// Share is each shard's fraction of its attempt's requests, averaged
	// over the attempts; P99 each shard's median p99 latency, µs.
	Share []float64 `json:"share"`
	P99   []float64 `json:"p99_us"`
	// Hot is the shard (0-based) with the largest share, and HotRatio its
	// share over an even one (1/Shards): 1 is a perfectly even spread.
	Hot      int     `json:"hot"`
	HotRatio float64 `json:"hot_ratio"`
}

// NodeSpreads pools node rows by scenario, in target, strategy and mode
// order. Within an attempt the rows are in slot order, as run writes them;
// attempts whose nodes served no request are left out.
func NodeSpreads(rows []results.NodeRow) []NodeSpread {
	type attempt struct {
		results.ScenarioKey
		run          string
		round, tries int
	}
	var order []attempt
	byAttempt := make(map[attempt][]results.NodeRow)
	for _, r := range rows {
		a := attempt{results.ScenarioKey{Target: r.Target, Strategy: r.Strategy, Mode: r.Mode}, r.RunID, r.Round, r.Attempt}
		if _, ok := byAttempt[a]; !ok {
			order = append(order, a)
		}
		byAttempt[a] = append(byAttempt[a], r)
	}
	pooled := make(map[results.ScenarioKey]*struct {
		shares, p99s [][]float64 // by shard, one per attempt
		attempts     int
	})
	for _, a := range order {
		nodes := byAttempt[a]
		var total int64
		for _, n := range nodes {
			total += n.Requests
		}
		if total == 0 {
			continue
		}
		p := pooled[a.ScenarioKey]
		if p == nil {
			p = &struct {
				shares, p99s [][]float64
				attempts     int
			}{}
			pooled[a.ScenarioKey] = p
		}
		p.attempts++
		for i, n := range nodes {
			if i == len(p.shares) {
				p.shares, p.p99s = append(p.shares, nil), append(p.p99s, nil)
			}
			p.shares[i] = append(p.shares[i], float64(n.Requests)/float64(total))
			p.p99s[i] = append(p.p99s[i], n.LatP99Us)
		}
	}
	var out []NodeSpread
	for sc, p := range pooled {
		s := NodeSpread{Target: sc.Target, Strategy: sc.Strategy, Mode: sc.Mode, Shards: len(p.shares), Attempts: p.attempts}
		for i := range p.shares {
			s.Share = append(s.Share, stats.Mean(p.shares[i]))
			s.P99 = append(s.P99, stats.Median(p.p99s[i]))
			if s.Share[i] > s.Share[s.Hot] {
				s.Hot = i
			}
		}
		s.HotRatio = s.Share[s.Hot] * float64(s.Shards)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b NodeSpread) int {
		return strings.Compare(a.Target+"\x00"+a.Strategy+"\x00"+a.Mode, b.Target+"\x00"+b.Strategy+"\x00"+b.Mode)
	})
	return out
}
