package measure

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// IntervalDigits is the precision of an interval's histogram: 2
// significant digits (1%) keep a point small (tens of kilobytes), and a
// run of many intervals affordable.
const IntervalDigits = 2

// NewIntervalHistogram returns an empty histogram for one interval.
func NewIntervalHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMin, HistMax, IntervalDigits)
}

// Series is a measurement per interval of wall-clock time: every reply of
// the phase counted in the interval in which it arrived. Intervals are
// aligned on the wall clock (a point's start is a multiple of Interval
// since the Unix epoch), so that the series of agents that ran at once
// merge point by point.
type Series struct {
	// Interval is the length of every point.
	Interval time.Duration
	// Points are the intervals in which something happened, by start.
	Points []Point
}

// Point is one interval of a series.
type Point struct {
	// Start is when the interval began (it may begin before the measured
	// window, and end after it).
	Start time.Time
	// Requests and Errors count the replies and the error replies that
	// arrived in the interval.
	Requests, Errors int64
	// Histogram holds their latencies in nanoseconds (IntervalDigits).
	Histogram *hdrhistogram.Histogram
	// Commands and Nodes are the interval's parts of a command mix and of
	// a cluster run, by name (a command's name, a node's address).
	Commands, Nodes []PointPart
}

// PointPart is one command's or one node's part of a point.
type PointPart struct {
	Name             string
	Requests, Errors int64
	Histogram        *hdrhistogram.Histogram
}

// Merge adds o's points to s's, point by point (by start), and their
// parts by name. Both must have the same Interval (or s none yet).
func (s *Series) Merge(o *Series) error {
	if o == nil {
		return nil
	}
	if s.Interval == 0 {
		s.Interval = o.Interval
	}
	if s.Interval != o.Interval {
		return fmt.Errorf("series of %v and %v intervals do not merge", s.Interval, o.Interval)
	}
	for _, p := range o.Points {
		i := sort.Search(len(s.Points), func(i int) bool { return !s.Points[i].Start.Before(p.Start) })
		if i == len(s.Points) || !s.Points[i].Start.Equal(p.Start) {
			s.Points = slices.Insert(s.Points, i, Point{Start: p.Start})
		}
		if err := s.Points[i].add(&p); err != nil {
			return fmt.Errorf("interval at %s: %w", p.Start.Format(time.RFC3339Nano), err)
		}
	}
	return nil
}

// add adds o to p.
func (p *Point) add(o *Point) error {
	err := errors.Join(addCount(&p.Requests, o.Requests, "requests"), addCount(&p.Errors, o.Errors, "errors"))
	if err != nil {
		return err
	}
	if p.Histogram, err = addHist(p.Histogram, o.Histogram); err != nil {
		return err
	}
	if p.Commands, err = addParts(p.Commands, o.Commands); err != nil {
		return err
	}
	p.Nodes, err = addParts(p.Nodes, o.Nodes)
	return err
}

func addParts(ps, os []PointPart) ([]PointPart, error) {
	for _, o := range os {
		i := slices.IndexFunc(ps, func(p PointPart) bool { return p.Name == o.Name })
		if i < 0 {
			ps = append(ps, PointPart{Name: o.Name})
			i = len(ps) - 1
		}
		err := errors.Join(addCount(&ps[i].Requests, o.Requests, o.Name+" requests"), addCount(&ps[i].Errors, o.Errors, o.Name+" errors"))
		if err != nil {
			return nil, err
		}
		if ps[i].Histogram, err = addHist(ps[i].Histogram, o.Histogram); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	return ps, nil
}

// Span is the part of point p's interval within the window [start, end]:
// its offset from start and its length (the first and last points of a
// phase are partly outside it); a zero length when they do not meet.
func (s *Series) Span(p *Point, start, end time.Time) (offset, length time.Duration) {
	lo, hi := p.Start, p.Start.Add(s.Interval)
	if lo.Before(start) {
		lo = start
	}
	if hi.After(end) {
		hi = end
	}
	if !hi.After(lo) {
		return lo.Sub(start), 0
	}
	return lo.Sub(start), hi.Sub(lo)
}

// Stalls are the moments a phase stopped: runs of consecutive intervals
// whose QPS fell below a fraction of the phase's median interval QPS, or
// in which a request waited longer than a limit.
type Stalls struct {
	// Count is the number of stalls; Longest and Total their longest and
	// summed lengths.
	Count          int
	Longest, Total time.Duration
	// At are their starts, from the start of the measured window.
	At []time.Duration
}

// Default stall thresholds: an interval below a tenth of the median
// interval QPS, or with a request that waited longer than 100 ms.
const (
	DefaultStallBelow   = 0.10
	DefaultStallLatency = 100 * time.Millisecond
)

// findStalls is Result.FindStalls.
func findStalls(r *Result, below float64, longer time.Duration) *Stalls {
	s := r.Series
	if s == nil || s.Interval <= 0 {
		return nil
	}
	type iv struct {
		off, length time.Duration
		qps         float64
		max         int64
	}
	// Every interval of the window, empty ones too: a server that stops
	// answering leaves no point.
	var ivs []iv
	if r.Elapsed > 0 && !r.Start.IsZero() {
		first := r.Start.Truncate(s.Interval)
		if first.After(r.Start) {
			first = first.Add(-s.Interval)
		}
		pi := 0
		for t := first; t.Before(r.End); t = t.Add(s.Interval) {
			p := &Point{Start: t}
			for pi < len(s.Points) && s.Points[pi].Start.Before(t) {
				pi++
			}
			if pi < len(s.Points) && s.Points[pi].Start.Equal(t) {
				p = &s.Points[pi]
			}
			off, length := s.Span(p, r.Start, r.End)
			if length <= 0 {
				continue
			}
			v := iv{off: off, length: length, qps: float64(p.Requests) / length.Seconds()}
			if p.Histogram != nil && p.Histogram.TotalCount() > 0 {
				v.max = p.Histogram.Max()
			}
			ivs = append(ivs, v)
		}
	}
	out := &Stalls{}
	if len(ivs) == 0 {
		return out
	}
	// The median over the intervals of full length: a partial first or
	// last interval says little of the rate.
	var rates []float64
	for _, v := range ivs {
		if v.length >= s.Interval*9/10 {
			rates = append(rates, v.qps)
		}
	}
	if len(rates) == 0 {
		for _, v := range ivs {
			rates = append(rates, v.qps)
		}
	}
	slices.Sort(rates)
	median := rates[len(rates)/2]
	if len(rates)%2 == 0 {
		median = (rates[len(rates)/2-1] + rates[len(rates)/2]) / 2
	}
	// A partial interval (the window's first or last) is too short to say
	// a rate: a start-up interval of a few milliseconds, whose connections
	// were still sending their first batch, is not a stall. Its rate
	// counts only as the edge of a stall the full interval beside it
	// shows; its latency counts alone (a request that waited is a fact).
	full := func(v iv) bool { return v.length >= s.Interval*9/10 }
	slow := func(v iv) bool { return v.qps < below*median }
	stalled := make([]bool, len(ivs))
	for i, v := range ivs {
		stalled[i] = full(v) && slow(v) || longer > 0 && v.max > int64(longer)
	}
	for i, v := range ivs {
		if !full(v) && slow(v) &&
			(i > 0 && full(ivs[i-1]) && stalled[i-1] || i+1 < len(ivs) && full(ivs[i+1]) && stalled[i+1]) {
			stalled[i] = true
		}
	}
	in := false
	var cur time.Duration
	for i, v := range ivs {
		switch {
		case stalled[i] && !in:
			in, cur = true, v.length
			out.Count++
			out.At = append(out.At, v.off)
		case stalled[i]:
			cur += v.length
		case in:
			in = false
			out.Total += cur
			out.Longest = max(out.Longest, cur)
		}
	}
	if in {
		out.Total += cur
		out.Longest = max(out.Longest, cur)
	}
	return out
}

// PerMinute is the stall count per minute of a window of length d; NaN
// for an empty window.
func (st *Stalls) PerMinute(d time.Duration) float64 {
	if st == nil || d <= 0 {
		return math.NaN()
	}
	return float64(st.Count) / d.Minutes()
}
