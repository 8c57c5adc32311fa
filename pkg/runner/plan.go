package runner

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/flame"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/adaptive"
	"github.com/kvbench/kvbench/pkg/runner/calibration"
	"github.com/kvbench/kvbench/pkg/runner/placement"
	"github.com/kvbench/kvbench/pkg/runner/recovery"
	"github.com/kvbench/kvbench/pkg/runner/status"
	"github.com/kvbench/kvbench/pkg/runner/workloadrun"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/target/targetfile"
	"github.com/kvbench/kvbench/pkg/workload"
)

// Scenario is one (target, strategy, mode or workload): the unit
// measured once per round.
type Scenario struct {
	// Target is the server.
	Target target.Target
	// Desc is Target.Desc().
	Desc target.Desc
	// Strategy is its configuration.
	Strategy target.Strategy
	// Mode is set, get or mixed, or results.ModeWorkload with Workload.
	Mode loadgen.Mode
	// Workload is the workload measured, nil for the modes.
	Workload *workload.Workload
}

// Name is "target/strategy/mode", or "target/strategy/workload".
func (s *Scenario) Name() string {
	return s.Desc.Name + "/" + s.Strategy.Name + "/" + s.what()
}

// what is the mode, or the workload's name.
func (s *Scenario) what() string {
	if s.Workload != nil {
		return s.Workload.Name
	}
	return string(s.Mode)
}

// Step is one slot of the plan: a scenario's round.
type Step struct {
	// Scenario is the scenario measured.
	Scenario *Scenario
	// Round is the round, from 1.
	Round int
}

// Plan is the run's matrix in the order it runs.
type Plan struct {
	// Options are the normalized options.
	Options Options
	// Scenarios are the scenarios, targets × strategies × modes.
	Scenarios []*Scenario
	// Steps are the scenarios' rounds in run order.
	Steps []Step
	// Warnings are findings that do not stop the run (redis-server not
	// found, a target none of whose strategies was asked for).
	Warnings []error

	cal     map[string]*calibration.Rates // the estimate's figures by target (Calibrate); nil: the fixed ones
	calFile string                        // the detail CSV they were read from
	// calSpread is the spread of an adaptive run's block log-ratios in
	// calSpreadFile, the last run's detail CSV; 0 when it was not
	// adaptive.
	calSpread     float64
	calSpreadFile string
}

// NewPlan resolves the targets, strategies and modes of opts and orders
// the rounds. Errors in the options wrap ErrOptions.
func NewPlan(opts Options) (*Plan, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if err := checkPowerLoss(o); err != nil { // powerloss.go
		return nil, err
	}
	p := &Plan{Options: o}
	targets, err := p.targets()
	if err != nil {
		return nil, err
	}
	if ref := o.Reference; ref != "" && !slices.ContainsFunc(targets, func(t target.Target) bool { return t.Desc().Name == ref }) {
		return nil, fmt.Errorf("%w: reference %q: not a target of the run (%s)", ErrOptions, ref, targetNames(targets))
	}
	if err := p.scenarios(targets); err != nil {
		return nil, err
	}
	var warns []error
	p.Options.placement, warns = placement.Resolve(p.Options.CPUs, p.Options.placement, targets)
	p.Warnings = append(p.Warnings, warns...)
	if o.Precision == 0 {
		p.order()
	}
	return p, nil
}

// targets returns the targets to run: those of --targets, looked up in
// the --config file first and then among the built-in kvstore and redis;
// without --targets, the file's targets, or the built-in ones when there is
// no file.
func (p *Plan) targets() ([]target.Target, error) {
	o := p.Options
	kv := target.KvstoreConfig{Bin: o.KvstoreBin, Alloc: o.Alloc, Port: o.KVPort, SetCmd: o.SetCmd, GetCmd: o.GetCmd}
	rc := target.RedisConfig{Bin: o.RedisBin, TLS: target.RedisTLS{Enabled: o.TLS.Enabled, Mutual: true}, RESP3: o.RESP3}
	var file []target.Target
	if o.ConfigFile != "" {
		var err error
		file, err = targetfile.Load(o.ConfigFile, targetfile.Defaults{Kvstore: kv, Redis: rc, AllowFlush: o.AllowFlush, TLS: o.TLS, User: o.User, DB: o.DB, RESP3: o.RESP3})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		if o.Targets == nil {
			return file, checkEndpointDefaults(o, file)
		}
	}
	out, err := p.namedTargets(file, kv, rc)
	if err != nil {
		return nil, err
	}
	return out, checkEndpointDefaults(o, out)
}

// checkEndpointDefaults refuses a --user, --db or --resp3 that reaches
// no target of the run: the targets that set none and can take it
// (targetfile.Defaults) have it.
func checkEndpointDefaults(o Options, ts []target.Target) error {
	if o.User != "" && !slices.ContainsFunc(ts, func(t target.Target) bool { d := t.Desc(); return d.Kind == target.KindAttach && d.User == o.User }) {
		return fmt.Errorf("%w: --user %s: no target of the run takes it: an ACL user is for attach targets (%s)", ErrOptions, o.User, targetNames(ts))
	}
	if o.DB > 0 && !slices.ContainsFunc(ts, func(t target.Target) bool { return t.Desc().DB == o.DB }) {
		return fmt.Errorf("%w: --db %d: no target of the run takes it: the kvstore and clusters have only database 0 (%s)", ErrOptions, o.DB, targetNames(ts))
	}
	if o.RESP3 && !slices.ContainsFunc(ts, func(t target.Target) bool { return t.Desc().RESP3 }) {
		return fmt.Errorf("%w: --resp3: no target of the run takes it: every one says resp3: false (%s)", ErrOptions, targetNames(ts))
	}
	return nil
}

// namedTargets returns the targets --targets names (the built-in kvstore
// and redis without it), from the --config file's or built in.
func (p *Plan) namedTargets(file []target.Target, kv target.KvstoreConfig, rc target.RedisConfig) ([]target.Target, error) {
	o := p.Options
	names := o.Targets
	explicit := names != nil
	if !explicit {
		names = []string{target.DefaultKvstoreName, target.DefaultRedisName}
	}
	var out []target.Target
	seen := make(map[string]bool)
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if i := slices.IndexFunc(file, func(t target.Target) bool { return t.Desc().Name == name }); i >= 0 {
			out = append(out, file[i])
			continue
		}
		switch name {
		case target.DefaultKvstoreName:
			if o.TLS.Enabled {
				return nil, fmt.Errorf("%w: target kvstore: the kvstore serves plaintext only and cannot be measured over TLS: drop --tls, or run the other targets (--targets redis)", ErrOptions)
			}
			if o.RESP3 {
				return nil, fmt.Errorf("%w: target kvstore: the kvstore speaks RESP2 only and cannot be measured over RESP3: drop --resp3, or run the other targets (--targets redis)", ErrOptions)
			}
			k, err := target.NewKvstore(kv)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrOptions, err)
			}
			out = append(out, k)
		case target.DefaultRedisName:
			rc := rc
			rc.DB = o.DB
			r, err := target.NewRedis(rc)
			if errors.Is(err, target.ErrNotFound) && !explicit {
				p.Warnings = append(p.Warnings, fmt.Errorf("redis-server not found, measuring the kvstore only (install redis-server or give --redis-bin): %w", err))
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrOptions, err)
			}
			out = append(out, r)
		case target.DefaultKvstoreClusterName, target.DefaultRedisClusterName:
			if name == target.DefaultKvstoreClusterName && o.TLS.Enabled {
				return nil, fmt.Errorf("%w: target kvstore-cluster: the kvstore serves plaintext only and cannot be measured over TLS: drop --tls, or run the other targets (--targets redis-cluster)", ErrOptions)
			}
			if name == target.DefaultKvstoreClusterName && o.RESP3 {
				return nil, fmt.Errorf("%w: target kvstore-cluster: the kvstore speaks RESP2 only and cannot be measured over RESP3: drop --resp3, or run the other targets (--targets redis-cluster)", ErrOptions)
			}
			t, err := clusterTarget(name, o.Shards, kv, rc) // cluster_plan.go
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrOptions, err)
			}
			out = append(out, t)
		default:
			if o.ConfigFile != "" {
				return nil, fmt.Errorf("%w: target %q is neither in %s (it has %s) nor built in (kvstore, redis, kvstore-cluster, redis-cluster)", ErrOptions, name, o.ConfigFile, targetNames(file))
			}
			return nil, fmt.Errorf("%w: target %q: want kvstore, redis, kvstore-cluster or redis-cluster, or a target of a --config file", ErrOptions, name)
		}
	}
	return out, nil
}

func targetNames(ts []target.Target) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Desc().Name)
	}
	return strings.Join(names, ", ")
}

// scenarios builds targets × strategies × modes.
func (p *Plan) scenarios(targets []target.Target) error {
	o := p.Options
	all := len(o.Strategies) == 1 && o.Strategies[0] == AllStrategies
	known := make(map[string]bool)
	for _, t := range targets {
		d := t.Desc()
		var sel []target.Strategy
		switch {
		case all:
			sel = d.Strategies
		case o.Strategies == nil:
			sel, _ = d.Select(d.Defaults)
		default:
			var unknown []string
			sel, unknown = d.Select(o.Strategies)
			for _, n := range o.Strategies {
				if !slices.Contains(unknown, n) {
					known[n] = true
				}
			}
		}
		if len(sel) == 0 {
			p.Warnings = append(p.Warnings, fmt.Errorf("target %s has none of the strategies asked for (it has %s): skipped", d.Name, strategyNames(d.Strategies)))
			continue
		}
		var err error
		if sel, err = p.persistJobStrategies(d, sel, !all && o.Strategies != nil); err != nil { // persistjob.go
			return err
		}
		if len(sel) == 0 {
			p.Warnings = append(p.Warnings, fmt.Errorf("target %s has no strategy with the %s job: skipped", d.Name, o.PersistJob))
			continue
		}
		if err := checkWait(o, d); err != nil { // wait.go
			return err
		}
		for _, m := range o.Modes {
			c := loadgen.Config{Mode: loadgen.Mode(m), SetCmd: d.SetCmd, Load: o.Load}
			if o.Precision > 0 { // a write slice writes keys no slice wrote, within the keyspace
				c.Requests = min(c.Requests, c.Keyspace)
			}
			if err := c.InsertOnlyErrors(); err != nil {
				return fmt.Errorf("%w: target %s, mode %s: %w", ErrOptions, d.Name, m, err)
			}
			if m == results.ModeRecovery {
				if err := recovery.Check(d); err != nil {
					return fmt.Errorf("%w: target %s: %w", ErrOptions, d.Name, err)
				}
			} else if err := checkCurve(o, d, c.Mode); err != nil {
				return fmt.Errorf("%w: %w", ErrOptions, err)
			}
		}
		for _, s := range sel {
			for _, m := range o.Modes {
				p.Scenarios = append(p.Scenarios, &Scenario{Target: t, Desc: d, Strategy: s, Mode: loadgen.Mode(m)})
			}
			for _, w := range o.workloads {
				p.Scenarios = append(p.Scenarios, &Scenario{Target: t, Desc: d, Strategy: s, Mode: results.ModeWorkload, Workload: w})
			}
		}
	}
	if !all && o.Strategies != nil {
		for _, n := range o.Strategies {
			if !known[n] {
				var have []string
				for _, t := range targets {
					have = append(have, t.Desc().Name+": "+strategyNames(t.Desc().Strategies))
				}
				return fmt.Errorf("%w: strategy %q: no target has it (%s)", ErrOptions, n, strings.Join(have, "; "))
			}
		}
	}
	if len(p.Scenarios) == 0 {
		return fmt.Errorf("%w: nothing to run", ErrOptions)
	}
	return nil
}

func strategyNames(ss []target.Strategy) string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return strings.Join(names, " ")
}

// order lays out the steps: round by round in a shuffled order
// (interleaved), or scenario by scenario (sequential).
func (p *Plan) order() {
	o := p.Options
	if o.Order == OrderSequential {
		for _, sc := range p.Scenarios {
			for r := 1; r <= o.Rounds; r++ {
				p.Steps = append(p.Steps, Step{sc, r})
			}
		}
		return
	}
	for r := 1; r <= o.Rounds; r++ {
		round := slices.Clone(p.Scenarios)
		rng := rand.New(rand.NewPCG(uint64(o.Seed), uint64(r)))
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		for _, sc := range round {
			p.Steps = append(p.Steps, Step{sc, r})
		}
	}
}

// Figures used to estimate the time of an attempt when nothing of this
// machine is known (see Calibrate), a little below what the default run of
// BENCHMARKS.md measured on a two-core machine ("kvbench run
// (orchestration)").
const (
	// EstimateQPS is the assumed rate of a measurement.
	EstimateQPS = 400_000
	// EstimateAlwaysQPS is the assumed rate of writes fsynced each time.
	EstimateAlwaysQPS = 100_000
	// EstimatePrefillQPS is the assumed rate of a prefill.
	EstimatePrefillQPS = 600_000
	// EstimateStartStop is the assumed time to start and stop a server.
	EstimateStartStop = 100 * time.Millisecond
)

// Figures used to estimate what the recovery mode and the profile rounds
// add to an attempt, from such runs on a two-core machine ("make
// bench-estimate" sets the estimate against the run).
const (
	// EstimateStreamQPS is the assumed rate of a recovery's stream of
	// acknowledged writes, per connection: one write in flight at a
	// time (the runs gave 14,000 to 24,000).
	EstimateStreamQPS = 20_000
	// EstimateReloadKeysPerS is the assumed rate at which a restarted
	// server that keeps its data loads its keys (the runs gave 500,000
	// to 2,000,000: the kvstore's compacted log fastest).
	EstimateReloadKeysPerS = 600_000
	// EstimateRestart is a restarted server's time to answer, its keys
	// aside.
	EstimateRestart = 200 * time.Millisecond
	// EstimateProfile is what a profile round adds to its attempt:
	// perf's start and stop, its samples read, the flame graphs drawn
	// (the runs gave 0.1 to 2 s, loaded: perf reads its samples slowly).
	EstimateProfile = 1300 * time.Millisecond
)

// estimate is the time an attempt of sc is expected to take: the start
// and stop of its server, its prefill and its measurement, from the
// target's calibrated figures (Calibrate) where they are known, else from
// the fixed ones.
func (p *Plan) estimate(sc *Scenario) time.Duration {
	o := p.Options
	qps := p.qpsOf(sc)
	d := p.startStopOf(sc)
	switch {
	case sc.Mode == results.ModeRecovery:
		d += p.recoveryEstimate(sc)
	case sc.Workload == nil:
		d += p.phaseEstimate(qps) + p.curveEstimate(qps)
	default:
		d += p.phaseEstimate(qps)
	}
	keys, fills := o.Keyspace, sc.Mode != loadgen.ModeSet
	if sc.Workload != nil {
		cfg := workloadConfig(o, sc.Workload)
		keys, fills = cfg.Keyspace, len(workloadrun.Fills(cfg)) > 0
	}
	if fills {
		d += seconds(float64(keys) / p.prefillRateOf(sc))
	}
	return d
}

// phaseEstimate is the expected time of a measured phase at qps, and of
// its warmup: --duration's, or --requests' at that rate.
func (p *Plan) phaseEstimate(qps float64) time.Duration {
	o := p.Options
	d := o.Duration
	if d <= 0 {
		d = seconds(float64(o.Requests) / qps)
	}
	if o.WarmupRequests > 0 {
		return d + seconds(float64(o.WarmupRequests)/qps)
	}
	return d + o.Warmup
}

// recoveryEstimate is what a recovery attempt of sc spends after its
// prefill: the stream of acknowledged writes (until Requests are, or
// recovery.Stream has passed: PowerLossStream for a power loss), the
// restart on its files, which takes the start of a server, and, for a
// strategy that keeps its data, the reload of the keyspace.
func (p *Plan) recoveryEstimate(sc *Scenario) time.Duration {
	o := p.Options
	stream := recovery.Stream
	if o.PowerLoss {
		stream = recovery.PowerLossStream
	}
	if o.Requests > 0 {
		stream = min(stream, seconds(float64(o.Requests)/(float64(max(o.Connections, 1))*EstimateStreamQPS)))
	}
	d := stream + p.startOf(sc) + EstimateRestart
	if sc.Strategy.Persistence != "none" {
		d += seconds(float64(o.Keyspace) / p.reloadRateOf(sc))
	}
	return d
}

// profiled are the scenarios a profile round runs for (Options.Profile,
// with perf on this machine): all but the recovery mode's.
func (p *Plan) profiled() []*Scenario {
	if !p.Options.Profile {
		return nil
	}
	if _, err := exec.LookPath(flame.DefaultPerf); err != nil {
		return nil
	}
	var out []*Scenario
	for _, sc := range p.Scenarios {
		if sc.Mode != results.ModeRecovery {
			out = append(out, sc)
		}
	}
	return out
}

// profileEstimate is the expected time of the profile rounds: an attempt
// of every profiled scenario, and EstimateProfile more each.
func (p *Plan) profileEstimate() time.Duration {
	var d time.Duration
	for _, sc := range p.profiled() {
		d += p.estimate(sc) + EstimateProfile
	}
	return d
}

// writeProfileLine writes the plan's line of the profile rounds, if it
// has them.
func (p *Plan) writeProfileLine(b *strings.Builder) {
	if prof := p.profiled(); len(prof) > 0 {
		fmt.Fprintf(b, "then a profile round of each of the %d scenarios measured ~%s (an attempt each, and perf's %s)\n",
			len(prof), status.Duration(p.profileEstimate()), status.Duration(EstimateProfile))
	}
}

// startStopOf is the estimated start and stop of a server of sc.
func (p *Plan) startStopOf(sc *Scenario) time.Duration {
	if r := p.cal[sc.Desc.Name]; r != nil {
		return r.StartOf(sc.Target) + r.Stop
	}
	return EstimateStartStop
}

// startOf is the estimated start of a server of sc.
func (p *Plan) startOf(sc *Scenario) time.Duration {
	if r := p.cal[sc.Desc.Name]; r != nil {
		return r.StartOf(sc.Target)
	}
	return EstimateStartStop / 2
}

// prefillRateOf is the estimated prefill rate of a server of sc, in keys
// per second.
func (p *Plan) prefillRateOf(sc *Scenario) float64 {
	if r := p.cal[sc.Desc.Name]; r != nil && r.Prefill > 0 {
		return r.Prefill
	}
	return EstimatePrefillQPS
}

// reloadRateOf is the estimated rate at which a restarted server of sc
// loads its keys, in keys per second.
func (p *Plan) reloadRateOf(sc *Scenario) float64 {
	if r := p.cal[sc.Desc.Name]; r != nil && r.Reload > 0 {
		return r.Reload
	}
	return EstimateReloadKeysPerS
}

// Estimate is the expected time of the whole run, its profile rounds
// included, without retries.
func (p *Plan) Estimate() time.Duration {
	d := p.profileEstimate()
	if p.Options.Precision > 0 {
		return d + p.adaptiveEstimate()
	}
	for _, st := range p.Steps {
		d += p.estimate(st.Scenario)
	}
	return d
}

// Summary is one line: how many targets, strategies, modes, rounds and
// attempts, and the estimated time.
func (p *Plan) Summary() string {
	o := p.Options
	var targets []string
	strategies := make(map[[2]string]bool)
	for _, sc := range p.Scenarios {
		if !slices.Contains(targets, sc.Desc.Name) {
			targets = append(targets, sc.Desc.Name)
		}
		strategies[[2]string{sc.Desc.Name, sc.Strategy.Name}] = true
	}
	what := slices.Clone(o.Modes)
	for _, w := range o.workloads {
		what = append(what, w.Name)
	}
	if o.Precision > 0 {
		return fmt.Sprintf("%s × %d strategies × %s, adaptive: slices of %s until every comparison is within ±%s (at most %s), about %s",
			strings.Join(targets, "+"), len(strategies), strings.Join(what, "+"), status.Duration(o.Slice), adaptive.Percent(o.Precision),
			status.Duration(o.MaxTime), status.Duration(p.Estimate()))
	}
	return fmt.Sprintf("%s × %d strategies × %s × %d rounds = %d measurements, %s order, about %s",
		strings.Join(targets, "+"), len(strategies), strings.Join(what, "+"), o.Rounds, len(p.Steps), o.Order, status.Duration(p.Estimate()))
}

// Write prints the plan: the settings, every step in order with its
// estimated time, and the total.
func (p *Plan) Write(w io.Writer) error {
	o := p.Options
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s\n", p.Summary())
	if o.Precision > 0 {
		fmt.Fprintf(&b, "settings: keyspace %d, pipeline %d, connections %d, value size %d, seed %d, retries %d, slices of %s, placement %s\n",
			o.Keyspace, o.Pipeline, o.Connections, o.ValueSize, o.Seed+1, o.Retries, status.Duration(o.Slice), o.placement)
	} else {
		fmt.Fprintf(&b, "settings: requests %d, keyspace %d, pipeline %d, connections %d, value size %d, seed %d (+ round), retries %d\n",
			o.Requests, o.Keyspace, o.Pipeline, o.Connections, o.ValueSize, o.Seed, o.Retries)
	}
	if line := curvePlanLine(o.curve); line != "" {
		fmt.Fprintln(&b, line)
	}
	seen := make(map[string]bool)
	for _, sc := range p.Scenarios {
		if seen[sc.Desc.Name] {
			continue
		}
		seen[sc.Desc.Name] = true
		fmt.Fprintf(&b, "target %s (%s): %s/%s", sc.Desc.Name, sc.Desc.Kind, sc.Desc.SetCmd, sc.Desc.GetCmd)
		var ss []string
		for _, s := range p.Scenarios {
			if s.Desc.Name == sc.Desc.Name && s.Mode == sc.Mode && s.Workload == sc.Workload {
				label := s.Strategy.Name
				if s.Strategy.Persistence != "" && s.Strategy.Persistence != s.Strategy.Name {
					label += " (" + s.Strategy.Persistence + ")"
				}
				ss = append(ss, label)
			}
		}
		fmt.Fprintf(&b, ", strategies %s\n", strings.Join(ss, ", "))
	}
	for _, line := range p.calibrationLines() {
		fmt.Fprintln(&b, line)
	}
	if o.Precision > 0 {
		p.writeAdaptive(&b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	var total time.Duration
	width := len(fmt.Sprint(len(p.Steps)))
	for i, st := range p.Steps {
		d := p.estimate(st.Scenario)
		total += d
		fmt.Fprintf(&b, "%*d. round %d  %-40s ~%s\n", width, i+1, st.Round, st.Scenario.Name(), status.Duration(d))
	}
	total += p.profileEstimate()
	p.writeProfileLine(&b)
	fmt.Fprintf(&b, "estimated time: %s (%s; retries not counted)\n", status.Duration(total), p.calibrationNote())
	_, err := io.WriteString(w, b.String())
	return err
}
