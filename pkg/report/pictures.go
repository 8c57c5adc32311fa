package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Modes are every mode of the report, in the tables' order.
func (r *Report) Modes() []string {
	var all []string
	for _, t := range r.Targets {
		all = append(all, t.Modes...)
	}
	return OrderModes(slices.Compact(slices.Sorted(slices.Values(all))))
}

// Nines of the recorded percentiles.
var (
	ninesP50  = math.Log10(2)
	ninesP99  = 2.0
	ninesP999 = 3.0
)

// LatencyCurve is a scenario's latency by percentile: x in nines
// (-log10(1 - q): 1 is p90, 2 p99), y in µs.
type LatencyCurve struct {
	// Target and Strategy name the scenario of the mode asked for.
	Target, Strategy string
	Points           []LatencyPoint
	// Measured says the points come from the rounds' histograms;
	// otherwise they are the recorded percentiles Recorded names ("p50,
	// p99, max").
	Measured bool
	Recorded string
}

// LatencyPoint is a point of a LatencyCurve.
type LatencyPoint struct{ Nines, Us float64 }

// LatencyCurves are the latency curves of one mode, one per target and
// strategy with latencies: from the merged histograms of the rounds the
// trimming keeps, or, for rows without latency_hist, through the trimmed
// means of the recorded p50, p99, p99.9 and max (the max at the nines of
// the kept requests' count, the most it can be).
func (r *Report) LatencyCurves(mode string) ([]LatencyCurve, error) {
	var out []LatencyCurve
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			sc := t.Scenario(st, mode)
			if sc == nil {
				continue
			}
			c := LatencyCurve{Target: t.Target, Strategy: st}
			var merged *hdrhistogram.Histogram
			kept := 0
			for _, rd := range sc.Rounds {
				if rd.Dropped {
					continue
				}
				kept++
				if rd.hist == "" {
					continue
				}
				h, err := hdrhistogram.Decode([]byte(rd.hist))
				if err != nil { // Build checked them
					return nil, fmt.Errorf("%s: latency_hist: %w", rd.Pos, err)
				}
				if merged == nil {
					merged = h
				} else {
					merged.Merge(h)
				}
			}
			switch {
			case merged != nil && merged.TotalCount() > 0:
				c.Measured = true
				top := math.Log10(float64(merged.TotalCount()))
				for x := 0.0; x < top; x += 0.02 {
					q := 100 * (1 - math.Pow(10, -x))
					c.Points = append(c.Points, LatencyPoint{Nines: x, Us: float64(merged.ValueAtQuantile(q)) / 1e3})
				}
				c.Points = append(c.Points, LatencyPoint{Nines: top, Us: float64(merged.Max()) / 1e3})
			default:
				var names []string
				for _, p := range []struct {
					name string
					x    float64
					y    Figure
				}{{"p50", ninesP50, sc.TrimmedP50Us}, {"p99", ninesP99, sc.TrimmedP99Us}, {"p99.9", ninesP999, sc.TrimmedP999Us}} {
					if p.y.Valid() && p.y > 0 {
						c.Points = append(c.Points, LatencyPoint{Nines: p.x, Us: float64(p.y)})
						names = append(names, p.name)
					}
				}
				maxUs := meanOf(sc.Rounds, slices.IndexFunc(sc.Rounds, func(r Round) bool { return r.Dropped }),
					func(r Round) Figure { return r.MaxUs })
				if n := float64(sc.requests) * float64(kept); maxUs.Valid() && maxUs > 0 && n > 1000 {
					c.Points = append(c.Points, LatencyPoint{Nines: math.Log10(n), Us: float64(maxUs)})
					names = append(names, "max")
				}
				c.Recorded = strings.Join(names, ", ")
			}
			if len(c.Points) > 0 {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
