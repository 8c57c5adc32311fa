package output

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// stalls writes the stalls table of each target (report.Stalls), with a
// series CSV.
func (m *md) stalls(r *report.Report) {
	tabs := r.Stalls()
	if len(tabs) == 0 {
		return
	}
	sl := &m.l.Stalls
	l := m.l
	m.Printf("\n## %s\n", sl.Title)
	for _, tab := range tabs {
		m.Printf("\n### %s\n\n", tab.Target)
		var rows [][]string
		for _, row := range tab.Rows {
			vs := "-"
			if !math.IsNaN(float64(row.P)) {
				vs = row.P.String()
				if !row.Significant {
					vs = "~ (" + vs + ")"
				}
			}
			rows = append(rows, []string{row.Strategy, row.Mode, row.PerMinute.String(), row.LongestMs.String(), strconv.FormatInt(row.Count, 10), vs})
		}
		m.Table([]string{l.Strategy, l.Mode, sl.PerMin, sl.Longest, sl.Total, sl.Vs}, "llrrrl", rows)
	}
	alpha := r.Options.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	m.Printf("\n"+sl.Legend+"\n", alpha)
	if r.StallsByLatencyOnly() {
		m.Printf("\n%s\n", sl.LatencyOnly)
	}
}

// seriesPictures draws a plot per scenario whose kept rounds have
// intervals in the series CSV.
func seriesPictures(r *report.Report) ([]render.Picture, error) {
	var pics []render.Picture
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			svg, ok, err := seriesPlot(r, sc).SVG()
			if err != nil {
				return nil, fmt.Errorf("series plot of %s: %w", sc.Name(), err)
			}
			if ok {
				pics = append(pics, render.Picture{Title: fmt.Sprintf(render.LabelsOf(r.Options.Lang).SeriesPlot, sc.Target, sc.Strategy, sc.Mode,
					100*measure.DefaultStallBelow, measure.DefaultStallLatency), SVG: svg})
			}
		}
	}
	return pics, nil
}

// stalled marks the intervals of a round that the default stall rule
// finds (measure.DefaultStallBelow of the median QPS of the full
// intervals, measure.DefaultStallLatency): the series CSV does not keep
// the thresholds the run used.
func stalled(rows []results.SeriesRow, ends []float64) []bool {
	var rates []float64
	for i, s := range rows {
		if s.QPS != nil && i > 0 && i < len(rows)-1 {
			rates = append(rates, *s.QPS)
		}
	}
	if len(rates) == 0 {
		for _, s := range rows {
			if s.QPS != nil {
				rates = append(rates, *s.QPS)
			}
		}
	}
	out := make([]bool, len(rows))
	if len(rates) == 0 {
		return out
	}
	median := stats.Median(rates)
	limitUs := float64(measure.DefaultStallLatency.Microseconds())
	for i, s := range rows {
		out[i] = s.QPS != nil && ends[i] > s.TS && (*s.QPS < measure.DefaultStallBelow*median || s.MaxUs != nil && *s.MaxUs > limitUs)
	}
	return out
}

// seriesPlot is one scenario's kept rounds over time (render.TimePlot),
// each interval's stall by the default rule.
func seriesPlot(r *report.Report, sc *report.Scenario) render.TimePlot {
	tp := render.TimePlot{Title: sc.Target + "/" + sc.Strategy + " " + sc.Mode + ": QPS and p99 per interval"}
	for i := range sc.Rounds {
		rd := &sc.Rounds[i]
		rows := r.Intervals(sc, rd)
		if rd.Dropped || len(rows) == 0 {
			continue
		}
		ends := report.IntervalEnds(rows)
		st := stalled(rows, ends)
		tr := render.TimeRound{Name: "round " + strconv.Itoa(rd.Round)}
		for j, s := range rows {
			tr.Intervals = append(tr.Intervals, render.Interval{Start: s.TS, End: ends[j], QPS: s.QPS, P99Us: s.P99Us,
				Stalled: st[j], Events: results.SplitEvents(s.Events)})
		}
		tp.Rounds = append(tp.Rounds, tr)
	}
	return tp
}
