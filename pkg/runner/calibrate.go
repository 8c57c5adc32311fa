package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/calibration"
	"github.com/kvbench/kvbench/pkg/runner/status"
	"github.com/kvbench/kvbench/pkg/runner/tmpdir"
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

// keyOf is the rate key of a scenario.
func keyOf(sc *Scenario) calibration.Key {
	return calibration.KeyOf(sc.Strategy.Persistence, string(sc.Mode), sc.what())
}

// Calibrate measures the figures the estimate uses, as Options.Estimate
// says: from the last run's detail CSV in Options.OutDir for the targets
// it measured with the same load, and by a short probe of the other
// targets (their servers started and stopped as an attempt's are; for a
// dry run, with EstimateAuto, or for every target with EstimateProbe).
// What cannot be measured keeps the fixed figures, with a warning on w.
func (p *Plan) Calibrate(ctx context.Context, w io.Writer) {
	o := p.Options
	p.cal = make(map[string]*calibration.Rates)
	if o.Estimate == EstimateFixed {
		return
	}
	if o.Estimate != EstimateProbe {
		if file, err := calibration.LastDetail(o.OutDir, o.Prefix); err != nil {
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

// fromRun takes the rates and timings of the plan's targets from a detail
// CSV (calibration.FromRows), and the spread of its adaptive blocks.
func (p *Plan) fromRun(file string) error {
	rows, err := results.ReadFiles([]string{file})
	if err != nil {
		return err
	}
	o := p.Options
	p.calSpread, p.calSpreadFile = calibration.BlockSpread(rows), file
	var names []string
	for _, t := range p.planTargets() {
		names = append(names, t.Desc().Name)
	}
	for name, r := range calibration.FromRows(rows, calibration.Load{Pipeline: o.Pipeline, Connections: o.Connections, ValueSize: o.ValueSize, Agents: o.Agents}, names) {
		p.cal[name] = r
	}
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// probe measures a target as an attempt would, briefly: the start (a
// cluster formed), a set burst, a prefill and a get burst on a server of
// its first planned strategy that does not fsync every write, a set burst
// on one that does when the plan has one, and the stops.
func (p *Plan) probe(ctx context.Context, t target.Target) (*calibration.Rates, error) {
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
	r := &calibration.Rates{Source: calibration.SourceProbe, QPS: make(map[calibration.Key]float64)}
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
	r.Start, r.Stop = starts/time.Duration(probes), stops/time.Duration(probes)
	if r.Shards > 0 {
		r.Start /= time.Duration(r.Shards)
	}
	return r, nil
}

// probeOne starts a server for sc, measures a set burst into r (and, with
// reads, a prefill and a get burst: calibration.Probe) and stops it; it
// returns the start's and the stop's time.
func (p *Plan) probeOne(ctx context.Context, sc *Scenario, tmp string, r *calibration.Rates, reads bool) (start, stop time.Duration, err error) {
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
	r.Shards = len(info.Nodes)
	err = calibration.Probe(ctx, loadConfig(o, sc, info, o.Seed), calibration.Sizes{Requests: o.Requests, Keyspace: o.Keyspace, PrefillPipeline: o.PrefillPipeline},
		sc.Strategy.Persistence == "always", reads, r)
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
				if q := r.QPS[calibration.Key{Always: always, What: what}]; q > 0 {
					name := what
					if always {
						name += " (fsync always)"
					}
					parts = append(parts, fmt.Sprintf("%s %s req/s", name, status.Thousands(q)))
				}
			}
		}
		if r.Prefill > 0 {
			parts = append(parts, fmt.Sprintf("prefill %s keys/s", status.Thousands(r.Prefill)))
		}
		startText := "start " + status.Duration(r.StartOf(t))
		if r.Shards > 0 {
			startText += fmt.Sprintf(" (forming the cluster: %s a shard × %d)", status.Duration(r.Start), calibration.PlannedShards(t, r.Shards))
		}
		parts = append(parts, startText, "stop "+status.Duration(r.Stop))
		lines = append(lines, fmt.Sprintf("calibration %s (%s): %s", t.Desc().Name, r.Source, strings.Join(parts, ", ")))
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
		case r.Source == calibration.SourceLastRun:
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
