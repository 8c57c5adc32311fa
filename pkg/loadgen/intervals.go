package loadgen

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/measure"
)

// The phase's series (Config.Interval): each worker counts the replies of
// the interval it is in (ivAcc), and when a reply arrives past its end,
// adds what it counted to the run's points (series) and starts the
// interval the reply is in. Intervals are aligned on the wall clock: the
// run's clock plus the wall time at its epoch, cut at multiples of the
// interval. A worker's interval costs it one comparison per read and one
// more histogram record per run of equal latencies.

// ivAcc is a worker's current interval.
type ivAcc struct {
	start, end int64 // on the runner's clock
	requests   int64
	errors     int64
	hist       *hdrhistogram.Histogram
	cmd        []ivPart // per command of a mix
	node       []ivPart // per master of a cluster run
}

// ivPart is one command's or node's part of an interval.
type ivPart struct {
	requests, errors int64
	hist             *hdrhistogram.Histogram
}

func newIvAcc(cmds, nodes int) *ivAcc {
	a := &ivAcc{hist: measure.NewIntervalHistogram()}
	a.cmd = newIvParts(cmds)
	a.node = newIvParts(nodes)
	return a
}

func newIvParts(n int) []ivPart {
	if n < 2 {
		return nil // one command: the whole interval's figures are its
	}
	ps := make([]ivPart, n)
	for i := range ps {
		ps[i].hist = measure.NewIntervalHistogram()
	}
	return ps
}

// empty reports whether nothing was counted.
func (a *ivAcc) empty() bool { return a.requests == 0 && a.errors == 0 && a.hist.TotalCount() == 0 }

// reset empties the accumulator for the interval [start, end).
func (a *ivAcc) reset(start, end int64) {
	a.start, a.end = start, end
	a.requests, a.errors = 0, 0
	a.hist.Reset()
	for _, ps := range [][]ivPart{a.cmd, a.node} {
		for i := range ps {
			ps[i].requests, ps[i].errors = 0, 0
			ps[i].hist.Reset()
		}
	}
}

// series is a run's points of the phase under way, merged from its
// workers' intervals.
type series struct {
	length int64 // ns
	wall0  int64 // the wall time of the runner clock's 0, Unix ns
	// names of the parts: the mix's commands, the masters.
	cmds, nodes []string
	// observe is Config.Observe in the measured phase, nil otherwise.
	observe func(measure.Point)
	mu      sync.Mutex
	points  map[int64]*measure.Point // by interval index
}

// newSeries returns the series of a run whose clock started at epoch.
func newSeries(interval time.Duration, epoch time.Time) *series {
	return &series{length: int64(interval), wall0: epoch.UnixNano(), points: make(map[int64]*measure.Point)}
}

// bounds returns the interval that holds time now of the runner's clock.
func (s *series) bounds(now int64) (start, end int64) {
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

// add merges a worker's finished interval into the run's points.
func (s *series) add(a *ivAcc) {
	if a.empty() {
		return
	}
	k := floorDiv(s.wall0+a.start, s.length)
	s.merge(k, a)
	if s.observe != nil {
		s.observe(s.point(k, a))
	}
}

// merge adds a to the point of interval k.
func (s *series) merge(k int64, a *ivAcc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.points[k]
	if p == nil {
		p = &measure.Point{Start: time.Unix(0, k*s.length), Histogram: measure.NewIntervalHistogram()}
		s.points[k] = p
	}
	p.Requests += a.requests
	p.Errors += a.errors
	p.Histogram.Merge(a.hist)
	p.Commands = addIvParts(p.Commands, a.cmd, s.cmds)
	p.Nodes = addIvParts(p.Nodes, a.node, s.nodes)
}

// point is a as a point of interval k, for Config.Observe: its
// histograms are a's, a single command's part is the whole interval.
func (s *series) point(k int64, a *ivAcc) measure.Point {
	p := measure.Point{Start: time.Unix(0, k*s.length), Requests: a.requests, Errors: a.errors, Histogram: a.hist}
	switch {
	case len(a.cmd) > 0:
		p.Commands = make([]measure.PointPart, len(a.cmd))
		for i := range a.cmd {
			p.Commands[i] = measure.PointPart{Requests: a.cmd[i].requests, Errors: a.cmd[i].errors, Histogram: a.cmd[i].hist}
			if i < len(s.cmds) {
				p.Commands[i].Name = s.cmds[i]
			}
		}
	case len(s.cmds) == 1:
		p.Commands = []measure.PointPart{{Name: s.cmds[0], Requests: a.requests, Errors: a.errors, Histogram: a.hist}}
	}
	return p
}

func addIvParts(out []measure.PointPart, ps []ivPart, names []string) []measure.PointPart {
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
		out[i].Requests += ps[i].requests
		out[i].Errors += ps[i].errors
		out[i].Histogram.Merge(ps[i].hist)
	}
	return out
}

// take returns the phase's points, by start, and forgets them.
func (s *series) take() *measure.Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &measure.Series{Interval: time.Duration(s.length)}
	for _, k := range slices.Sorted(maps.Keys(s.points)) {
		out.Points = append(out.Points, *s.points[k])
	}
	clear(s.points)
	return out
}

// last returns the figures of the latest point that ended before now, on
// the runner's clock, over its length within [start, now]: what the live
// progress line shows. They are read under the lock: workers go on merging
// into the point's histogram.
func (s *series) last(start, now int64) (*IntervalFigures, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, ok := int64(-1<<62), false
	for k := range s.points {
		if end := (k+1)*s.length - s.wall0; end <= now && k > best {
			best, ok = k, true
		}
	}
	if !ok {
		return nil, false
	}
	p := s.points[best]
	lo := max(best*s.length-s.wall0, start)
	length := time.Duration((best+1)*s.length - s.wall0 - lo)
	return &IntervalFigures{QPS: measure.PerSecond(p.Requests, length), P99Us: measure.Summarize(p.Histogram).P99}, true
}

// rotate ends the worker's interval when now is past it: what it counted
// joins the run's points, and the interval that holds now begins.
func (w *worker) rotate(now int64) {
	a := w.iv
	w.ser.add(a)
	start, end := w.ser.bounds(now)
	a.reset(start, end)
}
