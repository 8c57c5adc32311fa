package output

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// ChartFormat returns the chart format of a file name, as the chart is
// written (--chart): render.ChartSVG for ".svg", render.ChartPNG for
// ".png", an ErrFormat error otherwise.
func ChartFormat(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".svg":
		return render.ChartSVG, nil
	case ".png":
		return render.ChartPNG, nil
	default:
		return "", fmt.Errorf("%w: chart %q: the file name must end in .svg or .png", report.ErrFormat, name)
	}
}

// baselineLabel is the second line of the baseline's label.
const baselineLabel = "(baseline)"

// WriteChart draws the report's chart (BarChart) in format
// render.ChartSVG or render.ChartPNG (render.WriteChart).
func WriteChart(w io.Writer, r *report.Report, format string) error {
	if len(r.Targets) == 0 {
		return fmt.Errorf("chart: %w: nothing to draw", results.ErrEmpty)
	}
	if format != render.ChartSVG && format != render.ChartPNG {
		return fmt.Errorf("%w: chart format %q (want %s or %s)", report.ErrFormat, format, render.ChartSVG, render.ChartPNG)
	}
	return render.WriteChart(w, BarChart(r), format)
}

// BarChart is what the report's chart draws: one panel per target, a group of bars
// per strategy (a bar per mode, a workload's total among them, at its
// trimmed mean QPS; the baseline's group labelled as such, and its bars'
// heights drawn across the panel as dashed lines), every ok round as a
// dot and the dropped round as a red cross; then one panel per workload:
// a group per command and the total, a bar per target and strategy that
// measured it, each its own colour. A mode has one colour in every
// target's panel, a target's strategy one in every workload's; each
// panel's legend lists only what the panel draws.
func BarChart(r *report.Report) render.BarChart {
	var all []string
	for _, t := range r.Targets {
		all = append(all, chartModes(t)...)
	}
	modes := report.OrderModes(slices.Compact(slices.Sorted(slices.Values(all))))
	c := render.BarChart{Series: len(modes)}
	for _, t := range r.Targets {
		c.Panels = append(c.Panels, targetPanel(t, modes))
	}
	series := workloadSeries(r)
	for _, tab := range r.Workloads {
		if p, ok := workloadPanel(tab, series); ok {
			c.Panels = append(c.Panels, p)
		}
	}
	return c
}

// chartModes are the modes a target's panel draws: the modes, and each
// workload's total; a workload's commands are drawn in the workload's
// own panel.
func chartModes(t *report.TargetReport) []string {
	var out []string
	for _, m := range t.Modes {
		if sc := t.AnyScenario(m); sc != nil && sc.Workload != "" && sc.Command != results.CommandTotal {
			continue
		}
		out = append(out, m)
	}
	return out
}

// targetPanel is a target's panel; modes are every mode the targets'
// panels draw, in order: a mode's colour is its place among them.
func targetPanel(t *report.TargetReport, modes []string) render.BarPanel {
	own := chartModes(t)
	p := render.BarPanel{Title: t.Target + ": trimmed mean QPS per scenario", Slots: len(own)}
	for i, st := range t.Strategies {
		p.Groups = append(p.Groups, groupLabel(t, st))
		for j, m := range own {
			sc := t.Scenario(st, m)
			if sc == nil {
				continue
			}
			b := render.Bar{Group: i, Slot: j, Series: slices.Index(modes, m), Value: float64(sc.TrimmedQPS)}
			for _, r := range sc.Rounds {
				if r.Dropped {
					b.Dropped = append(b.Dropped, float64(r.QPS))
				} else {
					b.Kept = append(b.Kept, float64(r.QPS))
				}
			}
			p.Bars = append(p.Bars, b)
		}
	}
	for _, o := range t.Overheads {
		for _, m := range own {
			if sc := t.Scenario(o.Baseline, m); sc != nil && sc.TrimmedQPS.Valid() {
				p.Baselines = append(p.Baselines, render.Baseline{Value: float64(sc.TrimmedQPS), Series: slices.Index(modes, m)})
			}
		}
	}
	// The legend: the colours of the modes it drew bars of, the marks of
	// the rounds, and the baseline's line.
	for i, m := range modes {
		if slices.ContainsFunc(t.Scenarios, func(sc *report.Scenario) bool { return sc.Mode == m && sc.TrimmedQPS.Valid() }) {
			p.Legend = append(p.Legend, render.LegendEntry{Name: m, Mark: render.MarkBar, Series: i})
		}
	}
	if slices.ContainsFunc(t.Scenarios, func(sc *report.Scenario) bool { return len(sc.Rounds) > 0 }) {
		p.Legend = append(p.Legend, render.LegendEntry{Name: "round", Mark: render.MarkRound})
	}
	if slices.ContainsFunc(t.Scenarios, func(sc *report.Scenario) bool { return sc.DroppedRound > 0 }) {
		p.Legend = append(p.Legend, render.LegendEntry{Name: "dropped round", Mark: render.MarkDropped})
	}
	if len(t.Overheads) > 0 {
		p.Legend = append(p.Legend, render.LegendEntry{Name: "baseline", Mark: render.MarkBaseline})
	}
	return p
}

// workloadSeries are the series of the workloads' panels, each target's
// strategies in the tables' order, so that a strategy has one colour in
// every workload's panel.
func workloadSeries(r *report.Report) []string {
	var out []string
	for _, t := range r.Targets {
		for _, st := range t.Strategies {
			if slices.ContainsFunc(t.Scenarios, func(sc *report.Scenario) bool { return sc.Strategy == st && sc.Workload != "" }) {
				out = append(out, t.Target+"/"+st)
			}
		}
	}
	return out
}

// groupLabel is the label under a strategy's bars.
func groupLabel(t *report.TargetReport, strategy string) string {
	if isBaseline(t, strategy) {
		return strategy + "\n" + baselineLabel
	}
	return strategy
}

// isBaseline reports whether a strategy is a baseline of its target.
func isBaseline(t *report.TargetReport, strategy string) bool {
	return slices.ContainsFunc(t.Overheads, func(o *report.OverheadTable) bool { return o.Baseline == strategy })
}

// workloadPanel is a workload's panel: a group per command (the total
// last), a bar per target and strategy that measured it; false when no
// target measured it (every attempt failed, or none supports it). all
// are the series of every workload's panel (workloadSeries).
func workloadPanel(tab *report.WorkloadTable, all []string) (render.BarPanel, bool) {
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
		return render.BarPanel{}, false
	}
	p := render.BarPanel{Title: tab.Workload + ": trimmed mean QPS per command", Slots: len(series), OwnWidth: true}
	for _, cmd := range commands {
		label := cmd
		if cmd == results.CommandTotal {
			label = "total (mix)"
		}
		p.Groups = append(p.Groups, label)
	}
	for _, row := range tab.Rows {
		if !row.QPS.Valid() {
			continue
		}
		name := row.Target + "/" + row.Strategy
		p.Bars = append(p.Bars, render.Bar{Group: slices.Index(commands, row.Command), Slot: slices.Index(series, name),
			Series: slices.Index(all, name), Value: float64(row.QPS)})
	}
	for _, name := range series {
		p.Legend = append(p.Legend, render.LegendEntry{Name: name, Mark: render.MarkBar, Series: slices.Index(all, name)})
	}
	return p, true
}
