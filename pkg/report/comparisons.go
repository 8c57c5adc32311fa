package report

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kvbench/kvbench/pkg/stats"
)

// The comparisons: per mode, each strategy against its target's baseline
// (the pairs of the overhead tables) and each target against the
// reference target (the pairs of the side-by-side and workload tables),
// in QPS and p99, each as a ratio with its interval and a verdict
// (stats.VerdictAt, the margin Options.Precision).
//
// Two scenarios of an adaptive run (rows with a block) are compared in
// pairs: a block's log-ratio is the mean log figure of one scenario's
// slices in the block minus the other's, disturbed slices left out, and a
// block where either has none is left out; the ratio is the
// Hodges–Lehmann estimate of those log-ratios and the interval the
// Wilcoxon signed-rank one (stats.LogRatioInterval). The slices of a
// block were measured minutes apart at most, in a mirrored order, so the
// machine's slow drift, which both see alike, cancels in the log-ratio;
// a U test of all slices would count that drift as noise. Other
// scenarios (rounds of a fixed-round run, each on a fresh server) are
// compared unpaired over their ok rounds (stats.UnpairedRatio, the
// Mann–Whitney interval).

// The metrics of the comparisons, as the comparisons CSV names them.
const (
	// CompareQPS is the throughput: a ratio above 1 is faster.
	CompareQPS = "qps"
	// CompareP99 is the p99 latency (p99_us): a ratio below 1 is faster.
	CompareP99 = "p99"
)

// The kinds of comparison.
const (
	// AgainstBaseline compares a strategy with its target's baseline.
	AgainstBaseline = "baseline"
	// AgainstReference compares a target's strategy with the reference
	// target's strategy of the same persistence class.
	AgainstReference = "reference"
)

// Comparison is one scenario against another in one metric: the ratio
// Target/Strategy over AgainstTarget/AgainstStrategy, in the same mode.
type Comparison struct {
	// Target, Strategy and Mode name the scenario compared.
	Target, Strategy, Mode string
	// AgainstTarget and AgainstStrategy name the scenario it is compared
	// with, of the same mode: the baseline (the same target) or the
	// reference target's strategy.
	AgainstTarget, AgainstStrategy string
	// Kind is AgainstBaseline or AgainstReference.
	Kind string
	// Metric is CompareQPS or CompareP99.
	Metric string
	// Ratio is the estimate and its interval; its bounds are NaN when
	// there is no interval, its estimate NaN when there is nothing to
	// compare.
	Ratio stats.Ratio
	// Confidence is the interval's exact level (Ratio.Confidence); 0
	// when there is no interval.
	Confidence float64
	// Verdict is stats.VerdictAt the ratio, at the margin Margin and the
	// report's confidence level: an interval below that level (fewer than
	// 6 pairs) is undecided.
	Verdict stats.Verdict
	// Margin is the report's precision: an interval within 1 ± Margin is
	// stats.Equivalent.
	Margin float64
	// Measurements is what the interval stands on (Ratio.N): the blocks
	// paired when Paired, else the smaller side's rounds.
	Measurements int
	// Paired is true when both scenarios come from an adaptive run and
	// were compared block by block.
	Paired bool
}

// HigherIsBetter says whether a ratio above 1 is good for the metric.
func HigherIsBetter(metric string) bool { return metric == CompareQPS }

// FormatRatio prints a ratio's figure as the comparisons CSV and JSON
// hold it: 4 decimals (a ±3% interval needs more than 2), "" when it has
// none (NaN: never 0 or inf).
func FormatRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// MarshalJSON writes the comparison with its ratio's figures at 4
// decimals, null where there is none (never NaN).
func (c Comparison) MarshalJSON() ([]byte, error) {
	num := func(x float64) json.RawMessage {
		if s := FormatRatio(x); s != "" {
			return json.RawMessage(s)
		}
		return json.RawMessage("null")
	}
	return json.Marshal(struct {
		Target          string          `json:"target"`
		Strategy        string          `json:"strategy"`
		Mode            string          `json:"mode"`
		AgainstTarget   string          `json:"against_target"`
		AgainstStrategy string          `json:"against_strategy"`
		Kind            string          `json:"kind"`
		Metric          string          `json:"metric"`
		Ratio           json.RawMessage `json:"ratio"`
		Lo              json.RawMessage `json:"ratio_lo"`
		Hi              json.RawMessage `json:"ratio_hi"`
		Confidence      float64         `json:"confidence"`
		Verdict         stats.Verdict   `json:"verdict"`
		Margin          float64         `json:"margin"`
		Measurements    int             `json:"measurements"`
		Paired          bool            `json:"paired"`
	}{c.Target, c.Strategy, c.Mode, c.AgainstTarget, c.AgainstStrategy, c.Kind, c.Metric,
		num(c.Ratio.Est), num(c.Ratio.Lo), num(c.Ratio.Hi), c.Confidence, c.Verdict, c.Margin, c.Measurements, c.Paired})
}

// SliceSummary describes the slices of a scenario of an adaptive run.
type SliceSummary struct {
	// Slices counts the ok slices the comparisons use; Disturbed those
	// the disturbance rule left out.
	Slices    int `json:"slices"`
	Disturbed int `json:"disturbed"`
	// Blocks counts the blocks the scenario has a slice in.
	Blocks int `json:"blocks"`
	// MedianQPS is the median QPS of the slices used; MedianLo and
	// MedianHi bound its confidence interval (stats.Describe) at the exact
	// level Confidence (0 when there is none).
	MedianQPS          Figure  `json:"median_qps"`
	MedianLo, MedianHi Figure  `json:"-"`
	Confidence         float64 `json:"ci_confidence"`
	// MedianUsPerOp and MedianP99Us are the medians of the slices' us/op
	// and p99 (missing when none records it).
	MedianUsPerOp Figure `json:"median_us_per_op"`
	MedianP99Us   Figure `json:"median_p99_us"`
}

// MarshalJSON names the interval's bounds as the trimmed CSV does.
func (s SliceSummary) MarshalJSON() ([]byte, error) {
	type plain SliceSummary
	return json.Marshal(struct {
		plain
		Lo Figure `json:"median_ci_lo"`
		Hi Figure `json:"median_ci_hi"`
	}{plain(s), s.MedianLo, s.MedianHi})
}

// DisturbedSlices counts the slices of one mode of an adaptive run the
// disturbance rule left out of the comparisons.
type DisturbedSlices struct {
	// Mode is the mode.
	Mode string `json:"mode"`
	// Slices counts the mode's ok slices, of every target and strategy;
	// Disturbed those left out.
	Slices    int `json:"slices"`
	Disturbed int `json:"disturbed"`
	// Reasons group the disturbed slices by what broke the rule, the
	// most frequent first; a slice that broke it twice counts in both.
	Reasons []DisturbedReason `json:"reasons,omitempty"`
}

// DisturbedReason is one reason of the disturbance rule (what the
// disturbed column names before its figures: "steal", "other
// processes").
type DisturbedReason struct {
	// Reason is the reason's name; Slices how many slices it left out;
	// Worst the disturbed column's text of the slice it hit hardest.
	Reason string `json:"reason"`
	Slices int    `json:"slices"`
	Worst  string `json:"worst"`

	worst float64
}

// slices fills sc.Slices when the scenario's rounds are slices of an
// adaptive run: their medians, without the disturbed ones.
func (b *builder) slices(sc *Scenario) {
	if !slices.ContainsFunc(sc.Rounds, func(r Round) bool { return r.Block > 0 }) {
		return
	}
	s := &SliceSummary{}
	blocks := make(map[int]bool)
	var qps, us, p99 []float64
	for _, r := range sc.Rounds {
		if r.Block == 0 {
			continue // a round merged from another run: no slice
		}
		blocks[r.Block] = true
		if r.Disturbed != "" {
			s.Disturbed++
			continue
		}
		s.Slices++
		qps = append(qps, float64(r.QPS))
		us = append(us, float64(r.UsPerOp))
		if r.P99Us.Valid() {
			p99 = append(p99, float64(r.P99Us))
		}
	}
	s.Blocks = len(blocks)
	d := stats.Describe(qps, b.opts.Confidence)
	s.MedianQPS, s.MedianLo, s.MedianHi, s.Confidence = fig(d.Median), fig(d.Lo), fig(d.Hi), d.Confidence
	s.MedianUsPerOp, s.MedianP99Us = fig(stats.Median(us)), fig(stats.Median(p99))
	sc.Slices = s
}

// pair is two scenarios of a mode to compare.
type pair struct {
	sc, against *Scenario
	kind        string
}

// comparisons builds Report.Comparisons and Report.Disturbed, once the
// overhead, side-by-side and workload tables have paired the scenarios:
// mode by mode (set, get, mixed, then the others), the baseline pairs
// (targets by name, strategies in the tables' order), then the reference
// pairs (in the side-by-side or workload table's order), QPS then p99.
func (b *builder) comparisons() {
	byMode := make(map[string][]pair)
	var modes []string
	add := func(mode string, p pair) {
		if !slices.Contains(modes, mode) {
			modes = append(modes, mode)
		}
		byMode[mode] = append(byMode[mode], p)
	}
	targets := make(map[string]*TargetReport)
	for _, t := range b.rep.Targets {
		targets[t.Target] = t
		for _, o := range t.Overheads {
			for _, m := range t.Modes {
				base := t.Scenario(o.Baseline, m)
				if base == nil {
					continue
				}
				for _, st := range o.Strategies {
					if sc := t.Scenario(st, m); sc != nil {
						add(m, pair{sc, base, AgainstBaseline})
					}
				}
			}
		}
	}
	for _, tab := range b.rep.SideBySide {
		if tab.NoReference != "" {
			continue
		}
		refCol := slices.IndexFunc(tab.Columns, func(c SideColumn) bool { return c.Name == tab.Reference })
		for _, row := range tab.Rows {
			ref := row.Cells[refCol]
			if ref.Strategy == "" {
				continue
			}
			against := targets[tab.Columns[refCol].Target].Scenario(ref.Strategy, tab.Mode)
			for i, c := range row.Cells {
				if i != refCol && c.Strategy != "" {
					add(tab.Mode, pair{targets[tab.Columns[i].Target].Scenario(c.Strategy, tab.Mode), against, AgainstReference})
				}
			}
		}
	}
	for _, tab := range b.rep.Workloads {
		for _, row := range tab.Rows {
			if row.Ratio == nil {
				continue
			}
			mode := tab.Workload + " " + row.Command
			sc := targets[row.Target].Scenario(row.Strategy, mode)
			if against := targets[tab.Reference].match(sc); against != nil {
				add(mode, pair{sc, against, AgainstReference})
			}
		}
	}
	b.rep.Comparisons = []Comparison{} // a list in the JSON, empty or not
	for _, m := range OrderModes(modes) {
		for _, p := range byMode[m] {
			if p.sc.RefusedRounds > 0 || p.against.RefusedRounds > 0 {
				continue // WarnRefusedWrites says they are compared with nothing
			}
			for _, metric := range []string{CompareQPS, CompareP99} {
				if c, ok := b.compare(p, metric); ok {
					b.rep.Comparisons = append(b.rep.Comparisons, c)
				}
			}
		}
	}
	b.disturbed()
}

// figureOf is a round's figure of a comparison's metric.
func figureOf(metric string) func(Round) Figure {
	if metric == CompareP99 {
		return func(r Round) Figure { return r.P99Us }
	}
	return func(r Round) Figure { return r.QPS }
}

// compare compares one metric of a pair; false for a p99 that a side does
// not record.
func (b *builder) compare(p pair, metric string) (Comparison, bool) {
	get := figureOf(metric)
	c := Comparison{
		Target: p.sc.Target, Strategy: p.sc.Strategy, Mode: p.sc.Mode,
		AgainstTarget: p.against.Target, AgainstStrategy: p.against.Strategy,
		Kind: p.kind, Metric: metric, Margin: b.opts.Precision,
	}
	if p.sc.Slices != nil && p.against.Slices != nil {
		x, y := blockLogs(p.sc, get), blockLogs(p.against, get)
		if metric == CompareP99 && (len(x) == 0 || len(y) == 0) {
			return c, false
		}
		var d []float64
		for _, blk := range slices.Sorted(maps.Keys(x)) {
			if v, ok := y[blk]; ok {
				d = append(d, x[blk]-v)
			}
		}
		c.Ratio, c.Paired = stats.LogRatioInterval(d, b.opts.Confidence), true
	} else {
		x, y := unpaired(p.sc, get), unpaired(p.against, get)
		if metric == CompareP99 && (len(x) == 0 || len(y) == 0) {
			return c, false
		}
		c.Ratio = stats.UnpairedRatio(y, x, b.opts.Confidence)
	}
	c.Confidence, c.Measurements = c.Ratio.Confidence, c.Ratio.N
	c.Verdict = stats.VerdictAt(c.Ratio, c.Margin, HigherIsBetter(metric), b.opts.Confidence)
	return c, true
}

// blockLogs is, per block, the mean log figure of a scenario's slices in
// it, the disturbed ones left out.
func blockLogs(sc *Scenario, get func(Round) Figure) map[int]float64 {
	sums, ns := make(map[int]float64), make(map[int]int)
	for _, r := range sc.Rounds {
		if v := get(r); r.Block > 0 && r.Disturbed == "" && v.Valid() && v > 0 {
			sums[r.Block] += math.Log(float64(v))
			ns[r.Block]++
		}
	}
	for blk, n := range ns {
		sums[blk] /= float64(n)
	}
	return sums
}

// unpaired is a scenario's figures that an unpaired comparison uses:
// every ok round's, but a disturbed slice's.
func unpaired(sc *Scenario, get func(Round) Figure) []float64 {
	var xs []float64
	for _, r := range sc.Rounds {
		if v := get(r); (r.Block == 0 || r.Disturbed == "") && v.Valid() && v > 0 {
			xs = append(xs, float64(v))
		}
	}
	return xs
}

// disturbed counts, per mode of the adaptive scenarios, the slices the
// disturbance rule left out, and groups them by reason.
func (b *builder) disturbed() {
	byMode := make(map[string]*DisturbedSlices)
	var modes []string
	for _, t := range b.rep.Targets {
		for _, sc := range t.Scenarios {
			if sc.Slices == nil {
				continue
			}
			d := byMode[sc.Mode]
			if d == nil {
				d = &DisturbedSlices{Mode: sc.Mode}
				byMode[sc.Mode] = d
				modes = append(modes, sc.Mode)
			}
			d.Slices += sc.Slices.Slices + sc.Slices.Disturbed
			d.Disturbed += sc.Slices.Disturbed
			for _, r := range sc.Rounds {
				if r.Block > 0 && r.Disturbed != "" {
					d.addReasons(r.Disturbed)
				}
			}
		}
	}
	for _, m := range OrderModes(modes) {
		d := byMode[m]
		slices.SortStableFunc(d.Reasons, func(x, y DisturbedReason) int {
			return cmp.Or(cmp.Compare(y.Slices, x.Slices), cmp.Compare(x.Reason, y.Reason))
		})
		b.rep.Disturbed = append(b.rep.Disturbed, *d)
	}
}

// addReasons files a disturbed slice under each reason its text gives
// ("steal 0.35 CPUs > 0.10, other processes 0.85 CPUs > 0.20"): the
// words before the first figure name the reason, and that figure says
// how hard it hit.
func (d *DisturbedSlices) addReasons(text string) {
	for _, part := range strings.Split(text, ", ") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, size := part, math.Inf(-1)
		if i := strings.IndexFunc(part, unicode.IsDigit); i > 0 {
			name = strings.TrimSpace(part[:i])
			num, _, _ := strings.Cut(part[i:], " ")
			if v, err := strconv.ParseFloat(num, 64); err == nil {
				size = v
			}
		}
		i := slices.IndexFunc(d.Reasons, func(r DisturbedReason) bool { return r.Reason == name })
		if i < 0 {
			d.Reasons = append(d.Reasons, DisturbedReason{Reason: name, Worst: part, worst: size})
			i = len(d.Reasons) - 1
		}
		r := &d.Reasons[i]
		r.Slices++
		if size > r.worst {
			r.Worst, r.worst = part, size
		}
	}
}
