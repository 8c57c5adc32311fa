package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// The metrics compared, as the report names them.
const (
	MetricQPS     = "qps"
	MetricUsPerOp = "us_per_op"
	MetricP99     = "p99"
)

// Metrics lists the metrics in table order.
var Metrics = []string{MetricQPS, MetricUsPerOp, MetricP99}

// DefaultMetric is the metric the gate watches.
const DefaultMetric = MetricQPS

// DefaultConfidence is the level of the ratio's confidence interval.
const DefaultConfidence = 0.95

// Sentinel errors.
var (
	// ErrRegression: with a threshold, some row changed beyond it in the bad
	// direction, significantly. "kvbench compare" exits 3 with it.
	ErrRegression = errors.New("significant regression")
	// ErrSettings: a scenario was measured with other settings on each side.
	ErrSettings = errors.New("settings differ")
	// ErrNothing: the two sides have no scenario in common.
	ErrNothing = errors.New("nothing to compare")
	// ErrOption: a bad option value.
	ErrOption = errors.New("bad option")
)

// Options is what to compare and how.
type Options struct {
	// Old and New are the two sides: detail CSV files, directories (their
	// *_detail_*.csv files) or glob patterns. With Label set, Old holds
	// every input and New is unused.
	Old, New []string
	// Label, when set, splits the rows of Old by their label column:
	// OldLabel against NewLabel.
	Label              bool
	OldLabel, NewLabel string
	// Metric is the metric the gate watches (DefaultMetric when empty).
	Metric string
	// Threshold, when positive, is the gate: a change of the metric beyond
	// this many percent in the bad direction that is significant fails
	// Compare with ErrRegression.
	Threshold float64
	// Alpha is the significance level (stats.DefaultAlpha when 0).
	Alpha float64
	// IgnoreSettings compares scenarios whose settings differ.
	IgnoreSettings bool
	// Precision is the margin of the verdicts (stats.VerdictAt), a
	// fraction: an interval of the ratio within 1 ± Precision is
	// stats.Equivalent; stats.DefaultPrecision when 0.
	Precision float64
}

// Row is one scenario's change in one metric.
type Row struct {
	results.ScenarioKey
	// Metric is MetricQPS, MetricUsPerOp or MetricP99.
	Metric string `json:"metric"`
	// OldN and NewN are the ok rounds on each side.
	OldN int `json:"old_rounds"`
	NewN int `json:"new_rounds"`
	// Old and New are the trimmed means, 2 decimals.
	Old float64 `json:"old"`
	New float64 `json:"new"`
	// Pct is (New/Old - 1) * 100 from the figures as shown.
	Pct float64 `json:"change_pct"`
	// P is the Mann–Whitney U test's two-sided p-value over all ok rounds.
	P float64 `json:"p"`
	// Significant is P <= alpha.
	Significant bool `json:"significant"`
	// Lo and Hi bound the change in percent (the Hodges–Lehmann interval
	// of the ratio, on log values); NaN when one round a side gives no
	// interval.
	Lo float64 `json:"ci_lo_pct"`
	Hi float64 `json:"ci_hi_pct"`
	// Confidence is the interval's exact confidence level: at least
	// DefaultConfidence when the rounds are enough for it, else that of
	// the widest interval (see stats.RatioCI); 0 with no interval.
	Confidence float64 `json:"ci_confidence"`
	// Verdict is what the interval lets one conclude (stats.VerdictAt,
	// at the margin Result.Precision): faster or slower when it lies on
	// one side of no change, equivalent when it lies within the margin,
	// undecided otherwise, and when it is below DefaultConfidence (too
	// few rounds). Faster is the metric's good direction: QPS up, us/op
	// or p99 down.
	Verdict stats.Verdict `json:"verdict"`
	// Regression marks a row beyond the gate's threshold in the bad
	// direction, significantly.
	Regression bool `json:"regression,omitempty"`
}

// Better reports whether a positive change of the metric is good.
func Better(metric string) int {
	if metric == MetricQPS {
		return 1
	}
	return -1
}

// Result is a comparison.
type Result struct {
	// Rows are in the old side's report's scenario order (report.Order),
	// then by metric.
	Rows []Row `json:"rows"`
	// Geomean is the geometric mean of New/Old over the scenarios, as a
	// change in percent, per metric.
	Geomean map[string]float64 `json:"geomean_change_pct"`
	// OnlyOld and OnlyNew list the scenarios measured on one side only,
	// in each side's report order.
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
	// Alpha is the significance level used; Threshold and Metric the gate.
	Alpha     float64 `json:"alpha"`
	Threshold float64 `json:"threshold,omitempty"`
	Metric    string  `json:"metric"`
	// Precision is the margin of the verdicts.
	Precision float64 `json:"precision"`
}

// Regressions returns the rows that fail the gate.
func (r *Result) Regressions() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Regression {
			out = append(out, row)
		}
	}
	return out
}

// Compare reads both sides and compares every scenario they share. The
// error wraps ErrRegression when the gate fails (the Result is complete
// then), ErrSettings when a scenario's settings differ, or an input error.
func Compare(o Options) (*Result, error) {
	if o.Metric == "" {
		o.Metric = DefaultMetric
	}
	if !slices.Contains(Metrics, o.Metric) {
		return nil, fmt.Errorf("%w: metric %q: want qps, us_per_op or p99", ErrOption, o.Metric)
	}
	if o.Threshold < 0 {
		return nil, fmt.Errorf("%w: threshold %v: want a percentage >= 0", ErrOption, o.Threshold)
	}
	if o.Alpha <= 0 {
		o.Alpha = stats.DefaultAlpha
	}
	if o.Precision == 0 {
		o.Precision = stats.DefaultPrecision
	}
	if !(o.Precision > 0 && o.Precision <= 0.5) {
		return nil, fmt.Errorf("%w: precision %v: want above 0 and at most 0.5 (50%%)", ErrOption, o.Precision)
	}
	oldRows, newRows, err := o.read()
	if err != nil {
		return nil, err
	}
	oldSc, oldOrder := group(oldRows)
	newSc, newOrder := group(newRows)
	oldOrder, newOrder = reportOrder(oldRows, oldOrder), reportOrder(newRows, newOrder)
	res := &Result{Alpha: o.Alpha, Threshold: o.Threshold, Metric: o.Metric, Precision: o.Precision, Geomean: map[string]float64{}}
	logSums := map[string]float64{}
	logNs := map[string]int{}
	var settingErrs results.ErrorList
	for _, sc := range oldOrder {
		nr, ok := newSc[sc]
		if !ok {
			res.OnlyOld = append(res.OnlyOld, sc.String())
			continue
		}
		or := oldSc[sc]
		if !o.IgnoreSettings {
			if err := sameSettings(sc, or, nr); err != nil {
				settingErrs.Add(err)
				continue
			}
		}
		for _, m := range Metrics {
			row, ok := compareMetric(sc, m, or, nr, o.Alpha, o.Precision)
			if !ok {
				continue
			}
			if o.Threshold > 0 && m == o.Metric && row.Significant &&
				row.Pct*float64(Better(m)) < -o.Threshold {
				row.Regression = true
			}
			res.Rows = append(res.Rows, row)
			if row.Old > 0 && row.New > 0 {
				logSums[m] += math.Log(row.New / row.Old)
				logNs[m]++
			}
		}
	}
	for _, sc := range newOrder {
		if _, ok := oldSc[sc]; !ok {
			res.OnlyNew = append(res.OnlyNew, sc.String())
		}
	}
	if err := settingErrs.Err(); err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("%w: the two sides share no scenario with ok rounds", ErrNothing)
	}
	for m, n := range logNs {
		res.Geomean[m] = stats.Round2((math.Exp(logSums[m]/float64(n)) - 1) * 100)
	}
	if regs := res.Regressions(); len(regs) > 0 {
		return res, fmt.Errorf("%w: %d of %d rows beyond %v%% in %s", ErrRegression, len(regs), len(res.Rows), o.Threshold, o.Metric)
	}
	return res, nil
}

// read reads the two sides' ok rows.
func (o Options) read() (oldRows, newRows []results.Row, err error) {
	if o.Label {
		if o.OldLabel == "" || o.NewLabel == "" || o.OldLabel == o.NewLabel {
			return nil, nil, fmt.Errorf("%w: --by label needs two different labels", ErrOption)
		}
		all, err := readSide(o.Old)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range all {
			switch r.Label {
			case o.OldLabel:
				oldRows = append(oldRows, r)
			case o.NewLabel:
				newRows = append(newRows, r)
			}
		}
		for _, side := range []struct {
			label string
			rows  []results.Row
		}{{o.OldLabel, oldRows}, {o.NewLabel, newRows}} {
			if len(side.rows) == 0 {
				return nil, nil, fmt.Errorf("%w: no ok row has the label %q", ErrNothing, side.label)
			}
		}
		return oldRows, newRows, nil
	}
	if oldRows, err = readSide(o.Old); err != nil {
		return nil, nil, err
	}
	if newRows, err = readSide(o.New); err != nil {
		return nil, nil, err
	}
	return oldRows, newRows, nil
}

// readSide reads the ok rows of one side: files, directories (their
// *_detail_*.csv files) and glob patterns. A disturbed slice of an
// adaptive run is left out, as the report leaves it out of its
// comparisons.
func readSide(args []string) ([]results.Row, error) {
	files, err := results.ExpandPatterns(args)
	if err != nil {
		return nil, err
	}
	var ok []results.Row
	err = results.Scan(files, func(r *results.Row) {
		if r.OK() && (r.Block == 0 || r.Disturbed == "") {
			ok = append(ok, *r)
		}
	})
	return ok, err
}

// group collects the rows of each scenario, by round, and the scenarios in
// order of first appearance.
func group(rows []results.Row) (map[results.ScenarioKey][]results.Row, []results.ScenarioKey) {
	m := make(map[results.ScenarioKey][]results.Row)
	var order []results.ScenarioKey
	for _, r := range rows {
		sc := r.ScenarioKey() // a workload's commands apart
		if _, seen := m[sc]; !seen {
			order = append(order, sc)
		}
		m[sc] = append(m[sc], r)
	}
	for _, rs := range m {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Round < rs[j].Round })
	}
	return m, order
}

// reportOrder puts a side's scenarios in the order the report's tables
// list them (report.Order), so that compare's tables read in the same
// order as the reports of both runs. Rows the report would refuse to
// order (a strategy described two ways) keep their order of appearance:
// the comparison does not depend on it.
func reportOrder(rows []results.Row, order []results.ScenarioKey) []results.ScenarioKey {
	keys, err := report.Order(rows)
	if err != nil {
		return order
	}
	return keys
}

// sameSettings checks that every row of both sides was measured with the
// same load: requests, pipeline, keyspace, value size and connections,
// against the same number of cluster shards, over TLS or not alike, in
// the same protocol, with the threads placed alike (another placement is
// another setting: a pinned server is not the same machine as an
// unpinned one).
func sameSettings(sc results.ScenarioKey, old, new []results.Row) error {
	num := func(get func(*results.Row) int64) func(*results.Row) string {
		return func(r *results.Row) string { return strconv.FormatInt(get(r), 10) }
	}
	settings := []struct {
		name string
		get  func(*results.Row) string
	}{
		// A load curve's phase lasts as long as its attempt's closed loop:
		// its requests are not a setting.
		{"requests", num(func(r *results.Row) int64 {
			if r.RateKey() != "" {
				return 0
			}
			return r.Requests
		})},
		{"pipeline", num(func(r *results.Row) int64 { return int64(r.Pipeline) })},
		{"keyspace", num(func(r *results.Row) int64 { return r.Keyspace })},
		{"value_size", num(func(r *results.Row) int64 { return int64(r.ValueSize) })},
		{"connections", num(func(r *results.Row) int64 { return int64(r.Connections) })},
		{"shards", num(func(r *results.Row) int64 { return int64(r.Shards) })},
		{"tls (1: over TLS)", num(func(r *results.Row) int64 { return int64(b2i(r.TLS)) })},
		{"resp3 (1: RESP3)", num(func(r *results.Row) int64 { return int64(b2i(r.RESP3)) })},
		{"placement", placement},
	}
	ref := &old[0]
	for _, s := range settings {
		want := s.get(ref)
		for _, side := range [][]results.Row{old, new} {
			for i := range side {
				if got := s.get(&side[i]); got != want {
					return &results.InputError{Pos: side[i].Pos, Column: s.name, Err: fmt.Errorf(
						"%w: %s: %s is %s here but %s at %s (pass --ignore-settings to compare anyway)",
						ErrSettings, sc, s.name, got, want, ref.Pos)}
				}
			}
		}
	}
	return nil
}

// placement is a row's placement as a setting: the files written before
// the column ran unpinned, "off".
func placement(r *results.Row) string {
	if r.Placement == "" {
		return "off"
	}
	return r.Placement
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// values returns the rows' figures of a metric, rounded to 2 decimals as
// the report shows them; nil when any row lacks the metric.
func values(rows []results.Row, metric string) []float64 {
	xs := make([]float64, 0, len(rows))
	for _, r := range rows {
		var x float64
		switch metric {
		case MetricQPS:
			x = r.QPS
		case MetricUsPerOp:
			x = r.UsPerOp
			if x == 0 && r.QPS > 0 {
				x = 1e6 / r.QPS
			}
		case MetricP99:
			x = r.LatP99Us
		}
		if x <= 0 {
			return nil
		}
		xs = append(xs, stats.Round2(x))
	}
	return xs
}

// trimmedMean applies the report's trimming rule and averages the rest.
func trimmedMean(xs []float64) float64 {
	if i := stats.Trim(xs); i >= 0 {
		xs = stats.Without(xs, i)
	}
	return stats.Round2(stats.Mean(xs))
}

// compareMetric compares one metric of a scenario; false when a side does
// not record it. Two runs are not paired in time (each side's rounds, or
// an adaptive run's slices, were measured minutes or days apart), so the
// interval is the unpaired one: stats.UnpairedRatio, the report's
// estimator for rounds.
func compareMetric(sc results.ScenarioKey, metric string, old, new []results.Row, alpha, precision float64) (Row, bool) {
	x, y := values(old, metric), values(new, metric)
	if x == nil || y == nil {
		return Row{}, false
	}
	row := Row{ScenarioKey: sc, Metric: metric, OldN: len(x), NewN: len(y), Old: trimmedMean(x), New: trimmedMean(y)}
	row.Pct = stats.ChangePct(row.New, row.Old)
	c := stats.Compare(x, y, alpha)
	row.P, row.Significant = c.P, c.Significant()
	r := stats.UnpairedRatio(x, y, DefaultConfidence)
	_, row.Lo, row.Hi = r.Change()
	row.Confidence = r.Confidence
	row.Verdict = stats.VerdictAt(r, precision, Better(metric) > 0, DefaultConfidence)
	return row, true
}

// FormatCI formats the interval as "[-3.10%, +1.20%]", followed by its
// confidence when below DefaultConfidence ("[-9.00%, +4.00%] at
// 66.67%"); "-" when there is none. A table's column of intervals is
// CIColumn's, whose heading states their level.
func FormatCI(lo, hi, confidence float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "-"
	}
	s := "[" + stats.FormatChange(lo) + ", " + stats.FormatChange(hi) + "]"
	if confidence < DefaultConfidence {
		s += " at " + stats.Format2(confidence*100) + "%"
	}
	return s
}

// FormatP formats a p-value with 3 significant digits.
func FormatP(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }

// CIColumn is a table's column of intervals, whose heading states the
// level of the intervals under it, so that label and level agree: with
// 5 rounds against 5 every interval is at 96.83% (the U distribution has
// no interval at exactly 95%), and the heading says "96.83% CI"; when the
// levels differ the heading is "CI" and each interval is followed by its
// own level.
type CIColumn struct {
	// Heading is the column's heading.
	Heading string
	each    bool
}

// NewCIColumn is the column of intervals at these levels (0, no
// interval, is left out).
func NewCIColumn(levels []float64) CIColumn {
	var seen []string
	for _, l := range levels {
		if l > 0 && !slices.Contains(seen, levelText(l)) {
			seen = append(seen, levelText(l))
		}
	}
	if len(seen) == 1 {
		return CIColumn{Heading: seen[0] + " CI"}
	}
	return CIColumn{Heading: "CI", each: len(seen) > 1}
}

// Cell formats an interval of the column: "[-3.10%, +1.20%]", with " at
// 66.67%" when the column's levels differ; "-" when there is none.
func (c CIColumn) Cell(lo, hi, confidence float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "-"
	}
	s := "[" + stats.FormatChange(lo) + ", " + stats.FormatChange(hi) + "]"
	if c.each {
		s += " at " + levelText(confidence)
	}
	return s
}

// levelText prints a level as the tables do: "96.83%".
func levelText(confidence float64) string { return stats.Format2(confidence*100) + "%" }
