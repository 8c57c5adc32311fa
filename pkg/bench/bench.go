// Package bench is "kvbench bench" as a library: one load against one
// server or cluster, described by Options (the load, loadgen.Config, and
// the forms the command line gives it in), run by Run, which prints the
// report on a writer and returns what it measured. Run does what the
// options ask, in this order: a prefill; then redis-benchmark's tests
// (package rbtests), a latency-throughput curve and capacity search
// (package curve), a connection ramp, or one plain run (a mode, a command
// mix or a replayed capture); around it a CPU profile of the server
// (package flame) and live Prometheus metrics (package metrics). The
// reports are written by package output.
//
// Options.Validate checks every option, each error naming its flag, so
// that the command itself is flags into Options and one call of Run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/pkg/machine"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/metrics"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Result is what Run measured; the parts its options did not ask for are
// empty.
type Result struct {
	// Prefill is the prefill's count of keys written (Options.Prefill).
	Prefill *loadgen.Result
	// Measured is true once the measurement started (after the prefill).
	Measured bool
	// Run is a plain run's result.
	Run *loadgen.Result
	// Tests are redis-benchmark's tests' results, those that ran.
	Tests []rbtests.TestResult
	// Curve is a curve's or a ramp's points.
	Curve *output.Curve
}

// Run runs the load o describes and writes its report on w: progress,
// warnings and the files written go to o.Log. The report is written also
// when the run failed part way (with the counts so far), and the run's
// error is returned after it. Run validates o first (Options.Validate)
// unless that was done.
func Run(ctx context.Context, o Options, w io.Writer) (res Result, err error) {
	if err := o.Validate(); err != nil {
		return res, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	defer func() { err = resp3Error(err) }()
	if len(o.cpus) > 0 {
		if err := machine.PinSelf(o.cpus); err != nil {
			return res, fmt.Errorf("--cpus: %w", err)
		}
		if !o.given("threads") {
			o.Threads = len(o.cpus)
		}
	}
	c := o.Config
	reportReplay(o.Log, c)
	if o.TLSFiles.Insecure {
		fmt.Fprintln(o.Log, "warning:", tlsconf.InsecureWarning)
	}
	if !c.StartAt.IsZero() && time.Until(c.StartAt) < -loadgen.MaxStartLate {
		return res, fmt.Errorf("--start-at %s: %w", c.StartAt.Format(time.RFC3339Nano), loadgen.ErrLateStart)
	}
	if o.Prefill {
		pre, err := prefill.Prefill(ctx, c)
		res.Prefill = &pre
		for _, w := range pre.Warnings {
			fmt.Fprintln(o.Log, "warning:", w)
		}
		if errors.Is(err, prefill.ErrNotEmpty) {
			return res, fmt.Errorf("%w; %s", err, emptyHint(c))
		}
		if err != nil {
			return res, err
		}
		lo, hi := prefill.PrefillRange(pre.Config)
		keys := pre.Config.Keys()
		fmt.Fprintf(o.Log, "prefill: keys %d to %d written in %.3f s\n", keys.Key(lo), keys.Key(hi-1), pre.Elapsed.Seconds())
	}
	res.Measured = true
	r := &run{o: &o, w: w}
	if o.MetricsAddr != "" {
		stop, err := r.startMetrics(ctx)
		if err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	defer startProfile(ctx, o.ProfilePID, o.ProfileOut, o.Log)()
	switch {
	case o.tests != nil:
		res.Tests, err = r.tests(ctx)
	case o.curve.Enabled():
		res.Curve, err = r.curve(ctx)
	case o.ramp != nil:
		res.Curve, err = r.rampSteps(ctx)
	default:
		var one loadgen.Result
		one, err = r.plain(ctx)
		if one.Histogram != nil {
			res.Run = &one
		}
	}
	return res, err
}

// run is one Run's state.
type run struct {
	o *Options
	w io.Writer
	// meter feeds the live metrics (Options.MetricsAddr), nil without.
	meter *metrics.Attempt
}

// startMetrics serves the load's metrics at o.MetricsAddr, says where on
// the log and feeds them from the load; stop ends the server.
func (r *run) startMetrics(ctx context.Context) (stop func() error, err error) {
	o := r.o
	load := metrics.NewLoad()
	reg := prometheus.NewRegistry()
	if err := reg.Register(load); err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	srv, err := metrics.Serve(ctx, o.MetricsAddr, reg)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	fmt.Fprintln(o.Log, "metrics:", srv.URL())
	r.meter = load.Meter(o.Config.Addr, "", o.metricsMode(), o.Config)
	o.Config.Observe = r.meter.Interval
	return func() error {
		if err := srv.Close(); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		return nil
	}, nil
}

// metricsMode is the metrics' mode label: the mode, "tests", the
// workload's name, "replay", or "commands" for a command mix.
func (o *Options) metricsMode() string {
	switch {
	case o.Config.Replay != nil:
		return "replay"
	case o.tests != nil:
		return "tests"
	case o.workloadName != "":
		return o.workloadName
	case len(o.Config.Commands) > 0:
		return "commands"
	}
	return string(o.Config.Mode)
}

// plain is one run of the load, its report written whether it ran whole
// or part way.
func (r *run) plain(ctx context.Context) (loadgen.Result, error) {
	o, cfg := r.o, r.o.Config
	if o.Live != nil {
		prev := cfg.Progress
		cfg.Progress = func(p loadgen.Progress) {
			output.WriteLive(o.Live, p)
			if prev != nil {
				prev(p)
			}
		}
	}
	if len(cfg.Commands) > 0 {
		if err := mix.CheckCommands(ctx, cfg.Addr, cfg.Control(), mix.Names(cfg.Commands)); err != nil {
			return loadgen.Result{Config: cfg}, err
		}
	}
	cfg.SplitOps = o.HDRPrefix != "" // a histogram file per command
	res, err := loadgen.Run(ctx, cfg)
	r.meter.Done(&res.Result)
	if res.Histogram == nil && err != nil {
		return res, err // nothing ran
	}
	if werr := output.Report(r.w, res, err, r.output()); err == nil {
		err = werr
	}
	return res, err
}

// output is how the report is written.
func (r *run) output() output.Output {
	o := r.o
	return output.Output{Format: o.Output, Quiet: o.Quiet, Percentiles: o.percentiles, HDRPrefix: o.HDRPrefix, Log: o.Log}
}

// tests runs redis-benchmark's tests and writes one line (or JSON
// object) per test; the tests that ran are written even when one failed.
func (r *run) tests(ctx context.Context) ([]rbtests.TestResult, error) {
	o := r.o
	c, err := o.Config.Normalize()
	if err != nil {
		return nil, err
	}
	res, err := rbtests.RunTests(ctx, c, o.tests)
	for i := range res {
		r.meter.Done(&res[i].Result.Result)
	}
	if res == nil && err != nil {
		return nil, err
	}
	var werr error
	switch {
	case o.Output == output.FormatJSON:
		werr = output.WriteTestsJSON(r.w, c, res, o.percentiles, err)
	case o.Output == output.FormatCSV:
		werr = output.WriteTestsCSV(r.w, res, o.percentiles)
	case o.Quiet:
		werr = output.WriteTestsQuiet(r.w, res)
	default:
		werr = output.WriteTestsText(r.w, c, res, o.percentiles)
	}
	if o.HDRPrefix != "" && werr == nil {
		var paths []string
		paths, werr = output.WriteTestsHDR(o.HDRPrefix, res)
		output.LogFiles(o.Log, paths)
	}
	if err == nil {
		err = werr
	}
	return res, err
}

// point measures one phase of a curve or a ramp, named what on the
// progress lines it writes before and after.
func (r *run) point(ctx context.Context, cfg loadgen.Config, what string) (loadgen.Result, error) {
	fmt.Fprintf(r.o.Log, "%s ...\n", what)
	res, err := loadgen.Run(ctx, cfg)
	r.meter.Done(&res.Result)
	if err == nil {
		fmt.Fprintf(r.o.Log, "%s: %.0f req/s, p99 %.0f us\n", what, res.QPS, res.Latency.P99)
	}
	return res, err
}

// curve measures the curve and the capacity asked for (curve.Run) and
// writes them.
func (r *run) curve(ctx context.Context) (*output.Curve, error) {
	base := r.o.Config
	base.Progress = nil
	phase := func(ctx context.Context, cfg loadgen.Config) (loadgen.Result, error) {
		what := fmt.Sprintf("open loop at %.0f req/s", cfg.Rate)
		if cfg.Rate == 0 {
			what = "closed loop (the peak)"
		}
		return r.point(ctx, cfg, "curve: "+what)
	}
	c, err := curve.Run(ctx, r.o.curve, base, nil, phase)
	doc := &output.Curve{Peak: c.Peak, Points: c.Points, Capacity: c.Capacity}
	if err != nil && c.Peak == nil && (curve.AnyRelative(r.o.curve.Rates) || len(r.o.curve.SLO) > 0) {
		return nil, err // the peak failed: nothing to write
	}
	if werr := output.WriteCurve(r.w, r.o.Output, *doc); werr != nil && err == nil {
		err = werr
	}
	return doc, err
}

// rampSteps measures each step of the connection ramp, one run per step,
// and writes the steps measured, also when one fails or ctx ends the
// ramp.
func (r *run) rampSteps(ctx context.Context) (*output.Curve, error) {
	base := r.o.Config
	base.Progress = nil
	measure := func(ctx context.Context, n int) (loadgen.Result, error) {
		cfg := base
		cfg.Connections = n
		return r.point(ctx, cfg, fmt.Sprintf("ramp: %d connections", n))
	}
	ramp := r.o.ramp
	steps, err := ramp.Sweep(ctx, measure)
	if err != nil && len(steps) > 0 {
		fmt.Fprintf(r.o.Log, "ramp: stopped after %d of %d steps; the report has the steps measured\n", len(steps), len(ramp.Counts()))
	}
	if len(steps) == 0 {
		if err == nil {
			err = errors.New("the ramp measured nothing")
		}
		return nil, err
	}
	doc := &output.Curve{Ramp: steps}
	if werr := output.WriteCurve(r.w, r.o.Output, *doc); werr != nil && err == nil {
		err = werr
	}
	return doc, err
}

// reportReplay names the capture's first unparsable lines on w, as
// FILE:LINE: reason.
func reportReplay(w io.Writer, c loadgen.Config) {
	cp := c.Replay
	if cp == nil {
		return
	}
	for _, e := range cp.Errors {
		fmt.Fprintln(w, e)
	}
	if more := cp.Unparsable - int64(len(cp.Errors)); more > 0 {
		fmt.Fprintf(w, "%s: %d more unparsable lines\n", cp.File, more)
	}
}

// emptyHint says what to do when the prefill found the server holding
// keys: empty it, with the redis-cli command that does, prefill another
// database, or read the keys as they are.
func emptyHint(c loadgen.Config) string {
	if c.Cluster {
		return fmt.Sprintf("the prefill writes every key and counts them after: if the keys are nothing you need, empty the cluster first (redis-cli --cluster call %s FLUSHALL), or leave out --prefill to read the keys as they are", c.Addr)
	}
	cli := "redis-cli"
	if path, ok := control.SocketPath(c.Addr); ok {
		cli += " -s " + path
	} else if host, port, err := net.SplitHostPort(c.Addr); err == nil {
		cli += " -h " + host + " -p " + port
	}
	if c.DB > 0 {
		cli += " -n " + strconv.Itoa(c.DB)
	}
	return fmt.Sprintf("the prefill writes every key and counts them after: if the keys are nothing you need, empty the database first (%s FLUSHDB), prefill another one (--db N), or leave out --prefill to read the keys as they are", cli)
}

// resp3Error names --resp3 in the error of a server that refused HELLO 3,
// and returns any other error as it is.
func resp3Error(err error) error {
	var nr *control.NoRESP3Error
	if errors.As(err, &nr) {
		return fmt.Errorf("--resp3: %w", nr)
	}
	return err
}
