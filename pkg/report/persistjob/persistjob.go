// Package persistjob is the persistence jobs part of a report: what a
// snapshot or log rewrite set off during the measured phase ("kvbench run
// --persist-job") cost, per target, mode and strategy (Table, from each
// round's job columns: Of, Rows), tested against the baseline strategy
// (Row.Against), and the targets side by side (Sides).
package persistjob

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kvbench/kvbench/pkg/report/figure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Table is one target and mode's persistence jobs.
type Table struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	Rows   []*Row `json:"rows"`
}

// Row is one strategy's job over its ok rounds: medians of the
// rounds that record each figure, missing when none does.
type Row struct {
	Strategy    string `json:"strategy"`
	Persistence string `json:"persistence,omitempty"`
	// Job is the job: bgsave or rewrite.
	Job string `json:"job"`
	// Rounds counts the ok rounds with the job.
	Rounds int `json:"rounds"`
	// JobS is the job's time (job_s); ForkMs the server's pause to start
	// it (fork_ms); CowMB what it copied or kept alive (cow_bytes), in
	// MB (10^6 bytes).
	JobS   figure.Figure `json:"job_s"`
	ForkMs figure.Figure `json:"fork_ms"`
	CowMB  figure.Figure `json:"cow_mb"`
	// RSSRatio is the server's memory at its peak over its level before
	// the job (rss_peak_bytes / rss_before_bytes).
	RSSRatio figure.Figure `json:"rss_peak_over_before"`
	// P99Ratio is the load's p99 during the job over its p99 before
	// (p99_during_us / p99_before_us); P99BeforeUs the latter.
	P99Ratio    figure.Figure `json:"p99_during_over_before"`
	P99BeforeUs figure.Figure `json:"p99_before_us"`
	// LongestStallMs is the phase's longest stall (longest_stall_ms).
	LongestStallMs figure.Figure `json:"longest_stall_ms"`
	// RecoveryS is the time p99 took to come back within 10% of its
	// level before, after the job's end (p99_recovery_s), over the rounds
	// where it came back; NotRecovered counts the rounds where it did
	// not, by the phase's end.
	RecoveryS    figure.Figure `json:"p99_recovery_s"`
	NotRecovered int           `json:"not_recovered,omitempty"`
	// Baseline is the strategy the P99Ratio is compared with (the
	// target's baseline, when it ran the job); P is the Mann–Whitney U
	// p-value of the two strategies' ok rounds' P99Ratio, NaN when not
	// compared; Significant is P <= α.
	Baseline    string      `json:"baseline,omitempty"`
	P           figure.Prob `json:"p"`
	Significant bool        `json:"significant"`

	ratios []float64 // the rounds' p99 during / before
}

// Side sets the targets' jobs of one kind and mode side by
// side: rows matched by persistence class, as SideBySide's, each cell a
// strategy's p99 during÷before and its ratio to the reference target's.
type Side struct {
	Job       string    `json:"job"`
	Mode      string    `json:"mode"`
	Reference string    `json:"reference"`
	Targets   []string  `json:"targets"`
	Rows      []SideRow `json:"rows"`
}

// SideRow is one persistence class of a Side.
type SideRow struct {
	Persistence string     `json:"persistence"`
	Cells       []SideCell `json:"cells"`
}

// SideCell is one target's strategy in a SideRow.
type SideCell struct {
	// Strategy is empty when the target has none of the row's class.
	Strategy string `json:"strategy,omitempty"`
	// P99Ratio is the strategy's p99 during÷before (Row's);
	// Ratio compares it with the reference's (nil for the reference, or
	// without one in the row).
	P99Ratio figure.Figure `json:"p99_during_over_before"`
	Ratio    *figure.Ratio `json:"ratio,omitempty"`
}

// Round is what a round's row says of its persistence job (Of).
type Round struct {
	job                                                                 string
	jobS, forkMs, cow, rssBefore, rssPeak, p99Before, p99During, recovS float64 // NaN: not recorded
	longestMs                                                           float64
	recovered                                                           bool
}

// Of reads a row's persistence job columns.
func Of(r *results.Row) Round {
	if r.PersistJob == "" {
		return Round{}
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	i := func(p *int64) float64 {
		if p == nil {
			return math.NaN()
		}
		return float64(*p)
	}
	return Round{job: r.PersistJob, jobS: f(r.JobS), forkMs: f(r.ForkMs), cow: i(r.CowBytes), rssBefore: i(r.RSSBeforeBytes),
		rssPeak: i(r.RSSPeakBytes), p99Before: f(r.P99BeforeUs), p99During: f(r.P99DuringUs), recovS: f(r.P99RecoveryS),
		longestMs: f(r.LongestStallMs), recovered: r.P99RecoveryS != nil}
}

// p99Ratio is the round's p99 during over before; NaN when either is not
// recorded.
func (j Round) p99Ratio() float64 {
	if !(j.p99Before > 0) || !(j.p99During > 0) {
		return math.NaN()
	}
	return j.p99During / j.p99Before
}

// Job is the round's job's name; "" without one.
func (j Round) Job() string { return j.job }

// Rows are a scenario's rows of the persistence job tables, from its
// rounds' jobs: one per job they ran (in the order of
// target.PersistJobNames: bgsave, then rewrite).
func Rows(strategy, persistence string, rounds []Round) []*Row {
	by := make(map[string][]Round)
	for _, j := range rounds {
		if j.job != "" {
			by[j.job] = append(by[j.job], j)
		}
	}
	var out []*Row
	for _, job := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		js := by[job]
		median := func(get func(Round) float64) figure.Figure {
			var xs []float64
			for _, j := range js {
				if x := get(j); !math.IsNaN(x) {
					xs = append(xs, x)
				}
			}
			if len(xs) == 0 {
				return figure.Missing
			}
			return figure.Of(stats.Median(xs))
		}
		row := &Row{Strategy: strategy, Persistence: persistence, Job: job, Rounds: len(js), P: figure.Prob(math.NaN()),
			JobS:   median(func(j Round) float64 { return j.jobS }),
			ForkMs: median(func(j Round) float64 { return j.forkMs }),
			CowMB:  median(func(j Round) float64 { return j.cow / 1e6 }),
			RSSRatio: median(func(j Round) float64 {
				if !(j.rssBefore > 0) {
					return math.NaN()
				}
				return j.rssPeak / j.rssBefore
			}),
			P99Ratio:       median(Round.p99Ratio),
			P99BeforeUs:    median(func(j Round) float64 { return j.p99Before }),
			LongestStallMs: median(func(j Round) float64 { return j.longestMs }),
			RecoveryS:      median(func(j Round) float64 { return j.recovS }),
		}
		for _, j := range js {
			if !j.recovered {
				row.NotRecovered++
			}
			if x := j.p99Ratio(); !math.IsNaN(x) {
				row.ratios = append(row.ratios, x)
			}
		}
		out = append(out, row)
	}
	return out
}

// Test is the report's two-sided test of two sorted samples of metric
// about subject: the p-value and whether it is significant.
type Test func(subject, metric string, x, y []float64) (figure.Prob, bool)

// Against tests the row's rounds' p99 during÷before against base's
// (the baseline strategy's row of the same job), by test about subject.
func (r *Row) Against(base *Row, subject string, test Test) {
	r.Baseline = base.Strategy
	x, y := slices.Sorted(slices.Values(r.ratios)), slices.Sorted(slices.Values(base.ratios))
	r.P, r.Significant = test(subject, "p99 during/before", x, y)
}

// Entry is a row of a target's scenario of a mode, for Sides.
type Entry struct {
	Target, Mode string
	Row          *Row
}

// Order is how Sides orders what it sets side by side: the report's
// targets, its modes (a function that orders them), its persistence
// classes.
type Order struct {
	Targets     []string
	Modes       func([]string) []string
	Persistence []string
}

// Sides sets the targets' job rows (entries, in the report's order of
// targets and scenarios) side by side, per job and mode, when the report
// has two targets or more: rows matched by persistence class against the
// reference target ref (the side-by-side tables' own), tested by test.
func Sides(entries []Entry, ref string, order Order, test Test) []*Side {
	if len(order.Targets) < 2 || ref == "" {
		return nil
	}
	type key struct{ job, mode string }
	byKey := make(map[key]map[string][]*Row) // by target
	var keys []key
	for _, e := range entries {
		k := key{e.Row.Job, e.Mode}
		if byKey[k] == nil {
			byKey[k] = make(map[string][]*Row)
			keys = append(keys, k)
		}
		byKey[k][e.Target] = append(byKey[k][e.Target], e.Row)
	}
	var out []*Side
	modes := order.Modes(slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, k := range keys {
			if !yield(k.mode) {
				return
			}
		}
	})))
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(cmp.Compare(x.job, y.job), cmp.Compare(slices.Index(modes, x.mode), slices.Index(modes, y.mode)))
	})
	for _, k := range keys {
		targets := byKey[k]
		if len(targets) < 2 || targets[ref] == nil {
			continue
		}
		side := &Side{Job: k.job, Mode: k.mode, Reference: ref}
		for _, t := range order.Targets {
			if targets[t] != nil {
				side.Targets = append(side.Targets, t)
			}
		}
		for _, class := range jobClasses(targets, order.Persistence) {
			for _, group := range matchClass(side.Targets, targets, class) {
				row := SideRow{Persistence: class}
				refRow := group[slices.Index(side.Targets, ref)]
				for i, r := range group {
					cell := SideCell{P99Ratio: figure.Missing}
					if r == nil {
						row.Cells = append(row.Cells, cell)
						continue
					}
					cell.Strategy, cell.P99Ratio = r.Strategy, r.P99Ratio
					if side.Targets[i] != ref && refRow != nil {
						cell.Ratio = &figure.Ratio{Ratio: figure.Missing}
						if r.P99Ratio.Valid() && refRow.P99Ratio.Valid() && refRow.P99Ratio > 0 {
							cell.Ratio.Ratio = figure.Of(float64(r.P99Ratio) / float64(refRow.P99Ratio))
						}
						x, y := slices.Sorted(slices.Values(r.ratios)), slices.Sorted(slices.Values(refRow.ratios))
						cell.Ratio.P, cell.Ratio.Significant = test(fmt.Sprintf("%s %s %s vs %s", k.job, k.mode, side.Targets[i], ref), "p99 during/before", x, y)
					}
					row.Cells = append(row.Cells, cell)
				}
				side.Rows = append(side.Rows, row)
			}
		}
		out = append(out, side)
	}
	return out
}

// jobClasses are the persistence classes of the rows, in the tables'
// order (persistenceOrder, then the others by name).
func jobClasses(targets map[string][]*Row, persistenceOrder []string) []string {
	var classes []string
	for _, rows := range targets {
		for _, r := range rows {
			if !slices.Contains(classes, r.Persistence) {
				classes = append(classes, r.Persistence)
			}
		}
	}
	rank := func(p string) int {
		if i := slices.Index(persistenceOrder, p); i >= 0 {
			return i
		}
		return len(persistenceOrder)
	}
	slices.SortFunc(classes, func(x, y string) int { return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(x, y)) })
	return classes
}

// matchClass is the side-by-side rows of one persistence class: one row
// when every target has at most one strategy of it; otherwise a row per
// strategy, the other cells empty. Each row has a cell per target of
// order, nil where the target has none.
func matchClass(order []string, targets map[string][]*Row, class string) [][]*Row {
	of := make([][]*Row, len(order))
	single := true
	for i, t := range order {
		for _, r := range targets[t] {
			if r.Persistence == class {
				of[i] = append(of[i], r)
			}
		}
		single = single && len(of[i]) <= 1
	}
	if single {
		row := make([]*Row, len(order))
		for i := range order {
			if len(of[i]) == 1 {
				row[i] = of[i][0]
			}
		}
		return [][]*Row{row}
	}
	var out [][]*Row
	for i := range order {
		for _, r := range of[i] {
			row := make([]*Row, len(order))
			row[i] = r
			out = append(out, row)
		}
	}
	return out
}
