package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
	"github.com/kvbench/kvbench/pkg/loadgen/series"
	"github.com/kvbench/kvbench/pkg/measure"
)

// ErrVerify is wrapped by the error of a run whose reads did not all return
// the expected value (see Config.VerifyGet and Config.AllowMisses).
var ErrVerify = errors.New("verify-get failed")

// ErrRefusedWrites is wrapped by the warning of a run whose writes were
// refused by an insert-only command (Counts.Conflicts): its QPS counts
// them.
var ErrRefusedWrites = errors.New("writes refused")

// ErrLateStart is wrapped by the error of a run that reached its
// Config.StartAt more than MaxStartLate after it.
var ErrLateStart = errors.New("start time already passed")

// Result is the outcome of a measured phase: the measurement and the
// configuration that made it. On error, Run returns the counts so far.
// Its JSON form (json.go) is the document "kvbench bench --output json"
// prints: the measurement's fields, then "seed", "settings" (Config) and
// "error".
type Result struct {
	measure.Result
	// Config is the configuration used, defaults filled in.
	Config Config
	// Error is why the run failed, the counts being those so far; empty
	// when it completed. Only the JSON form carries it: Run returns the
	// error itself.
	Error string
	// Replay counts the lines of the capture a replay sent
	// (Config.Replay); nil for any other run. Its JSON form is "replay".
	Replay *replay.Stats
	// Ops are a mixed-mode run's writes and reads apart (named after
	// Config.SetCmd and GetCmd), each with its requests and latencies,
	// when Config.SplitOps asked for them; nil for any other run, and in
	// the JSON form, which has the whole.
	Ops []measure.Command
}

// Run connects Config.Connections connections to the server, runs the
// warmup phase if any, then the measured phase, and returns its result.
// The error is non-nil when the run could not complete (connection failure,
// an error reply without ContinueOnError, ctx cancelled), with the counts
// so far in the Result, or when verification failed (ErrVerify).
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, cfg, err := open(ctx, cfg)
	if err != nil {
		return Result{Config: cfg}, err
	}
	defer r.close()
	if err := WaitStart(ctx, cfg.StartAt); err != nil {
		return Result{Config: cfg}, err
	}
	if n, d := cfg.WarmupRequests, cfg.Warmup; n > 0 || d > 0 {
		if n > 0 {
			d = 0
		}
		if res, err := r.phase(ctx, "warmup", n, d); err != nil {
			return res, fmt.Errorf("warmup: %w", err)
		}
	}
	n := cfg.Requests
	if cfg.Duration > 0 {
		n = 0
	}
	res, err := r.phase(ctx, "run", n, cfg.Duration)
	if err != nil {
		return res, err
	}
	return res, verifyError(res)
}

// WaitStart waits until t (nothing when t is zero), or fails with
// ErrLateStart when t is more than MaxStartLate past.
func WaitStart(ctx context.Context, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	wait := time.Until(t)
	if wait < -MaxStartLate {
		return fmt.Errorf("%w: it was %s, %v ago", ErrLateStart, t.Format(time.RFC3339Nano), -wait.Round(time.Millisecond))
	}
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// verifyError fails a run with wrong values, or with misses in ModeGet,
// when VerifyGet is set and AllowMisses is not.
func verifyError(res Result) error {
	c := res.Config
	if !c.VerifyGet || c.AllowMisses {
		return nil
	}
	if res.VerifyFailures > 0 || (c.Mode == ModeGet && res.Misses > 0) {
		if len(c.Commands) > 0 {
			return fmt.Errorf("%w: %d wrong values in %d requests (and %d misses)%s", ErrVerify, res.VerifyFailures, res.Requests, res.Misses, otherSeed(res))
		}
		return fmt.Errorf("%w: %d misses and %d wrong values in %d reads%s", ErrVerify, res.Misses, res.VerifyFailures, res.Gets, otherSeed(res))
	}
	return nil
}

// otherSeed explains a run whose every value read was wrong: the values
// were written by a run of another seed.
func otherSeed(res Result) string {
	if res.VerifyFailures == 0 || res.VerifyFailures < res.Gets-res.Misses && len(res.Config.Commands) == 0 {
		return ""
	}
	if len(res.Config.Commands) > 0 && res.VerifyFailures < res.Requests/2 {
		return ""
	}
	return fmt.Sprintf(": every value read differs from what seed %d writes, so they were written with another seed; "+
		"give the writer's --seed (bench's default seed is the time)", res.Config.Seed)
}

// stampReceives lets an open loop's workers sleep through replies and
// read their arrival times from the kernel (worker.stamped); tests and
// benchmarks turn it off to cover the other way.
var stampReceives = true

// runner owns a run's connections and workers.
type runner struct {
	cfg     Config
	plan    *plan
	epoch   time.Time
	conns   []*sock
	workers []*worker

	release func() // gives back the Ps lent to the workers

	ser    *series.Series // the measured phase per interval; nil without Config.Interval
	route  *cluster.Route // a cluster run's slot map; nil otherwise
	shards int            // a cluster run's masters; 0 otherwise
	// groups are a cluster run's connections, by global index: each a
	// socket per master (clusterconn.go); nil entries for other
	// segments'. A single server's run with replicas has them too.
	groups []*group
	// alone are the masters without a replica of a run that reads from
	// replicas: their reads go to them (replicas.go).
	alone []string

	stop    atomic.Bool
	errOnce sync.Once
	err     error
}

// open validates cfg, fills in its defaults and connects.
func open(ctx context.Context, cfg Config) (*runner, Config, error) {
	cfg, err := cfg.Normalize()
	if err != nil {
		return nil, cfg, fmt.Errorf("invalid configuration: %w", err)
	}
	r, err := newRunner(ctx, cfg)
	return r, cfg, err
}

func (r *runner) now() int64 { return int64(time.Since(r.epoch)) }

func newRunner(ctx context.Context, cfg Config) (*runner, error) {
	r := &runner{cfg: cfg, plan: newPlan(cfg), epoch: time.Now()}
	r.release = link.LendProcs(cfg.Threads)
	for range cfg.Threads {
		w, err := newWorker()
		if err != nil {
			r.close()
			return nil, err
		}
		w.raw = link.Raw
		w.cmdHist = newCmdHists(r.plan)
		if cfg.SplitOps && cfg.Mode == ModeMixed && len(r.plan.cmds) == 0 && cfg.Replay == nil {
			w.opHist = &[3]*hdrhistogram.Histogram{nil, newHistogram(), newHistogram()}
		}
		w.epoch = r.epoch
		if stampReceives && cfg.TLS == nil && (cfg.Rate > 0 || cfg.Replay != nil && cfg.ReplaySpeed > 0) {
			if err := w.stampReceives(); err != nil {
				w.close()
				r.close()
				return nil, err
			}
		}
		if cfg.Reconnect && !cfg.Cluster {
			w.redial = &redialer{ctx: ctx, stop: &r.stop, cfg: &r.cfg}
		}
		r.workers = append(r.workers, w)
	}
	if cfg.Cluster || len(cfg.Replicas) > 0 {
		if err := r.dialCluster(ctx); err != nil {
			r.close()
			return nil, err
		}
		r.startSeries()
		return r, nil
	}
	defer r.startSeries()
	// This run's connections are the global indices g = Segment,
	// Segment+Segments, ...; each keeps g and the global count for its
	// keys, quota and schedule (see Config.Segment).
	for i, g := 0, cfg.Segment; g < cfg.Connections; i, g = i+1, g+cfg.Segments {
		l, err := link.Dial(ctx, cfg.Addr, cfg.Control(), false)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
		}
		w := r.workers[i%len(r.workers)]
		if err := w.add(newConn(r.plan, g, cfg.Connections, w.hist), l); err != nil {
			l.Close()
			r.close()
			return nil, err
		}
		r.conns = append(r.conns, w.socks[len(w.socks)-1])
	}
	return r, nil
}

// startSeries gives the run and its workers what a series needs, once
// the connections are open (a cluster's masters known).
func (r *runner) startSeries() {
	if r.cfg.Interval <= 0 {
		return
	}
	r.ser = series.New(r.cfg.Interval, r.epoch)
	for _, cp := range r.plan.cmds {
		r.ser.Cmds = append(r.ser.Cmds, cp.Name)
	}
	if r.route != nil {
		states, _, _ := r.route.EndPhase()
		for _, st := range states {
			r.ser.Nodes = append(r.ser.Nodes, st.Addr)
		}
	}
	for _, w := range r.workers {
		w.ser, w.iv = r.ser, series.NewAcc(len(r.ser.Cmds), len(r.ser.Nodes))
	}
	for _, s := range r.conns {
		s.iv = s.w.iv
		if s.route != nil {
			s.ivNode = int(s.route.node)
		}
	}
}

func (r *runner) close() {
	if r.route != nil {
		r.route.Close()
	}
	for _, w := range r.workers {
		w.close()
	}
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// abort stops every worker; the first error is the run's.
func (r *runner) abort(err error) {
	r.errOnce.Do(func() { r.err = err })
	r.stop.Store(true)
	for _, w := range r.workers {
		w.wake()
	}
}

// phase runs requests requests (split over the connections of all
// segments), or for d when requests is 0.
func (r *runner) phase(ctx context.Context, name string, requests int64, d time.Duration) (Result, error) {
	cfg := r.cfg
	nc := int64(cfg.Connections) // over all segments
	speed := 0.0
	if cfg.Replay != nil {
		speed = cfg.ReplaySpeed
	}
	ph := schedule.NewPhase(r.now(), requests, d, nc, cfg.Rate, speed)
	for _, s := range r.conns {
		g := int64(s.id) // the global index (a cluster socket's: its group's)
		s.quota = -1
		if requests > 0 && s.route == nil {
			s.quota = requests / nc
			if g < requests%nc {
				s.quota++
			}
		}
		s.offset = schedule.Offset(g, cfg.Rate)
		if s.rp != nil {
			s.quota = s.rp.left
		}
	}
	total := int64(0) // this segment's requests
	for _, s := range r.conns {
		total += max(s.quota, 0)
	}
	if r.ser != nil {
		r.ser.Take() // a warmup's points are not the measured phase's
		r.ser.Observe = nil
		if name == "run" {
			r.ser.Observe = cfg.Observe
		}
	}
	if r.route != nil {
		r.route.Phase(ctx)
		r.beginGroups(requests)
		for _, g := range r.groups {
			if g != nil && requests > 0 {
				total += int64(g.end - g.base)
			}
		}
	}
	if len(r.conns) > 0 && r.conns[0].deps != nil {
		total = 0 // read-modify-writes: how many requests is not known ahead
	}

	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.abort(ctx.Err())
		case <-finished:
		}
	}()
	var progress sync.WaitGroup
	report := func(final bool) {}
	var planned time.Duration
	if requests == 0 {
		planned = d
	}
	if cfg.Progress != nil {
		report = func(final bool) {
			var done int64
			for _, w := range r.workers {
				done += w.done.Load()
			}
			now := r.now()
			pr := Progress{Phase: name, Done: done, Total: total, Elapsed: time.Duration(now - ph.Start), Duration: planned, Final: final}
			if r.route != nil {
				pr.Moved, pr.Ask = r.route.Redirects()
			}
			if r.ser != nil {
				if qps, p99, ok := r.ser.Last(ph.Start, now); ok {
					pr.Last = &IntervalFigures{QPS: qps, P99Us: p99}
				}
			}
			cfg.Progress(pr)
		}
		progress.Add(1)
		go func() {
			defer progress.Done()
			t := time.NewTicker(cfg.ProgressInterval)
			defer t.Stop()
			for {
				select {
				case <-finished:
					return
				case <-t.C:
					report(false)
				}
			}
		}()
	}

	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(r, ph); err != nil && !errors.Is(err, errStopped) {
				r.abort(err)
			}
		}()
	}
	wg.Wait()
	close(finished)
	progress.Wait()
	report(true)
	res := r.collect(ph)
	if r.stop.Load() {
		return res, r.err
	}
	return res, nil
}

// opResults are a mixed-mode run's writes and reads apart (Result.Ops),
// from the workers' histograms per op; nil for any other run.
func (r *runner) opResults(m *measure.Result) []measure.Command {
	if len(r.workers) == 0 || r.workers[0].opHist == nil {
		return nil
	}
	ops := []measure.Command{
		{Name: strings.ToUpper(r.cfg.SetCmd), Requests: m.Sets, Histogram: newHistogram()},
		{Name: strings.ToUpper(r.cfg.GetCmd), Requests: m.Gets, Histogram: newHistogram()},
	}
	for _, w := range r.workers {
		ops[0].Histogram.Merge(w.opHist[opSet])
		ops[1].Histogram.Merge(w.opHist[opGet])
	}
	for i := range ops {
		ops[i].QPS, ops[i].Latency = measure.PerSecond(ops[i].Requests, m.Elapsed), measure.Summarize(ops[i].Histogram)
	}
	return ops
}

// collect sums the connections' counts and the workers' histograms.
func (r *runner) collect(ph *schedule.Phase) Result {
	res := Result{Config: r.cfg}
	if r.cfg.Replay != nil {
		st := r.cfg.Replay.Stats
		res.Replay = &st
	}
	m := &res.Result
	m.Histogram = measure.NewHistogram()
	end := ph.Start
	if ph.Open() {
		m.SendLag = measure.NewHistogram()
	}
	for _, w := range r.workers {
		m.Histogram.Merge(w.hist)
		if m.SendLag != nil {
			m.SendLag.Merge(w.lag)
		}
		end = max(end, w.last)
	}
	var c counts
	for _, s := range r.conns {
		c.add(&s.counts)
	}
	m.Counts = c.Counts
	m.Requests = c.Sets + c.Gets + c.others
	m.Errors, m.Warnings = c.errors, c.warnings
	if r.route != nil {
		m.Nodes, m.Moved, m.Ask = r.collectNodes()
		for _, n := range m.Nodes {
			m.Histogram.Merge(n.Histogram)
		}
		m.Shards = r.shards
		m.Warnings = append(m.Warnings, r.replicaWarnings(&res)...)
	}
	m.Elapsed = time.Duration(end - ph.Start)
	m.Start = r.epoch.Add(time.Duration(ph.Start)).Round(0)
	m.End = m.Start.Add(m.Elapsed)
	m.Commands = r.commandResults(m)
	res.Ops = r.opResults(m)
	if r.ser != nil {
		for _, w := range r.workers {
			r.ser.Add(w.iv)
		}
		m.Series = r.ser.Take()
	}
	m.Finish()
	if m.Series != nil {
		m.FindStalls(r.cfg.StallBelow, r.cfg.StallLatency)
	}
	if m.Conflicts > 0 {
		m.Warnings = append(m.Warnings, fmt.Errorf("%w: %d of %d writes met a key that existed and were refused (EXIST): the QPS counts them as requests, though the server wrote nothing",
			ErrRefusedWrites, m.Conflicts, m.Sets))
	}
	if m.SendLag != nil {
		if w := schedule.BehindSchedule(m.SendLagLatency); w != nil {
			m.Warnings = append(m.Warnings, w)
		}
	}
	return res
}
