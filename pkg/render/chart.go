package render

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The chart's file formats.
const (
	ChartSVG = "svg"
	ChartPNG = "png"
)

// BarChart is bars in panels, one above the other, each panel's legend
// beside it: what the report's chart draws, as plain values. A panel is
// groups of bars along the x axis, each group under its label, each bar
// with its figure above it.
type BarChart struct {
	// Panels are drawn top to bottom.
	Panels []BarPanel
	// Series is how many series the shared-width panels colour: a group
	// is at least wide enough for a bar of each.
	Series int
}

// BarPanel is one panel of a BarChart.
type BarPanel struct {
	// Title is above the panel.
	Title string
	// Groups are the groups' labels, left to right; a label's lines are
	// split by "\n".
	Groups []string
	// Slots is how many bars a group has room for, side by side.
	Slots int
	// Bars are drawn in order; at most one per group and slot.
	Bars []Bar
	// Baselines are dashed lines across the panel, in order.
	Baselines []Baseline
	// Legend lists what the panel draws, top to bottom.
	Legend []LegendEntry
	// OwnWidth makes the panel's groups as wide as its bars and their
	// figures need (a workload's panel, which has no rounds); otherwise
	// the panels share one group width, what the widest label of theirs
	// needs, and turn their labels when that is too narrow.
	OwnWidth bool
}

// Bar is one bar of a panel, and the rounds it is the trimmed mean of.
type Bar struct {
	// Group and Slot place it: its group, its place in the group.
	Group, Slot int
	// Series is its look: a colour of the palette, striped past its end.
	Series int
	// Value is its height; NaN draws no bar, only the rounds.
	Value float64
	// Kept and Dropped are its rounds' values: dots, and red crosses for
	// the rounds the trimming dropped.
	Kept, Dropped []float64
}

// Baseline is a dashed line across a panel at Value, in Series's colour.
type Baseline struct {
	Value  float64
	Series int
}

// Mark is what a legend entry shows.
type Mark int

// The marks of a legend entry.
const (
	// MarkBar is a square in the look of the entry's Series.
	MarkBar Mark = iota
	// MarkRound is a round's dot.
	MarkRound
	// MarkDropped is a dropped round's cross.
	MarkDropped
	// MarkBaseline is a baseline's dashed line.
	MarkBaseline
)

// LegendEntry is one line of a panel's legend.
type LegendEntry struct {
	Name   string
	Mark   Mark
	Series int // MarkBar's look
}

// Palette colours the series of every picture, the i-th series in the
// i-th colour: ten distinct colours (seaborn's "deep" palette); past ten
// the colours come again, striped (hatched) on bars. In the report's
// chart a series is a mode in a target's panel (by the mode's place among
// all the chart's modes, so a mode has one colour in every panel) and a
// target's strategy in a workload's panel.
var Palette = []color.Color{
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
	return fill{color: Palette[i%len(Palette)], striped: i/len(Palette)%2 == 1}
}

var (
	droppedColor = color.RGBA{R: 0xd0, A: 0xff}
	gray         = color.Gray{Y: 0x60}
)

// Chart geometry. A group of bars is as wide as its widest label needs,
// within limits, and the labels are turned when even the widest group is
// too narrow for them. Each bar carries its figure above it (valueLabel),
// turned upright when the bar is too narrow for it.
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

// WriteChart draws c in format ChartSVG or ChartPNG: its panels one above
// the other, each with its legend beside it. The SVG holds no text: every
// letter is drawn as a path from the font the layout was measured with
// (gonum's embedded Liberation Serif), so the chart looks the same in
// every browser and viewer, whatever fonts the machine has.
func WriteChart(w io.Writer, c BarChart, format string) error {
	canvas, _, err := drawChart(c, format)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(w); err != nil {
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
func drawChart(c BarChart, format string) (vg.CanvasWriterTo, *chartDrawing, error) {
	if format != ChartSVG && format != ChartPNG {
		return nil, nil, fmt.Errorf("%w: chart format %q (want %s or %s)", ErrFormat, format, ChartSVG, ChartPNG)
	}
	// The group width: what the widest label needs, within limits.
	lay := layout{value: valueStyle()}
	tick := plot.New().X.Tick.Label
	for _, p := range c.Panels {
		if p.OwnWidth {
			continue
		}
		for _, g := range p.Groups {
			lay.label = max(lay.label, labelWidth(tick, g))
		}
		lay.groups = max(lay.groups, len(p.Groups))
	}
	lay.group = min(max(lay.label+labelMargin, minGroup, vg.Length(c.Series)*barWidth), maxGroup)
	lay.turn = lay.label+labelMargin > lay.group

	var plots [][]*plot.Plot
	var legends []plot.Legend
	d := &chartDrawing{turned: lay.turn}
	need := yAxisWidth + vg.Length(lay.groups)*lay.group
	for _, panel := range c.Panels {
		var p *plot.Plot
		var bars []bar
		var err error
		if panel.OwnWidth {
			var width vg.Length
			p, bars, width = lay.ownPanel(panel)
			need = max(need, yAxisWidth+width)
		} else if p, bars, err = lay.panel(panel); err != nil {
			return nil, nil, fmt.Errorf("chart panel %q: %w", panel.Title, err)
		}
		leg, entries := newLegend(), make([]string, 0, len(panel.Legend))
		for _, e := range panel.Legend {
			leg.Add(e.Name, e.thumbnail())
			entries = append(entries, e.Name)
		}
		plots, legends = append(plots, []*plot.Plot{p}), append(legends, leg)
		d.panels = append(d.panels, chartPanel{title: p.Title.Text, legend: entries, bars: bars})
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

	var canvas vg.CanvasWriterTo
	var outlined *outlineText
	switch format {
	case ChartSVG:
		outlined = &outlineText{Canvas: vgsvg.New(width, height)}
		canvas = outlined
	case ChartPNG:
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	dc := draw.New(canvas)
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
	return canvas, d, nil
}

// layout is the geometry shared by the panels.
type layout struct {
	label  vg.Length  // the widest x label
	group  vg.Length  // the width of a group
	groups int        // the most groups in a panel
	turn   bool       // whether x labels are turned
	value  text.Style // the bars' figures
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

// labelWidth is the width of the widest line of a label.
func labelWidth(sty text.Style, label string) vg.Length {
	w := vg.Length(0)
	for _, line := range strings.Split(label, "\n") {
		w = max(w, sty.Width(line))
	}
	return w
}

// finite reports whether x is a number to draw.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// panel is the plot of a shared-width panel, and its bars.
func (lay *layout) panel(panel BarPanel) (*plot.Plot, []bar, error) {
	p := barPlot(panel.Title)

	n := len(panel.Groups)
	// Bars fill 3/4 of a group: as wide as barWidth at most.
	span := min(0.75, float64(vg.Length(panel.Slots)*barWidth/lay.group))
	slot := span / float64(panel.Slots)

	bars := &barSet{style: lay.value, gap: roundGlyph.Radius}
	var kept, dropped plotter.XYs
	ticks := make([]plot.Tick, n)
	top := 0.0
	for i, g := range panel.Groups {
		ticks[i] = plot.Tick{Value: float64(i), Label: g}
	}
	for _, b := range panel.Bars {
		x := float64(b.Group) - span/2 + slot*(float64(b.Slot)+0.5)
		// The figure goes above the bar and the dots of its kept
		// rounds; the dropped round, an outlier, may be far off.
		marks := 0.0
		for _, y := range b.Kept {
			kept = append(kept, plotter.XY{X: x, Y: y})
			top, marks = max(top, y), max(marks, y)
		}
		for _, y := range b.Dropped {
			dropped = append(dropped, plotter.XY{X: x, Y: y})
			top = max(top, y)
		}
		if finite(b.Value) {
			f := seriesFill(b.Series)
			bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: b.Value,
				color: f.color, striped: f.striped, labelAt: max(marks, b.Value)})
			top = max(top, b.Value)
		}
	}
	bars.turned, _ = lay.labelBars(bars.bars, vg.Length(slot)*lay.group)
	p.Add(bars)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	// The baselines' figures across the panel: each bar's overhead at a
	// glance.
	for _, bl := range panel.Baselines {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: bl.Value}, {X: p.X.Max, Y: bl.Value}})
		if err != nil {
			return nil, nil, err
		}
		l.LineStyle = baselineStyle(seriesFill(bl.Series).color)
		p.Add(l)
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

// ownPanel draws a panel whose groups are as wide as its bars and their
// figures need: a slot wide enough for a bar and its figure lying, the
// group as wide as its slots need, 4/5 of it filled. It returns the
// plot, its bars and the width its groups need.
func (lay *layout) ownPanel(panel BarPanel) (*plot.Plot, []bar, vg.Length) {
	p := barPlot(panel.Title)
	const span = 0.8
	slotWidth := max(barWidth, lay.value.Width("888.8k")+vg.Points(valueMargin))
	group := max(minGroup, vg.Length(panel.Slots)*slotWidth/span)
	slot := span / float64(panel.Slots)
	bars := &barSet{style: lay.value}
	top := 0.0
	ticks := make([]plot.Tick, len(panel.Groups))
	for i, g := range panel.Groups {
		ticks[i] = plot.Tick{Value: float64(i), Label: g}
	}
	for _, b := range panel.Bars {
		x := float64(b.Group) - span/2 + slot*(float64(b.Slot)+0.5)
		f := seriesFill(b.Series)
		bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: b.Value,
			color: f.color, striped: f.striped, labelAt: b.Value})
		top = max(top, b.Value)
	}
	bars.turned, _ = lay.labelBars(bars.bars, vg.Length(slot)*group)
	p.Add(bars)
	p.X.Min, p.X.Max = -0.5, float64(len(panel.Groups))-0.5
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	p.Y.Min, p.Y.Max = 0, top*headroom(bars.turned)
	p.Y.Tick.Marker = wholeTicks{}
	return p, bars.bars, vg.Length(len(panel.Groups)) * group
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

// thumbnail is what the entry's mark looks like.
func (e LegendEntry) thumbnail() plot.Thumbnailer {
	switch e.Mark {
	case MarkRound:
		return glyph{roundGlyph}
	case MarkDropped:
		return glyph{droppedGlyph}
	case MarkBaseline:
		return line{baselineStyle(gray)}
	}
	return swatch{seriesFill(e.Series)}
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
