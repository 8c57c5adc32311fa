package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart formats, chosen from the file name's extension.
const (
	ChartSVG = "svg"
	ChartPNG = "png"
)

// ChartFormat returns the chart format of a file name: ChartSVG for
// ".svg", ChartPNG for ".png", an ErrFormat error otherwise.
func ChartFormat(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".svg":
		return ChartSVG, nil
	case ".png":
		return ChartPNG, nil
	default:
		return "", fmt.Errorf("%w: chart %q: the file name must end in .svg or .png", ErrFormat, name)
	}
}

// modeColors colour the bars of each series: in a target's panel a mode
// (set, get, mixed, a workload's total), by the mode's place among all the
// chart's modes, so a mode has one colour in every panel; in a workload's
// panel a target's strategy. Ten distinct colours (seaborn's "deep"
// palette); past ten the colours come again, striped (hatched).
var modeColors = []color.Color{
	color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff},
	color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff},
	color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff},
	color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff},
	color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff},
	color.RGBA{R: 0x93, G: 0x78, B: 0x60, A: 0xff},
	color.RGBA{R: 0xda, G: 0x8b, B: 0xc3, A: 0xff},
	color.RGBA{R: 0x64, G: 0xb5, B: 0xcd, A: 0xff},
	color.RGBA{R: 0xcc, G: 0xb9, B: 0x74, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x8c, B: 0x8c, A: 0xff},
}

// fill is a series' look: its colour, striped past the palette's end.
type fill struct {
	color   color.Color
	striped bool
}

// seriesFill is the look of the i-th series.
func seriesFill(i int) fill {
	return fill{color: modeColors[i%len(modeColors)], striped: i/len(modeColors)%2 == 1}
}

var (
	droppedColor = color.RGBA{R: 0xd0, A: 0xff}
	gray         = color.Gray{Y: 0x60}
)

// Chart geometry. A strategy is a group of bars, one per mode, under its
// name; a group is as wide as its widest label needs, within limits, and
// the labels are turned when even the widest group is too narrow for them.
// Each bar carries its figure above it (valueLabel), turned upright when
// the bar is too narrow for it.
const (
	minGroup    = 2.4 * vg.Centimeter // narrowest group
	maxGroup    = 4.5 * vg.Centimeter // widest group before labels turn
	barWidth    = 0.8 * vg.Centimeter // the most a bar needs
	labelMargin = 0.4 * vg.Centimeter // between two labels
	panelHeight = 9 * vg.Centimeter
	yAxisWidth  = 2 * vg.Centimeter // room for the QPS ticks and label
	minWidth    = 16 * vg.Centimeter
	pad         = 2 * vg.Millimeter
	valueSize   = 7 // points, the bars' figures
	valueMargin = 2 // points, between two bars' figures
)

// baselineLabel is the second line of the baseline's label.
const baselineLabel = "(baseline)"

// WriteChart draws the chart in format ChartSVG or ChartPNG: one panel per
// target, a group of bars per strategy (a bar per mode, a workload's total
// among them, at its trimmed mean QPS, the figure above it; the
// baseline's group labelled as such, and its bars' heights drawn across
// the panel as dashed lines), every ok round as a dot and the dropped
// round as a red cross; then one panel per workload: a group per command
// and the total, a bar per target and strategy that measured it, each its
// own colour, the figure above it. Each panel's legend stands beside it
// and lists only what the panel draws.
//
// The SVG holds no text: every letter is drawn as a path from the font
// the layout was measured with (gonum's embedded Liberation Serif), so
// the chart looks the same in every browser and viewer, whatever fonts
// the machine has.
func (r *Report) WriteChart(w io.Writer, format string) error {
	c, _, err := r.drawChart(format)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// chartDrawing is what drawChart drew, for the tests.
type chartDrawing struct {
	width, height vg.Length
	boxes         []textBox // every text drawn (SVG only)
	legend        int       // boxes[legend:] are the legends'
	turned        bool      // whether the x labels are turned
	panels        []chartPanel
}

// chartPanel is one panel of the chart: its title, its legend's entries
// and its bars.
type chartPanel struct {
	title  string
	legend []string
	bars   []bar
}

// drawChart draws the chart on a new canvas and returns it with what it
// drew.
func (r *Report) drawChart(format string) (vg.CanvasWriterTo, *chartDrawing, error) {
	if len(r.Targets) == 0 {
		return nil, nil, fmt.Errorf("chart: %w: nothing to draw", results.ErrEmpty)
	}
	if format != ChartSVG && format != ChartPNG {
		return nil, nil, fmt.Errorf("%w: chart format %q (want %s or %s)", ErrFormat, format, ChartSVG, ChartPNG)
	}
	var all []string
	for _, t := range r.Targets {
		all = append(all, chartModes(t)...)
	}
	modes := orderModes(slices.Compact(slices.Sorted(slices.Values(all))))

	// The group width: what the widest label needs, within limits.
	lay := layout{modes: modes, value: valueStyle()}
	tick := plot.New().X.Tick.Label
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			lay.label = max(lay.label, labelWidth(tick, groupLabel(t, st)))
		}
		lay.groups = max(lay.groups, len(t.Strategies))
	}
	lay.group = min(max(lay.label+labelMargin, minGroup, vg.Length(len(modes))*barWidth), maxGroup)
	lay.turn = lay.label+labelMargin > lay.group

	var plots [][]*plot.Plot
	var legends []plot.Legend
	d := &chartDrawing{turned: lay.turn}
	need := yAxisWidth + vg.Length(lay.groups)*lay.group
	for _, t := range r.Targets {
		p, bars, err := lay.panel(t)
		if err != nil {
			return nil, nil, fmt.Errorf("chart of %s: %w", t.Target, err)
		}
		leg, entries := lay.targetLegend(t)
		plots, legends = append(plots, []*plot.Plot{p}), append(legends, leg)
		d.panels = append(d.panels, chartPanel{title: p.Title.Text, legend: entries, bars: bars})
	}
	lay.series = workloadSeries(r)
	for _, tab := range r.Workloads {
		wp, ok := lay.workloadPanel(tab)
		if !ok {
			continue
		}
		plots, legends = append(plots, []*plot.Plot{wp.plot}), append(legends, wp.legend)
		d.panels = append(d.panels, chartPanel{title: wp.plot.Title.Text, legend: wp.entries, bars: wp.bars})
		need = max(need, yAxisWidth+wp.width)
	}
	legendWidth := vg.Length(0)
	for _, leg := range legends {
		legendWidth = max(legendWidth, leg.Rectangle(draw.Canvas{}).Size().X+2*pad)
	}

	width := max(minWidth, need+legendWidth+2*pad)
	height := vg.Length(len(plots)) * panelHeight
	if lay.turn {
		// Turned labels take height: sin 30° of their width.
		height += vg.Length(len(plots)) * lay.label / 2
	}
	d.width, d.height = width, height

	var c vg.CanvasWriterTo
	var outlined *outlineText
	switch format {
	case ChartSVG:
		outlined = &outlineText{Canvas: vgsvg.New(width, height)}
		c = outlined
	case ChartPNG:
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	dc := draw.New(c)
	panels := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Centimeter / 2,
		PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := plot.Align(plots, tiles, panels)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if outlined != nil {
		d.legend = len(outlined.boxes)
	}
	// Each legend at the top of its panel's row, beside the panels.
	column := draw.Crop(dc, width-legendWidth+pad, -pad, 0, 0)
	for i, leg := range legends {
		leg.Draw(tiles.At(column, 0, i))
	}
	if outlined != nil {
		d.boxes = outlined.boxes
	}
	return c, d, nil
}

// chartModes are the modes a target's panel draws: the modes, and each
// workload's total; a workload's commands are drawn in the workload's
// own panel.
func chartModes(t *TargetReport) []string {
	var out []string
	for _, m := range t.Modes {
		if sc := t.anyScenario(m); sc != nil && sc.Workload != "" && sc.Command != results.CommandTotal {
			continue
		}
		out = append(out, m)
	}
	return out
}

// layout is the geometry shared by the panels.
type layout struct {
	modes  []string   // every mode the targets' panels draw, in order
	label  vg.Length  // the widest x label
	group  vg.Length  // the width of a strategy's group
	groups int        // the most groups in a panel
	turn   bool       // whether x labels are turned
	value  text.Style // the bars' figures
	series []string   // the workloads' panels' series ("target/strategy"), for their colours
}

// workloadSeries are the series of the workloads' panels, each target's
// strategies in the tables' order, so that a strategy has one colour in
// every workload's panel.
func workloadSeries(r *Report) []string {
	var out []string
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			if slices.ContainsFunc(t.Scenarios, func(sc *Scenario) bool { return sc.Strategy == st && sc.Workload != "" }) {
				out = append(out, t.Target+"/"+st)
			}
		}
	}
	return out
}

// valueStyle is the style of the bars' figures.
func valueStyle() text.Style {
	sty := plot.New().X.Tick.Label
	sty.Font.Size = vg.Points(valueSize)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	return sty
}

// valueLabel is a bar's figure, short: 950, 9.5k, 288k, 1.11M.
func valueLabel(qps float64) string {
	switch {
	case qps >= 999_500:
		return strconv.FormatFloat(qps/1e6, 'f', 2, 64) + "M"
	case qps >= 9_995:
		return strconv.FormatFloat(qps/1e3, 'f', 0, 64) + "k"
	case qps >= 1_000:
		return strconv.FormatFloat(qps/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(qps, 'f', 0, 64)
}

// labelBars gives each bar its figure, upright when a slot of the given
// width (data units, per vg.Length of the panel's group) is too narrow
// for it lying; no figures when even upright they would not fit.
func (lay *layout) labelBars(bars []bar, slot vg.Length) (turned, ok bool) {
	widest := vg.Length(0)
	for i := range bars {
		bars[i].label = valueLabel(bars[i].y)
		widest = max(widest, lay.value.Width(bars[i].label))
	}
	height := lay.value.Height("0")
	switch margin := vg.Points(valueMargin); {
	case slot >= widest+margin:
		return false, true
	case slot >= height+margin:
		return true, true
	}
	for i := range bars {
		bars[i].label = ""
	}
	return false, false
}

// groupLabel is the label under a strategy's bars.
func groupLabel(t *TargetReport, strategy string) string {
	if isBaseline(t, strategy) {
		return strategy + "\n" + baselineLabel
	}
	return strategy
}

// isBaseline reports whether a strategy is a baseline of its target.
func isBaseline(t *TargetReport, strategy string) bool {
	return slices.ContainsFunc(t.Overheads, func(o *OverheadTable) bool { return o.Baseline == strategy })
}

// labelWidth is the width of the widest line of a label.
func labelWidth(sty text.Style, label string) vg.Length {
	w := vg.Length(0)
	for _, line := range strings.Split(label, "\n") {
		w = max(w, sty.Width(line))
	}
	return w
}

// panel is the plot of one target, and its bars.
func (lay *layout) panel(t *TargetReport) (*plot.Plot, []bar, error) {
	p := barPlot(t.Target + ": trimmed mean QPS per scenario")

	n := len(t.Strategies)
	modes := chartModes(t)
	// Bars fill 3/4 of a group: as wide as barWidth at most.
	span := min(0.75, float64(vg.Length(len(modes))*barWidth/lay.group))
	slot := span / float64(len(modes))

	bars := &barSet{style: lay.value, gap: roundGlyph.Radius}
	var kept, dropped plotter.XYs
	ticks := make([]plot.Tick, n)
	top := 0.0
	for i, st := range t.Strategies {
		ticks[i] = plot.Tick{Value: float64(i), Label: groupLabel(t, st)}
		for j, m := range modes {
			sc := t.Scenario(st, m)
			if sc == nil {
				continue
			}
			x := float64(i) - span/2 + slot*(float64(j)+0.5)
			// The figure goes above the bar and the dots of its kept
			// rounds; the dropped round, an outlier, may be far off.
			marks := 0.0
			for _, r := range sc.Rounds {
				xy := plotter.XY{X: x, Y: float64(r.QPS)}
				top = max(top, xy.Y)
				if r.Dropped {
					dropped = append(dropped, xy)
				} else {
					kept = append(kept, xy)
					marks = max(marks, xy.Y)
				}
			}
			if sc.TrimmedQPS.Valid() {
				f := seriesFill(slices.Index(lay.modes, m))
				bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: float64(sc.TrimmedQPS),
					color: f.color, striped: f.striped, labelAt: max(marks, float64(sc.TrimmedQPS))})
				top = max(top, float64(sc.TrimmedQPS))
			}
		}
	}
	bars.turned, _ = lay.labelBars(bars.bars, vg.Length(slot)*lay.group)
	p.Add(bars)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	// The baseline's figures across the panel: each bar's overhead at a
	// glance.
	for _, o := range t.Overheads {
		for _, m := range modes {
			sc := t.Scenario(o.Baseline, m)
			if sc == nil || !sc.TrimmedQPS.Valid() {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: float64(sc.TrimmedQPS)}, {X: p.X.Max, Y: float64(sc.TrimmedQPS)}})
			if err != nil {
				return nil, nil, err
			}
			l.LineStyle = baselineStyle(seriesFill(slices.Index(lay.modes, m)).color)
			p.Add(l)
		}
	}
	if len(kept) > 0 {
		s, err := plotter.NewScatter(kept)
		if err != nil {
			return nil, nil, err
		}
		s.GlyphStyle = roundGlyph
		p.Add(s)
	}
	if len(dropped) > 0 {
		s, err := plotter.NewScatter(dropped)
		if err != nil {
			return nil, nil, err
		}
		s.GlyphStyle = droppedGlyph
		p.Add(s)
	}

	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	if lay.turn {
		// Turned by 30°, ending under their group: far enough apart.
		p.X.Tick.Label.Rotation = 0.5236
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Y.Min, p.Y.Max = 0, top*headroom(bars.turned)
	p.Y.Tick.Marker = wholeTicks{}
	return p, bars.bars, nil
}

// barPlot is a new plot of bars of QPS, with a horizontal grid: a
// vertical line through every group would cut its bars.
func barPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "QPS"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	return p
}

// headroom is how far above the highest mark a panel's axis goes: room
// for the bars' figures, more when they stand upright.
func headroom(turned bool) float64 {
	if turned {
		return 1.3
	}
	return 1.15
}

// workloadPanel is one workload's panel: a group per command (the total
// last), a bar per target and strategy that measured it.
type workloadPanel struct {
	plot    *plot.Plot
	legend  plot.Legend
	entries []string
	bars    []bar
	width   vg.Length // what its groups need
}

// workloadPanel draws a workload's table as bars; false when no target
// measured it (every attempt failed, or none supports it).
func (lay *layout) workloadPanel(tab *WorkloadTable) (workloadPanel, bool) {
	var commands, series []string
	for _, row := range tab.Rows {
		if !row.QPS.Valid() {
			continue
		}
		if !slices.Contains(commands, row.Command) {
			commands = append(commands, row.Command)
		}
		if name := row.Target + "/" + row.Strategy; !slices.Contains(series, name) {
			series = append(series, name)
		}
	}
	if len(series) == 0 {
		return workloadPanel{}, false
	}
	p := barPlot(tab.Workload + ": trimmed mean QPS per command")
	// A slot wide enough for a bar and its figure lying; the group as
	// wide as its slots need, 4/5 of it filled.
	const span = 0.8
	slotWidth := max(barWidth, lay.value.Width("888.8k")+vg.Points(valueMargin))
	group := max(minGroup, vg.Length(len(series))*slotWidth/span)
	slot := span / float64(len(series))
	bars := &barSet{style: lay.value}
	top := 0.0
	ticks := make([]plot.Tick, len(commands))
	for i, cmd := range commands {
		label := cmd
		if cmd == results.CommandTotal {
			label = "total (mix)"
		}
		ticks[i] = plot.Tick{Value: float64(i), Label: label}
	}
	for _, row := range tab.Rows {
		if !row.QPS.Valid() {
			continue
		}
		name := row.Target + "/" + row.Strategy
		i, j := slices.Index(commands, row.Command), slices.Index(series, name)
		x := float64(i) - span/2 + slot*(float64(j)+0.5)
		f := seriesFill(slices.Index(lay.series, name))
		bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: float64(row.QPS),
			color: f.color, striped: f.striped, labelAt: float64(row.QPS)})
		top = max(top, float64(row.QPS))
	}
	bars.turned, _ = lay.labelBars(bars.bars, vg.Length(slot)*group)
	p.Add(bars)
	p.X.Min, p.X.Max = -0.5, float64(len(commands))-0.5
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	p.Y.Min, p.Y.Max = 0, top*headroom(bars.turned)
	p.Y.Tick.Marker = wholeTicks{}

	leg := newLegend()
	for _, name := range series {
		leg.Add(name, swatch{seriesFill(slices.Index(lay.series, name))})
	}
	return workloadPanel{plot: p, legend: leg, entries: series, bars: bars.bars,
		width: vg.Length(len(commands)) * group}, true
}

var (
	roundGlyph   = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2.5), Color: color.Black}
	droppedGlyph = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(4), Color: droppedColor}
)

// baselineStyle is the dashed line of a baseline's figure.
func baselineStyle(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
}

// newLegend is a legend in the chart's style.
func newLegend() plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.Padding = vg.Points(4)
	leg.ThumbnailWidth = vg.Points(14)
	return leg
}

// targetLegend is a target's panel's legend: the colours of the modes it
// drew bars of, the marks of the rounds, and the baseline's line; and its
// entries.
func (lay *layout) targetLegend(t *TargetReport) (plot.Legend, []string) {
	leg := newLegend()
	var entries []string
	add := func(name string, th plot.Thumbnailer) {
		leg.Add(name, th)
		entries = append(entries, name)
	}
	for _, m := range lay.modes {
		if slices.ContainsFunc(t.Scenarios, func(sc *Scenario) bool { return sc.Mode == m && sc.TrimmedQPS.Valid() }) {
			add(m, swatch{seriesFill(slices.Index(lay.modes, m))})
		}
	}
	if slices.ContainsFunc(t.Scenarios, func(sc *Scenario) bool { return len(sc.Rounds) > 0 }) {
		add("round", glyph{roundGlyph})
	}
	if slices.ContainsFunc(t.Scenarios, func(sc *Scenario) bool { return sc.DroppedRound > 0 }) {
		add("dropped round", glyph{droppedGlyph})
	}
	if len(t.Overheads) > 0 {
		add("baseline", line{baselineStyle(gray)})
	}
	return leg, entries
}

// bar is one bar, in data coordinates: from x0 to x1, from 0 to y, its
// figure (label) above labelAt.
type bar struct {
	x0, x1, y float64
	color     color.Color
	striped   bool
	label     string
	labelAt   float64
}

// barSet draws bars whose width is in data units, so that a group of
// bars always fits its place on the axis, each with its figure above it
// (upright when turned).
type barSet struct {
	bars   []bar
	style  text.Style
	turned bool
	gap    vg.Length // between labelAt and the figure: clear of a round's dot
}

// Plot implements plot.Plotter.
func (b *barSet) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := b.style
	if b.turned {
		sty.Rotation, sty.XAlign, sty.YAlign = math.Pi/2, draw.XLeft, draw.YCenter
	}
	for _, r := range b.bars {
		x0, x1, y0, y1 := trX(r.x0), trX(r.x1), trY(0), trY(r.y)
		fillBox(&c, fill{r.color, r.striped}, vg.Point{X: x0, Y: y0}, vg.Point{X: x1, Y: y1})
		if r.label != "" {
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: trY(r.labelAt) + b.gap + vg.Points(valueMargin)}, r.label)
		}
	}
}

// fillBox fills the box from min to max in a series' look: its colour,
// with white stripes when striped.
func fillBox(c *draw.Canvas, f fill, lo, hi vg.Point) {
	c.FillPolygon(f.color, c.ClipPolygonXY([]vg.Point{{X: lo.X, Y: lo.Y}, {X: hi.X, Y: lo.Y}, {X: hi.X, Y: hi.Y}, {X: lo.X, Y: hi.Y}}))
	if !f.striped {
		return
	}
	stripe := draw.LineStyle{Color: color.White, Width: vg.Points(1)}
	for y := min(lo.Y, hi.Y) + vg.Points(2); y < max(lo.Y, hi.Y); y += vg.Points(3) {
		c.StrokeLines(stripe, c.ClipLinesXY([]vg.Point{{X: lo.X, Y: y}, {X: hi.X, Y: y}})...)
	}
}

// DataRange implements plot.DataRanger.
func (b *barSet) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(b.bars) == 0 {
		return 0, 0, 0, 0
	}
	xmin, xmax = b.bars[0].x0, b.bars[0].x1
	for _, r := range b.bars {
		xmin, xmax, ymax = min(xmin, r.x0), max(xmax, r.x1), max(ymax, r.y)
	}
	return xmin, xmax, 0, ymax
}

// swatch is a legend entry's filled square, in a series' look.
type swatch struct{ fill }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) { fillBox(c, s.fill, c.Min, c.Max) }

// glyph is a legend entry's mark.
type glyph struct{ style draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (g glyph) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.style, c.Center()) }

// line is a legend entry's line.
type line struct{ style draw.LineStyle }

// Thumbnail implements plot.Thumbnailer.
func (l line) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

// wholeTicks are gonum's default ticks labelled as whole numbers.
type wholeTicks struct{}

// Ticks implements plot.Ticker.
func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}
