package render

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The report's pictures besides the chart, each drawn from plain values
// as an SVG whose letters are paths: latency by percentile, the
// side-by-side bars, latency against throughput, and a scenario's rounds
// over time.

// curveDashes tell the targets apart; colours tell the strategies.
var curveDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// curveColors are the curves' colours, by strategy.
var curveColors = Palette

// curveStyle is the line of a curve: its strategy's colour, its
// target's dashes.
func curveStyle(strategy, target int) draw.LineStyle {
	return draw.LineStyle{Color: curveColors[strategy%len(curveColors)], Width: vg.Points(1.5),
		Dashes: curveDashes[target%len(curveDashes)]}
}

// LatencyCurve is one curve of a latency plot: a target's strategy.
type LatencyCurve struct {
	// Name is "target/strategy": its strategy sets its colour, its target
	// its dashes.
	Name string
	// Points are x in nines (-log10(1 - q)), y in µs.
	Points plotter.XYs
	// Measured says the points come from histograms; otherwise they are
	// the recorded percentiles Recorded names ("p50, p99, max"), drawn as
	// dots too.
	Measured bool
	Recorded string
}

// LatencyPlot draws latency curves: latency (µs, log scale) against the
// percentile on a nines axis (0, 90, 99, 99.9, … percent).
func LatencyPlot(title string, curves []LatencyCurve) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (us)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	top, lo, hi := 0.0, math.Inf(1), 0.0
	var targets, strategies []string
	for _, c := range curves {
		target, st := splitName(c.Name)
		if !slices.Contains(targets, target) {
			targets = append(targets, target)
		}
		if !slices.Contains(strategies, st) {
			strategies = append(strategies, st)
		}
	}
	for _, c := range curves {
		target, st := splitName(c.Name)
		l, err := plotter.NewLine(c.Points)
		if err != nil {
			return nil, err
		}
		l.LineStyle = curveStyle(slices.Index(strategies, st), slices.Index(targets, target))
		p.Add(l)
		name := c.Name
		if !c.Measured {
			name += " (" + c.Recorded + ")"
			s, err := plotter.NewScatter(c.Points)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2), Color: l.LineStyle.Color}
			p.Add(s)
		}
		p.Legend.Add(name, l)
		for _, pt := range c.Points {
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
	return PlotSVG(p, 16*vg.Centimeter, 10*vg.Centimeter)
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

// GroupedBars draws groups of bars side by side, a bar per column in its
// look, the columns named in a legend inside the plot: values[i][j] is
// group i's bar of column j, NaN for none. A group's label's lines are
// split by "\n".
func GroupedBars(title string, groups, columns []string, values [][]float64) ([]byte, error) {
	p := barPlot(title)
	n := len(columns)
	span := 0.75
	slot := span / float64(n)
	bars := &barSet{}
	ticks := make([]plot.Tick, len(groups))
	top := 0.0
	for i, label := range groups {
		ticks[i] = plot.Tick{Value: float64(i), Label: label}
		for j, v := range values[i] {
			if !finite(v) {
				continue
			}
			x := float64(i) - span/2 + slot*(float64(j)+0.5)
			f := seriesFill(j)
			bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: v, color: f.color, striped: f.striped})
			top = max(top, v)
		}
	}
	p.Add(bars)
	for j, c := range columns {
		p.Legend.Add(c, swatch{seriesFill(j)})
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	p.Y.Min, p.Y.Max = 0, top*1.2 // room for the legend
	p.Y.Tick.Marker = wholeTicks{}
	width := max(minWidth, yAxisWidth+vg.Length(len(groups))*max(minGroup, vg.Length(n)*barWidth)+2*pad)
	return PlotSVG(p, width, 9*vg.Centimeter)
}

// LoadPlot is latency against throughput: a line per target and strategy
// through the rates of its load curve, the objective across, each
// scenario's capacity marked on it.
type LoadPlot struct {
	// Title is above the plot; Stat names the latency drawn ("p99").
	Title, Stat string
	// Lines are drawn in order.
	Lines []LoadLine
	// Objective is the latency objective, 0 for none; Capacities are
	// drawn on it.
	Objective  time.Duration
	Capacities []LoadMark
}

// LoadLine is one target's strategy: its points (throughput, latency in
// µs), by throughput.
type LoadLine struct {
	Name string
	// Strategy and Target index its colour and its dashes.
	Strategy, Target int
	Points           plotter.XYs
}

// LoadMark is a capacity (its throughput), in its line's colour.
type LoadMark struct {
	QPS      float64
	Strategy int
}

// SVG draws the plot; ok is false when no line has a point.
func (lp LoadPlot) SVG() (svg []byte, ok bool, err error) {
	p := plot.New()
	p.Title.Text = lp.Title
	p.X.Label.Text = "throughput (req/s)"
	p.Y.Label.Text = lp.Stat + " latency (us)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Tick.Marker = wholeTicks{}
	p.Add(plotter.NewGrid())
	lo, hi, right := math.Inf(1), 0.0, 0.0
	for _, ln := range lp.Lines {
		l, s, err := plotter.NewLinePoints(ln.Points)
		if err != nil {
			return nil, false, err
		}
		l.LineStyle = curveStyle(ln.Strategy, ln.Target)
		s.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2), Color: l.LineStyle.Color}
		p.Add(l, s)
		p.Legend.Add(ln.Name, l)
		for _, xy := range ln.Points {
			lo, hi, right = min(lo, xy.Y), max(hi, xy.Y), max(right, xy.X)
		}
	}
	if hi == 0 {
		return nil, false, nil
	}
	if lp.Objective > 0 {
		y := float64(lp.Objective) / float64(time.Microsecond)
		lo, hi = min(lo, y), max(hi, y)
		for _, c := range lp.Capacities {
			s, err := plotter.NewScatter(plotter.XYs{{X: c.QPS, Y: y}})
			if err != nil {
				return nil, false, err
			}
			s.GlyphStyle = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(5), Color: curveColors[c.Strategy%len(curveColors)]}
			p.Add(s)
			right = max(right, c.QPS)
		}
		obj, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: right * 1.05, Y: y}})
		if err != nil {
			return nil, false, err
		}
		obj.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(4)}}
		p.Add(obj)
		p.Legend.Add(fmt.Sprintf("objective %s < %v", lp.Stat, lp.Objective), obj)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Min, p.X.Max = 0, right*1.05
	p.Y.Min, p.Y.Max = lo/1.2, hi*1.5
	svg, err = PlotSVG(p, 16*vg.Centimeter, 10*vg.Centimeter)
	return svg, err == nil, err
}

// TimePlot is a scenario's rounds over time: QPS above, p99 below, a
// colour per round, the stalls shaded and the server's events as bands
// along the QPS panel's top.
type TimePlot struct {
	Title  string
	Rounds []TimeRound
}

// TimeRound is one round's intervals, in order.
type TimeRound struct {
	Name      string
	Intervals []Interval
}

// Interval is one interval of a round.
type Interval struct {
	// Start and End are seconds from the start of the measurement.
	Start, End float64
	// QPS and P99Us are its figures, nil when not measured.
	QPS, P99Us *float64
	// Stalled marks a stall; Events are the server's events in it
	// (results.EventAOFRewrite, …).
	Stalled bool
	Events  []string
}

// The series plot's marks: stalls in gray behind the curves, the server's
// events as bands along the top.
var (
	stallColor  = color.NRGBA{R: 0xbb, G: 0xbb, B: 0xbb, A: 0x90}
	eventColors = map[string]color.Color{
		results.EventAOFRewrite:   color.NRGBA{R: 0xff, G: 0x99, B: 0x00, A: 0xc0},
		results.EventRDBSave:      color.NRGBA{R: 0x99, G: 0x33, B: 0xcc, A: 0xc0},
		results.EventDelayedFsync: color.RGBA{R: 0xdd, A: 0xff},
		results.EventPersistJob:   spanColor, // heatmap.go
	}
	eventOrder = []string{results.EventAOFRewrite, results.EventRDBSave, results.EventDelayedFsync, results.EventPersistJob}
)

// span is a marked stretch of time, drawn across a fraction of a panel's
// height (lo to hi, from the bottom).
type span struct {
	x0, x1, lo, hi float64
	color          color.Color
}

// spans draw marked stretches of time.
type spans []span

// Plot implements plot.Plotter.
func (ss spans) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, s := range ss {
		x0, x1 := trX(s.x0), trX(s.x1)
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1)
		}
		h := c.Max.Y - c.Min.Y
		c.FillPolygon(s.color, c.ClipPolygonXY([]vg.Point{
			{X: x0, Y: c.Min.Y + h*vg.Length(s.lo)}, {X: x1, Y: c.Min.Y + h*vg.Length(s.lo)},
			{X: x1, Y: c.Min.Y + h*vg.Length(s.hi)}, {X: x0, Y: c.Min.Y + h*vg.Length(s.hi)},
		}))
	}
}

// SVG draws the plot; ok is false when no round has a QPS.
func (tp TimePlot) SVG() (svg []byte, ok bool, err error) {
	qp, lp := plot.New(), plot.New()
	qp.Title.Text = tp.Title
	qp.Y.Label.Text = "QPS"
	qp.Y.Tick.Marker = wholeTicks{}
	lp.X.Label.Text = "time from the start of the measurement (s)"
	lp.Y.Label.Text = "p99 (us)"
	lp.Y.Tick.Marker = wholeTicks{}
	var marks, stallMarks spans
	seen := map[string]bool{}
	top, xmax, hi := 0.0, 0.0, 0.0
	var lines []*plotter.Line
	var names []string
	for _, rd := range tp.Rounds {
		var qs, ls plotter.XYs
		for _, iv := range rd.Intervals {
			mid := (iv.Start + iv.End) / 2
			if iv.QPS != nil {
				qs = append(qs, plotter.XY{X: mid, Y: *iv.QPS})
				top = max(top, *iv.QPS)
			}
			if iv.P99Us != nil && *iv.P99Us > 0 {
				ls = append(ls, plotter.XY{X: mid, Y: *iv.P99Us})
				hi = max(hi, *iv.P99Us)
			}
			xmax = max(xmax, iv.End)
			if iv.Stalled {
				stallMarks = append(stallMarks, span{iv.Start, iv.End, 0, 1, stallColor})
				seen["stall"] = true
			}
			for k, e := range eventOrder {
				if slices.Contains(iv.Events, e) {
					band := 0.97 - 0.04*float64(k)
					marks = append(marks, span{iv.Start, iv.End, band, band + 0.03, eventColors[e]})
					seen[e] = true
				}
			}
		}
		f := seriesFill(len(names))
		for _, part := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{qp, qs}, {lp, ls}} {
			if len(part.xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(part.xys)
			if err != nil {
				return nil, false, err
			}
			l.LineStyle = draw.LineStyle{Color: f.color, Width: vg.Points(1.2)}
			part.p.Add(l)
			if part.p == qp {
				lines = append(lines, l)
			}
		}
		names = append(names, rd.Name)
	}
	if len(names) == 0 || len(lines) == 0 {
		return nil, false, nil
	}
	qp.Add(stallMarks, marks)
	lp.Add(stallMarks)
	for i, l := range lines {
		qp.Legend.Add(names[i], l)
	}
	if seen["stall"] {
		qp.Legend.Add("stall (default rule)", swatch{fill{color: stallColor}})
	}
	for _, e := range eventOrder {
		if seen[e] {
			qp.Legend.Add(e, swatch{fill{color: eventColors[e]}})
		}
	}
	qp.Legend.Top = true
	qp.Legend.TextStyle.Font.Size = vg.Points(8)
	qp.X.Min, qp.X.Max, lp.X.Min, lp.X.Max = 0, xmax, 0, xmax
	qp.Y.Min, qp.Y.Max = 0, max(top, 1)*1.25 // room for the bands
	if hi > 0 {
		lp.Y.Min, lp.Y.Max = 0, hi*1.1
	} else {
		lp.HideY()
	}
	const w, h = 16 * vg.Centimeter, 12 * vg.Centimeter
	c := &outlineText{Canvas: vgsvg.New(w, h)}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Centimeter / 3, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := plot.Align([][]*plot.Plot{{qp}, {lp}}, tiles, draw.New(c))
	qp.Draw(canvases[0][0])
	lp.Draw(canvases[1][0])
	var buf strings.Builder
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, false, err
	}
	return []byte(buf.String()), true, nil
}
