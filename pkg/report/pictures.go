package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot/plotter"

	"github.com/kvbench/kvbench/pkg/render"
)

// Pictures draws the report's pictures: the per-round chart, the
// side-by-side tables as bars (one panel per mode), one latency
// percentile plot per mode that has latencies, the latency–throughput
// plots (curve.go) and the series plots (series.go).
func (r *Report) Pictures() ([]render.Picture, error) {
	l := render.LabelsOf(r.Options.Lang)
	var pics []render.Picture
	if len(r.Targets) > 0 { // a report of recovery rows alone has no per-round chart
		var chart bytes.Buffer
		if err := r.WriteChart(&chart, render.ChartSVG); err != nil {
			return nil, err
		}
		pics = append(pics, render.Picture{Title: l.Chart, SVG: chart.Bytes()})
	}
	for _, tab := range r.SideBySide {
		svg, err := sideBars(tab)
		if err != nil {
			return nil, fmt.Errorf("side-by-side bars of %s: %w", tab.Mode, err)
		}
		pics = append(pics, render.Picture{Title: fmt.Sprintf(l.Side.Mode, tab.Mode, tab.Reference), SVG: svg})
	}
	for _, mode := range r.modes() {
		curves, err := r.latencyCurves(mode)
		if err != nil {
			return nil, err
		}
		if len(curves) == 0 {
			continue
		}
		svg, err := render.LatencyPlot(mode+": latency by percentile", curves)
		if err != nil {
			return nil, fmt.Errorf("latency plot of %s: %w", mode, err)
		}
		pics = append(pics, render.Picture{Title: fmt.Sprintf(l.LatencyPlot, mode), SVG: svg})
	}
	loads, err := r.curvePictures() // curve.go
	if err != nil {
		return nil, err
	}
	pics = append(pics, loads...)
	series, err := r.seriesPictures() // series.go
	if err != nil {
		return nil, err
	}
	return append(pics, series...), nil
}

// modes are every mode of the report, in order.
func (r *Report) modes() []string {
	var all []string
	for _, t := range r.Targets {
		all = append(all, t.Modes...)
	}
	return orderModes(slices.Compact(slices.Sorted(slices.Values(all))))
}

// Nines of the recorded percentiles.
var (
	ninesP50  = math.Log10(2)
	ninesP99  = 2.0
	ninesP999 = 3.0
)

// latencyCurves are the curves of one mode, one per target and strategy
// with latencies: from the merged histograms of the rounds the trimming
// keeps, or, for rows without latency_hist, through the trimmed means of
// the recorded p50, p99, p99.9 and max (the max at the nines of the kept
// requests' count, the most it can be).
func (r *Report) latencyCurves(mode string) ([]render.LatencyCurve, error) {
	var out []render.LatencyCurve
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			sc := t.Scenario(st, mode)
			if sc == nil {
				continue
			}
			c := render.LatencyCurve{Name: t.Target + "/" + st}
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
					c.Points = append(c.Points, plotter.XY{X: x, Y: float64(merged.ValueAtQuantile(q)) / 1e3})
				}
				c.Points = append(c.Points, plotter.XY{X: top, Y: float64(merged.Max()) / 1e3})
			default:
				var names []string
				for _, p := range []struct {
					name string
					x    float64
					y    Figure
				}{{"p50", ninesP50, sc.TrimmedP50Us}, {"p99", ninesP99, sc.TrimmedP99Us}, {"p99.9", ninesP999, sc.TrimmedP999Us}} {
					if p.y.Valid() && p.y > 0 {
						c.Points = append(c.Points, plotter.XY{X: p.x, Y: float64(p.y)})
						names = append(names, p.name)
					}
				}
				maxUs := meanOf(sc.Rounds, slices.IndexFunc(sc.Rounds, func(r Round) bool { return r.Dropped }),
					func(r Round) Figure { return r.MaxUs })
				if n := float64(sc.requests) * float64(kept); maxUs.Valid() && maxUs > 0 && n > 1000 {
					c.Points = append(c.Points, plotter.XY{X: math.Log10(n), Y: float64(maxUs)})
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

// sideBars draws a side-by-side table as bars: a group per row (its
// persistence class, with its strategies when rows share it), a bar per
// target at its trimmed mean QPS.
func sideBars(tab *SideBySide) ([]byte, error) {
	groups := make([]string, len(tab.Rows))
	values := make([][]float64, len(tab.Rows))
	for i, row := range tab.Rows {
		label := row.Persistence
		if label == "" {
			label = "-"
		}
		// Rows that share a class name their strategies.
		if slices.ContainsFunc(tab.Rows[:i], func(o SideRow) bool { return o.Persistence == row.Persistence }) ||
			slices.ContainsFunc(tab.Rows[i+1:], func(o SideRow) bool { return o.Persistence == row.Persistence }) {
			for _, c := range row.Cells {
				if c.Strategy != "" {
					label += "\n" + c.Strategy
				}
			}
		}
		groups[i] = label
		for _, c := range row.Cells {
			values[i] = append(values[i], float64(c.QPS))
		}
	}
	columns := make([]string, len(tab.Columns))
	for j, c := range tab.Columns {
		columns[j] = c.Name
	}
	return render.GroupedBars(tab.Mode+": trimmed mean QPS by persistence", groups, columns, values)
}
