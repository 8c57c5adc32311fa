// Package series cuts a run's measured phase into intervals of the wall
// clock (loadgen.Config.Interval): each worker of the load generator
// counts the replies of the interval it is in (Acc), and when a reply
// arrives past its end, adds what it counted to the run's points (Series)
// and starts the interval the reply is in. Intervals are aligned on the
// wall clock: the run's clock plus the wall time at its epoch, cut at
// multiples of the interval. A worker's interval costs it one comparison
// per read and one more histogram record per run of equal latencies.
package series

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/measure"
)

// Acc is a worker's current interval: what the worker counts, on its
// hot path, into the fields.
type Acc struct {
	Start, End int64 // on the run's clock
	Requests   int64
	Errors     int64
	Hist       *hdrhistogram.Histogram
	Cmd        []Part // per command of a mix
	Node       []Part // per master of a cluster run
}

// Part is one command's or node's part of an interval.
type Part struct {
	Requests, Errors int64
	Hist             *hdrhistogram.Histogram
}

// NewAcc returns a worker's interval of a run of cmds commands and nodes
// masters.
func NewAcc(cmds, nodes int) *Acc {
	a := &Acc{Hist: measure.NewIntervalHistogram()}
	a.Cmd = newParts(cmds)
	a.Node = newParts(nodes)
	return a
}

func newParts(n int) []Part {
	if n < 2 {
		return nil // one command: the whole interval's figures are its
	}
	ps := make([]Part, n)
	for i := range ps {
		ps[i].Hist = measure.NewIntervalHistogram()
	}
	return ps
}

// empty reports whether nothing was counted.
func (a *Acc) empty() bool { return a.Requests == 0 && a.Errors == 0 && a.Hist.TotalCount() == 0 }

// Reset empties the accumulator for the interval [start, end).
func (a *Acc) Reset(start, end int64) {
	a.Start, a.End = start, end
	a.Requests, a.Errors = 0, 0
	a.Hist.Reset()
	for _, ps := range [][]Part{a.Cmd, a.Node} {
		for i := range ps {
			ps[i].Requests, ps[i].Errors = 0, 0
			ps[i].Hist.Reset()
		}
	}
}

// Series is a run's points of the phase under way, merged from its
// workers' intervals.
type Series struct {
	length int64 // ns
	wall0  int64 // the wall time of the run clock's 0, Unix ns
	// Cmds and Nodes name the parts: the mix's commands, the masters.
	Cmds, Nodes []string
	// Observe, when set, is given each worker's finished interval
	// (loadgen.Config.Observe in the measured phase).
	Observe func(measure.Point)
	mu      sync.Mutex
	points  map[int64]*measure.Point // by interval index
}

// New returns the series, of intervals of the given length, of a run
// whose clock started at epoch.
func New(interval time.Duration, epoch time.Time) *Series {
	return &Series{length: int64(interval), wall0: epoch.UnixNano(), points: make(map[int64]*measure.Point)}
}

// Bounds returns the interval that holds time now of the run's clock.
func (s *Series) Bounds(now int64) (start, end int64) {
	k := floorDiv(s.wall0+now, s.length)
	start = k*s.length - s.wall0
	return start, start + s.length
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Add merges a worker's finished interval into the run's points.
func (s *Series) Add(a *Acc) {
	if a.empty() {
		return
	}
	k := floorDiv(s.wall0+a.Start, s.length)
	s.merge(k, a)
	if s.Observe != nil {
		s.Observe(s.point(k, a))
	}
}

// Rotate ends a worker's interval a when now is past it: what it counted
// joins the run's points, and the interval that holds now begins.
func (s *Series) Rotate(a *Acc, now int64) {
	s.Add(a)
	start, end := s.Bounds(now)
	a.Reset(start, end)
}

// merge adds a to the point of interval k.
func (s *Series) merge(k int64, a *Acc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.points[k]
	if p == nil {
		p = &measure.Point{Start: time.Unix(0, k*s.length), Histogram: measure.NewIntervalHistogram()}
		s.points[k] = p
	}
	p.Requests += a.Requests
	p.Errors += a.Errors
	p.Histogram.Merge(a.Hist)
	p.Commands = addParts(p.Commands, a.Cmd, s.Cmds)
	p.Nodes = addParts(p.Nodes, a.Node, s.Nodes)
}

// point is a as a point of interval k, for Observe: its
// histograms are a's, a single command's part is the whole interval.
func (s *Series) point(k int64, a *Acc) measure.Point {
	p := measure.Point{Start: time.Unix(0, k*s.length), Requests: a.Requests, Errors: a.Errors, Histogram: a.Hist}
	switch {
	case len(a.Cmd) > 0:
		p.Commands = make([]measure.PointPart, len(a.Cmd))
		for i := range a.Cmd {
			p.Commands[i] = measure.PointPart{Requests: a.Cmd[i].Requests, Errors: a.Cmd[i].Errors, Histogram: a.Cmd[i].Hist}
			if i < len(s.Cmds) {
				p.Commands[i].Name = s.Cmds[i]
			}
		}
	case len(s.Cmds) == 1:
		p.Commands = []measure.PointPart{{Name: s.Cmds[0], Requests: a.Requests, Errors: a.Errors, Histogram: a.Hist}}
	}
	return p
}

func addParts(out []measure.PointPart, ps []Part, names []string) []measure.PointPart {
	if len(ps) == 0 {
		return out
	}
	if out == nil {
		out = make([]measure.PointPart, len(ps))
		for i := range out {
			out[i] = measure.PointPart{Histogram: measure.NewIntervalHistogram()}
			if i < len(names) {
				out[i].Name = names[i]
			}
		}
	}
	for i := range ps {
		if i >= len(out) {
			break
		}
		out[i].Requests += ps[i].Requests
		out[i].Errors += ps[i].Errors
		out[i].Histogram.Merge(ps[i].Hist)
	}
	return out
}

// Take returns the phase's points, by start, and forgets them.
func (s *Series) Take() *measure.Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &measure.Series{Interval: time.Duration(s.length)}
	for _, k := range slices.Sorted(maps.Keys(s.points)) {
		out.Points = append(out.Points, *s.points[k])
	}
	clear(s.points)
	return out
}

// Last returns the QPS and p99 latency (µs) of the latest point that
// ended before now, on the run's clock, over its length within [start,
// now]: what the live progress line shows; ok is false before the first.
// They are read under the lock: workers go on merging into the point's
// histogram.
func (s *Series) Last(start, now int64) (qps, p99Us float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := int64(-1 << 62)
	for k := range s.points {
		if end := (k+1)*s.length - s.wall0; end <= now && k > best {
			best, ok = k, true
		}
	}
	if !ok {
		return 0, 0, false
	}
	p := s.points[best]
	lo := max(best*s.length-s.wall0, start)
	length := time.Duration((best+1)*s.length - s.wall0 - lo)
	return measure.PerSecond(p.Requests, length), measure.Summarize(p.Histogram).P99, true
}
