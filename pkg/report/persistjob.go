package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kvbench/kvbench/pkg/report/attempt"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// The persistence jobs part of a report: what a snapshot or log rewrite
// set off during the measured phase ("kvbench run --persist-job") cost,
// per target, mode and strategy (PersistJobTable), tested against the
// baseline strategy, the targets side by side (PersistJobSide); the
// server events that fell inside the phases (ServerEvents); and the
// latency over time of each attempt with a job (Heatmaps).

// PersistJobTable is one target and mode's persistence jobs.
type PersistJobTable struct {
	Target string           `json:"target"`
	Mode   string           `json:"mode"`
	Rows   []*PersistJobRow `json:"rows"`
}

// PersistJobRow is one strategy's job over its ok rounds: medians of the
// rounds that record each figure, missing when none does.
type PersistJobRow struct {
	Strategy    string `json:"strategy"`
	Persistence string `json:"persistence,omitempty"`
	// Job is the job: bgsave or rewrite.
	Job string `json:"job"`
	// Rounds counts the ok rounds with the job.
	Rounds int `json:"rounds"`
	// JobS is the job's time (job_s); ForkMs the server's pause to start
	// it (fork_ms); CowMB what it copied or kept alive (cow_bytes), in
	// MB (10^6 bytes).
	JobS   Figure `json:"job_s"`
	ForkMs Figure `json:"fork_ms"`
	CowMB  Figure `json:"cow_mb"`
	// RSSRatio is the server's memory at its peak over its level before
	// the job (rss_peak_bytes / rss_before_bytes).
	RSSRatio Figure `json:"rss_peak_over_before"`
	// P99Ratio is the load's p99 during the job over its p99 before
	// (p99_during_us / p99_before_us); P99BeforeUs the latter.
	P99Ratio    Figure `json:"p99_during_over_before"`
	P99BeforeUs Figure `json:"p99_before_us"`
	// LongestStallMs is the phase's longest stall (longest_stall_ms).
	LongestStallMs Figure `json:"longest_stall_ms"`
	// RecoveryS is the time p99 took to come back within 10% of its
	// level before, after the job's end (p99_recovery_s), over the rounds
	// where it came back; NotRecovered counts the rounds where it did
	// not, by the phase's end.
	RecoveryS    Figure `json:"p99_recovery_s"`
	NotRecovered int    `json:"not_recovered,omitempty"`
	// Baseline is the strategy the P99Ratio is compared with (the
	// target's baseline, when it ran the job); P is the Mann–Whitney U
	// p-value of the two strategies' ok rounds' P99Ratio, NaN when not
	// compared; Significant is P <= α.
	Baseline    string `json:"baseline,omitempty"`
	P           Prob   `json:"p"`
	Significant bool   `json:"significant"`

	ratios []float64 // the rounds' p99 during / before
}

// PersistJobSide sets the targets' jobs of one kind and mode side by
// side: rows matched by persistence class, as SideBySide's, each cell a
// strategy's p99 during÷before and its ratio to the reference target's.
type PersistJobSide struct {
	Job       string              `json:"job"`
	Mode      string              `json:"mode"`
	Reference string              `json:"reference"`
	Targets   []string            `json:"targets"`
	Rows      []PersistJobSideRow `json:"rows"`
}

// PersistJobSideRow is one persistence class of a PersistJobSide.
type PersistJobSideRow struct {
	Persistence string               `json:"persistence"`
	Cells       []PersistJobSideCell `json:"cells"`
}

// PersistJobSideCell is one target's strategy in a PersistJobSideRow.
type PersistJobSideCell struct {
	// Strategy is empty when the target has none of the row's class.
	Strategy string `json:"strategy,omitempty"`
	// P99Ratio is the strategy's p99 during÷before (PersistJobRow's);
	// Ratio compares it with the reference's (nil for the reference, or
	// without one in the row).
	P99Ratio Figure `json:"p99_during_over_before"`
	Ratio    *Ratio `json:"ratio,omitempty"`
}

// roundJob is what a round's row says of its persistence job.
type roundJob struct {
	job                                                                 string
	jobS, forkMs, cow, rssBefore, rssPeak, p99Before, p99During, recovS float64 // NaN: not recorded
	longestMs                                                           float64
	recovered                                                           bool
}

// jobOf reads a row's persistence job columns.
func jobOf(r *results.Row) roundJob {
	if r.PersistJob == "" {
		return roundJob{}
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
	return roundJob{job: r.PersistJob, jobS: f(r.JobS), forkMs: f(r.ForkMs), cow: i(r.CowBytes), rssBefore: i(r.RSSBeforeBytes),
		rssPeak: i(r.RSSPeakBytes), p99Before: f(r.P99BeforeUs), p99During: f(r.P99DuringUs), recovS: f(r.P99RecoveryS),
		longestMs: f(r.LongestStallMs), recovered: r.P99RecoveryS != nil}
}

// p99Ratio is the round's p99 during over before; NaN when either is not
// recorded.
func (j roundJob) p99Ratio() float64 {
	if !(j.p99Before > 0) || !(j.p99During > 0) {
		return math.NaN()
	}
	return j.p99During / j.p99Before
}

// persistJobTables builds the persistence job tables and their side by
// side (finish, after the overheads set each scenario's baseline).
func (b *builder) persistJobTables() {
	rows := make(map[*Scenario]map[string]*PersistJobRow) // by scenario, by job
	for _, t := range b.rep.Targets {
		for _, m := range t.Modes {
			tab := &PersistJobTable{Target: t.Target, Mode: m}
			for _, st := range t.Strategies {
				sc := t.Scenario(st, m)
				if sc == nil {
					continue
				}
				for _, row := range jobRows(sc) {
					if rows[sc] == nil {
						rows[sc] = make(map[string]*PersistJobRow)
					}
					rows[sc][row.Job] = row
					tab.Rows = append(tab.Rows, row)
				}
			}
			if len(tab.Rows) > 0 {
				b.rep.PersistJobs = append(b.rep.PersistJobs, tab)
			}
		}
		for _, sc := range t.Scenarios {
			base := t.Scenario(sc.Baseline, sc.Mode)
			for job, row := range rows[sc] {
				if base == nil || base == sc || rows[base][job] == nil {
					continue
				}
				row.Baseline = base.Strategy
				x, y := slices.Sorted(slices.Values(row.ratios)), slices.Sorted(slices.Values(rows[base][job].ratios))
				row.P, row.Significant = b.test(sc.Name()+" "+job, "p99 during/before", x, y)
			}
		}
	}
	b.persistJobSides(rows)
}

// jobRows are a scenario's rows of the persistence job tables, one per
// job its ok rounds ran (in the order of target.PersistJobNames: bgsave,
// then rewrite).
func jobRows(sc *Scenario) []*PersistJobRow {
	by := make(map[string][]roundJob)
	for _, rd := range sc.Rounds {
		if rd.job.job != "" {
			by[rd.job.job] = append(by[rd.job.job], rd.job)
		}
	}
	var out []*PersistJobRow
	for _, job := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		js := by[job]
		median := func(get func(roundJob) float64) Figure {
			var xs []float64
			for _, j := range js {
				if x := get(j); !math.IsNaN(x) {
					xs = append(xs, x)
				}
			}
			if len(xs) == 0 {
				return missing
			}
			return fig(stats.Median(xs))
		}
		row := &PersistJobRow{Strategy: sc.Strategy, Persistence: sc.Persistence, Job: job, Rounds: len(js), P: Prob(math.NaN()),
			JobS:   median(func(j roundJob) float64 { return j.jobS }),
			ForkMs: median(func(j roundJob) float64 { return j.forkMs }),
			CowMB:  median(func(j roundJob) float64 { return j.cow / 1e6 }),
			RSSRatio: median(func(j roundJob) float64 {
				if !(j.rssBefore > 0) {
					return math.NaN()
				}
				return j.rssPeak / j.rssBefore
			}),
			P99Ratio:       median(roundJob.p99Ratio),
			P99BeforeUs:    median(func(j roundJob) float64 { return j.p99Before }),
			LongestStallMs: median(func(j roundJob) float64 { return j.longestMs }),
			RecoveryS:      median(func(j roundJob) float64 { return j.recovS }),
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

// persistJobSides sets the targets' job rows side by side, per job and
// mode, when the report has two targets or more: rows matched by
// persistence class against the reference target (the side-by-side
// tables' own).
func (b *builder) persistJobSides(rows map[*Scenario]map[string]*PersistJobRow) {
	ref := b.rep.Reference
	if len(b.rep.Targets) < 2 || ref == "" {
		return
	}
	type key struct{ job, mode string }
	byKey := make(map[key]map[string][]*PersistJobRow) // by target
	var keys []key
	for _, t := range b.rep.Targets {
		for _, sc := range t.Scenarios {
			for job, row := range rows[sc] {
				k := key{job, sc.Mode}
				if byKey[k] == nil {
					byKey[k] = make(map[string][]*PersistJobRow)
					keys = append(keys, k)
				}
				byKey[k][t.Target] = append(byKey[k][t.Target], row)
			}
		}
	}
	modes := OrderModes(slices.Compact(slices.Sorted(func(yield func(string) bool) {
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
		side := &PersistJobSide{Job: k.job, Mode: k.mode, Reference: ref}
		for _, t := range b.rep.Targets {
			if targets[t.Target] != nil {
				side.Targets = append(side.Targets, t.Target)
			}
		}
		for _, class := range jobClasses(targets) {
			for _, group := range matchClass(side.Targets, targets, class) {
				row := PersistJobSideRow{Persistence: class}
				refRow := group[slices.Index(side.Targets, ref)]
				for i, r := range group {
					cell := PersistJobSideCell{P99Ratio: missing}
					if r == nil {
						row.Cells = append(row.Cells, cell)
						continue
					}
					cell.Strategy, cell.P99Ratio = r.Strategy, r.P99Ratio
					if side.Targets[i] != ref && refRow != nil {
						cell.Ratio = &Ratio{Ratio: missing}
						if r.P99Ratio.Valid() && refRow.P99Ratio.Valid() && refRow.P99Ratio > 0 {
							cell.Ratio.Ratio = fig(float64(r.P99Ratio) / float64(refRow.P99Ratio))
						}
						x, y := slices.Sorted(slices.Values(r.ratios)), slices.Sorted(slices.Values(refRow.ratios))
						cell.Ratio.P, cell.Ratio.Significant = b.test(fmt.Sprintf("%s %s %s vs %s", k.job, k.mode, side.Targets[i], ref), "p99 during/before", x, y)
					}
					row.Cells = append(row.Cells, cell)
				}
				side.Rows = append(side.Rows, row)
			}
		}
		b.rep.PersistJobSides = append(b.rep.PersistJobSides, side)
	}
}

// jobClasses are the persistence classes of the rows, in the tables'
// order (none, no, everysec, always, then the others by name).
func jobClasses(targets map[string][]*PersistJobRow) []string {
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
func matchClass(order []string, targets map[string][]*PersistJobRow, class string) [][]*PersistJobRow {
	of := make([][]*PersistJobRow, len(order))
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
		row := make([]*PersistJobRow, len(order))
		for i := range order {
			if len(of[i]) == 1 {
				row[i] = of[i][0]
			}
		}
		return [][]*PersistJobRow{row}
	}
	var out [][]*PersistJobRow
	for i := range order {
		for _, r := range of[i] {
			row := make([]*PersistJobRow, len(order))
			row[i] = r
			out = append(out, row)
		}
	}
	return out
}

// ServerEvent is a server event seen inside an attempt's measured phase
// (the series CSV's events column): a rewrite, a snapshot, a delayed
// fsync, the persistence job set off.
type ServerEvent struct {
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
	Round    int    `json:"round"`
	Attempt  int    `json:"attempt"`
	Event    string `json:"event"`
	// Intervals counts the intervals it was seen in; FromS is where the
	// first of them began and ToS where the last ended, in seconds from
	// the phase's start.
	Intervals int     `json:"intervals"`
	FromS     float64 `json:"from_s"`
	ToS       float64 `json:"to_s"`
}

// ServerEvents are the server events of every attempt of the series CSV,
// by target, strategy, mode, round and attempt, then event; nil without
// a series CSV.
func (r *Report) ServerEvents() []ServerEvent {
	var out []ServerEvent
	for _, k := range r.series.keys() {
		for _, e := range attempt.Events(r.series[k]) {
			out = append(out, ServerEvent{Target: k.Target, Strategy: k.Strategy, Mode: k.Mode, Round: k.round, Attempt: k.attempt,
				Event: e.Event, Intervals: e.Intervals, FromS: e.FromS, ToS: e.ToS})
		}
	}
	return out
}

// keys are the series' attempts in order: by target, strategy, mode,
// round, attempt and run.
func (s seriesSet) keys() []seriesKey {
	var ks []seriesKey
	for k := range s {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(x, y seriesKey) int {
		return cmp.Or(cmp.Compare(x.Target, y.Target), cmp.Compare(x.Strategy, y.Strategy), cmp.Compare(x.Mode, y.Mode),
			cmp.Compare(x.round, y.round), cmp.Compare(x.attempt, y.attempt), cmp.Compare(x.runID, y.runID))
	})
	return ks
}

// IntervalEnds are the end of each row of an attempt's series, in
// seconds from its phase's start (attempt.IntervalEnds).
func IntervalEnds(rows []results.SeriesRow) []float64 { return attempt.IntervalEnds(rows) }

// Heatmap is an attempt's latency over time (attempt.Heatmap).
type Heatmap = attempt.Heatmap

// Heatmaps are the heatmaps of every ok round with a persistence job
// whose intervals carry their histograms (the series CSV's
// latency_hist), in the tables' order.
func (r *Report) Heatmaps() ([]Heatmap, error) {
	var out []Heatmap
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			for i := range sc.Rounds {
				rd := &sc.Rounds[i]
				if rd.job.job == "" {
					continue
				}
				h, ok, err := attempt.HeatmapOf(r.Intervals(sc, rd))
				if err != nil {
					return nil, fmt.Errorf("%s round %d: %w", sc.Name(), rd.Round, err)
				}
				if ok {
					h.Target, h.Strategy, h.Mode, h.Round, h.Job = sc.Target, sc.Strategy, sc.Mode, rd.Round, rd.job.job
					out = append(out, h)
				}
			}
		}
	}
	return out, nil
}
