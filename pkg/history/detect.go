package history

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kvbench/kvbench/pkg/compare"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// The metrics a series follows: compare's.
const (
	MetricQPS     = compare.MetricQPS
	MetricUsPerOp = compare.MetricUsPerOp
	MetricP99     = compare.MetricP99
)

// Metrics lists the metrics.
var Metrics = compare.Metrics

// Better is +1 when a rise of the metric is good (QPS), -1 when a fall is.
func Better(metric string) int { return compare.Better(metric) }

// Defaults of the analysis.
const (
	// DefaultMetric is the metric followed.
	DefaultMetric = MetricQPS
	// DefaultAlpha is the level of the U test that confirms a change
	// point. It is stricter than compare's 0.05: a change point is put
	// where the runs before and after differ most, so a test at the
	// usual level would pass a change in every flat series now and then
	// (TestFlatSeries).
	DefaultAlpha = 0.001
	// DefaultWindow is how many runs at most, on each side of a change
	// point, give the per-round samples the U test and the shift's
	// interval compare: the neighbourhood of the change, not the whole
	// history.
	DefaultWindow = 10
)

// AnalyzeOptions chooses what to analyze and how.
type AnalyzeOptions struct {
	// Metric is the metric followed (DefaultMetric when empty).
	Metric string
	// Scenarios, when set, keeps the scenarios (target/strategy/mode)
	// that match one of these path.Match patterns, or contain one.
	Scenarios []string
	// Last, when positive, keeps the newest Last runs of each series.
	Last int
	// Alpha is the U test's level (DefaultAlpha when 0).
	Alpha float64
	// Window is DefaultWindow when 0.
	Window int
	// Precision is the margin of a change point's verdict
	// (stats.VerdictAt), a fraction; stats.DefaultPrecision when 0.
	Precision float64
}

// normalize fills in the defaults and checks the values.
func (o AnalyzeOptions) normalize() (AnalyzeOptions, error) {
	if o.Metric == "" {
		o.Metric = DefaultMetric
	}
	if !slices.Contains(Metrics, o.Metric) {
		return o, fmt.Errorf("%w: metric %q: want qps, us_per_op or p99", ErrOption, o.Metric)
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Alpha < 0 || o.Alpha >= 1 {
		return o, fmt.Errorf("%w: alpha %v: want 0 < alpha < 1", ErrOption, o.Alpha)
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.Precision == 0 {
		o.Precision = stats.DefaultPrecision
	}
	if !(o.Precision > 0 && o.Precision <= 0.5) {
		return o, fmt.Errorf("%w: precision %v: want above 0 and at most 0.5 (50%%)", ErrOption, o.Precision)
	}
	if o.Window < 2 || o.Last < 0 {
		return o, fmt.Errorf("%w: window %d, last %d: want a window of at least 2 runs and last >= 0", ErrOption, o.Window, o.Last)
	}
	for _, p := range o.Scenarios {
		if _, err := path.Match(p, ""); err != nil {
			return o, fmt.Errorf("%w: scenario pattern %q: %w", ErrOption, p, err)
		}
	}
	return o, nil
}

// matches reports whether a scenario is selected.
func (o AnalyzeOptions) matches(scenario string) bool {
	if len(o.Scenarios) == 0 {
		return true
	}
	for _, p := range o.Scenarios {
		if ok, _ := path.Match(p, scenario); ok || strings.Contains(scenario, p) {
			return true
		}
	}
	return false
}

// Point is one run of a series.
type Point struct {
	// Run is the run.
	Run *Run `json:"run"`
	// Rounds are the metric of its ok rounds, in round order.
	Rounds []float64 `json:"rounds"`
	// Value is their trimmed mean (the report's trimming rule).
	Value float64 `json:"value"`
}

// ChangePoint is a confirmed change of a series.
type ChangePoint struct {
	// Index is the first point after the change.
	Index int `json:"index"`
	// Before is the last run before it, After the first after it.
	Before *Run `json:"before"`
	After  *Run `json:"after"`
	// Pct is the shift, after/before - 1 in percent (the Hodges-Lehmann
	// estimate over the per-round samples), Lo and Hi its confidence
	// interval (±Inf when too few samples), at level Confidence.
	Pct        float64 `json:"change_pct"`
	Lo         float64 `json:"ci_lo_pct"`
	Hi         float64 `json:"ci_hi_pct"`
	Confidence float64 `json:"ci_confidence"`
	// P is the U test's p-value; BeforeRuns and AfterRuns the runs whose
	// rounds it compared.
	P          float64 `json:"p"`
	BeforeRuns int     `json:"before_runs"`
	AfterRuns  int     `json:"after_runs"`
	// Regression is set when the metric moved the bad way.
	Regression bool `json:"regression"`
	// Verdict is the interval's (stats.VerdictAt at the analysis's
	// Precision): slower or faster when it lies on one side of no
	// change; equivalent when within the margin, a real shift too small
	// to act on; undecided otherwise.
	Verdict stats.Verdict `json:"verdict"`
	// Newest is set when only the newest run is after it: found by
	// testing that run against the ones before it, which E-Divisive
	// cannot split off alone.
	Newest bool `json:"newest_only,omitempty"`
}

// Series is one scenario in one environment, its runs oldest first.
type Series struct {
	// Scenario is target/strategy/mode (a workload's "workload command").
	Scenario string `json:"scenario"`
	// Fingerprint and Env identify the environment.
	Fingerprint string      `json:"environment"`
	Env         Environment `json:"environment_detail"`
	// Points are the runs.
	Points []Point `json:"points"`
	// ChangePoints are the confirmed changes, oldest first.
	ChangePoints []ChangePoint `json:"change_points"`
	// Previous, when the scenario ran in another environment before this
	// series began, is that series' fingerprint, and EnvChange what
	// differs: a new series, not a change point.
	Previous  string   `json:"previous_environment,omitempty"`
	EnvChange []string `json:"environment_change,omitempty"`
}

// Last is the series' newest change point, nil if none.
func (s *Series) Last() *ChangePoint {
	if len(s.ChangePoints) == 0 {
		return nil
	}
	return &s.ChangePoints[len(s.ChangePoints)-1]
}

// Analysis is every series of a metric.
type Analysis struct {
	// Metric is the metric followed.
	Metric string `json:"metric"`
	// Alpha is the U test's level.
	Alpha float64 `json:"alpha"`
	// Precision is the margin of the change points' verdicts.
	Precision float64 `json:"precision"`
	// Series are by scenario, then by first run.
	Series []*Series `json:"series"`
	// Runs are the runs analyzed; Skipped counts those left out (still
	// running, or killed).
	Runs    int `json:"runs"`
	Skipped int `json:"skipped_runs"`
}

// Analyze reads the store's ok rows and detects the change points of
// every series.
func (s *Store) Analyze(ctx context.Context, o AnalyzeOptions) (*Analysis, error) {
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	runs, err := s.allRuns(ctx)
	if err != nil {
		return nil, err
	}
	envs, err := s.environments(ctx)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Metric: o.Metric, Alpha: o.Alpha, Precision: o.Precision}
	for _, r := range runs {
		if r.Analyzed() {
			a.Runs++
		} else {
			a.Skipped++
		}
	}
	series, err := s.loadSeries(ctx, o, runs, envs)
	if err != nil {
		return nil, err
	}
	// Each series is its own: they are analyzed at once, one worker per
	// processor (each draws its permutations from its own seed, so the
	// result does not depend on the order).
	work := make(chan *Series)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(series)) {
		wg.Go(func() {
			for sr := range work {
				sr.detect(o)
			}
		})
	}
	for _, sr := range series {
		work <- sr
	}
	close(work)
	wg.Wait()
	linkEnvironments(series)
	a.Series = series
	return a, nil
}

// allRuns reads every run, by id.
func (s *Store) allRuns(ctx context.Context) (map[int64]*Run, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs r")
	if err != nil {
		return nil, fmt.Errorf("history: read the runs: %w", err)
	}
	defer rows.Close()
	out := map[int64]*Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("history: read the runs: %w", err)
		}
		out[r.id] = r
	}
	return out, rows.Err()
}

// sample is one ok round of the store.
type sample struct {
	round int
	value float64
}

// loadSeries reads the ok rows and groups them into series; a disturbed
// slice of an adaptive run is left out, as the report leaves it out of
// its comparisons.
func (s *Store) loadSeries(ctx context.Context, o AnalyzeOptions, runs map[int64]*Run, envs map[int64]Environment) ([]*Series, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run, env, target, strategy, mode, workload, command, round, qps, us_per_op, lat_p99_us, rate, rate_spec
FROM detail WHERE status = 'ok' AND env IS NOT NULL AND (COALESCE(block, 0) = 0 OR COALESCE(disturbed, '') = '')`)
	if err != nil {
		return nil, fmt.Errorf("history: read the rows: %w", err)
	}
	defer rows.Close()
	type key struct {
		scenario results.ScenarioKey
		env      int64
	}
	samples := map[key]map[int64][]sample{}
	matched := map[results.ScenarioKey]bool{}
	for rows.Next() {
		var run, env int64
		var r results.Row
		var rate sql.NullFloat64 // a load curve's phase is a scenario of its own
		if err := rows.Scan(&run, &env, &r.Target, &r.Strategy, &r.Mode, &r.Workload, &r.Command, &r.Round, &r.QPS, &r.UsPerOp, &r.LatP99Us, &rate, &r.RateSpec); err != nil {
			return nil, fmt.Errorf("history: read the rows: %w", err)
		}
		if rate.Valid {
			r.Rate = &rate.Float64
		}
		if ru := runs[run]; ru == nil || !ru.Analyzed() {
			continue
		}
		v := metricOf(&r, o.Metric)
		if !(v > 0) {
			continue
		}
		sc := r.ScenarioKey()
		ok, seen := matched[sc]
		if !seen {
			ok = o.matches(sc.String())
			matched[sc] = ok
		}
		if !ok {
			continue
		}
		k := key{sc, env}
		if samples[k] == nil {
			samples[k] = map[int64][]sample{}
		}
		samples[k][run] = append(samples[k][run], sample{r.Round, v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: read the rows: %w", err)
	}
	var out []*Series
	for k, byRun := range samples {
		env := envs[k.env]
		sr := &Series{Scenario: k.scenario.String(), Env: env, Fingerprint: env.Fingerprint()}
		for run, ss := range byRun {
			slices.SortStableFunc(ss, func(a, b sample) int { return cmp.Compare(a.round, b.round) })
			xs := make([]float64, len(ss))
			for i, x := range ss {
				xs[i] = x.value
			}
			sr.Points = append(sr.Points, Point{Run: runs[run], Rounds: xs, Value: trimmedMean(xs)})
		}
		slices.SortFunc(sr.Points, func(a, b Point) int {
			return cmp.Or(a.Run.Started.Compare(b.Run.Started), cmp.Compare(a.Run.id, b.Run.id))
		})
		if o.Last > 0 && len(sr.Points) > o.Last {
			sr.Points = sr.Points[len(sr.Points)-o.Last:]
		}
		out = append(out, sr)
	}
	slices.SortFunc(out, func(a, b *Series) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), a.Points[0].Run.Started.Compare(b.Points[0].Run.Started),
			strings.Compare(a.Fingerprint, b.Fingerprint))
	})
	return out, nil
}

// metricOf is a row's figure of the metric; 0 when not measured.
func metricOf(r *results.Row, metric string) float64 {
	switch metric {
	case MetricQPS:
		return r.QPS
	case MetricUsPerOp:
		if r.UsPerOp > 0 {
			return r.UsPerOp
		}
		if r.QPS > 0 {
			return 1e6 / r.QPS
		}
	case MetricP99:
		return r.LatP99Us
	}
	return 0
}

// trimmedMean applies the report's trimming rule and averages the rest.
func trimmedMean(xs []float64) float64 {
	return stats.Mean(stats.Without(xs, stats.Trim(xs)))
}

// linkEnvironments notes, for each series after a scenario's first, the
// environment the scenario ran in just before it, and what differs.
func linkEnvironments(series []*Series) {
	for i, sr := range series {
		first := sr.Points[0].Run.Started
		var prev *Series
		for _, o := range series[:i] {
			if o.Scenario != sr.Scenario {
				continue
			}
			if last := o.Points[len(o.Points)-1].Run.Started; !last.After(first) &&
				(prev == nil || last.After(prev.Points[len(prev.Points)-1].Run.Started)) {
				prev = o
			}
		}
		if prev != nil {
			sr.Previous, sr.EnvChange = prev.Fingerprint, sr.Env.Diff(prev.Env)
		}
	}
}

// seed is a series' random seed: the same series gives the same change
// points every time.
func (sr *Series) seed(metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(sr.Scenario + "\x00" + sr.Fingerprint + "\x00" + metric))
	return h.Sum64()
}

// detect finds the series' change points: E-Divisive's candidates over the
// runs' trimmed means, each confirmed by the U test of the rounds between
// its neighbours (at most Window runs each side), the weakest removed
// first until every one left is significant, as Hunter's merge does; then
// the newest run alone against the runs before it.
func (sr *Series) detect(o AnalyzeOptions) {
	n := len(sr.Points)
	if n < 3 {
		return
	}
	xs := make([]float64, n)
	for i, p := range sr.Points {
		xs[i] = p.Value
	}
	rng := rand.New(rand.NewPCG(sr.seed(o.Metric), 0))
	cands := defaultED.candidates(xs, rng)
	cps := make([]ChangePoint, len(cands))
	for i, c := range cands {
		cps[i].Index = c
	}
	bounds := func(i int) (lo, hi int) {
		lo, hi = 0, n
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		return lo, hi
	}
	test := func(i int) {
		lo, hi := bounds(i)
		sr.confirm(&cps[i], lo, hi, o)
	}
	for i := range cps {
		test(i)
	}
	for len(cps) > 0 {
		weakest := 0
		for i := range cps {
			if cps[i].P > cps[weakest].P {
				weakest = i
			}
		}
		if cps[weakest].P <= o.Alpha {
			break
		}
		cps = slices.Delete(cps, weakest, weakest+1)
		for _, i := range []int{weakest - 1, weakest} {
			if i >= 0 && i < len(cps) {
				test(i)
			}
		}
	}
	// The newest run, which no split can leave alone on its side.
	lo := 0
	if len(cps) > 0 {
		lo = cps[len(cps)-1].Index
	}
	if last := n - 1; last-lo >= defaultED.minSize {
		tip := ChangePoint{Index: last, Newest: true}
		if sr.confirm(&tip, lo, n, o); tip.P <= o.Alpha {
			cps = append(cps, tip)
		}
	}
	for i := range cps {
		lo, hi := 0, n
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		sr.shift(&cps[i], lo, hi, o)
	}
	sr.ChangePoints = cps
}

// window is the rounds of the runs [lo, c) and [c, hi), at most
// o.Window runs each side of c, and how many runs each side has.
func (sr *Series) window(c, lo, hi int, o AnalyzeOptions) (before, after []float64, nb, na int) {
	lo = max(lo, c-o.Window)
	hi = min(hi, c+o.Window)
	for _, p := range sr.Points[lo:c] {
		before = append(before, p.Rounds...)
	}
	for _, p := range sr.Points[c:hi] {
		after = append(after, p.Rounds...)
	}
	return before, after, c - lo, hi - c
}

// confirm runs the U test of a change point at cp.Index, its neighbours
// at lo and hi.
func (sr *Series) confirm(cp *ChangePoint, lo, hi int, o AnalyzeOptions) {
	before, after, nb, na := sr.window(cp.Index, lo, hi, o)
	cp.BeforeRuns, cp.AfterRuns = nb, na
	cp.P = stats.Compare(before, after, o.Alpha).P
}

// shift fills in a confirmed change point's shift, interval, verdict and
// runs: the rounds before and after are unpaired (stats.UnpairedRatio).
func (sr *Series) shift(cp *ChangePoint, lo, hi int, o AnalyzeOptions) {
	before, after, nb, na := sr.window(cp.Index, lo, hi, o)
	cp.BeforeRuns, cp.AfterRuns = nb, na
	r := stats.UnpairedRatio(before, after, stats.DefaultConfidence)
	cp.Pct, cp.Lo, cp.Hi = r.Change()
	cp.Confidence = r.Confidence
	cp.Verdict = stats.VerdictAt(r, o.Precision, Better(o.Metric) > 0, stats.DefaultConfidence)
	cp.Before, cp.After = sr.Points[cp.Index-1].Run, sr.Points[cp.Index].Run
	cp.Regression = float64(Better(o.Metric))*cp.Pct < 0
	if math.IsNaN(cp.Pct) {
		cp.Regression = false
	}
}
