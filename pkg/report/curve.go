package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
	// found one; missing when none did.
	Capacity Figure `json:"capacity_qps"`
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
	qps   Figure // missing when the objective held at no rate tried
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
	c := capacityRound{round: r.Round, slo: r.SLO, qps: missing}
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
		rounds := func(sc *Scenario) (all []float64, kept []float64, held, searched int) {
			for _, c := range b.curves.capacity[sc] {
				if c.slo != slo {
					continue
				}
				searched++
				if !c.qps.Valid() {
					continue
				}
				held++
				all = append(all, float64(c.qps))
				if c.round != sc.DroppedRound {
					kept = append(kept, float64(c.qps))
				}
			}
			return
		}
		for _, sc := range t.Scenarios {
			_, kept, held, searched := rounds(sc)
			if searched == 0 {
				continue
			}
			row := &CapacityRow{Strategy: sc.Strategy, Mode: sc.Mode, Held: held, Searched: searched, Capacity: missing, Baseline: sc.Baseline}
			if len(kept) > 0 {
				row.Capacity = fig(stats.Mean(kept))
			}
			if sc.Baseline != "" {
				if base := t.Scenario(sc.Baseline, sc.Mode); base != nil {
					baseAll, baseKept, _, _ := rounds(base)
					all, _, _, _ := rounds(sc)
					c := Change{Metric: MetricCapacity, Pct: missing, P: Prob(math.NaN())}
					if len(kept) > 0 && len(baseKept) > 0 {
						c.Pct = Figure(-stats.ChangePct(float64(row.Capacity), stats.Mean(baseKept)))
					}
					slices.Sort(all)
					slices.Sort(baseAll)
					c.P, c.Significant = b.test(sc.Name()+" at "+slo, MetricCapacity, all, baseAll)
					row.Lost = &c
				}
			}
			tab.Rows = append(tab.Rows, row)
		}
		b.rep.Capacities = append(b.rep.Capacities, tab)
	}
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

// capacityOf is a scenario's trimmed capacity (of the last objective by
// name when its rows searched several); missing without one.
func (r *Report) capacityOf(sc *Scenario) Figure {
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

// curveLabels are the load curves' headings and legends, by language.
var curveLabels = map[string]struct {
	title, capacity, capCol, rate, rateQPS, qps, closed, vs, late, lost, held, legend, capLegend, plot string
}{
	LangEN: {
		title: "Latency–throughput", capacity: "Capacity at %s", capCol: "capacity (req/s)", rate: "rate", rateQPS: "rate (req/s)", qps: "QPS",
		closed: "closed loop", vs: "p99 vs baseline", late: "late", lost: "capacity lost vs baseline", held: "held in rounds",
		legend:    "Each rate is an open-loop phase after the attempt's closed loop, on the same server (run --rates; a percentage is of that closed loop's QPS): latencies in us from each request's intended send time, trimmed means over rounds (the round whose p99 is farthest from the median dropped). The closed loop's row is the scenario's own measurement. late: the rounds whose requests left late (send lag p99 above %v) of those that record it: their latencies include the client's queueing, not only the server's. p99 vs baseline: the change against the baseline strategy at the same rate, with the Mann–Whitney U p-value of the rounds, ~ when not significant at α = %g.",
		capLegend: "Capacity: the highest rate at which the objective held (run --slo), the mean over the rounds the QPS trimming keeps; held in rounds: the rounds whose search found one. Capacity lost: the percentage of the baseline strategy's capacity lost, with the Mann–Whitney U p-value of the rounds, ~ when not significant at α = %g.",
		plot:      "%s: %s against throughput at each rate of the load curve (trimmed means over rounds), one curve per target and strategy; dashed line: the objective; crosses: each scenario's capacity",
	},
	LangZH: {
		title: "延迟–吞吐", capacity: "%s 下的容量", capCol: "容量（请求/秒）", rate: "速率", rateQPS: "速率（请求/秒）", qps: "QPS",
		closed: "闭环", vs: "p99 对比基线", late: "发送滞后", lost: "相对基线损失的容量", held: "达标轮次",
		legend:    "每个速率是该次尝试闭环测量之后、在同一服务器上的开环阶段（run --rates；百分比相对于该闭环的 QPS）：延迟单位 us，从每个请求的预定发送时刻算起，为各轮去异常后的均值（p99 离中位数最远的一轮被剔除）。闭环一行是该场景本身的测量。发送滞后：请求发送滞后（send lag p99 超过 %v）的轮次/记录了滞后的轮次：其延迟含客户端排队，不只是服务器的。p99 对比基线：与同一速率下基线策略相比的变化及各轮的 Mann–Whitney U p 值，α = %g 下不显著时为 ~。",
		capLegend: "容量：目标仍满足的最高速率（run --slo），取 QPS 去异常后保留轮次的均值；达标轮次：搜索找到容量的轮次。损失的容量：相对基线策略容量损失的百分比及各轮的 Mann–Whitney U p 值，α = %g 下不显著时为 ~。",
		plot:      "%s：负载曲线各速率下的 %s 与吞吐（各轮去异常均值），每个目标与策略一条曲线；虚线：目标；叉号：各场景的容量",
	},
}

// curves writes the latency–throughput tables and the capacity tables.
func (m *mdWriter) curves(r *Report) {
	if len(r.LoadCurves) == 0 && len(r.Capacities) == 0 {
		return
	}
	cl := curveLabels[r.lang()]
	l := m.l
	alpha := r.Options.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	if len(r.LoadCurves) > 0 {
		m.printf("\n## %s\n", cl.title)
		for _, c := range r.LoadCurves {
			m.printf("\n### %s: %s\n\n", c.Target, c.Mode)
			var t *TargetReport
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
					rows = append(rows, []string{st, cl.closed, "", sc.TrimmedQPS.String(),
						sc.TrimmedP50Us.String(), sc.TrimmedP99Us.String(), sc.TrimmedP999Us.String(), "", "", strconv.Itoa(len(sc.Rounds))})
				}
			}
			m.table([]string{l.strategy, cl.rate, cl.rateQPS, cl.qps, "p50 (us)", "p99 (us)", "p99.9 (us)", cl.late, cl.vs, l.rounds}, "llrrrrrrlr", rows)
		}
		m.printf("\n"+cl.legend+"\n", measure.MaxSendLag, alpha)
	}
	for i, tab := range r.Capacities {
		if i == 0 || tab.SLO != r.Capacities[i-1].SLO {
			m.printf("\n## "+cl.capacity+"\n", tab.SLO)
		}
		m.printf("\n### %s\n\n", tab.Target)
		var rows [][]string
		for _, row := range tab.Rows {
			lost := "-"
			if row.Lost != nil {
				lost = row.Lost.String()
			}
			rows = append(rows, []string{row.Strategy, row.Mode, row.Capacity.String(), fmt.Sprintf("%d/%d", row.Held, row.Searched), lost})
		}
		m.table([]string{l.strategy, l.mode, cl.capCol, cl.held, cl.lost}, "llrrl", rows)
		if i == len(r.Capacities)-1 {
			m.printf("\n"+cl.capLegend+"\n", alpha)
		}
	}
}

// curvePictures draws a latency–throughput plot per mode with a load
// curve.
func (r *Report) curvePictures() ([]Picture, error) {
	var pics []Picture
	for _, mode := range r.modes() {
		svg, stat, ok, err := r.curvePlot(mode)
		if err != nil {
			return nil, fmt.Errorf("latency-throughput plot of %s: %w", mode, err)
		}
		if ok {
			pics = append(pics, Picture{Title: fmt.Sprintf(curveLabels[r.lang()].plot, mode, stat), SVG: svg})
		}
	}
	return pics, nil
}

// plotStat is the latency statistic a mode's plot draws: the objective's
// when it names p50, p99 or p99.9, else p99.
func (r *Report) plotStat() (string, time.Duration) {
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

// curvePlot draws one mode's load curves: the latency (log scale)
// against the measured QPS, a line per target and strategy through its
// rates, the objective as a horizontal line and each scenario's capacity
// marked on it. ok is false without a curve of the mode.
func (r *Report) curvePlot(mode string) (svg []byte, stat string, ok bool, err error) {
	stat, limit := r.plotStat()
	get := map[string]func(*CurvePoint) Figure{
		"p50":  func(p *CurvePoint) Figure { return p.TrimmedP50Us },
		"p99":  func(p *CurvePoint) Figure { return p.TrimmedP99Us },
		"p999": func(p *CurvePoint) Figure { return p.TrimmedP999Us },
	}[stat]
	p := plot.New()
	p.Title.Text = mode + ": " + stat + " latency against throughput"
	p.X.Label.Text = "throughput (req/s)"
	p.Y.Label.Text = stat + " latency (us)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Tick.Marker = wholeTicks{}
	p.Add(plotter.NewGrid())
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
	lo, hi, right := math.Inf(1), 0.0, 0.0
	lineOf := func(target, strategy string) draw.LineStyle {
		return draw.LineStyle{Color: curveColors[slices.Index(strategies, strategy)%len(curveColors)], Width: vg.Points(1.5),
			Dashes: curveDashes[slices.Index(targets, target)%len(curveDashes)]}
	}
	for _, c := range r.LoadCurves {
		if c.Mode != mode {
			continue
		}
		for _, st := range strategies {
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
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, stat, false, err
			}
			l.LineStyle = lineOf(c.Target, st)
			s.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2), Color: l.LineStyle.Color}
			p.Add(l, s)
			p.Legend.Add(c.Target+"/"+st, l)
			for _, xy := range xys {
				lo, hi, right = min(lo, xy.Y), max(hi, xy.Y), max(right, xy.X)
			}
		}
	}
	if hi == 0 {
		return nil, stat, false, nil
	}
	if limit > 0 {
		y := float64(limit) / float64(time.Microsecond)
		lo, hi = min(lo, y), max(hi, y)
		for _, tab := range r.Capacities {
			for _, row := range tab.Rows {
				if row.Mode != mode || !row.Capacity.Valid() || !slices.Contains(targets, tab.Target) {
					continue
				}
				s, err := plotter.NewScatter(plotter.XYs{{X: float64(row.Capacity), Y: y}})
				if err != nil {
					return nil, stat, false, err
				}
				s.GlyphStyle = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(5), Color: lineOf(tab.Target, row.Strategy).Color}
				p.Add(s)
				right = max(right, float64(row.Capacity))
			}
		}
		obj, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: right * 1.05, Y: y}})
		if err != nil {
			return nil, stat, false, err
		}
		obj.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(4)}}
		p.Add(obj)
		p.Legend.Add(fmt.Sprintf("objective %s < %v", stat, limit), obj)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Min, p.X.Max = 0, right*1.05
	p.Y.Min, p.Y.Max = lo/1.2, hi*1.5
	svg, err = svgOf(p, 16*vg.Centimeter, 10*vg.Centimeter)
	return svg, stat, err == nil, err
}
