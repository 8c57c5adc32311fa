package output

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"gonum.org/v1/plot/plotter"
)

// Pictures draws the report's pictures: the per-round chart, the
// side-by-side tables as bars (one panel per mode), one latency
// percentile plot per mode that has latencies, the latency–throughput
// plots (curve.go), the series plots (series.go) and the heatmaps of the
// rounds with a persistence job (persistjob.go).
func Pictures(r *report.Report) ([]render.Picture, error) {
	l := render.LabelsOf(r.Options.Lang)
	var pics []render.Picture
	if len(r.Targets) > 0 { // a report of recovery rows alone has no per-round chart
		var chart bytes.Buffer
		if err := WriteChart(&chart, r, render.ChartSVG); err != nil {
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
	for _, mode := range r.Modes() {
		curves, err := r.LatencyCurves(mode)
		if err != nil {
			return nil, err
		}
		if len(curves) == 0 {
			continue
		}
		lines := make([]render.LatencyCurve, len(curves))
		for i, c := range curves {
			lines[i] = render.LatencyCurve{Name: c.Target + "/" + c.Strategy, Measured: c.Measured, Recorded: c.Recorded}
			for _, p := range c.Points {
				lines[i].Points = append(lines[i].Points, plotter.XY{X: p.Nines, Y: p.Us})
			}
		}
		svg, err := render.LatencyPlot(mode+": latency by percentile", lines)
		if err != nil {
			return nil, fmt.Errorf("latency plot of %s: %w", mode, err)
		}
		pics = append(pics, render.Picture{Title: fmt.Sprintf(l.LatencyPlot, mode), SVG: svg})
	}
	loads, err := curvePictures(r) // curve.go
	if err != nil {
		return nil, err
	}
	pics = append(pics, loads...)
	series, err := seriesPictures(r) // series.go
	if err != nil {
		return nil, err
	}
	heatmaps, err := heatmapPictures(r) // persistjob.go
	if err != nil {
		return nil, err
	}
	return append(append(pics, series...), heatmaps...), nil
}

// sideBars draws a side-by-side table as bars: a group per row (its
// persistence class, with its strategies when rows share it), a bar per
// target at its trimmed mean QPS.
func sideBars(tab *report.SideBySide) ([]byte, error) {
	groups := make([]string, len(tab.Rows))
	values := make([][]float64, len(tab.Rows))
	for i, row := range tab.Rows {
		label := row.Persistence
		if label == "" {
			label = "-"
		}
		// Rows that share a class name their strategies.
		if slices.ContainsFunc(tab.Rows[:i], func(o report.SideRow) bool { return o.Persistence == row.Persistence }) ||
			slices.ContainsFunc(tab.Rows[i+1:], func(o report.SideRow) bool { return o.Persistence == row.Persistence }) {
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
