package report

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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

// modeColors colour the bars of each mode (set, get, mixed, …).
var modeColors = []color.Color{
	color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff},
	color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff},
	color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff},
	color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff},
}

// WriteChart draws the chart in format ChartSVG or ChartPNG: one panel per
// target, a bar per scenario (strategy × mode) at its trimmed mean QPS,
// every ok round as a dot and the dropped round as a red cross.
func (r *Report) WriteChart(w io.Writer, format string) error {
	if len(r.Targets) == 0 {
		return fmt.Errorf("chart: %w: nothing to draw", results.ErrEmpty)
	}
	width := vg.Length(0)
	plots := make([][]*plot.Plot, len(r.Targets))
	for i, t := range r.Targets {
		p, err := targetPlot(t)
		if err != nil {
			return fmt.Errorf("chart of %s: %w", t.Target, err)
		}
		plots[i] = []*plot.Plot{p}
		width = max(width, vg.Length(len(t.Scenarios))*vg.Centimeter*3.2)
	}
	width = max(width, 16*vg.Centimeter)
	height := vg.Length(len(plots)) * 10 * vg.Centimeter

	var c vg.CanvasWriterTo
	switch format {
	case ChartSVG:
		c = vgsvg.New(width, height)
	case ChartPNG:
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		return fmt.Errorf("%w: chart format %q (want %s or %s)", ErrFormat, format, ChartSVG, ChartPNG)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Centimeter / 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// targetPlot is the panel of one target.
func targetPlot(t *TargetReport) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = t.Target + ": trimmed mean QPS per scenario"
	p.Y.Label.Text = "QPS"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())

	names := make([]string, len(t.Scenarios))
	var kept, dropped plotter.XYs
	legend := make(map[string]bool)
	for i, sc := range t.Scenarios {
		names[i] = sc.Strategy + "\n" + sc.Mode
		for _, r := range sc.Rounds {
			xy := plotter.XY{X: float64(i), Y: float64(r.QPS)}
			if r.Dropped {
				dropped = append(dropped, xy)
			} else {
				kept = append(kept, xy)
			}
		}
		if !sc.TrimmedQPS.Valid() {
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{float64(sc.TrimmedQPS)}, vg.Centimeter)
		if err != nil {
			return nil, err
		}
		bar.XMin = float64(i)
		bar.LineStyle.Width = 0
		bar.Color = modeColors[modeIndex(t.Modes, sc.Mode)%len(modeColors)]
		p.Add(bar)
		if !legend[sc.Mode] {
			legend[sc.Mode] = true
			p.Legend.Add(sc.Mode, bar)
		}
	}
	if len(kept) > 0 {
		s, err := plotter.NewScatter(kept)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2.5), Color: color.Black}
		p.Add(s)
		p.Legend.Add("round", s)
	}
	if len(dropped) > 0 {
		s, err := plotter.NewScatter(dropped)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(4), Color: color.RGBA{R: 0xd0, A: 0xff}}
		p.Add(s)
		p.Legend.Add("dropped round", s)
	}
	p.NominalX(names...)
	// Leave headroom above the highest dot for the legend.
	top := 0.0
	for _, xy := range append(kept, dropped...) {
		top = max(top, xy.Y)
	}
	p.Y.Max = top * 1.35
	p.Y.Tick.Marker = wholeTicks{}
	return p, nil
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

// modeIndex is the position of mode in modes.
func modeIndex(modes []string, mode string) int {
	for i, m := range modes {
		if m == mode {
			return i
		}
	}
	return 0
}
