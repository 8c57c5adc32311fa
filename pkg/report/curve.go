package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// MetricCapacity is the capacity's Change: the percentage of the
// baseline's capacity lost.
const MetricCapacity = "capacity lost"

// LoadCurve is the latency–throughput table of one target and mode
// ("run --rates"): a point per strategy and rate.
type LoadCurve struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	// Points are by strategy (in the target's order), then rate.
	Points []*CurvePoint `json:"points"`
}

// CurvePoint is one rate of a scenario's load curve over its rounds: the
// rows whose rate_spec (or rate) is Rate.
type CurvePoint struct {
	Strategy string `json:"strategy"`
	// Rate is the rate as the list gave it: 75% of each attempt's closed
	// loop, or requests per second.
	Rate   string       `json:"rate"`
	Rounds []CurveRound `json:"rounds"`
	// DroppedRound is the round the trimming rule dropped (the one whose
	// p99 is farthest from the median), 0 if none.
	DroppedRound int `json:"dropped_round,omitempty"`
	// The trimmed means over the other rounds: the rate asked for, the
	// QPS measured and the latencies (µs).
	TrimmedRate   Figure `json:"trimmed_rate"`
	TrimmedQPS    Figure `json:"trimmed_qps"`
	TrimmedP50Us  Figure `json:"trimmed_p50_us"`
	TrimmedP99Us  Figure `json:"trimmed_p99_us"`
	TrimmedP999Us Figure `json:"trimmed_p999_us"`
	// LateRounds counts the rounds whose requests left late (send lag p99
	// above measure.MaxSendLag: their latencies include the client's
	// queueing) of the LagRounds that record the send lag.
	LateRounds int `json:"late_rounds"`
	LagRounds  int `json:"lag_rounds"`
	// P99 compares the p99 with the baseline strategy's at the same rate
	// (nil for the baseline, or without one).
	P99 *Change `json:"p99_change,omitempty"`
}

// CurveRound is one ok round of a curve point.
type CurveRound struct {
	Round  int    `json:"round"`
	Rate   Figure `json:"rate"`
	QPS    Figure `json:"qps"`
	P50Us  Figure `json:"p50_us"`
	P99Us  Figure `json:"p99_us"`
	P999Us Figure `json:"p999_us"`
	// SendLagP99Us is how late the requests left, missing in files
	// written before.
	SendLagP99Us Figure      `json:"send_lag_p99_us"`
	Pos          results.Pos `json:"-"`
}

// CapacityTable is the capacity at one objective of a target's scenarios
// ("run --slo"), each against its baseline strategy.
type CapacityTable struct {
	Target string         `json:"target"`
	SLO    string         `json:"slo"`
	Rows   []*CapacityRow `json:"rows"`
}

// CapacityRow is one scenario's capacity over its rounds.
type CapacityRow struct {
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
	// Held counts the rounds whose search found a capacity, of Searched.
	Held     int `json:"held"`
	Searched int `json:"searched"`
	// Capacity is the mean over the rounds the QPS trimming keeps that
	// found one (over all that found one when it dropped the only ones);
	// missing when none did, Why saying why.
	Capacity Figure `json:"capacity_qps"`
	Why      string `json:"why,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// Lost is the percentage of the baseline's capacity lost, with the U
	// test of the rounds' capacities; nil for the baseline.
	Lost *Change `json:"lost,omitempty"`
}

// loadCurves gathers the rows of load curves while the builder reads.
type loadCurves struct {
	points map[curveKey]*CurvePoint
	modes  map[curveKey]bool // (target, mode)
	// capacity are the closed-loop rounds searched, by scenario.
	capacity map[*Scenario][]capacityRound
}

type curveKey struct{ target, strategy, mode, rate string }

// capacityRound is one round's capacity search.
type capacityRound struct {
	round int
	slo   string
	qps   Figure // missing when the search found none
	why   string // why it found none, in files that say
}

// curveRow files a load curve's row (one with a rate) under its point.
func (b *builder) curveRow(r *results.Row, pos results.Pos) {
	if !r.OK() {
		return
	}
	lc := &b.curves
	if lc.points == nil {
		lc.points, lc.modes = make(map[curveKey]*CurvePoint), make(map[curveKey]bool)
	}
	plain := *r
	plain.Rate, plain.RateSpec = nil, ""
	mode := workloadMode(&plain)
	k := curveKey{r.Target, r.Strategy, mode, r.RateKey()}
	p := lc.points[k]
	if p == nil {
		p = &CurvePoint{Strategy: r.Strategy, Rate: k.rate}
		lc.points[k] = p
		lc.modes[curveKey{target: r.Target, mode: mode}] = true
	}
	rate := missing
	if r.Rate != nil {
		rate = measured(*r.Rate)
	}
	lag := missing
	if r.SendLagP99Us != nil {
		lag = fig(*r.SendLagP99Us)
	}
	p.Rounds = append(p.Rounds, CurveRound{Round: r.Round, Rate: rate, QPS: fig(r.QPS),
		P50Us: measured(r.LatP50Us), P99Us: measured(r.LatP99Us), P999Us: measured(r.LatP999Us), SendLagP99Us: lag, Pos: pos})
}

// capacityRow records a closed-loop round's capacity search, if it had one.
func (b *builder) capacityRow(sc *Scenario, r *results.Row) {
	if r.SLO == "" {
		return
	}
	if b.curves.capacity == nil {
		b.curves.capacity = make(map[*Scenario][]capacityRound)
	}
	c := capacityRound{round: r.Round, slo: r.SLO, qps: missing, why: r.CapacityWhy}
	if r.CapacityQPS != nil {
		c.qps = measured(*r.CapacityQPS)
	}
	b.curves.capacity[sc] = append(b.curves.capacity[sc], c)
}

// loadCurves computes the curve points and capacities once the targets'
// scenarios are (their baselines known).
func (b *builder) loadCurves() {
	for _, t := range b.rep.Targets {
		for _, mode := range t.Modes {
			if !b.curves.modes[curveKey{target: t.Target, mode: mode}] {
				continue
			}
			c := &LoadCurve{Target: t.Target, Mode: mode}
			for _, st := range t.Strategies {
				var ps []*CurvePoint
				for k, p := range b.curves.points {
					if k.target == t.Target && k.strategy == st && k.mode == mode {
						ps = append(ps, p)
					}
				}
				slices.SortFunc(ps, func(x, y *CurvePoint) int {
					return cmp.Or(cmp.Compare(meanRate(x), meanRate(y)), cmp.Compare(x.Rate, y.Rate))
				})
				c.Points = append(c.Points, ps...)
			}
			for _, p := range c.Points {
				b.trimPoint(t.Target+"/"+p.Strategy+"/"+mode+" at "+p.Rate, p)
			}
			for _, p := range c.Points {
				b.comparePoint(t, mode, p)
			}
			b.rep.LoadCurves = append(b.rep.LoadCurves, c)
		}
		b.capacityTables(t)
	}
}

// meanRate is the mean of a point's rates, which orders the points.
func meanRate(p *CurvePoint) float64 {
	return stats.Mean(values(p.Rounds, func(r CurveRound) Figure { return r.Rate }))
}

// p99Of is a curve round's p99.
func p99Of(r CurveRound) Figure { return r.P99Us }

// trimPoint sorts one point's rounds, reports duplicates and computes
// its trimmed means.
func (b *builder) trimPoint(name string, p *CurvePoint) {
	slices.SortStableFunc(p.Rounds, func(x, y CurveRound) int { return cmp.Compare(x.Round, y.Round) })
	for i := 1; i < len(p.Rounds); i++ {
		if r := p.Rounds[i]; r.Round == p.Rounds[i-1].Round {
			b.errs.At(r.Pos, "", fmt.Errorf("%w: %s round %d already has an ok row at %s", ErrDuplicate, name, r.Round, p.Rounds[i-1].Pos))
		}
	}
	p99 := p99Of
	drop := -1
	if xs := values(p.Rounds, p99); len(xs) == len(p.Rounds) {
		drop = stats.Trim(xs)
	}
	if drop >= 0 {
		p.DroppedRound = p.Rounds[drop].Round
	}
	mean := func(get func(CurveRound) Figure) Figure {
		var xs []float64
		for i, r := range p.Rounds {
			if v := get(r); i != drop && v.Valid() {
				xs = append(xs, float64(v))
			}
		}
		if len(xs) == 0 {
			return missing
		}
		return fig(stats.Mean(xs))
	}
	p.TrimmedRate = mean(func(r CurveRound) Figure { return r.Rate })
	p.TrimmedQPS = mean(func(r CurveRound) Figure { return r.QPS })
	p.TrimmedP50Us = mean(func(r CurveRound) Figure { return r.P50Us })
	p.TrimmedP99Us = mean(p99)
	p.TrimmedP999Us = mean(func(r CurveRound) Figure { return r.P999Us })
	p.LateRounds, p.LagRounds = 0, 0
	for _, r := range p.Rounds {
		if r.SendLagP99Us.Valid() {
			p.LagRounds++
			if float64(r.SendLagP99Us) > float64(measure.MaxSendLag.Microseconds()) {
				p.LateRounds++
			}
		}
	}
}

// comparePoint compares a point's p99 with the baseline strategy's at the
// same rate.
func (b *builder) comparePoint(t *TargetReport, mode string, p *CurvePoint) {
	name := t.Target + "/" + p.Strategy + "/" + mode + " at " + p.Rate
	p99 := p99Of
	sc := t.Scenario(p.Strategy, mode)
	if sc == nil || sc.Baseline == "" {
		return
	}
	base := b.curves.points[curveKey{t.Target, sc.Baseline, mode, p.Rate}]
	c := Change{Metric: MetricP99, Pct: missing, P: Prob(math.NaN())}
	if base != nil {
		c.Pct = Figure(stats.ChangePct(float64(p.TrimmedP99Us), float64(base.TrimmedP99Us)))
		xs, ys := values(p.Rounds, p99), values(base.Rounds, p99)
		slices.Sort(xs)
		slices.Sort(ys)
		c.P, c.Significant = b.test(name, MetricP99, xs, ys)
	}
	p.P99 = &c
}

// capacityTables makes the capacity tables of a target: one per objective.
func (b *builder) capacityTables(t *TargetReport) {
	var slos []string
	for _, sc := range t.Scenarios {
		for _, c := range b.curves.capacity[sc] {
			if !slices.Contains(slos, c.slo) {
				slos = append(slos, c.slo)
			}
		}
	}
	slices.Sort(slos)
	for _, slo := range slos {
		tab := &CapacityTable{Target: t.Target, SLO: slo}
		rows := make(map[*Scenario]*CapacityRow)
		all := make(map[*Scenario][]float64)
		for _, sc := range t.Scenarios {
			if row, xs := capacityOf(b.curves.capacity[sc], slo, sc); row != nil {
				rows[sc], all[sc] = row, xs
			}
		}
		for _, sc := range t.Scenarios {
			row := rows[sc]
			if row == nil {
				continue
			}
			if base := rows[t.Scenario(sc.Baseline, sc.Mode)]; sc.Baseline != "" && base != nil {
				c := Change{Metric: MetricCapacity, Pct: missing, P: Prob(math.NaN())}
				switch {
				case row.Capacity.Valid() && base.Capacity.Valid():
					c.Pct = Figure(-stats.ChangePct(float64(row.Capacity), float64(base.Capacity)))
				case !row.Capacity.Valid():
					c.Why = "no capacity: " + row.Why
				default:
					c.Why = "baseline " + base.Strategy + " has no capacity: " + base.Why
				}
				xs, ys := slices.Sorted(slices.Values(all[sc])), slices.Sorted(slices.Values(all[t.Scenario(sc.Baseline, sc.Mode)]))
				c.P, c.Significant = b.test(sc.Name()+" at "+slo, MetricCapacity, xs, ys)
				row.Lost = &c
			}
			tab.Rows = append(tab.Rows, row)
		}
		b.rep.Capacities = append(b.rep.Capacities, tab)
	}
}

// capacityOf is a scenario's capacity row at slo from its rounds'
// searches, and the capacities found; nil when no round searched at slo.
// The capacity is the mean over the rounds the QPS trimming keeps that
// found one, or over all that found one when it dropped the only ones;
// without any, Why says why in the search's words (the first round's,
// cut at its details).
func capacityOf(rounds []capacityRound, slo string, sc *Scenario) (*CapacityRow, []float64) {
	row := &CapacityRow{Strategy: sc.Strategy, Mode: sc.Mode, Capacity: missing, Baseline: sc.Baseline}
	var all, kept []float64
	for _, c := range rounds {
		if c.slo != slo {
			continue
		}
		row.Searched++
		if !c.qps.Valid() {
			if row.Why == "" {
				row.Why = shortWhy(c.why)
			}
			continue
		}
		row.Held++
		all = append(all, float64(c.qps))
		if c.round != sc.DroppedRound {
			kept = append(kept, float64(c.qps))
		}
	}
	if row.Searched == 0 {
		return nil, nil
	}
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > 0 {
		row.Capacity, row.Why = fig(stats.Mean(kept)), ""
	} else if row.Why == "" {
		row.Why = "the objective held at no rate tried"
	}
	return row, all
}

// shortWhy is a search's reason without its details: up to the first
// parenthesis or colon ("machine could not hold the schedule at
// 36500/s").
func shortWhy(why string) string {
	if i := strings.IndexAny(why, "(:"); i > 0 {
		why = why[:i]
	}
	return strings.TrimSpace(why)
}

// curveKeys are the keys of a target's load curve points, as Order
// names them ("get at 50%"), in the tables' order.
func (r *Report) curveKeys(target string) []results.ScenarioKey {
	var keys []results.ScenarioKey
	for _, c := range r.LoadCurves {
		if c.Target == target {
			for _, p := range c.Points {
				keys = append(keys, results.ScenarioKey{Target: target, Strategy: p.Strategy, Mode: c.Mode + " at " + p.Rate})
			}
		}
	}
	return keys
}

// Capacity is a scenario's trimmed capacity (of the last objective by
// name when its rows searched several); missing without one.
func (r *Report) Capacity(sc *Scenario) Figure {
	c := missing
	for _, tab := range r.Capacities {
		for _, row := range tab.Rows {
			if tab.Target == sc.Target && row.Strategy == sc.Strategy && row.Mode == sc.Mode {
				c = row.Capacity
			}
		}
	}
	return c
}
