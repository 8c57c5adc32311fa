package report

import (
	"errors"
	"io/fs"
	"math"

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

// Intervals is a kept round's intervals; nil when the series CSV has
// none.
func (r *Report) Intervals(sc *Scenario, rd *Round) []results.SeriesRow {
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

// StallsTable is a target's stalls: one row per scenario whose kept
// rounds have the stall columns (stalls, longest_stall_ms), which "kvbench
// run" fills with a series CSV.
type StallsTable struct {
	Target string
	Rows   []StallsRow
}

// StallsRow is one scenario's stalls over its kept rounds.
type StallsRow struct {
	Strategy, Mode string
	// PerMinute is the kept rounds' mean of stalls per minute measured;
	// missing when none records its elapsed time.
	PerMinute Figure
	// LongestMs is the longest stall of the kept rounds (0 for none);
	// Count their stalls.
	LongestMs Figure
	Count     int64
	// P is the Mann–Whitney U p-value of the ok rounds' stalls per minute
	// against the baseline strategy's, NaN when not compared (the
	// baseline itself, or a side without them); Significant is P <= α.
	P           Prob
	Significant bool
}

// StallsByLatencyOnly reports whether no kept round with stall columns
// has two full intervals, so that only the latency rule (--stall-latency)
// could find a stall in them: the rate rule compares an interval with the
// median of the full ones. An adaptive run's slices, shorter than
// --interval, are such rounds.
func (r *Report) StallsByLatencyOnly() bool {
	some := false
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			for i := range sc.Rounds {
				rd := &sc.Rounds[i]
				if rd.Dropped || rd.ref.stalls == nil {
					continue
				}
				// A first and a last interval may be partial: two full
				// ones need at least three.
				if len(r.Intervals(sc, rd)) >= 3 {
					return false
				}
				some = true
			}
		}
	}
	return some
}

// Stalls are the stalls tables of the targets that have one; nil without
// a series CSV.
func (r *Report) Stalls() []StallsTable {
	if r.series == nil {
		return nil
	}
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
	var out []StallsTable
	for _, t := range r.Targets {
		tab := StallsTable{Target: t.Target}
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
			row := StallsRow{Strategy: sc.Strategy, Mode: sc.Mode, PerMinute: missing, LongestMs: fig(longest), Count: total, P: Prob(math.NaN())}
			if len(perMin) > 0 {
				row.PerMinute = fig(stats.Mean(perMin))
			}
			if base := t.Scenario(sc.Baseline, sc.Mode); base != nil && base != sc {
				if a, b := all(sc), all(base); len(a) > 0 && len(b) > 0 {
					c := stats.Compare(a, b, alpha)
					row.P, row.Significant = Prob(c.P), c.Significant()
				}
			}
			tab.Rows = append(tab.Rows, row)
		}
		if len(tab.Rows) > 0 {
			out = append(out, tab)
		}
	}
	return out
}
