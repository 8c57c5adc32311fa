package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report/persistjob"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Metric names of the overhead cells.
const (
	MetricQPS     = "QPS"
	MetricUsPerOp = "us/op"
	MetricP99     = "p99"
)

// Options configures Build and the report's writers.
type Options struct {
	// Baselines overrides the baseline strategy per target (target →
	// strategy), as "--baseline kvstore=nopersist,redis=none" does. A target
	// not named here uses the automatic rule (see Build).
	Baselines map[string]string
	// Alpha is the significance level of the overhead verdicts; 0 means
	// stats.DefaultAlpha.
	Alpha float64
	// Confidence is the level of the median's confidence interval; 0 means
	// stats.DefaultConfidence.
	Confidence float64
	// Lang is the language of the printed report (package output) and of
	// the warnings' Text: render.LangEN (the default when empty) or
	// render.LangZH.
	Lang string
	// ChartLink, when set, is the chart file the printed markdown links
	// to.
	ChartLink string
	// Reference is the target the side-by-side tables compare the others
	// with; "" means DefaultReference when present, else the first target
	// by name.
	Reference string
	// Profiles are the flame graphs the HTML page links to.
	Profiles []Profile
	// Precision is the margin of the comparisons' verdicts, a fraction
	// (0.03 for ±3%): an interval within 1 ± Precision is "equivalent";
	// 0 means stats.DefaultPrecision. "kvbench run --precision" passes
	// the precision it measured to.
	Precision float64
}

// Profile is a scenario's CPU profile, as flame graphs beside the report.
type Profile struct {
	// Target, Strategy and Mode (a mode or a workload) name the scenario.
	Target, Strategy, Mode string
	// Flame is the flame graph's file, relative to the report.
	Flame string
	// Diff is the differential flame graph against the Baseline strategy
	// of the same target and mode ("" when there is none).
	Diff, Baseline string
}

// Report is the statistics of a set of detail rows, ready to be written as
// markdown, CSV, JSON or a chart. Every Figure in it is rounded to 2
// decimals exactly as printed, so writers never round again.
type Report struct {
	// Options are the options Build was called with, defaults filled in.
	Options Options `json:"-"`
	// Settings are what the rows say about how they were measured.
	Settings Settings `json:"settings"`
	// Targets holds one section per target, by name.
	Targets []*TargetReport `json:"targets"`
	// Failed lists the failed attempts (status not "ok") in table order:
	// by target, strategy (as in Strategies), mode, round and attempt.
	Failed []results.Row `json:"failed_attempts"`
	// Warnings say which figures may not be trusted and why: one *Warning
	// per kind of doubt, in the order of the Warn… constants.
	Warnings []error `json:"-"`
	// Reference is the reference target of the side-by-side tables, ""
	// with fewer than two targets.
	Reference string `json:"reference,omitempty"`
	// SideBySide holds one table per mode with the targets as columns,
	// when the report has two targets or more.
	SideBySide []*SideBySide `json:"side_by_side,omitempty"`
	// Adaptive is true when some ok row belongs to a block (an adaptive
	// run, "kvbench run --precision"): the markdown then prints the
	// comparisons and the slices instead of the per-round tables.
	Adaptive bool `json:"adaptive,omitempty"`
	// Comparisons are, per mode, each strategy against its target's
	// baseline and each target against the reference target, in QPS and
	// p99, with the interval of the ratio and a verdict (comparisons.go).
	Comparisons []Comparison `json:"comparisons"`
	// Disturbed counts, per mode of an adaptive run, the slices the
	// disturbance rule left out of the comparisons, and why.
	Disturbed []DisturbedSlices `json:"disturbed,omitempty"`
	// Flushed lists the targets with a flushed row (the server emptied of
	// keys kvbench had not written), in order of first appearance.
	Flushed []string `json:"flushed,omitempty"`
	// Workloads holds one table per workload of the rows, by name.
	Workloads []*WorkloadTable `json:"workloads,omitempty"`
	// Unsupported lists the workloads targets were refused, by workload
	// and target.
	Unsupported []Unsupported `json:"unsupported,omitempty"`
	// Nodes is the spread over the masters of each cluster scenario, from
	// the nodes CSV (package attempt); empty without one.
	Nodes []NodeSpread `json:"nodes,omitempty"`

	// LoadCurves are the latency–throughput tables, per target and mode,
	// and Capacities the capacity tables, per target and objective, of
	// rows with a rate or a capacity search (curve.go).
	LoadCurves []*LoadCurve     `json:"load_curves,omitempty"`
	Capacities []*CapacityTable `json:"capacities,omitempty"`

	series seriesSet // the series CSV's rows (series.go); nil without one
	// Telemetry holds the server telemetry table of each target whose
	// rows record it (telemetry.go).
	Telemetry []*TelemetryTable `json:"server_telemetry,omitempty"`
	// Recovery holds the recovery table of each target with recovery
	// rows (recovery.go).
	Recovery []*RecoveryTable           `json:"recovery,omitempty"`
	recovery map[[3]string]*RecoveryRow // by (target, strategy, crash), while building
	// PersistJobs are the persistence job tables, per target and mode, and
	// PersistJobSides the targets side by side, per job and mode, of rows
	// with a job (persistjob.go).
	PersistJobs     []*PersistJobTable `json:"persist_jobs,omitempty"`
	PersistJobSides []*PersistJobSide  `json:"persist_job_side_by_side,omitempty"`
}

// Settings are the distinct values the rows hold for each setting,
// ascending; a setting no row records (an empty or zero cell, or a column
// the CSV lacks) has none. More than one value means the rows differ.
type Settings struct {
	// Requests per round, from the ok rows (a failed attempt's count is
	// partial).
	Requests []int64 `json:"requests,omitempty"`
	// Rounds per scenario: the highest round number of each scenario's
	// rows.
	Rounds []int `json:"rounds,omitempty"`
	// Pipeline depths.
	Pipeline []int `json:"pipeline,omitempty"`
	// Connections of the load generator.
	Connections []int `json:"connections,omitempty"`
	// Keyspace sizes (distinct keys).
	Keyspace []int64 `json:"keyspace,omitempty"`
	// ValueSize in bytes.
	ValueSize []int `json:"value_size,omitempty"`
	// ClientHost, CPUModel, Cores and Kernel describe the machine that ran
	// the load generator.
	ClientHost []string `json:"client_host,omitempty"`
	CPUModel   []string `json:"cpu_model,omitempty"`
	Cores      []int    `json:"cores,omitempty"`
	Kernel     []string `json:"kernel,omitempty"`
	// Placement is where the server's and the load generator's threads
	// ran (run --cpus): "off", a CPU list, "server=0,client=1".
	Placement []string `json:"placement,omitempty"`
}

// TargetReport is the section of one target.
type TargetReport struct {
	// Target is the target's name.
	Target string `json:"target"`
	// Rounds are the round numbers seen in ok rows, ascending: the Round
	// columns of the raw table.
	Rounds []int `json:"rounds"`
	// Strategies are the baseline(s) first, then by persistence (none, no,
	// everysec, always, then the others by name), then by name: an order
	// the rows' contents decide, not their order.
	Strategies []string `json:"strategies"`
	// Modes are set, get, mixed first, then the others by name.
	Modes []string `json:"modes"`
	// ServerVersions are the distinct server_version values of the
	// target's rows, ascending.
	ServerVersions []string `json:"server_versions,omitempty"`
	// Scenarios in table order: by strategy, then by mode.
	Scenarios []*Scenario `json:"scenarios"`
	// Overheads holds one overhead table per alloc that has a baseline.
	Overheads []*OverheadTable `json:"overheads"`
	// NoBaseline lists the allocs ("" when the target has no alloc)
	// for which no baseline was found; their overhead table is omitted.
	NoBaseline []string `json:"no_baseline,omitempty"`
	// Latency is true when some ok row of the target has latency figures.
	Latency bool `json:"latency"`
	// CPU is true when some ok row of the target records its QPS per
	// server CPU-second.
	CPU bool `json:"-"`
	// MultiAlloc is true when the target's strategies span several allocs.
	MultiAlloc bool `json:"-"`

	byKey    map[[2]string]*Scenario
	info     map[string]*strategyInfo
	versions distinct[string]
}

// Scenario returns the scenario of a strategy and mode, or nil.
func (t *TargetReport) Scenario(strategy, mode string) *Scenario {
	return t.byKey[[2]string{strategy, mode}]
}

// Scenario holds the statistics of one (target, strategy, mode).
type Scenario struct {
	// Target is the server measured.
	Target string `json:"target"`
	// Alloc is the strategy's allocator, "" if the rows do not say.
	Alloc string `json:"alloc,omitempty"`
	// Strategy is the persistence configuration.
	Strategy string `json:"strategy"`
	// Persistence is the strategy's durability class, "" if the rows do not say.
	Persistence string `json:"persistence,omitempty"`
	// Mode is the workload (set, get, mixed), or for a command of a
	// workload "workload command" (see workloadMode).
	Mode string `json:"mode"`
	// Workload and Command name a workload's command (Command is
	// results.CommandTotal for the whole mix); empty for the modes.
	Workload string `json:"workload,omitempty"`
	Command  string `json:"command,omitempty"`
	// Rounds are the ok rounds, by round number.
	Rounds []Round `json:"rounds"`
	// FailedAttempts counts the scenario's rows whose status is not ok.
	FailedAttempts int `json:"failed_attempts"`
	// MeanQPS is the mean QPS over all ok rounds.
	MeanQPS Figure `json:"mean_qps"`
	// MeanUsPerOp is the mean us/op over all ok rounds.
	MeanUsPerOp Figure `json:"mean_us_per_op"`
	// MeanElapsedS is the mean elapsed_s over the ok rounds that record it.
	MeanElapsedS Figure `json:"mean_elapsed_s"`
	// MeanQPSPerCPU is the mean QPS per server CPU-second over the ok
	// rounds that record it.
	MeanQPSPerCPU Figure `json:"mean_qps_per_server_cpu_s"`
	// DroppedRound is the round number the trimming rule dropped, 0 if
	// none (fewer than 3 rounds).
	DroppedRound int `json:"dropped_round,omitempty"`
	// DroppedQPS is the dropped round's QPS, missing if none.
	DroppedQPS Figure `json:"dropped_qps"`
	// TrimmedQPS is the mean QPS of the remaining rounds.
	TrimmedQPS Figure `json:"trimmed_qps"`
	// TrimmedUsPerOp is the mean us/op of the remaining rounds.
	TrimmedUsPerOp Figure `json:"trimmed_us_per_op"`
	// TrimmedP50Us is the mean p50 latency of the remaining rounds that
	// record it.
	TrimmedP50Us Figure `json:"trimmed_p50_us"`
	// TrimmedP99Us is the same for p99.
	TrimmedP99Us Figure `json:"trimmed_p99_us"`
	// TrimmedP999Us is the same for p99.9.
	TrimmedP999Us Figure `json:"trimmed_p999_us"`
	// TrimmedQPSPerCPU is the same for the QPS per CPU-second of the
	// server.
	TrimmedQPSPerCPU Figure `json:"trimmed_qps_per_server_cpu_s"`
	// ClientBoundRounds counts the ok rounds whose load generator may have
	// set the pace (client_bound).
	ClientBoundRounds int `json:"client_bound_rounds,omitempty"`
	// RefusedRounds counts the ok rounds in which writes were refused
	// (conflicts): the scenario is then compared with nothing.
	RefusedRounds int `json:"refused_rounds,omitempty"`
	// CV is the coefficient of variation of all ok rounds' QPS, in
	// percent; missing below 2 rounds.
	CV Figure `json:"cv_pct"`
	// MinQPS is the lowest QPS of the ok rounds.
	MinQPS Figure `json:"min_qps"`
	// MaxQPS is the highest QPS of the ok rounds.
	MaxQPS Figure `json:"max_qps"`
	// MedianQPS is the median QPS of the ok rounds.
	MedianQPS Figure `json:"median_qps"`
	// MedianLo is the lower bound of the median's confidence interval, an
	// order statistic of the ok rounds' QPS (stats.Describe); missing
	// below 2 rounds.
	MedianLo Figure `json:"median_ci_lo"`
	// MedianHi is the upper bound.
	MedianHi Figure `json:"median_ci_hi"`
	// CIConfidence is the interval's exact confidence level: at least
	// Options.Confidence when the rounds are enough for it, else that of
	// [min, max] (0.9375 for 5 rounds); 0 when there is no interval.
	CIConfidence float64 `json:"ci_confidence"`
	// Baseline is the strategy this scenario is compared with ("" if none,
	// or if this scenario is the baseline).
	Baseline string `json:"baseline,omitempty"`
	// Changes are the comparisons with the baseline, one per metric (QPS,
	// us/op, and p99 when latencies exist).
	Changes []Change `json:"changes,omitempty"`
	// Slices describes the scenario's slices when its rows come from an
	// adaptive run (rows with a block); nil for rounds.
	Slices *SliceSummary `json:"slices,omitempty"`

	lastRound int   // the highest round number of its rows, failed ones too
	requests  int64 // the most requests of an ok round
}

// Key is the scenario's key: its target, strategy and mode.
func (s *Scenario) Key() results.ScenarioKey {
	return results.ScenarioKey{Target: s.Target, Strategy: s.Strategy, Mode: s.Mode}
}

// Name is "target/strategy/mode".
func (s *Scenario) Name() string { return s.Key().String() }

// Change returns the scenario's comparison for a metric, or nil.
func (s *Scenario) Change(metric string) *Change {
	for i := range s.Changes {
		if s.Changes[i].Metric == metric {
			return &s.Changes[i]
		}
	}
	return nil
}

// Round is one ok round of a scenario.
type Round struct {
	// Round is the round number.
	Round int `json:"round"`
	// QPS is the round's QPS rounded to 2 decimals.
	QPS Figure `json:"qps"`
	// UsPerOp is the round's us_per_op, or 1e6/QPS when absent, rounded to
	// 2 decimals.
	UsPerOp Figure `json:"us_per_op"`
	// ElapsedS is the measured time, missing when not recorded.
	ElapsedS Figure `json:"elapsed_s"`
	// P50Us is the p50 latency, missing when not recorded.
	P50Us Figure `json:"p50_us"`
	// P99Us is the p99 latency, missing when not recorded.
	P99Us Figure `json:"p99_us"`
	// P999Us is the p99.9 latency, missing when not recorded.
	P999Us Figure `json:"p999_us"`
	// MaxUs is the highest latency, missing when not recorded.
	MaxUs Figure `json:"max_us"`
	// QPSPerCPU is the round's QPS per CPU-second of the server, missing
	// when not recorded.
	QPSPerCPU Figure `json:"qps_per_server_cpu_s"`
	// ClientBound marks a round whose load generator may have set the pace.
	ClientBound bool `json:"client_bound,omitempty"`
	// Conflicts counts the round's refused writes.
	Conflicts int64 `json:"conflicts,omitempty"`
	// Dropped marks the round the trimming rule dropped.
	Dropped bool `json:"dropped,omitempty"`
	// Block and Slice place a slice of an adaptive run: the block it was
	// measured in and its position there; 0 for a round.
	Block int `json:"block,omitempty"`
	Slice int `json:"slice,omitempty"`
	// Disturbed is why the machine's signals broke the disturbance rule
	// during the slice; such a slice is left out of the comparisons.
	Disturbed string `json:"disturbed,omitempty"`
	// Pos is where the row was read.
	Pos results.Pos `json:"-"`

	hist string           // the latency_hist cell
	ref  roundRef         // its attempt and stall columns (series.go)
	tel  roundTelemetry   // the server_… cells (telemetry.go)
	job  persistjob.Round // its persistence job's columns (persistjob.go)
}

// Change is one overhead cell: a metric of a scenario against the same
// metric of its baseline.
type Change struct {
	// Metric is MetricQPS, MetricUsPerOp or MetricP99.
	Metric string `json:"metric"`
	// Pct is (variant/baseline - 1) * 100 from the trimmed figures as
	// displayed; missing when either is.
	Pct Figure `json:"pct"`
	// P is the Mann–Whitney U p-value of all ok rounds against the
	// baseline's; missing when either side has no rounds.
	P Prob `json:"p"`
	// Significant is P <= Alpha: the difference is not noise.
	Significant bool `json:"significant"`
	// Refused says that the scenario or its baseline had writes refused:
	// nothing was compared.
	Refused bool `json:"refused,omitempty"`
	// Why says why Pct is missing, when a side has no figure to compare
	// and its rows say why (a capacity search that found none).
	Why string `json:"why,omitempty"`
}

// OverheadTable is the overhead table of one alloc of a target.
type OverheadTable struct {
	// Alloc is the alloc the table covers ("" for all).
	Alloc string `json:"alloc,omitempty"`
	// Baseline is the baseline strategy.
	Baseline string `json:"baseline"`
	// Strategies are the rows, in order; their cells are the Changes of
	// the scenarios (TargetReport.Scenario).
	Strategies []string `json:"strategies"`
}

// Build computes the report of a set of detail rows: the same code path
// for "kvbench report" (rows read by ReadFiles) and for "kvbench run"
// (rows held in memory). Rows are grouped into scenarios (target, strategy,
// mode); ok rows are measured rounds, other rows failed attempts. The
// report's order depends on the rows' contents only, never on their order,
// so a run's report and "kvbench report" on its CSV are the same.
//
// Build returns an error naming the position of every bad row: an empty
// target, strategy, mode or status, a round below 1, an ok row without a
// positive QPS, two ok rows for the same (target, strategy, mode, round),
// one strategy with two persistence or alloc values. A failed attempt
// followed by an ok row for the same round is fine: that is a retry.
//
// The baseline of a target and alloc is Options.Baselines[target] if set;
// otherwise the strategy whose persistence is "none" (the first by name
// when there are several); otherwise, when the target's rows carry no
// persistence at all, the strategy named "none" or "nopersist". Without a
// baseline the overhead table is omitted.
func Build(rows []results.Row, opts Options) (*Report, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		b.add(&rows[i])
	}
	return b.finish()
}

// Order lists the scenarios of rows in the order the report's tables list
// them (targets by name; the baseline first, then by persistence and
// name; modes set, get, mixed, then the others), so that another table of
// the same scenarios (kvbench compare's) can follow the report's. Like
// the report's, it depends on the rows' contents only, not their order.
// Only each scenario's first row is looked at: rounds and figures do not
// matter here, and repeated rounds (two runs merged) are no error. The
// error is one the report would give: the rows describe a strategy in two
// ways.
func Order(rows []results.Row) ([]results.ScenarioKey, error) {
	b, err := newBuilder(Options{})
	if err != nil {
		return nil, err
	}
	seen := make(map[results.ScenarioKey]bool)
	for i := range rows {
		r := rows[i]
		k := r.ScenarioKey()
		if seen[k] {
			continue
		}
		seen[k] = true
		r.Round, r.Status, r.QPS, r.LatencyHist = 1, results.StatusOK, 1, ""
		b.add(&r)
	}
	rep, err := b.finish()
	if err != nil {
		return nil, err
	}
	var keys []results.ScenarioKey
	for _, t := range rep.Targets {
		for _, sc := range t.Scenarios {
			keys = append(keys, sc.Key())
		}
		keys = append(keys, rep.curveKeys(t.Target)...) // curve.go
	}
	return keys, nil
}

// builder groups rows into a Report.
type builder struct {
	opts    Options
	rep     *Report
	errs    results.ErrorList
	targets map[string]*TargetReport
	warns   map[string]*Warning // by kind
	listed  map[[2]string]bool  // (kind, subject) already in a warning
	n       int                 // rows added
	set     settingsSeen
	wlModes map[string]bool // the modes that are a workload's commands

	sortedCache map[sortedKey][]float64
	curves      loadCurves // the load curves' rows (curve.go)
}

// strategyInfo is what a strategy's rows say about it.
type strategyInfo struct {
	persistence, alloc       string
	persistencePos, allocPos results.Pos
}

// newBuilder checks the options and fills in their defaults.
func newBuilder(opts Options) (*builder, error) {
	if opts.Lang == "" {
		opts.Lang = render.LangEN
	}
	if !render.KnownLang(opts.Lang) {
		return nil, fmt.Errorf("%w: language %q (want %s or %s)", ErrFormat, opts.Lang, render.LangEN, render.LangZH)
	}
	if opts.Alpha <= 0 {
		opts.Alpha = stats.DefaultAlpha
	}
	if opts.Confidence <= 0 {
		opts.Confidence = stats.DefaultConfidence
	}
	if opts.Precision == 0 {
		opts.Precision = stats.DefaultPrecision
	}
	if !(opts.Precision > 0 && opts.Precision <= 0.5) {
		return nil, fmt.Errorf("%w: precision %v: want above 0 and at most 0.5 (50%%)", ErrFormat, opts.Precision)
	}
	return &builder{
		opts:        opts,
		rep:         &Report{Options: opts},
		targets:     make(map[string]*TargetReport),
		warns:       make(map[string]*Warning),
		listed:      make(map[[2]string]bool),
		wlModes:     make(map[string]bool),
		sortedCache: make(map[sortedKey][]float64),
	}, nil
}

// warn files a subject under its kind of warning, once per kind and
// subject name.
func (b *builder) warn(kind string, s Subject) {
	k := [2]string{kind, s.Name}
	if b.listed[k] {
		return
	}
	b.listed[k] = true
	w := b.warns[kind]
	if w == nil {
		w = &Warning{Kind: kind}
		switch kind {
		case WarnTestPower, WarnTestTies:
			w.Level, w.Need = b.opts.Alpha, stats.SignificanceRounds(b.opts.Alpha)
		case WarnUntrimmed:
			w.Need = stats.MinTrimRounds
		case WarnFewRounds:
			w.Need = stats.MinRounds
		case WarnNoisy:
			w.Level = stats.MaxCV
		}
		b.warns[kind] = w
	}
	w.Where = append(w.Where, s)
}

// warnOther files a warning of no known kind: its message as it came.
func (b *builder) warnOther(msg, subject string) {
	k := WarnOther + ":" + msg
	w := b.warns[k]
	if w == nil {
		w = &Warning{Kind: WarnOther, Msg: msg}
		b.warns[k] = w
	}
	if !b.listed[[2]string{k, subject}] {
		b.listed[[2]string{k, subject}] = true
		w.Where = append(w.Where, Subject{Name: subject})
	}
}

// add checks one row and files it under its scenario. It keeps only
// what the report needs (a Round, or a copy of a failed attempt), so rows
// can be streamed through it.
func (b *builder) add(r *results.Row) {
	b.n++
	pos := r.Pos
	if pos == (results.Pos{}) {
		pos.Index = b.n
	}
	bad := false
	for _, c := range []struct{ name, v string }{
		{"target", r.Target}, {"strategy", r.Strategy}, {"mode", r.Mode}, {"status", r.Status},
	} {
		if strings.TrimSpace(c.v) == "" {
			b.errs.At(pos, c.name, fmt.Errorf("%w: empty", results.ErrBadValue))
			bad = true
		}
	}
	if r.Round < 1 {
		b.errs.At(pos, "round", fmt.Errorf("%w: %d (rounds count from 1)", results.ErrBadValue, r.Round))
		bad = true
	}
	if r.Mode == results.ModeWorkload || r.Workload != "" {
		for _, c := range []struct{ name, v string }{{"workload", r.Workload}, {"command", r.Command}} {
			if strings.TrimSpace(c.v) == "" {
				b.errs.At(pos, c.name, fmt.Errorf("%w: empty in a workload's row", results.ErrBadValue))
				bad = true
			}
		}
	}
	if r.OK() && !(r.QPS > 0) && r.Mode != results.ModeRecovery { // a recovery row measures no QPS
		b.errs.At(pos, "qps", fmt.Errorf("%w: an ok row needs a positive QPS, got %v", results.ErrBadValue, r.QPS))
		bad = true
	}
	if r.OK() && r.LatencyHist != "" {
		if _, err := hdrhistogram.Decode([]byte(r.LatencyHist)); err != nil {
			b.errs.At(pos, "latency_hist", fmt.Errorf("%w: not an HdrHistogram (compressed, base64): %v", results.ErrBadValue, err))
			bad = true
		}
	}
	if bad {
		return
	}
	if r.RateKey() != "" { // a load curve's phase, in its own tables
		b.curveRow(r, pos)
		return
	}
	if r.Unsupported() {
		b.unsupported(r, pos)
		return
	}
	if r.Mode == results.ModeRecovery {
		b.recoveryRow(r, pos) // recovery.go
		return
	}
	if r.Flushed && !slices.Contains(b.rep.Flushed, r.Target) {
		b.rep.Flushed = append(b.rep.Flushed, r.Target)
	}
	t := b.targets[r.Target]
	if t == nil {
		t = &TargetReport{Target: r.Target, byKey: make(map[[2]string]*Scenario), info: make(map[string]*strategyInfo)}
		b.targets[r.Target] = t
		b.rep.Targets = append(b.rep.Targets, t)
	}
	b.describe(t, r, pos)
	b.set.add(r)
	t.versions.add(r.ServerVersion)
	mode := workloadMode(r)
	sc := t.byKey[[2]string{r.Strategy, mode}]
	if sc == nil {
		sc = &Scenario{Target: r.Target, Strategy: r.Strategy, Mode: mode, Workload: r.Workload, Command: r.Command}
		t.byKey[[2]string{r.Strategy, mode}] = sc
		if !slices.Contains(t.Strategies, r.Strategy) {
			t.Strategies = append(t.Strategies, r.Strategy)
		}
		if !slices.Contains(t.Modes, mode) {
			t.Modes = append(t.Modes, mode)
		}
		if r.Workload != "" {
			b.wlModes[mode] = true
		}
	}
	sc.lastRound = max(sc.lastRound, r.Round)
	if !r.OK() {
		sc.FailedAttempts++
		if r.Workload == "" || r.Command == results.CommandTotal { // a workload's attempt is listed once
			b.rep.Failed = append(b.rep.Failed, *r)
		}
		return
	}
	qps := stats.Round2(r.QPS)
	us := stats.Round2(r.UsPerOp)
	if !(us > 0) {
		us = stats.Round2(1e6 / qps)
	}
	sc.Rounds = append(sc.Rounds, Round{
		Round: r.Round, QPS: Figure(qps), UsPerOp: Figure(us),
		ElapsedS: measured(r.ElapsedS), P50Us: measured(r.LatP50Us),
		P99Us: measured(r.LatP99Us), P999Us: measured(r.LatP999Us),
		MaxUs: measured(r.LatMaxUs), QPSPerCPU: measured(float64(r.QPSPerServerCPUS)), ClientBound: r.ClientBound, Conflicts: r.Conflicts,
		Block: r.Block, Slice: r.Slice, Disturbed: r.Disturbed,
		Pos: pos, hist: r.LatencyHist, ref: refOf(r), tel: telemetryOf(r), job: persistjob.Of(r),
	})
	sc.requests = max(sc.requests, r.Requests)
	if r.Block > 0 {
		b.rep.Adaptive = true
	}
	b.capacityRow(sc, r)
	if r.QPSPerServerCPUS > 0 {
		t.CPU = true
	}
	if r.LatP50Us > 0 || r.LatP99Us > 0 || r.LatP999Us > 0 {
		t.Latency = true
	}
}

// measured is a Figure for an optional column: missing when zero.
func measured(x float64) Figure {
	if x > 0 {
		return fig(x)
	}
	return missing
}

// describe records a strategy's persistence and alloc, reporting a
// strategy described two ways.
func (b *builder) describe(t *TargetReport, r *results.Row, pos results.Pos) {
	info := t.info[r.Strategy]
	if info == nil {
		info = &strategyInfo{}
		t.info[r.Strategy] = info
	}
	check := func(column, v string, have *string, havePos *results.Pos) {
		switch {
		case v == "":
		case *have == "":
			*have, *havePos = v, pos
		case *have != v:
			b.errs.At(pos, column, fmt.Errorf("%w: strategy %s of %s is %q here but %q at %s",
				ErrConflict, r.Strategy, r.Target, v, *have, *havePos))
		}
	}
	check("persistence", r.Persistence, &info.persistence, &info.persistencePos)
	check("alloc", r.Alloc, &info.alloc, &info.allocPos)
}

// finish computes every scenario's statistics and the overhead tables, in
// the report's order: targets by name; strategies as byStrategyOrder says;
// modes set, get, mixed, then the others by name.
func (b *builder) finish() (*Report, error) {
	if b.n == 0 {
		return nil, fmt.Errorf("%w: no detail rows", results.ErrEmpty)
	}
	// The rows that failed their checks were left out (add): the others
	// are built on, so that the duplicates among them are found too, and
	// every error is returned at once below.
	slices.SortFunc(b.rep.Targets, func(x, y *TargetReport) int { return cmp.Compare(x.Target, y.Target) })
	for _, t := range b.rep.Targets {
		t.Modes = OrderModes(t.Modes)
		t.ServerVersions = t.versions.values()
		baselines, err := b.baselines(t)
		if err != nil {
			return nil, errors.Join(b.errs.Err(), err)
		}
		slices.SortFunc(t.Strategies, byStrategyOrder(t, baselines))
		allocs := make(map[string]bool)
		for _, st := range t.Strategies {
			info := t.info[st]
			allocs[info.alloc] = true
			for _, m := range t.Modes {
				sc := t.Scenario(st, m)
				if sc == nil {
					continue
				}
				sc.Persistence, sc.Alloc = info.persistence, info.alloc
				b.scenario(sc)
				for _, r := range sc.Rounds {
					t.Rounds = append(t.Rounds, r.Round)
				}
				t.Scenarios = append(t.Scenarios, sc)
			}
		}
		t.MultiAlloc = len(allocs) > 1
		slices.Sort(t.Rounds)
		t.Rounds = slices.Compact(t.Rounds)
		b.overheads(t, baselines)
	}
	b.loadCurves()
	if err := b.errs.Err(); err != nil { // the rows' errors, and duplicate rounds found while sorting them
		return nil, err
	}
	if err := b.sideBySide(); err != nil {
		return nil, err
	}
	b.workloads()
	b.comparisons()      // comparisons.go
	b.persistJobTables() // persistjob.go
	b.rep.Telemetry = telemetryTables(b.rep.Targets)
	b.recoveryTables() // recovery.go
	b.orderFailed()
	b.settings()
	b.warnings()
	return b.rep, nil
}

// persistenceOrder ranks the durability classes, least durable first;
// the others come after them.
var persistenceOrder = []string{"none", "no", "everysec", "always"}

// byStrategyOrder orders a target's strategies: its baselines first, then
// by persistence (none, no, everysec, always, then the others by name),
// then by name.
func byStrategyOrder(t *TargetReport, baselines map[string]string) func(x, y string) int {
	isBaseline := make(map[string]bool)
	for _, st := range baselines {
		isBaseline[st] = true
	}
	rank := func(st string) int {
		if i := slices.Index(persistenceOrder, t.info[st].persistence); i >= 0 {
			return i
		}
		return len(persistenceOrder)
	}
	return func(x, y string) int {
		bx, by := isBaseline[x], isBaseline[y]
		if bx != by {
			if bx {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rank(x), rank(y)),
			cmp.Compare(t.info[x].persistence, t.info[y].persistence),
			cmp.Compare(x, y))
	}
}

// canonicalModes come first, in this order.
var canonicalModes = []string{"set", "get", "mixed"}

// OrderModes puts set, get and mixed first, then the others by name (a
// workload's total after its commands).
func OrderModes(modes []string) []string {
	var out, others []string
	for _, m := range canonicalModes {
		if slices.Contains(modes, m) {
			out = append(out, m)
		}
	}
	for _, m := range modes {
		if !slices.Contains(canonicalModes, m) {
			others = append(others, m)
		}
	}
	slices.SortFunc(others, compareModes)
	return append(out, others...)
}

// orderFailed puts the failed attempts in table order: by target, strategy
// and mode as the tables list them, then round and attempt; rows equal in
// all of these keep their input order.
func (b *builder) orderFailed() {
	rank := make(map[results.ScenarioKey]int)
	off := 0
	for _, t := range b.rep.Targets {
		n := len(t.Strategies) * len(t.Modes)
		for j, st := range t.Strategies {
			for k, m := range t.Modes {
				rank[results.ScenarioKey{Target: t.Target, Strategy: st, Mode: m}] = off + j*len(t.Modes) + k
			}
		}
		off += n
	}
	slices.SortStableFunc(b.rep.Failed, func(x, y results.Row) int {
		return cmp.Or(
			cmp.Compare(rank[x.ScenarioKey()], rank[y.ScenarioKey()]),
			cmp.Compare(x.Round, y.Round),
			cmp.Compare(x.Attempt, y.Attempt))
	})
}

// scenario computes one scenario's statistics from its rounds.
func (b *builder) scenario(sc *Scenario) {
	// Rounds by number; a stable sort keeps input order among duplicates,
	// so the later row is the one reported.
	slices.SortStableFunc(sc.Rounds, func(x, y Round) int { return cmp.Compare(x.Round, y.Round) })
	for i := 1; i < len(sc.Rounds); i++ {
		if r := sc.Rounds[i]; r.Round == sc.Rounds[i-1].Round {
			b.errs.At(r.Pos, "", fmt.Errorf("%w: %s round %d already has an ok row at %s",
				ErrDuplicate, sc.Name(), r.Round, sc.Rounds[i-1].Pos))
		}
	}
	qps := values(sc.Rounds, func(r Round) Figure { return r.QPS })
	us := values(sc.Rounds, func(r Round) Figure { return r.UsPerOp })
	n := len(qps)

	sc.MeanQPS, sc.MeanUsPerOp = fig(stats.Mean(qps)), fig(stats.Mean(us))
	sc.MeanElapsedS = meanOf(sc.Rounds, -1, func(r Round) Figure { return r.ElapsedS })
	sc.MeanQPSPerCPU = meanOf(sc.Rounds, -1, func(r Round) Figure { return r.QPSPerCPU })

	drop := stats.Trim(qps)
	sc.DroppedQPS = missing
	if drop >= 0 {
		sc.Rounds[drop].Dropped = true
		sc.DroppedRound, sc.DroppedQPS = sc.Rounds[drop].Round, sc.Rounds[drop].QPS
	}
	sc.TrimmedQPS = fig(stats.Mean(stats.Without(qps, drop)))
	sc.TrimmedUsPerOp = fig(stats.Mean(stats.Without(us, drop)))
	sc.TrimmedP50Us = meanOf(sc.Rounds, drop, func(r Round) Figure { return r.P50Us })
	sc.TrimmedP99Us = meanOf(sc.Rounds, drop, func(r Round) Figure { return r.P99Us })
	sc.TrimmedP999Us = meanOf(sc.Rounds, drop, func(r Round) Figure { return r.P999Us })
	sc.TrimmedQPSPerCPU = meanOf(sc.Rounds, drop, func(r Round) Figure { return r.QPSPerCPU })

	d := stats.Describe(qps, b.opts.Confidence)
	sc.CV, sc.MinQPS, sc.MaxQPS, sc.MedianQPS = fig(d.CV), fig(d.Min), fig(d.Max), fig(d.Median)
	// Below the requested level the interval is [min, max] at its exact
	// level, which the spread table prints beside it: a figure that says
	// what it is, not a warning (5 rounds, the default, are such a case).
	sc.MedianLo, sc.MedianHi, sc.CIConfidence = fig(d.Lo), fig(d.Hi), d.Confidence

	name := sc.Name()
	b.slices(sc) // comparisons.go
	switch {
	case n == 0:
		b.warn(WarnNoRounds, Subject{Name: name, N: sc.FailedAttempts})
	case sc.Slices != nil:
		// Slices are not rounds: the comparisons pair them, and say
		// themselves how precise they are.
	case n < stats.MinTrimRounds:
		b.warn(WarnUntrimmed, Subject{Name: name, N: n})
	case n < stats.MinRounds:
		b.warn(WarnFewRounds, Subject{Name: name, N: n})
	}
	for _, r := range sc.Rounds {
		if r.ClientBound {
			sc.ClientBoundRounds++
		}
		if r.Conflicts > 0 {
			sc.RefusedRounds++
		}
	}
	if sc.RefusedRounds > 0 {
		b.warn(WarnRefusedWrites, Subject{Name: name, N: sc.RefusedRounds})
	}
	if sc.ClientBoundRounds > 0 {
		b.warn(WarnClientBound, Subject{Name: name, N: sc.ClientBoundRounds})
	}
	if sc.CV.Valid() && float64(sc.CV) > stats.MaxCV && sc.Slices == nil {
		b.warn(WarnNoisy, Subject{Name: name, Value: sc.CV.String() + "%"})
	}
}

// values extracts one Figure per round as float64.
func values[T any](rounds []T, get func(T) Figure) []float64 {
	out := make([]float64, 0, len(rounds))
	for _, r := range rounds {
		if v := get(r); v.Valid() {
			out = append(out, float64(v))
		}
	}
	return out
}

// meanOf is the mean of an optional per-round figure over the rounds other
// than skip that record it; missing when none does.
func meanOf(rounds []Round, skip int, get func(Round) Figure) Figure {
	var xs []float64
	for i, r := range rounds {
		if v := get(r); i != skip && v.Valid() {
			xs = append(xs, float64(v))
		}
	}
	if len(xs) == 0 {
		return missing
	}
	return fig(stats.Mean(xs))
}

// baselines finds the baseline of each alloc of a target (alloc →
// strategy; the key is "" under a --baseline override, which covers every
// alloc), noting the allocs without one in t.NoBaseline.
func (b *builder) baselines(t *TargetReport) (map[string]string, error) {
	if name, ok := b.opts.Baselines[t.Target]; ok {
		if !slices.Contains(t.Strategies, name) {
			names := slices.Sorted(slices.Values(t.Strategies))
			return nil, fmt.Errorf("%w: baseline %s=%s: target %s has no strategy %q (it has %s)",
				ErrFormat, t.Target, name, t.Target, name, strings.Join(names, ", "))
		}
		return map[string]string{"": name}, nil
	}
	anyPersistence := false
	for _, info := range t.info {
		anyPersistence = anyPersistence || info.persistence != ""
	}
	candidates := make(map[string][]string) // by alloc, by name
	var allocs []string
	for _, st := range slices.Sorted(slices.Values(t.Strategies)) {
		info := t.info[st]
		if !slices.Contains(allocs, info.alloc) {
			allocs = append(allocs, info.alloc)
		}
		if anyPersistence && info.persistence == "none" ||
			!anyPersistence && (st == "none" || st == "nopersist") {
			candidates[info.alloc] = append(candidates[info.alloc], st)
		}
	}
	slices.Sort(allocs)
	baselines := make(map[string]string)
	for _, a := range allocs {
		c := candidates[a]
		if len(c) == 0 {
			t.NoBaseline = append(t.NoBaseline, a)
			continue
		}
		if len(c) > 1 {
			name := t.Target
			if a != "" && len(allocs) > 1 {
				name += " (alloc " + a + ")"
			}
			b.warn(WarnBaselines, Subject{Name: name, Value: strings.Join(c, ", "), Chosen: c[0]})
		}
		baselines[a] = c[0]
	}
	return baselines, nil
}

// overheads compares every other scenario of a target with its baseline:
// one table per alloc that has a baseline, in the order the strategies
// come.
func (b *builder) overheads(t *TargetReport, baselines map[string]string) {
	if _, ok := b.opts.Baselines[t.Target]; ok { // one table, every alloc
		b.overheadTable(t, "", baselines[""], t.Strategies)
		return
	}
	var allocs []string
	group := make(map[string][]string)
	for _, st := range t.Strategies {
		a := t.info[st].alloc
		if _, ok := group[a]; !ok {
			allocs = append(allocs, a)
		}
		group[a] = append(group[a], st)
	}
	for _, a := range allocs {
		if base, ok := baselines[a]; ok {
			b.overheadTable(t, a, base, group[a])
		}
	}
}

// overheadTable compares each of strategies (but the baseline) with the
// baseline, mode by mode.
func (b *builder) overheadTable(t *TargetReport, alloc, baseline string, strategies []string) {
	tab := &OverheadTable{Alloc: alloc, Baseline: baseline}
	for _, st := range strategies {
		if st == baseline {
			continue
		}
		tab.Strategies = append(tab.Strategies, st)
		for _, m := range t.Modes {
			sc, base := t.Scenario(st, m), t.Scenario(baseline, m)
			if sc == nil {
				continue
			}
			sc.Baseline = baseline
			sc.Changes = []Change{
				b.change(MetricQPS, sc, base, func(s *Scenario) Figure { return s.TrimmedQPS }, func(r Round) Figure { return r.QPS }),
				b.change(MetricUsPerOp, sc, base, func(s *Scenario) Figure { return s.TrimmedUsPerOp }, func(r Round) Figure { return r.UsPerOp }),
			}
			if t.Latency {
				sc.Changes = append(sc.Changes,
					b.change(MetricP99, sc, base, func(s *Scenario) Figure { return s.TrimmedP99Us }, func(r Round) Figure { return r.P99Us }))
			}
		}
	}
	t.Overheads = append(t.Overheads, tab)
}

// sorted returns a scenario's per-round values of a metric in ascending
// order, computed once: the baseline is compared with every other strategy.
func (b *builder) sorted(sc *Scenario, metric string, round func(Round) Figure) []float64 {
	k := sortedKey{sc, metric}
	xs, ok := b.sortedCache[k]
	if !ok {
		xs = values(sc.Rounds, round)
		slices.Sort(xs)
		b.sortedCache[k] = xs
	}
	return xs
}

type sortedKey struct {
	sc     *Scenario
	metric string
}

// change compares one metric of a scenario with its baseline's: the
// percentage from the trimmed figures, the verdict from all ok rounds.
func (b *builder) change(metric string, sc, base *Scenario, trimmed func(*Scenario) Figure, round func(Round) Figure) Change {
	c := Change{Metric: metric, Pct: missing, P: Prob(math.NaN())}
	if base == nil {
		return c
	}
	if sc.RefusedRounds > 0 || base.RefusedRounds > 0 {
		c.Refused = true
		return c
	}
	c.Pct = Figure(stats.ChangePct(float64(trimmed(sc)), float64(trimmed(base))))
	if sc.Slices != nil || base.Slices != nil {
		return c // slices are compared in pairs (comparisons.go), not by the U test of rounds
	}
	c.P, c.Significant = b.test(sc.Name(), metric, b.sorted(sc, metric, round), b.sorted(base, metric, round))
	return c
}
