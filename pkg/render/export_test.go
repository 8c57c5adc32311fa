package render

import (
	"image/color"

	"gonum.org/v1/plot/vg"
)

// What the external tests see of a drawn chart (drawChart).
type (
	TextBox struct {
		Text    string
		Corners [4]vg.Point
	}
	DrawnBar struct {
		Y       float64
		Label   string
		Color   color.Color
		Striped bool
	}
	DrawnPanel struct {
		Title  string
		Legend []string
		Bars   []DrawnBar
	}
	Drawing struct {
		Width, Height vg.Length
		Boxes         []TextBox // every text drawn (SVG only)
		Legend        int       // Boxes[Legend:] are the legends'
		Turned        bool      // whether the x labels are turned
		Panels        []DrawnPanel
	}
)

// DrawChart draws c as WriteChart does and returns what it drew.
func DrawChart(c BarChart, format string) (*Drawing, error) {
	_, d, err := drawChart(c, format)
	if err != nil {
		return nil, err
	}
	out := &Drawing{Width: d.width, Height: d.height, Legend: d.legend, Turned: d.turned}
	for _, b := range d.boxes {
		out.Boxes = append(out.Boxes, TextBox{Text: b.text, Corners: b.corners})
	}
	for _, p := range d.panels {
		dp := DrawnPanel{Title: p.title, Legend: p.legend}
		for _, b := range p.bars {
			dp.Bars = append(dp.Bars, DrawnBar{Y: b.y, Label: b.label, Color: b.color, Striped: b.striped})
		}
		out.Panels = append(out.Panels, dp)
	}
	return out, nil
}

// SeriesLook is the i-th series' look on a bar.
func SeriesLook(i int) (color.Color, bool) {
	f := seriesFill(i)
	return f.color, f.striped
}

// ValueLabel is a bar's figure.
var ValueLabel = valueLabel
