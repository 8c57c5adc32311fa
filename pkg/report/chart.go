package report

import (
	"fmt"
	"image/color"
	"io"
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

// modeColors colour the bars of each mode (set, get, mixed, …), by the
// mode's place among all the report's modes, so a mode has one colour in
// every panel.
var modeColors = []color.Color{
	color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff},
	color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff},
	color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff},
	color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff},
}

var (
	droppedColor = color.RGBA{R: 0xd0, A: 0xff}
	gray         = color.Gray{Y: 0x60}
)

// Chart geometry. A strategy is a group of bars, one per mode, under its
// name; a group is as wide as its widest label needs, within limits, and
// the labels are turned when even the widest group is too narrow for them.
const (
	minGroup    = 2.4 * vg.Centimeter // narrowest group
	maxGroup    = 4.5 * vg.Centimeter // widest group before labels turn
	barWidth    = 0.8 * vg.Centimeter // the most a bar needs
	labelMargin = 0.4 * vg.Centimeter // between two labels
	panelHeight = 9 * vg.Centimeter
	yAxisWidth  = 2 * vg.Centimeter // room for the QPS ticks and label
	minWidth    = 16 * vg.Centimeter
	pad         = 2 * vg.Millimeter
)

// baselineLabel is the second line of the baseline's label.
const baselineLabel = "(baseline)"

// WriteChart draws the chart in format ChartSVG or ChartPNG: one panel per
// target, a group of bars per strategy (a bar per mode, at its trimmed
// mean QPS; the baseline's group labelled as such, and its bars' heights
// drawn across the panel as dashed lines), every ok round as a dot and the
// dropped round as a red cross; the legend stands beside the panels.
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
	legend        int       // boxes[legend:] are the legend's
	turned        bool      // whether the x labels are turned
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
		all = append(all, t.Modes...)
	}
	modes := orderModes(slices.Compact(slices.Sorted(slices.Values(all))))

	// The group width: what the widest label needs, within limits.
	lay := layout{modes: modes}
	tick := plot.New().X.Tick.Label
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			lay.label = max(lay.label, labelWidth(tick, groupLabel(t, st)))
		}
		lay.groups = max(lay.groups, len(t.Strategies))
	}
	lay.group = min(max(lay.label+labelMargin, minGroup, vg.Length(len(modes))*barWidth), maxGroup)
	lay.turn = lay.label+labelMargin > lay.group

	plots := make([][]*plot.Plot, len(r.Targets))
	for i, t := range r.Targets {
		p, err := lay.panel(t)
		if err != nil {
			return nil, nil, fmt.Errorf("chart of %s: %w", t.Target, err)
		}
		plots[i] = []*plot.Plot{p}
	}
	leg := lay.legend(r)
	legendWidth := leg.Rectangle(draw.Canvas{}).Size().X + 2*pad

	width := max(minWidth, yAxisWidth+vg.Length(lay.groups)*lay.group+legendWidth+2*pad)
	height := vg.Length(len(plots)) * panelHeight
	if lay.turn {
		// Turned labels take height: sin 30° of their width.
		height += vg.Length(len(plots)) * lay.label / 2
	}

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
	d := &chartDrawing{width: width, height: height, turned: lay.turn}
	if outlined != nil {
		d.legend = len(outlined.boxes)
	}
	// The legend, at the top right, beside the panels.
	leg.Draw(draw.Crop(dc, width-legendWidth+pad, -pad, pad, -pad))
	if outlined != nil {
		d.boxes = outlined.boxes
	}
	return c, d, nil
}

// layout is the geometry shared by the panels.
type layout struct {
	modes  []string  // every mode of the report, in order
	label  vg.Length // the widest x label
	group  vg.Length // the width of a strategy's group
	groups int       // the most groups in a panel
	turn   bool      // whether x labels are turned
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

// panel is the plot of one target.
func (lay *layout) panel(t *TargetReport) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = t.Target + ": trimmed mean QPS per scenario"
	p.Y.Label.Text = "QPS"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil // a line through every group would cut its bars
	p.Add(grid)

	n := len(t.Strategies)
	// Bars fill 3/4 of a group: as wide as barWidth at most.
	span := min(0.75, float64(vg.Length(len(t.Modes))*barWidth/lay.group))
	slot := span / float64(len(t.Modes))

	bars := &barSet{}
	var kept, dropped plotter.XYs
	ticks := make([]plot.Tick, n)
	top := 0.0
	for i, st := range t.Strategies {
		ticks[i] = plot.Tick{Value: float64(i), Label: groupLabel(t, st)}
		for j, m := range t.Modes {
			sc := t.Scenario(st, m)
			if sc == nil {
				continue
			}
			x := float64(i) - span/2 + slot*(float64(j)+0.5)
			for _, r := range sc.Rounds {
				xy := plotter.XY{X: x, Y: float64(r.QPS)}
				top = max(top, xy.Y)
				if r.Dropped {
					dropped = append(dropped, xy)
				} else {
					kept = append(kept, xy)
				}
			}
			if sc.TrimmedQPS.Valid() {
				bars.bars = append(bars.bars, bar{x0: x - slot*0.45, x1: x + slot*0.45, y: float64(sc.TrimmedQPS),
					color: modeColor(lay.modes, m)})
				top = max(top, float64(sc.TrimmedQPS))
			}
		}
	}
	p.Add(bars)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	// The baseline's figures across the panel: each bar's overhead at a
	// glance.
	for _, o := range t.Overheads {
		for _, m := range t.Modes {
			sc := t.Scenario(o.Baseline, m)
			if sc == nil || !sc.TrimmedQPS.Valid() {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: float64(sc.TrimmedQPS)}, {X: p.X.Max, Y: float64(sc.TrimmedQPS)}})
			if err != nil {
				return nil, err
			}
			l.LineStyle = baselineStyle(modeColor(lay.modes, m))
			p.Add(l)
		}
	}
	if len(kept) > 0 {
		s, err := plotter.NewScatter(kept)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = roundGlyph
		p.Add(s)
	}
	if len(dropped) > 0 {
		s, err := plotter.NewScatter(dropped)
		if err != nil {
			return nil, err
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
	p.Y.Min, p.Y.Max = 0, top*1.05
	p.Y.Tick.Marker = wholeTicks{}
	return p, nil
}

var (
	roundGlyph   = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2.5), Color: color.Black}
	droppedGlyph = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(4), Color: droppedColor}
)

// baselineStyle is the dashed line of a baseline's figure.
func baselineStyle(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
}

// legend is the chart's legend: the modes' colours, the marks of the
// rounds, and the baseline's line.
func (lay *layout) legend(r *Report) plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.Padding = vg.Points(4)
	leg.ThumbnailWidth = vg.Points(14)
	for _, m := range lay.modes {
		leg.Add(m, swatch{modeColor(lay.modes, m)})
	}
	leg.Add("round", glyph{roundGlyph})
	if slices.ContainsFunc(r.Targets, func(t *TargetReport) bool {
		return slices.ContainsFunc(t.Scenarios, func(sc *Scenario) bool { return sc.DroppedRound > 0 })
	}) {
		leg.Add("dropped round", glyph{droppedGlyph})
	}
	if slices.ContainsFunc(r.Targets, func(t *TargetReport) bool { return len(t.Overheads) > 0 }) {
		leg.Add("baseline", line{baselineStyle(gray)})
	}
	return leg
}

// modeColor is the colour of a mode.
func modeColor(modes []string, mode string) color.Color {
	return modeColors[max(slices.Index(modes, mode), 0)%len(modeColors)]
}

// bar is one bar, in data coordinates: from x0 to x1, from 0 to y.
type bar struct {
	x0, x1, y float64
	color     color.Color
}

// barSet draws bars whose width is in data units, so that a group of
// bars always fits its place on the axis.
type barSet struct{ bars []bar }

// Plot implements plot.Plotter.
func (b *barSet) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range b.bars {
		x0, x1, y0, y1 := trX(r.x0), trX(r.x1), trY(0), trY(r.y)
		c.FillPolygon(r.color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
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

// swatch is a legend entry's filled square.
type swatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

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
