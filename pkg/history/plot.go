package history

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/stats"
)

var (
	roundColor  = color.Gray{Y: 0xa0}
	valueColor  = color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	changeColor = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}
)

// metricLabel is the axis label of a metric.
func metricLabel(metric string) string {
	switch metric {
	case MetricUsPerOp:
		return "us/op"
	case MetricP99:
		return "p99 latency (us)"
	}
	return "QPS"
}

// plotSeries draws a series: every round as a gray dot, each run's
// trimmed mean joined by a line, the level between change points as a
// red segment, and each change point as a dashed red line with its shift.
func plotSeries(sr *Series, metric string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = sr.Scenario + " (" + sr.Fingerprint + ")"
	p.X.Label.Text = "run, oldest first"
	p.Y.Label.Text = metricLabel(metric)
	p.Add(plotter.NewGrid())
	var rounds, values plotter.XYs
	top := 0.0
	for i, pt := range sr.Points {
		x := float64(i + 1)
		for _, v := range pt.Rounds {
			rounds = append(rounds, plotter.XY{X: x, Y: v})
			top = max(top, v)
		}
		values = append(values, plotter.XY{X: x, Y: pt.Value})
	}
	dots, err := plotter.NewScatter(rounds)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(1.5), Color: roundColor}
	line, err := plotter.NewLine(values)
	if err != nil {
		return nil, err
	}
	line.LineStyle = draw.LineStyle{Color: valueColor, Width: vg.Points(1.2)}
	p.Add(dots, line)
	p.Legend.Add("rounds", dots)
	p.Legend.Add("trimmed mean", line)
	// The levels: the mean of the runs' values between change points.
	start := 0
	ends := []int{}
	for _, cp := range sr.ChangePoints {
		ends = append(ends, cp.Index)
	}
	ends = append(ends, len(sr.Points))
	var labels plotter.XYLabels
	for k, end := range ends {
		var vs []float64
		for _, pt := range sr.Points[start:end] {
			vs = append(vs, pt.Value)
		}
		level := stats.Mean(vs)
		seg, err := plotter.NewLine(plotter.XYs{{X: float64(start+1) - 0.4, Y: level}, {X: float64(end) + 0.4, Y: level}})
		if err != nil {
			return nil, err
		}
		seg.LineStyle = draw.LineStyle{Color: changeColor, Width: vg.Points(1.5)}
		p.Add(seg)
		if k == 0 && len(sr.ChangePoints) > 0 {
			p.Legend.Add("level between changes", seg)
		}
		if k < len(sr.ChangePoints) {
			cp := sr.ChangePoints[k]
			x := float64(cp.Index) + 0.5
			mark, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
			if err != nil {
				return nil, err
			}
			mark.LineStyle = draw.LineStyle{Color: changeColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(mark)
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: top * 1.08})
			labels.Labels = append(labels.Labels, stats.FormatChange(cp.Pct))
		}
		start = end
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Color = changeColor
			l.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(l)
	}
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.X.Min, p.X.Max = 0.5, float64(len(sr.Points))+0.5
	p.Y.Min, p.Y.Max = 0, top*1.15
	svg, err := render.PlotSVG(p, 16*vg.Centimeter, 8*vg.Centimeter)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", sr.Scenario, err)
	}
	return svg, nil
}
