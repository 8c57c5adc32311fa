package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/pkg/report/attempt"
	"github.com/kvbench/kvbench/pkg/report/persistjob"
	"github.com/kvbench/kvbench/pkg/results"
)

// The persistence jobs part of a report: what a snapshot or log rewrite
// set off during the measured phase ("kvbench run --persist-job") cost,
// per target, mode and strategy (PersistJobTable), tested against the
// baseline strategy, the targets side by side (PersistJobSide); the
// server events that fell inside the phases (ServerEvents); and the
// latency over time of each attempt with a job (Heatmaps).

// PersistJobTable is one target and mode's persistence jobs
// (persistjob.Table).
type PersistJobTable = persistjob.Table

// PersistJobRow is one strategy's job over its ok rounds
// (persistjob.Row).
type PersistJobRow = persistjob.Row

// PersistJobSide sets the targets' jobs of one kind and mode side by side
// (persistjob.Side).
type PersistJobSide = persistjob.Side

// PersistJobSideRow is one persistence class of a PersistJobSide.
type PersistJobSideRow = persistjob.SideRow

// PersistJobSideCell is one target's strategy in a PersistJobSideRow.
type PersistJobSideCell = persistjob.SideCell

// persistJobTables builds the persistence job tables and their side by
// side (finish, after the overheads set each scenario's baseline).
func (b *builder) persistJobTables() {
	rows := make(map[*Scenario]map[string]*PersistJobRow) // by scenario, by job
	var entries []persistjob.Entry
	for _, t := range b.rep.Targets {
		for _, m := range t.Modes {
			tab := &PersistJobTable{Target: t.Target, Mode: m}
			for _, st := range t.Strategies {
				sc := t.Scenario(st, m)
				if sc == nil {
					continue
				}
				var jobs []persistjob.Round
				for _, rd := range sc.Rounds {
					jobs = append(jobs, rd.job)
				}
				for _, row := range persistjob.Rows(sc.Strategy, sc.Persistence, jobs) {
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
				row.Against(rows[base][job], sc.Name()+" "+job, b.test)
			}
			for _, row := range rows[sc] {
				entries = append(entries, persistjob.Entry{Target: t.Target, Mode: sc.Mode, Row: row})
			}
		}
	}
	var targets []string
	for _, t := range b.rep.Targets {
		targets = append(targets, t.Target)
	}
	b.rep.PersistJobSides = persistjob.Sides(entries, b.rep.Reference, persistjob.Order{Targets: targets, Modes: OrderModes, Persistence: persistenceOrder}, b.test)
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
				if rd.job.Job() == "" {
					continue
				}
				h, ok, err := attempt.HeatmapOf(r.Intervals(sc, rd))
				if err != nil {
					return nil, fmt.Errorf("%s round %d: %w", sc.Name(), rd.Round, err)
				}
				if ok {
					h.Target, h.Strategy, h.Mode, h.Round, h.Job = sc.Target, sc.Strategy, sc.Mode, rd.Round, rd.job.Job()
					out = append(out, h)
				}
			}
		}
	}
	return out, nil
}
