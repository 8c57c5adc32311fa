package output

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/stats"
	"gonum.org/v1/plot/plotter"
)

// curves writes the latency–throughput tables and the capacity tables.
func (m *md) curves(r *report.Report) {
	if len(r.LoadCurves) == 0 && len(r.Capacities) == 0 {
		return
	}
	cl := &m.l.Curves
	l := m.l
	alpha := r.Options.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	if len(r.LoadCurves) > 0 {
		m.Printf("\n## %s\n", cl.Title)
		for _, c := range r.LoadCurves {
			m.Printf("\n### %s: %s\n\n", c.Target, c.Mode)
			var t *report.TargetReport
			for _, x := range r.Targets {
				if x.Target == c.Target {
					t = x
				}
			}
			var rows [][]string
			for _, st := range t.Strategies {
				for _, p := range c.Points {
					if p.Strategy == st {
						late := ""
						if p.LagRounds > 0 {
							late = fmt.Sprintf("%d/%d", p.LateRounds, p.LagRounds)
						}
						rows = append(rows, []string{st, p.Rate, p.TrimmedRate.String(), p.TrimmedQPS.String(),
							p.TrimmedP50Us.String(), p.TrimmedP99Us.String(), p.TrimmedP999Us.String(), late, p.P99.String(), strconv.Itoa(len(p.Rounds))})
					}
				}
				if sc := t.Scenario(st, c.Mode); sc != nil {
					rows = append(rows, []string{st, cl.Closed, "", sc.TrimmedQPS.String(),
						sc.TrimmedP50Us.String(), sc.TrimmedP99Us.String(), sc.TrimmedP999Us.String(), "", "", strconv.Itoa(len(sc.Rounds))})
				}
			}
			m.Table([]string{l.Strategy, cl.Rate, cl.RateQPS, cl.QPS, "p50 (us)", "p99 (us)", "p99.9 (us)", cl.Late, cl.Vs, l.Rounds}, "llrrrrrrlr", rows)
		}
		m.Printf("\n"+cl.Legend+"\n", measure.MaxSendLag, alpha)
	}
	for i, tab := range r.Capacities {
		if i == 0 || tab.SLO != r.Capacities[i-1].SLO {
			m.Printf("\n## "+cl.Capacity+"\n", tab.SLO)
		}
		m.Printf("\n### %s\n\n", tab.Target)
		var rows [][]string
		for _, row := range tab.Rows {
			lost := "-"
			if row.Lost != nil {
				lost = row.Lost.String()
			}
			capa := row.Capacity.String()
			if !row.Capacity.Valid() && row.Why != "" {
				capa += " (" + row.Why + ")"
			}
			rows = append(rows, []string{row.Strategy, row.Mode, capa, fmt.Sprintf("%d/%d", row.Held, row.Searched), lost})
		}
		m.Table([]string{l.Strategy, l.Mode, cl.CapacityCol, cl.Held, cl.Lost}, "llrrl", rows)
		if i == len(r.Capacities)-1 {
			m.Printf("\n"+cl.CapacityLegend+"\n", alpha)
		}
	}
}

// curvePictures draws a latency–throughput plot per mode with a load
// curve.
func curvePictures(r *report.Report) ([]render.Picture, error) {
	var pics []render.Picture
	for _, mode := range r.Modes() {
		svg, ok, err := curvePlot(r, mode).SVG()
		if err != nil {
			return nil, fmt.Errorf("latency-throughput plot of %s: %w", mode, err)
		}
		if ok {
			stat, _ := plotStat(r)
			pics = append(pics, render.Picture{Title: fmt.Sprintf(render.LabelsOf(r.Options.Lang).Curves.Plot, mode, stat), SVG: svg})
		}
	}
	return pics, nil
}

// plotStat is the latency statistic a mode's plot draws: the objective's
// when it names p50, p99 or p99.9, else p99.
func plotStat(r *report.Report) (string, time.Duration) {
	for _, tab := range r.Capacities {
		for _, o := range strings.Split(tab.SLO, ",") {
			stat, limit, _ := strings.Cut(o, "<")
			d, err := time.ParseDuration(limit)
			if err == nil && (stat == "p50" || stat == "p99" || stat == "p999") {
				return stat, d
			}
		}
	}
	return "p99", 0
}

// curvePlot is one mode's load curves: the latency against the measured
// QPS, a line per target and strategy through its rates (a strategy's
// colour and a target's dashes are their places among the mode's), the
// objective and each scenario's capacity on it.
func curvePlot(r *report.Report, mode string) render.LoadPlot {
	stat, limit := plotStat(r)
	get := map[string]func(*report.CurvePoint) report.Figure{
		"p50":  func(p *report.CurvePoint) report.Figure { return p.TrimmedP50Us },
		"p99":  func(p *report.CurvePoint) report.Figure { return p.TrimmedP99Us },
		"p999": func(p *report.CurvePoint) report.Figure { return p.TrimmedP999Us },
	}[stat]
	lp := render.LoadPlot{Title: mode + ": " + stat + " latency against throughput", Stat: stat, Objective: limit}
	var targets, strategies []string
	for _, c := range r.LoadCurves {
		if c.Mode != mode {
			continue
		}
		targets = append(targets, c.Target)
		for _, pt := range c.Points {
			if !slices.Contains(strategies, pt.Strategy) {
				strategies = append(strategies, pt.Strategy)
			}
		}
	}
	for _, c := range r.LoadCurves {
		if c.Mode != mode {
			continue
		}
		for si, st := range strategies {
			var xys plotter.XYs
			for _, pt := range c.Points {
				if y := get(pt); pt.Strategy == st && pt.TrimmedQPS.Valid() && y.Valid() && y > 0 {
					xys = append(xys, plotter.XY{X: float64(pt.TrimmedQPS), Y: float64(y)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			lp.Lines = append(lp.Lines, render.LoadLine{Name: c.Target + "/" + st, Strategy: si,
				Target: slices.Index(targets, c.Target), Points: xys})
		}
	}
	for _, tab := range r.Capacities {
		for _, row := range tab.Rows {
			// A capacity is drawn in its strategy's colour: a strategy
			// without a curve of the mode has none, and no mark.
			si := slices.Index(strategies, row.Strategy)
			if row.Mode != mode || !row.Capacity.Valid() || !slices.Contains(targets, tab.Target) || si < 0 {
				continue
			}
			lp.Capacities = append(lp.Capacities, render.LoadMark{QPS: float64(row.Capacity), Strategy: si})
		}
	}
	return lp
}
