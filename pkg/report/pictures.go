package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Picture is one drawing of the report, an SVG whose letters are paths
// (see WriteChart).
type Picture struct {
	// Title says what it shows.
	Title string
	// SVG is the drawing.
	SVG []byte
}

// Pictures draws the report's pictures: the per-round chart, the
// side-by-side tables as bars (one panel per mode), and one latency
// percentile plot per mode that has latencies.
func (r *Report) Pictures() ([]Picture, error) {
	var pics []Picture
	if len(r.Targets) > 0 { // a report of recovery rows alone has no per-round chart
		var chart bytes.Buffer
		if err := r.WriteChart(&chart, ChartSVG); err != nil {
			return nil, err
		}
		pics = append(pics, Picture{Title: langs[r.lang()].chart, SVG: chart.Bytes()})
	}
	for _, tab := range r.SideBySide {
		svg, err := sideBars(tab)
		if err != nil {
			return nil, fmt.Errorf("side-by-side bars of %s: %w", tab.Mode, err)
		}
		pics = append(pics, Picture{Title: fmt.Sprintf(langs[r.lang()].sideMode, tab.Mode, tab.Reference), SVG: svg})
	}
	for _, mode := range r.modes() {
		curves, err := r.latencyCurves(mode)
		if err != nil {
			return nil, err
		}
		if len(curves) == 0 {
			continue
		}
		svg, err := latencyPlot(mode, curves)
		if err != nil {
			return nil, fmt.Errorf("latency plot of %s: %w", mode, err)
		}
		pics = append(pics, Picture{Title: fmt.Sprintf(langs[r.lang()].latencyPlot, mode), SVG: svg})
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

// lang is the report's language, LangEN when unknown.
func (r *Report) lang() string {
	if langs[r.Options.Lang] == nil {
		return LangEN
	}
	return r.Options.Lang
}

// modes are every mode of the report, in order.
func (r *Report) modes() []string {
	var all []string
	for _, t := range r.Targets {
		all = append(all, t.Modes...)
	}
	return orderModes(slices.Compact(slices.Sorted(slices.Values(all))))
}

// curve is one latency curve: x in nines (-log10(1 - q)), y in µs.
type curve struct {
	name     string
	points   plotter.XYs
	measured bool   // from the histograms; else from the recorded percentiles
	recorded string // which: "p50, p99, max"
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
func (r *Report) latencyCurves(mode string) ([]curve, error) {
	var out []curve
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			sc := t.Scenario(st, mode)
			if sc == nil {
				continue
			}
			c := curve{name: t.Target + "/" + st}
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
				c.measured = true
				top := math.Log10(float64(merged.TotalCount()))
				for x := 0.0; x < top; x += 0.02 {
					q := 100 * (1 - math.Pow(10, -x))
					c.points = append(c.points, plotter.XY{X: x, Y: float64(merged.ValueAtQuantile(q)) / 1e3})
				}
				c.points = append(c.points, plotter.XY{X: top, Y: float64(merged.Max()) / 1e3})
			default:
				var names []string
				for _, p := range []struct {
					name string
					x    float64
					y    Figure
				}{{"p50", ninesP50, sc.TrimmedP50Us}, {"p99", ninesP99, sc.TrimmedP99Us}, {"p99.9", ninesP999, sc.TrimmedP999Us}} {
					if p.y.Valid() && p.y > 0 {
						c.points = append(c.points, plotter.XY{X: p.x, Y: float64(p.y)})
						names = append(names, p.name)
					}
				}
				maxUs := meanOf(sc.Rounds, slices.IndexFunc(sc.Rounds, func(r Round) bool { return r.Dropped }),
					func(r Round) Figure { return r.MaxUs })
				if n := float64(sc.requests) * float64(kept); maxUs.Valid() && maxUs > 0 && n > 1000 {
					c.points = append(c.points, plotter.XY{X: math.Log10(n), Y: float64(maxUs)})
					names = append(names, "max")
				}
				c.recorded = strings.Join(names, ", ")
			}
			if len(c.points) > 0 {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// curveDashes tell the targets apart; colours tell the strategies.
var curveDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// curveColors are the curves' colours, by strategy.
var curveColors = modeColors

// latencyPlot draws one mode's latency curves: latency (µs, log scale)
// against the percentile on a nines axis (0, 90, 99, 99.9, … percent).
func latencyPlot(mode string, curves []curve) ([]byte, error) {
	p := plot.New()
	p.Title.Text = mode + ": latency by percentile"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (us)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	top, lo, hi := 0.0, math.Inf(1), 0.0
	var targets, strategies []string
	for _, c := range curves {
		target, st := splitName(c.name)
		if !slices.Contains(targets, target) {
			targets = append(targets, target)
		}
		if !slices.Contains(strategies, st) {
			strategies = append(strategies, st)
		}
	}
	for _, c := range curves {
		target, st := splitName(c.name)
		l, err := plotter.NewLine(c.points)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: curveColors[slices.Index(strategies, st)%len(curveColors)], Width: vg.Points(1.5),
			Dashes: curveDashes[slices.Index(targets, target)%len(curveDashes)]}
		p.Add(l)
		name := c.name
		if !c.measured {
			name += " (" + c.recorded + ")"
			s, err := plotter.NewScatter(c.points)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2), Color: l.LineStyle.Color}
			p.Add(s)
		}
		p.Legend.Add(name, l)
		for _, pt := range c.points {
			top = max(top, pt.X)
			if pt.Y > 0 {
				lo, hi = min(lo, pt.Y), max(hi, pt.Y)
			}
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Min, p.X.Max = 0, math.Ceil(top)
	p.Y.Min, p.Y.Max = lo/1.2, hi*1.2
	p.X.Tick.Marker = ninesTicks{}
	return svgOf(p, 16*vg.Centimeter, 10*vg.Centimeter)
}

// splitName splits "target/strategy".
func splitName(name string) (string, string) {
	for i := range len(name) {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// ninesTicks label the nines axis: 0 is 0%, 1 is 90%, 2 is 99%, …
type ninesTicks struct{}

// Ticks implements plot.Ticker.
func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for x := math.Ceil(lo); x <= hi; x++ {
		label := "0%"
		if x > 0 {
			label = strconv.FormatFloat(100*(1-math.Pow(10, -x)), 'f', int(max(x-2, 0)), 64) + "%"
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: label})
	}
	return ticks
}

// sideBars draws a side-by-side table as bars: a group per row (its
// persistence class), a bar per target at its trimmed mean QPS.
func sideBars(tab *SideBySide) ([]byte, error) {
	p := barPlot(tab.Mode + ": trimmed mean QPS by persistence")
	n := len(tab.Columns)
	span := 0.75
	slot := span / float64(n)
	bars := &barSet{}
	ticks := make([]plot.Tick, len(tab.Rows))
	top := 0.0
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
		ticks[i] = plot.Tick{Value: float64(i), Label: label}
		for j, c := range row.Cells {
			if !c.QPS.Valid() {
				continue
			}
			x := float64(i) - span/2 + slot*(float64(j)+0.5)
			f := seriesFill(j)
			bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: float64(c.QPS), color: f.color, striped: f.striped})
			top = max(top, float64(c.QPS))
		}
	}
	p.Add(bars)
	for j, c := range tab.Columns {
		p.Legend.Add(c.Name, swatch{seriesFill(j)})
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Min, p.X.Max = -0.5, float64(len(tab.Rows))-0.5
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	p.Y.Min, p.Y.Max = 0, top*1.2 // room for the legend
	p.Y.Tick.Marker = wholeTicks{}
	width := max(minWidth, yAxisWidth+vg.Length(len(tab.Rows))*max(minGroup, vg.Length(n)*barWidth)+2*pad)
	return svgOf(p, width, 9*vg.Centimeter)
}

// svgOf draws a plot as an SVG whose letters are paths.
func svgOf(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := &outlineText{Canvas: vgsvg.New(w, h)}
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
