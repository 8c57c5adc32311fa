package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/persistjob"
	"github.com/kvbench/kvbench/pkg/runner/placement"
	"github.com/kvbench/kvbench/pkg/runner/recovery"
	"github.com/kvbench/kvbench/pkg/runner/series"
	"github.com/kvbench/kvbench/pkg/runner/telemetry"
	"github.com/kvbench/kvbench/pkg/runner/workloadrun"
	"github.com/kvbench/kvbench/pkg/target"
)

// An attempt is a sequence of steps on a fresh server, each returning
// what it measured: start (the server, its start time, its configuration
// verified), load (the load as it will run), prefill, then either
// recovery (the recovery mode: the crash, the restart and what came back)
// or measure (the closed loop: its result, the client's CPU, the server's
// samples), telemetry, the persistence job set off during the closed
// loop (Options.PersistJob) and curve (the open-loop phases and the
// capacity); and stop. Its rows are built once, when it is over, from what the steps
// returned (resultOf, rowOf): a step that did not run left its value
// empty, and so are the columns it would have filled.

// attemptSteps is what an attempt's steps returned; a step that did not
// run (an earlier one failed) left its value zero.
type attemptSteps struct {
	// at is when the attempt started: its row's started_at.
	at time.Time
	// load is the load as it ran; a workload's, its commands named, from
	// the attempt's start.
	load loadgen.Config
	// srv is the start's; prefill the prefill's time, the wait for the
	// server's background work included; stop the stop's time.
	srv           server
	prefill, stop time.Duration
	rec           recovery.Figures // the recovery mode's
	loop          *closedLoop      // measure's
	tel           *telemetry.Phase // telemetry's, read after the measurement
	job           *persistjob.Run  // the persistence job's (Options.PersistJob)
	curve         *loadCurve       // curve's (Options.Rates, SLO)
	// measured is the recovery's time, or the curve's phases' (the
	// closed loop's is loop.took).
	measured time.Duration
	// signals are what the machine did besides the measurement (nil when
	// there was none).
	signals *machine.Signals
	// block and slice place an adaptive run's slice (adaptive.go); 0 for
	// a round.
	block, slice int
}

// timing is where the attempt's time went.
func (s *attemptSteps) timing() Timing {
	t := Timing{Start: s.srv.took, Prefill: s.prefill, Measure: s.measured, Stop: s.stop}
	if s.loop != nil {
		t.Measure += s.loop.took
	}
	return t
}

// server is what the start step returned: an instance of the scenario's
// target, fresh, on a directory of its own, configured as its strategy
// asks (Target.Start verifies it).
type server struct {
	dir  string         // the directory kvbench made for the attempt
	site *recovery.Site // where in dir the server keeps its files
	inst target.Instance
	info target.Info
	// took is from spawning the server to its verified PING reply,
	// measured when it failed too.
	took time.Duration
}

// closedLoop is what the measure step returned.
type closedLoop struct {
	// res is the load's result (its counts so far, when it failed), and
	// clientCPU the load generator's CPU time over it.
	res       loadgen.Result
	clientCPU time.Duration
	// before and after are the server's samples around the load (CPU -1
	// when the first could not be read); checked says the result passed
	// its checks and the server is the process it was: only then do the
	// CPU figures hold.
	before, after target.Sample
	checked       bool
	// events are the server's events per interval (Options.Interval),
	// and tel what it said of the phase, finished by the telemetry step;
	// job is the persistence job step under way beside the load, finished
	// by the job step.
	events *series.Events
	tel    *telemetry.Phase
	job    *persistjob.Step
	took   time.Duration
}

// attemptResult is what one attempt produced (resultOf).
type attemptResult struct {
	// row is the attempt's detail row (a workload's total row): its
	// status, settings, server and measurement.
	row results.Row
	// rows are all its detail rows: a workload's per command, then row,
	// then the load curve's (Options.Rates).
	rows []results.Row
	// nodes are the rows of the nodes CSV: one per master of a cluster;
	// series those of the series CSV (Options.Interval).
	nodes  []results.NodeRow
	series []results.SeriesRow
	timing Timing
}

// attempt starts a fresh server for the step, prefills it if the mode or
// workload reads, measures, stops it, and returns what it measured, its
// rows' status saying how it ended.
func (r *run) attempt(ctx context.Context, e Event) (out attemptResult, err error) {
	sc := e.Scenario
	s := &attemptSteps{at: time.Now()}
	if sc.Workload != nil {
		s.load = workloadConfig(r.o, sc.Workload)
	}
	defer func() {
		status, msg := outcome(ctx, err)
		out = r.resultOf(e, s, status, msg)
	}()
	e.Kind = EventStart
	r.event(e)
	if s.srv, err = r.start(ctx, e); err != nil {
		return out, err
	}
	srv := &s.srv
	defer func() {
		var serr error
		if s.stop, serr = r.stop(ctx, srv); err == nil && serr != nil {
			err = fmt.Errorf("stop: %w", serr)
		}
	}()
	e.Kind, e.Instance = EventReady, srv.info
	r.event(e)
	cfg, fills, err := r.load(ctx, e)
	s.load = cfg
	if err != nil {
		return out, err
	}
	if sc.Workload == nil && sc.Mode != loadgen.ModeSet || len(fills) > 0 {
		if s.prefill, err = r.prefillStep(ctx, e, srv, cfg, fills); err != nil {
			return out, err
		}
	}
	if sc.Mode == results.ModeRecovery {
		t0 := time.Now()
		srv.inst, s.rec, err = r.recovery(ctx, sc, srv) // powerloss.go; the deferred stop stops the new instance
		s.measured = time.Since(t0)
		return out, err
	}
	if err = r.measured(ctx, e, srv, cfg, s); err != nil {
		return out, err
	}
	if !r.o.curve.Enabled() {
		return out, nil
	}
	t0 := time.Now()
	s.curve, err = r.measureCurve(ctx, cfg, srv.info, sc, e.Round, s.loop.res) // curve.go
	s.measured = time.Since(t0)
	if err != nil {
		return out, serverError(srv.inst, err)
	}
	return out, srv.inst.Err()
}

// measured is an attempt's measured phase into s: the load, the machine's
// signals over it, the server's telemetry and the persistence job's
// figures, its spans marked in the series.
func (r *run) measured(ctx context.Context, e Event, srv *server, cfg loadgen.Config, s *attemptSteps) (err error) {
	pids := append([]int{os.Getpid()}, target.PIDs(srv.info)...)
	before := machine.Take(pids...)
	s.loop, err = r.measureStep(ctx, e, srv, cfg)
	sig := machine.Between(before, machine.Take(pids...))
	s.signals = &sig
	if err != nil {
		return err
	}
	s.tel = s.loop.tel.Finish(ctx, srv.info, e.Scenario.Desc.Password)
	if s.loop.job == nil {
		return nil
	}
	s.job, err = s.loop.job.Finish()
	for _, sp := range s.job.Spans {
		s.loop.events.Mark(sp.Start, sp.End, results.EventPersistJob)
	}
	if err != nil {
		return serverError(srv.inst, err)
	}
	return nil
}

// start makes the attempt's directory and starts a fresh server on it.
func (r *run) start(ctx context.Context, e Event) (server, error) {
	sc := e.Scenario
	dir, err := os.MkdirTemp(r.tmp, fmt.Sprintf("%s-%s-r%d-", safeName(sc.Desc.Name), safeName(sc.Strategy.Name), e.Round))
	if err != nil {
		return server{}, fmt.Errorf("create the instance directory: %w", err)
	}
	site, err := r.crashSite(sc, dir) // powerloss.go
	if err != nil {
		os.RemoveAll(dir)
		return server{}, err
	}
	t0 := time.Now()
	inst, err := sc.Target.Start(ctx, sc.Strategy, target.Env{Dir: site.Dir, Tracker: r.o.Tracker, ReadyTimeout: r.o.ReadyTimeout})
	srv := server{dir: dir, site: site, took: time.Since(t0)}
	if err != nil {
		site.Close()
		os.RemoveAll(dir)
		return srv, fmt.Errorf("start: %w", err)
	}
	srv.inst, srv.info = inst, inst.Info()
	r.logNotes(sc.Desc.Name, srv.info.Notes)
	if err := placement.PinServer(r.o.placement, srv.info); err != nil {
		return srv, err
	}
	return srv, nil
}

// logNotes logs what a target's server lacks (target.Info.Notes), each
// note once per target: its rows repeat them.
func (r *run) logNotes(target string, notes []string) {
	for _, n := range notes {
		if key := [2]string{target, n}; !r.noted[key] {
			r.noted[key] = true
			r.log("%s: note: %s", target, n)
		}
	}
}

// stop stops the server (with a short grace once the run is
// interrupted), closes its site and removes its directory; it returns
// the time it took.
func (r *run) stop(ctx context.Context, srv *server) (time.Duration, error) {
	t0 := time.Now()
	grace := r.o.StopGrace
	if ctx.Err() != nil {
		grace = InterruptStopGrace
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	err := srv.inst.Stop(sctx)
	cancel()
	if cerr := srv.site.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if rerr := os.RemoveAll(srv.dir); rerr != nil && err == nil {
		err = fmt.Errorf("remove %s: %w", srv.dir, rerr)
	}
	return time.Since(t0), err
}

// load is the attempt's load on the server e.Instance describes: the
// run's settings and the target's commands, or a workload's commands, with
// what they read (workloadrun.Fills). A target that lacks a workload's
// commands is refused here, before the prefill: it is not worth filling.
func (r *run) load(ctx context.Context, e Event) (loadgen.Config, []workloadrun.Fill, error) {
	sc := e.Scenario
	cfg := loadConfig(r.o, sc, e.Instance, r.o.Seed+int64(e.Round))
	cfg.Progress = func(p loadgen.Progress) {
		pe := e
		pe.Kind, pe.Progress = EventProgress, p
		r.event(pe)
	}
	if sc.Workload == nil {
		return cfg, nil, nil
	}
	sc.Workload.Apply(&cfg, func(string) bool { return false })
	cfg.Mode, cfg.VerifyGet = loadgen.DefaultConfig().Mode, false // the commands replace the mode
	cfg.Wait = r.o.Wait                                           // WAIT after the mix's writes
	if err := workloadrun.Check(ctx, cfg); err != nil {
		return cfg, nil, err
	}
	return cfg, workloadrun.Fills(cfg), nil
}

// prefillStep writes what the mode or workload reads (a workload's fills)
// and waits for the background persistence work it may have set off; it
// returns its time, the wait included.
func (r *run) prefillStep(ctx context.Context, e Event, srv *server, cfg loadgen.Config, fills []workloadrun.Fill) (time.Duration, error) {
	sc := e.Scenario
	pcfg := cfg
	pcfg.Pipeline = r.o.PrefillPipeline
	t0 := time.Now()
	var err error
	if sc.Workload != nil {
		err = workloadrun.Prefill(ctx, pcfg, fills)
	} else {
		err = r.prefill(ctx, pcfg, sc, e.Round)
	}
	if err != nil {
		return time.Since(t0), serverError(srv.inst, err)
	}
	// The measurement starts once the compaction the prefill may have set
	// off is done: the reads would share the machine with it.
	busy, err := target.WaitQuietAll(ctx, srv.info.Masters(), srv.info.Control(sc.Desc.Password), QuietLimit)
	took := time.Since(t0)
	if err != nil {
		return took, serverError(srv.inst, fmt.Errorf("waiting for the server's background persistence work: %w", err))
	}
	if busy {
		r.log("%s round %d: warning: a background rewrite or save was still running after %s; measuring anyway", sc.Name(), e.Round, QuietLimit)
	}
	return took, nil
}

// measureStep measures the closed loop: cfg's load on the server, with
// its series' events (and its profile, in a profile round), the server's
// telemetry and CPU samples around it; then it checks the result and that
// the server did not restart meanwhile.
func (r *run) measureStep(ctx context.Context, e Event, srv *server, cfg loadgen.Config) (l *closedLoop, err error) {
	sc, info, password := e.Scenario, srv.info, e.Scenario.Desc.Password
	var meter AttemptMeter
	if r.o.Meter != nil {
		meter = r.o.Meter(sc.Desc.Name, sc.Strategy.Name, sc.what(), cfg)
		cfg.Observe = meter.Interval
	}
	l = &closedLoop{tel: telemetry.Start(ctx, info, password)}
	if r.o.PersistJob != "" {
		if l.job, err = r.startPersistJob(ctx, e, srv, &cfg); err != nil { // persistjob.go
			return l, err
		}
		defer func() {
			if err != nil {
				l.job.Abort()
			}
		}()
	}
	before, serr := target.SampleServer(ctx, info, password)
	t0 := time.Now()
	l.events = series.Poll(ctx, info, password, cfg.Interval)
	stopProfile := r.startProfile(ctx, info)
	res, clientCPU, err := r.measure(ctx, cfg, info.TLSFiles, sc.Name(), e.Round)
	stopProfile()
	if meter != nil {
		meter.Done(&res.Result)
	}
	l.job.PhaseOver()
	if perr := l.events.Finish(); perr != nil {
		r.log("%s round %d: warning: the server's events were not all polled: %v", sc.Name(), e.Round, perr)
	}
	l.took = time.Since(t0)
	l.tel.StopRSS()
	l.res, l.clientCPU = res, clientCPU
	if err != nil {
		if serr == nil { // a restart is the reason to give, if there was one
			if rerr := telemetry.RestartReason(ctx, info, password, before); rerr != nil {
				return l, fmt.Errorf("%w (the load generator saw: %v)", rerr, err)
			}
		}
		return l, serverError(srv.inst, err)
	}
	if err := checkResult(res); err != nil {
		return l, err
	}
	if w := res.WaitShort; w > 0 {
		r.log("%s round %d: warning: %d of %d WAITs timed out before %d replicas acknowledged: the wait row's latency holds their timeouts",
			sc.Name(), e.Round, w, w+res.WaitAcked, cfg.Wait.Replicas)
	}
	if err := srv.inst.Err(); err != nil {
		return l, err
	}
	l.before, l.after = target.Sample{CPU: -1}, target.Sample{CPU: -1}
	if serr == nil {
		after, err := target.SampleServer(ctx, info, password)
		if err != nil {
			return l, serverError(srv.inst, fmt.Errorf("after the measurement: %w", err))
		}
		if err := target.Restarted(before, after); err != nil {
			return l, err
		}
		l.before, l.after = before, after
	} else {
		r.log("%s round %d: warning: INFO server before the measurement: %v; a restart would go unnoticed", sc.Name(), e.Round, serr)
	}
	l.checked = true
	return l, nil
}

// outcome is how an attempt that returned err ended: its rows' status
// and error.
func outcome(ctx context.Context, err error) (status, msg string) {
	switch {
	case err == nil:
		return results.StatusOK, ""
	case ctx.Err() != nil:
		return results.StatusInterrupted, "interrupted: " + err.Error()
	case errUnsupported(err):
		return results.StatusUnsupported, err.Error()
	}
	return results.StatusFailed, err.Error()
}

// resultOf is what the attempt e produced, from what its steps returned
// (s) and how it ended: its rows (rowOf's; a workload's per command
// before it, workloadrun.Rows; the load curve's after it, curveRows), its
// node and series rows, and its timing.
func (r *run) resultOf(e Event, s *attemptSteps, status, msg string) attemptResult {
	row := r.rowOf(e, s, status, msg)
	out := attemptResult{row: row, rows: []results.Row{row}, timing: s.timing()}
	if w := e.Scenario.Workload; w != nil {
		var cmds []measure.Command
		if s.loop != nil {
			cmds = s.loop.res.Commands
		}
		out.rows = workloadrun.Rows(row, w, s.load, cmds, s.tel)
		out.row = out.rows[len(out.rows)-1]
	} else if s.curve != nil {
		// The curve's rows start from the attempt's row before its closed
		// loop: its settings and its server.
		before := r.rowOf(e, &attemptSteps{at: s.at, srv: server{info: s.srv.info}}, results.StatusOK, "")
		out.rows = append(out.rows, r.curveRows(before, s.curve)...)
	}
	if l := s.loop; l != nil {
		out.series = series.Rows(row, s.load, &l.res.Result, l.events)
		out.nodes = results.NodeRows(&row, &l.res.Result)
	}
	return out
}

// rowOf is the detail row of the attempt e, from what its steps returned
// (s) and how it ended (status, msg): the one place where an attempt's
// row is filled. The columns of a step that did not run stay empty.
func (r *run) rowOf(e Event, s *attemptSteps, status, msg string) results.Row {
	sc, o, m := e.Scenario, r.o, r.machine
	row := results.Row{
		RunID: r.res.RunID, StartedAt: s.at.Format(time.RFC3339),
		Target: sc.Desc.Name, Strategy: sc.Strategy.Name, Persistence: sc.Strategy.Persistence,
		Alloc: sc.Strategy.Alloc, Mode: string(sc.Mode), Round: e.Round, Attempt: e.Attempt,
		Status: status, Error: msg, Pipeline: o.Pipeline, Connections: o.Connections,
		Keyspace: o.Keyspace, ValueSize: o.ValueSize, Seed: o.Seed + int64(e.Round), Label: o.Label,
		ClientHost: m.Host, CPUModel: m.CPUModel, Cores: m.Cores, Kernel: m.Kernel,
	}
	if sc.Workload != nil {
		cfg := workloadConfig(o, sc.Workload)
		row.Workload, row.Keyspace, row.ValueSize = sc.Workload.Name, cfg.Keyspace, cfg.ValueSize
	}
	if s.srv.site != nil {
		row.Crash = s.srv.site.Crash
	}
	info := s.srv.info
	row.StartS, row.PrefillS, row.StopS = s.srv.took.Seconds(), s.prefill.Seconds(), s.stop.Seconds()
	row.ServerVersion, row.ServerConfig, row.Flushed = info.Version, info.Config, info.Flushed
	row.Shards, row.TLS, row.RESP3 = len(info.Nodes), info.TLS != nil, info.RESP3
	row.Notes = strings.Join(info.Notes, "; ")
	f := s.rec
	row.AckedWrites, row.AckedLost, row.LostWindowS = f.AckedWrites, f.AckedLost, f.LostWindowS
	row.RecoveryS, row.RecoveryKeysPerS, row.RecoveryMBPerS = f.RecoveryS, f.KeysPerS, f.MBPerS
	if l := s.loop; l != nil {
		row.Measured(&l.res.Result)
		row.Stalls, row.LongestStallMs = series.Stalls(&l.res.Result)
		row.Agents = max(o.Agents, 1)
		if l.checked {
			c := telemetry.CPUOf(l.res, l.clientCPU, l.before, l.after)
			row.ClientCPUS, row.ClientBound, row.ServerCPUS, row.QPSPerServerCPUS = c.ClientS, c.ClientBound, c.ServerS, c.QPSPerCPU
		}
	}
	row.ServerRSSBytes, row.ServerUsedMemoryBytes = s.tel.Memory()
	row.ServerUsecPerCall, row.ServerCalls = s.tel.Commands(telemetry.MeasuredCommands(s.load))
	if c := s.curve; c != nil && c.slo != "" {
		row.SLO, row.CapacityQPS, row.CapacityWhy = c.slo, c.capacity, c.why
	}
	if s.job != nil && s.loop != nil {
		persistjob.SetColumns(&row, s.job, &s.loop.res.Result)
	}
	row.Placement = o.placement.String()
	if s.block > 0 {
		row.Round, row.Block, row.Slice = e.Round, s.block, s.slice
	}
	if g := s.signals; g != nil && g.Err == nil {
		row.StealCPUs, row.OtherCPUs, row.Load1 = round3(g.Steal), round3(g.Other), round3(g.Load1)
		if g.MHz > 0 {
			row.CPUMHz = round3(g.MHz)
		}
		if bad, why := machine.DefaultRule.Disturbed(*g); bad && s.block == 0 {
			row.Disturbed = why // a slice is judged against its block (endBlock)
		}
	}
	return row
}

// round3 is x to 3 decimals, for an optional column.
func round3(x float64) *float64 {
	v := math.Round(x*1000) / 1000
	return &v
}
