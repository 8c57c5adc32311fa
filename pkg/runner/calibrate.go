package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/tmpdir"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// The plan's estimate of an attempt is start + prefill + measurement +
// stop, each from figures of this machine: the last run's detail CSV in
// --out when it measured the target with the same load (pipeline,
// connections, value size, agents), else, for --dry-run, a short probe of
// the target; the fixed Estimate… figures only when neither is there (a
// real run without an earlier one, or a probe that failed). A cluster's
// start, which is mostly forming it, is measured per shard and counted
// for the shards the plan asks for.

// The ways of making the estimate (Options.Estimate).
const (
	// EstimateAuto takes the last run's figures where they fit and, for
	// a dry run, probes the other targets; a real run probes nothing.
	EstimateAuto = "auto"
	// EstimateLastRun takes the last run's figures only; it starts no
	// server.
	EstimateLastRun = "last"
	// EstimateProbe probes every target, whatever the last run measured
	// (a real run too, before it starts).
	EstimateProbe = "probe"
	// EstimateFixed uses the fixed Estimate… figures: it reads and starts
	// nothing.
	EstimateFixed = "fixed"
)

// Sources of a target's figures.
const (
	sourceLastRun = "last run"
	sourceProbe   = "probe"
)

// Probe sizes: enough requests for a rate past the connections' setup,
// few enough that a probe takes well under a second a target (an
// fsync-always one a little more).
const (
	probeRequests       = 50_000
	probeAlwaysRequests = 10_000
	probeKeys           = 50_000
)

// probePrefix starts the keys a probe writes.
const probePrefix = "kvbench:calibrate:"

// rates are one target's measured figures.
type rates struct {
	source string
	// qps is a measurement's rate, by mode (or workload) and whether the
	// strategy fsyncs every write (always).
	qps map[rateKey]float64
	// prefill is the prefill's rate in keys per second; 0 when unknown.
	prefill float64
	// reload is a restarted server's rate of loading its keys, from the
	// recovery mode's rows (recovery_keys_per_s); 0 when unknown.
	reload float64
	// start and stop are an attempt's; start is per shard when shards > 0.
	start, stop time.Duration
	shards      int
}

// rateKey names a measured rate.
type rateKey struct {
	always bool   // the strategy fsyncs every write (reads are not slowed)
	what   string // set, get, mixed, or a workload's name
}

// keyOf is the rate key of a scenario.
func keyOf(sc *Scenario) rateKey {
	return rateKey{always: sc.Strategy.Persistence == "always" && sc.Mode != loadgen.ModeGet, what: sc.what()}
}

// rate is the rate of k: measured, or for mixed combined from set and get
// (a request's time is the mix of theirs), or for a workload the slower of
// set and get (its commands are neither: a loose bound); 0 when unknown.
func (r *rates) rate(k rateKey, setRatio int) float64 {
	if q := r.qps[k]; q > 0 {
		return q
	}
	set, get := r.qps[rateKey{k.always, string(loadgen.ModeSet)}], r.qps[rateKey{false, string(loadgen.ModeGet)}]
	if set <= 0 || get <= 0 {
		return 0
	}
	if k.what == string(loadgen.ModeMixed) {
		w := float64(setRatio) / 100
		return 1 / (w/set + (1-w)/get)
	}
	return min(set, get)
}

// startOf is the start of an attempt of t: per shard times its shards.
func (r *rates) startOf(t target.Target) time.Duration {
	if r.shards == 0 {
		return r.start
	}
	return r.start * time.Duration(plannedShards(t, r.shards))
}

// plannedShards is the number of shards a cluster target forms, or
// measured when the target does not say.
func plannedShards(t target.Target, measured int) int {
	if s, ok := t.(interface{ Shards() int }); ok {
		return s.Shards()
	}
	return measured
}

// Calibrate measures the figures the estimate uses, as Options.Estimate
// says: from the last run's detail CSV in Options.OutDir for the targets
// it measured with the same load, and by a short probe of the other
// targets (their servers started and stopped as an attempt's are; for a
// dry run, with EstimateAuto, or for every target with EstimateProbe).
// What cannot be measured keeps the fixed figures, with a warning on w.
func (p *Plan) Calibrate(ctx context.Context, w io.Writer) {
	o := p.Options
	p.cal = make(map[string]*rates)
	if o.Estimate == EstimateFixed {
		return
	}
	if o.Estimate != EstimateProbe {
		if file, err := lastDetail(o); err != nil {
			fmt.Fprintln(w, "warning: the last run's detail CSV:", err)
		} else if file != "" {
			p.calFile = file
			if err := p.fromRun(file); err != nil {
				fmt.Fprintf(w, "warning: the last run's detail CSV %s: %v\n", file, err)
			}
		}
	}
	if o.Estimate == EstimateLastRun || o.Estimate == EstimateAuto && !o.DryRun {
		return
	}
	for _, t := range p.planTargets() {
		if p.cal[t.Desc().Name] != nil || ctx.Err() != nil {
			continue
		}
		r, err := p.probe(ctx, t)
		if err != nil {
			fmt.Fprintf(w, "warning: probe of %s: %v; its estimate assumes the fixed rates\n", t.Desc().Name, err)
			continue
		}
		p.cal[t.Desc().Name] = r
	}
}

// planTargets are the targets of the plan's scenarios, in order.
func (p *Plan) planTargets() []target.Target {
	var out []target.Target
	for _, sc := range p.Scenarios {
		if !slices.Contains(out, sc.Target) {
			out = append(out, sc.Target)
		}
	}
	return out
}

// lastDetail is the newest detail CSV in the output directory; "" when
// there is none.
func lastDetail(o Options) (string, error) {
	files, err := filepath.Glob(filepath.Join(o.OutDir, o.Prefix+"_detail_*.csv"))
	if err != nil || len(files) == 0 {
		return "", err
	}
	newest, at := "", time.Time{}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(at) {
			newest, at = f, st.ModTime()
		}
	}
	return newest, nil
}

// fromRun takes the rates and timings of the plan's targets from a detail
// CSV: its ok rows measured with the plan's load, the workloads' total
// rows; a target whose rows do not record the server's start and stop
// (files written before start_s) is left to the probe.
func (p *Plan) fromRun(file string) error {
	rows, err := results.ReadFiles([]string{file})
	if err != nil {
		return err
	}
	o := p.Options
	type sums struct {
		requests, elapsed           map[rateKey]float64
		keys, prefill, start, stop  float64
		attempts, shards, prefilled int
		reloads                     []float64 // recovery_keys_per_s
	}
	p.calSpread, p.calSpreadFile = blockSpread(rows), file
	by := make(map[string]*sums)
	for _, r := range rows {
		if !r.OK() || r.Pipeline != o.Pipeline || r.Connections != o.Connections || r.ValueSize != o.ValueSize ||
			max(r.Agents, 1) != max(o.Agents, 1) || r.StartS <= 0 && r.Block == 0 || r.Workload != "" && r.Command != results.CommandTotal {
			continue
		}
		s := by[r.Target]
		if s == nil {
			s = &sums{requests: make(map[rateKey]float64), elapsed: make(map[rateKey]float64)}
			by[r.Target] = s
		}
		what := r.Mode
		if r.Workload != "" {
			what = r.Workload
		}
		k := rateKey{always: r.Persistence == "always" && r.Mode != string(loadgen.ModeGet), what: what}
		if r.Requests > 0 && r.ElapsedS > 0 {
			s.requests[k] += float64(r.Requests)
			s.elapsed[k] += r.ElapsedS
		}
		if r.RecoveryKeysPerS != nil && *r.RecoveryKeysPerS > 0 {
			s.reloads = append(s.reloads, *r.RecoveryKeysPerS)
		}
		if r.PrefillS > 0 && r.Workload == "" {
			s.keys += float64(r.Keyspace)
			s.prefill += r.PrefillS
			s.prefilled++
		}
		if r.StartS <= 0 { // a slice of an adaptive run that started no server
			continue
		}
		start := r.StartS
		if r.Shards > 0 {
			start /= float64(r.Shards)
			s.shards = r.Shards
		}
		s.start += start
		s.stop += r.StopS
		s.attempts++
	}
	for _, t := range p.planTargets() {
		s := by[t.Desc().Name]
		if s == nil {
			continue
		}
		r := &rates{source: sourceLastRun, qps: make(map[rateKey]float64), shards: s.shards}
		if s.attempts > 0 {
			r.start, r.stop = seconds(s.start/float64(s.attempts)), seconds(s.stop/float64(s.attempts))
		}
		for k, n := range s.requests {
			r.qps[k] = n / s.elapsed[k]
		}
		if s.prefill > 0 {
			r.prefill = s.keys / s.prefill
		}
		if len(s.reloads) > 0 {
			r.reload = stats.Median(s.reloads)
		}
		p.cal[t.Desc().Name] = r
	}
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// probe measures a target as an attempt would, briefly: the start (a
// cluster formed), a set burst, a prefill and a get burst on a server of
// its first planned strategy that does not fsync every write, a set burst
// on one that does when the plan has one, and the stops.
func (p *Plan) probe(ctx context.Context, t target.Target) (*rates, error) {
	o := p.Options
	var plain, always *Scenario
	for _, sc := range p.Scenarios {
		switch {
		case sc.Target != t:
		case sc.Strategy.Persistence == "always":
			if always == nil {
				always = sc
			}
		case plain == nil:
			plain = sc
		}
	}
	parent := o.TempDir
	if parent == "" {
		parent = os.TempDir()
	}
	tmp, err := tmpdir.New(parent)
	if err != nil {
		return nil, fmt.Errorf("a temporary directory: %w", err)
	}
	defer tmp.Remove()
	o.Tracker.AddDir(tmp.Path)
	r := &rates{source: sourceProbe, qps: make(map[rateKey]float64)}
	var starts, stops time.Duration
	probes := 0
	for _, sc := range []*Scenario{plain, always} {
		if sc == nil {
			continue
		}
		// The reads and the prefill are measured once, on the first
		// server: fsync does not slow them.
		start, stop, err := p.probeOne(ctx, sc, tmp.Path, r, probes == 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Strategy.Name, err)
		}
		starts, stops, probes = starts+start, stops+stop, probes+1
	}
	r.start, r.stop = starts/time.Duration(probes), stops/time.Duration(probes)
	if r.shards > 0 {
		r.start /= time.Duration(r.shards)
	}
	return r, nil
}

// probeOne starts a server for sc, measures a set burst into r (and, with
// reads, a prefill and a get burst) and stops it; it returns the start's
// and the stop's time.
func (p *Plan) probeOne(ctx context.Context, sc *Scenario, tmp string, r *rates, reads bool) (start, stop time.Duration, err error) {
	o := p.Options
	dir, err := os.MkdirTemp(tmp, "probe-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	inst, err := sc.Target.Start(ctx, sc.Strategy, target.Env{Dir: dir, Tracker: o.Tracker, ReadyTimeout: o.ReadyTimeout})
	start = time.Since(t0)
	if err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	defer func() {
		t1 := time.Now()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.StopGrace)
		serr := inst.Stop(sctx)
		cancel()
		stop = time.Since(t1)
		if err == nil && serr != nil {
			err = fmt.Errorf("stop: %w", serr)
		}
	}()
	info := inst.Info()
	r.shards = len(info.Nodes)
	cfg := loadConfig(o, sc, info, o.Seed)
	cfg.VerifyGet, cfg.Progress = false, nil
	burst := func(mode loadgen.Mode, requests, keys int64, prefix string) (float64, error) {
		c := cfg
		c.Mode, c.Requests, c.Keyspace, c.KeyPrefix = mode, requests, keys, probePrefix+prefix
		res, err := loadgen.Run(ctx, c)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", mode, err)
		}
		return float64(res.Requests) / res.Elapsed.Seconds(), nil
	}
	if reads { // first: a prefill wants an empty server
		pc := cfg
		pc.Keyspace, pc.Pipeline, pc.KeyPrefix = min(o.Keyspace, probeKeys), o.PrefillPipeline, probePrefix+"get:"
		pre, err := loadgen.Prefill(ctx, pc)
		if err != nil {
			return start, stop, fmt.Errorf("prefill: %w", err)
		}
		r.prefill = float64(pc.Keyspace) / pre.Elapsed.Seconds()
		if r.qps[rateKey{false, string(loadgen.ModeGet)}], err = burst(loadgen.ModeGet, min(o.Requests, probeRequests), pc.Keyspace, "get:"); err != nil {
			return start, stop, err
		}
	}
	always := sc.Strategy.Persistence == "always"
	n := min(o.Requests, probeRequests)
	if always {
		n = min(o.Requests, probeAlwaysRequests)
	}
	// Each key once: an insert-only write (RSET) refuses a key twice.
	r.qps[rateKey{always, string(loadgen.ModeSet)}], err = burst(loadgen.ModeSet, n, n, "set:")
	return start, stop, err
}

// loadConfig is the load generator's configuration of an attempt of sc
// on the server info describes, round seed: the run's load (Options.Load)
// with the server, the mode, the target's commands and the seed set.
func loadConfig(o Options, sc *Scenario, info target.Info, seed int64) loadgen.Config {
	cfg := loadgen.DefaultConfig()
	cfg.Load, cfg.Seed = o.Load, seed
	cfg.Addr, cfg.Password, cfg.Mode = info.Addr, sc.Desc.Password, sc.Mode
	cfg.TLS, cfg.User, cfg.DB, cfg.RESP3 = info.TLS, info.User, info.DB, info.RESP3
	cfg.Cluster = len(info.Nodes) > 0 // a redis-cluster, or an attached cluster
	cfg.ClusterSeeds = info.Nodes
	cfg.SetCmd, cfg.GetCmd = sc.Desc.SetCmd, sc.Desc.GetCmd
	cfg.ProgressInterval = o.ProgressInterval
	return cfg
}

// calibrationLines describe the figures of each calibrated target, for
// the plan: "calibration kvstore (probe): set 350,000 req/s, …".
func (p *Plan) calibrationLines() []string {
	var lines []string
	for _, t := range p.planTargets() {
		r := p.cal[t.Desc().Name]
		if r == nil {
			continue
		}
		var parts []string
		for _, what := range p.whats() {
			for _, always := range []bool{false, true} {
				if q := r.qps[rateKey{always, what}]; q > 0 {
					name := what
					if always {
						name += " (fsync always)"
					}
					parts = append(parts, fmt.Sprintf("%s %s req/s", name, thousands(q)))
				}
			}
		}
		if r.prefill > 0 {
			parts = append(parts, fmt.Sprintf("prefill %s keys/s", thousands(r.prefill)))
		}
		startText := "start " + formatDuration(r.startOf(t))
		if r.shards > 0 {
			startText += fmt.Sprintf(" (forming the cluster: %s a shard × %d)", formatDuration(r.start), plannedShards(t, r.shards))
		}
		parts = append(parts, startText, "stop "+formatDuration(r.stop))
		lines = append(lines, fmt.Sprintf("calibration %s (%s): %s", t.Desc().Name, r.source, strings.Join(parts, ", ")))
	}
	return lines
}

// whats are set, get, mixed and the workloads' names, in that order.
func (p *Plan) whats() []string {
	what := []string{string(loadgen.ModeSet), string(loadgen.ModeGet), string(loadgen.ModeMixed)}
	for _, w := range p.Options.workloads {
		what = append(what, w.Name)
	}
	return what
}

// calibrationNote is the estimate's source, for the plan's last line.
func (p *Plan) calibrationNote() string {
	var run, probed, fixed []string
	for _, t := range p.planTargets() {
		name := t.Desc().Name
		switch r := p.cal[name]; {
		case r == nil:
			fixed = append(fixed, name)
		case r.source == sourceLastRun:
			run = append(run, name)
		default:
			probed = append(probed, name)
		}
	}
	var parts []string
	if len(run) > 0 {
		parts = append(parts, fmt.Sprintf("%s from the last run, %s", strings.Join(run, ", "), p.calFile))
	}
	if len(probed) > 0 {
		parts = append(parts, fmt.Sprintf("%s from a probe of this machine", strings.Join(probed, ", ")))
	}
	if len(fixed) > 0 {
		assumed := fmt.Sprintf("assuming %d req/s, %d with fsync always, prefill %d keys/s, %v to start and stop a server",
			EstimateQPS, EstimateAlwaysQPS, EstimatePrefillQPS, EstimateStartStop)
		if len(parts) > 0 {
			assumed = strings.Join(fixed, ", ") + " " + assumed
		}
		parts = append(parts, assumed)
	}
	return strings.Join(parts, "; ")
}
