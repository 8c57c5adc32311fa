package render

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HeatmapPlot is an attempt's latency over time as a picture: time on x,
// latency on a log y axis, each cell coloured by how many requests of
// its interval took a latency in its bucket, and marked spans (a
// persistence job's) along the top.
type HeatmapPlot struct {
	Title string
	// Starts and Ends are the intervals, in seconds from the start of the
	// measurement; BoundsUs the latency buckets' edges in µs, ascending
	// (one more than the buckets); Counts[i][b] the requests of interval
	// i in bucket b.
	Starts, Ends []float64
	BoundsUs     []float64
	Counts       [][]int64
	// Spans are marked: a band along the top, a dashed line at each end.
	Spans []Span
}

// Span is a marked stretch of time, in seconds, and its name in the
// legend.
type Span struct {
	From, To float64
	Name     string
}

// heatColors are the cells' colours from the fewest requests to the
// most: viridis, a scale that reads in grey and to colour-blind eyes.
var heatColors = []color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x47, 0x2c, 0x7a, 0xff}, {0x3b, 0x51, 0x8b, 0xff}, {0x2c, 0x71, 0x8e, 0xff},
	{0x21, 0x90, 0x8d, 0xff}, {0x27, 0xad, 0x81, 0xff}, {0x5c, 0xc8, 0x63, 0xff}, {0xaa, 0xdc, 0x32, 0xff},
	{0xfd, 0xe7, 0x25, 0xff},
}

// spanColor marks a span: a red that none of the cells have.
var spanColor = color.RGBA{R: 0xe0, G: 0x1b, B: 0x24, A: 0xff}

// heatColor is the colour of a cell of n requests, the most being most:
// on a log scale, 1 request the first colour.
func heatColor(n, most int64) color.Color {
	if most <= 1 {
		return heatColors[len(heatColors)-1]
	}
	x := math.Log(float64(n)) / math.Log(float64(most)) * float64(len(heatColors)-1)
	i := min(int(math.Floor(x)), len(heatColors)-2)
	f := x - float64(i)
	a, b := heatColors[i], heatColors[i+1]
	mix := func(p, q uint8) uint8 { return uint8(float64(p) + f*(float64(q)-float64(p)) + 0.5) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// heatCells draws the cells.
type heatCells struct {
	h    *HeatmapPlot
	most int64
}

// Plot implements plot.Plotter.
func (hc heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	h := hc.h
	for i, counts := range h.Counts {
		x0, x1 := trX(h.Starts[i]), trX(h.Ends[i])
		for b, n := range counts {
			if n == 0 {
				continue
			}
			y0, y1 := trY(h.BoundsUs[b]), trY(h.BoundsUs[b+1])
			c.FillPolygon(heatColor(n, hc.most), c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
		}
	}
}

// spanMarks draws the spans: a band along the top, dashed edges.
type spanMarks []Span

// spanStyle is a span's edges.
var spanStyle = draw.LineStyle{Color: spanColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}

// Plot implements plot.Plotter.
func (ss spanMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, s := range ss {
		x0, x1 := trX(s.From), trX(s.To)
		top := c.Max.Y
		band := (c.Max.Y - c.Min.Y) * 0.03
		c.FillPolygon(spanColor, c.ClipPolygonXY([]vg.Point{{X: x0, Y: top - band}, {X: x1, Y: top - band}, {X: x1, Y: top}, {X: x0, Y: top}}))
		for _, x := range []vg.Length{x0, x1} {
			c.StrokeLines(spanStyle, c.ClipLinesXY([]vg.Point{{X: x, Y: c.Min.Y}, {X: x, Y: top}})...)
		}
	}
}

// SVG draws the heatmap; ok is false when no interval has a request.
func (h HeatmapPlot) SVG() (svg []byte, ok bool, err error) {
	if len(h.Starts) != len(h.Ends) || len(h.Starts) != len(h.Counts) || len(h.BoundsUs) < 2 {
		return nil, false, fmt.Errorf("heatmap %q: %d starts, %d ends, %d columns, %d bounds", h.Title, len(h.Starts), len(h.Ends), len(h.Counts), len(h.BoundsUs))
	}
	var most int64
	for _, counts := range h.Counts {
		if len(counts) != len(h.BoundsUs)-1 {
			return nil, false, fmt.Errorf("heatmap %q: a column of %d buckets, want %d", h.Title, len(counts), len(h.BoundsUs)-1)
		}
		for _, n := range counts {
			most = max(most, n)
		}
	}
	if most == 0 {
		return nil, false, nil
	}
	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text = "time from the start of the measurement (s)"
	p.Y.Label.Text = "latency (us)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(heatCells{h: &h, most: most}, spanMarks(h.Spans))
	// The legend goes in a margin on the right, past the last interval.
	p.X.Min, p.X.Max = h.Starts[0], h.Ends[len(h.Ends)-1]+0.3*(h.Ends[len(h.Ends)-1]-h.Starts[0])
	p.Y.Min, p.Y.Max = h.BoundsUs[0], h.BoundsUs[len(h.BoundsUs)-1]*1.5 // room for the band
	named := map[string]bool{}
	for _, s := range h.Spans {
		if !named[s.Name] {
			named[s.Name] = true
			p.Legend.Add(s.Name, swatch{fill{color: spanColor}})
		}
	}
	for _, n := range countLevels(most) {
		p.Legend.Add(fmt.Sprintf("%d requests", n), swatch{fill{color: heatColor(n, most)}})
	}
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	svg, err = PlotSVG(p, 16*vg.Centimeter, 10*vg.Centimeter)
	return svg, err == nil, err
}

// countLevels are the counts the legend shows: 1, the powers of ten up to
// the most, and the most.
func countLevels(most int64) []int64 {
	var out []int64
	for n := int64(1); n < most; n *= 10 {
		out = append(out, n)
	}
	return append(out, most)
}
