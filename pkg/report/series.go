package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// The series part of a report: with the series CSV that "kvbench run"
// writes beside the detail CSV, a plot per scenario of its kept rounds'
// QPS and p99 over time, their stalls and the server's events marked, and
// a stalls table per target. Without one the report is what it was.

// roundRef is what a round keeps of its detail row for the series part:
// the attempt to find its intervals, its stall columns.
type roundRef struct {
	runID     string
	attempt   int
	stalls    *int64
	longestMs *float64
}

func refOf(r *results.Row) roundRef {
	return roundRef{runID: r.RunID, attempt: r.Attempt, stalls: r.Stalls, longestMs: r.LongestStallMs}
}

// seriesKey names one attempt's intervals of one scenario.
type seriesKey struct {
	runID string
	results.ScenarioKey
	round, attempt int
}

// seriesSet is a series CSV's whole rows (no node's), by attempt and
// scenario, in file order.
type seriesSet map[seriesKey][]results.SeriesRow

func (s seriesSet) add(rows []results.SeriesRow) {
	for _, r := range rows {
		if r.Node != "" {
			continue
		}
		mode := r.Mode
		if r.Workload != "" {
			mode = r.Workload + " " + r.Command
		}
		k := seriesKey{r.RunID, results.ScenarioKey{Target: r.Target, Strategy: r.Strategy, Mode: mode}, r.Round, r.Attempt}
		s[k] = append(s[k], r)
	}
}

// AddSeriesFile reads the series CSV at path into the report: its plots
// and stalls table. A file that does not exist leaves the report as it is.
func (r *Report) AddSeriesFile(path string) error {
	rows, err := results.ReadSeriesFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.series == nil {
		r.series = seriesSet{}
	}
	r.series.add(rows)
	return nil
}

// addSeriesBeside reads the series CSVs that "kvbench run" wrote beside
// the detail CSVs, where there are some.
func (r *Report) addSeriesBeside(details []string) error {
	for _, d := range details {
		if p := results.SeriesPath(d); p != "" {
			if err := r.AddSeriesFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundSeries is a kept round's intervals; nil when the series CSV has
// none.
func (r *Report) roundSeries(sc *Scenario, rd *Round) []results.SeriesRow {
	return r.series[seriesKey{rd.ref.runID, sc.Key(), rd.Round, rd.ref.attempt}]
}

// perMinute is a round's stalls per minute; NaN when it has no stall
// columns or no elapsed time.
func (rd *Round) perMinute() float64 {
	if rd.ref.stalls == nil || !rd.ElapsedS.Valid() || rd.ElapsedS <= 0 {
		return math.NaN()
	}
	return float64(*rd.ref.stalls) / (float64(rd.ElapsedS) / 60)
}

// stallsRows are a target's rows of the stalls table: one per scenario
// whose kept rounds have stall columns.
func (r *Report) stallsRows(t *TargetReport) [][]string {
	alpha := r.Options.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	all := func(sc *Scenario) []float64 {
		var xs []float64
		for i := range sc.Rounds {
			if x := sc.Rounds[i].perMinute(); !math.IsNaN(x) {
				xs = append(xs, x)
			}
		}
		return xs
	}
	var rows [][]string
	for _, sc := range t.Scenarios {
		var perMin []float64
		longest, total, has := 0.0, int64(0), false
		for i := range sc.Rounds {
			rd := &sc.Rounds[i]
			if rd.Dropped || rd.ref.stalls == nil {
				continue
			}
			has = true
			total += *rd.ref.stalls
			if rd.ref.longestMs != nil {
				longest = max(longest, *rd.ref.longestMs)
			}
			if x := rd.perMinute(); !math.IsNaN(x) {
				perMin = append(perMin, x)
			}
		}
		if !has {
			continue
		}
		mean := missing
		if len(perMin) > 0 {
			mean = fig(stats.Mean(perMin))
		}
		vs := "-"
		if base := t.Scenario(sc.Baseline, sc.Mode); base != nil && base != sc {
			if a, b := all(sc), all(base); len(a) > 0 && len(b) > 0 {
				c := stats.Compare(a, b, alpha)
				vs = Prob(c.P).String()
				if !c.Significant() {
					vs = "~ (" + vs + ")"
				}
			}
		}
		rows = append(rows, []string{sc.Strategy, sc.Mode, mean.String(), fig(longest).String(), strconv.FormatInt(total, 10), vs})
	}
	return rows
}

// stalls writes the stalls table of each target, with a series CSV.
func (m *md) stalls(r *Report) {
	if r.series == nil {
		return
	}
	sl := &m.l.Stalls
	l := m.l
	title := false
	for _, t := range r.Targets {
		rows := r.stallsRows(t)
		if len(rows) == 0 {
			continue
		}
		if !title {
			m.Printf("\n## %s\n", sl.Title)
			title = true
		}
		m.Printf("\n### %s\n\n", t.Target)
		m.Table([]string{l.Strategy, l.Mode, sl.PerMin, sl.Longest, sl.Total, sl.Vs}, "llrrrl", rows)
	}
	if title {
		alpha := r.Options.Alpha
		if alpha <= 0 {
			alpha = stats.DefaultAlpha
		}
		m.Printf("\n"+sl.Legend+"\n", alpha)
	}
}

// seriesPictures draws a plot per scenario whose kept rounds have
// intervals in the series CSV.
func (r *Report) seriesPictures() ([]render.Picture, error) {
	if r.series == nil {
		return nil, nil
	}
	var pics []render.Picture
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			svg, ok, err := r.seriesPlot(sc).SVG()
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

// intervalEnds are each row's end: the next row's start, the last one's
// start plus the median length.
func intervalEnds(rows []results.SeriesRow) []float64 {
	var steps []float64
	for i := 1; i < len(rows); i++ {
		if d := rows[i].TS - rows[i-1].TS; d > 0 {
			steps = append(steps, d)
		}
	}
	step := 0.0
	if len(steps) > 0 {
		step = stats.Median(steps)
	}
	ends := make([]float64, len(rows))
	for i := range rows {
		ends[i] = rows[i].TS + step
		if i+1 < len(rows) {
			ends[i] = rows[i+1].TS
		}
	}
	return ends
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
func (r *Report) seriesPlot(sc *Scenario) render.TimePlot {
	tp := render.TimePlot{Title: sc.Target + "/" + sc.Strategy + " " + sc.Mode + ": QPS and p99 per interval"}
	for i := range sc.Rounds {
		rd := &sc.Rounds[i]
		rows := r.roundSeries(sc, rd)
		if rd.Dropped || len(rows) == 0 {
			continue
		}
		ends := intervalEnds(rows)
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
