package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/pkg/stats"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/runner"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// ExitInterrupted is the exit status of an interrupted run (128 + SIGINT).
const ExitInterrupted = 130

// runOptions is what "kvbench run" was asked to do.
type runOptions struct {
	runner.Options
	history     runHistory
	metricsAddr string
	wait        waitFlags
	// precision is --precision as given; roundsWhy why a run that asked
	// for no design measures rounds ("" when adaptive or asked).
	precision, roundsWhy string
	streams
}

// newRunCmd is "kvbench run": flags and the reference script's environment
// variables into runOptions, then runF (runRun when nil).
func newRunCmd(runF func(context.Context, *runOptions) error) *cobra.Command {
	if runF == nil {
		runF = runRun
	}
	ro := &runOptions{Options: runner.DefaultOptions()}
	o := &ro.Options
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the whole experiment: every round, target, strategy and mode on a fresh server",
		Long: `run is the main job. For every round, target, strategy and mode (or
workload) it starts a fresh server (or cluster) under that persistence
configuration, checks its effective configuration, prefills it when the
load reads, measures it, stops it and appends rows to the detail CSV; at
the end it writes and prints the report (trimmed rounds, overheads with
significance, latencies).

Targets are the embedded kvstore, redis-server when it is installed, their
clusters (kvstore-cluster, redis-cluster, when --targets names them), and
the servers of a YAML file (--config), which run instead of the built-in
ones unless --targets names those. Rounds are interleaved: each round
runs every scenario once, in an order shuffled with the seed. A failed
attempt is written as a failed row and retried on a fresh server.

The environment variables of the reference script run_bench.hash.sh set
the flags they stand for, unless the flag is given: ROUNDS REQ KEYSPACE
PIPE VSIZE RETRIES SEED ALLOC KV_PORT SET_CMD GET_CMD.

Ctrl-C stops the measurement and every server, keeps the detail CSV and
prints the partial report; a second Ctrl-C kills the servers at once.

Exit status: 0 when every scenario was measured, 1 when a scenario ran out
of retries (the others are reported), the run could not proceed, or it
could not be recorded in the history (the message gives the "kvbench
history import" command that records it), 2 for a usage error, 130 when
interrupted.

The manual: docs/run.md.`,
		Example: `  # the main job: 5 rounds with the reference script's defaults, kvstore and Redis
  kvbench run

  # the plan and its estimated time, from the last run in --out or a short probe
  kvbench run --dry-run

  # the plan, with the built-in figures: nothing started
  kvbench run --dry-run --estimate fixed

  # a quick look: 3 small rounds, kvstore only, one scenario after the other
  kvbench run --rounds 3 --requests 100000 --keyspace 100000 --targets kvstore --order sequential

  # both allocators and 256-byte values, set from the environment
  ALLOC=both VSIZE=256 kvbench run --strategies persist_no,nopersist

  # every strategy of every target, all three modes, a Chinese report
  kvbench run --strategies all --modes set,get,mixed --lang zh
  # what persistence buys: each server killed (kill -9) amid acknowledged writes and started again on its files
  kvbench run --strategies all --modes set,get,recovery

  # redis-benchmark's six tests as one mix, and YCSB A, instead of set and get
  kvbench run --workloads rb-six,ycsb-a

  # the kvstore as a 3-node cluster against a 3-master Redis Cluster
  kvbench run --targets kvstore-cluster,redis-cluster

  # every attempt per 100 ms interval, a stall being an interval under a fifth of the median QPS
  kvbench run --interval 100ms --stall-below 0.2

  # after each closed loop, open-loop phases at fractions of its QPS, and the capacity at p99 < 1ms
  kvbench run --modes get --rates 25%,50%,75%,90% --slo 'p99<1ms'

  # Redis over TLS, with certificates kvbench makes for each instance
  kvbench run --targets redis --tls

  # servers described in a file (Valkey, a C kvstore build, a remote server)
  kvbench run --config kvbench.yaml --out results/valkey

  # where each server spends its CPU: a flame graph per scenario, in one more round after the measured ones (needs perf)
  kvbench run --profile --modes set --strategies nopersist,persist_everysec,none,aof_everysec

  # a BGSAVE in the middle of each 20 s measured phase: its fork, copy-on-write and the latency before, during and after
  kvbench run --targets redis --modes mixed --persist-job bgsave

  # the kvstore's log rewrite every 5 s of a 30 s phase, SET and GET on its strings
  kvbench run --targets kvstore --strategies persist_everysec --modes mixed --set-cmd SET --get-cmd GET --persist-job rewrite --persist-job-every 5s --duration 30s

  # YCSB A's writes acknowledged by a replica: a WAIT after every tenth write (redis with replicas: 1 in the file)
  kvbench run --config replicas.yaml --workloads ycsb-a --wait-ratio 1:10 --num-replicas 1

  # each attempt's load as Prometheus metrics at http://127.0.0.1:9100/metrics
  kvbench run --metrics-addr 127.0.0.1:9100`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return &usageError{err}
			}
			if cmd.Flags().Changed("workloads") && !cmd.Flags().Changed("modes") {
				o.Modes = []string{} // the workloads alone
			}
			if err := persistJobFlags(cmd.Flags(), o); err != nil {
				return &usageError{err}
			}
			if err := ro.wait.apply(cmd.Flags(), &o.Wait); err != nil {
				return &usageError{err}
			}
			if err := ro.chooseDesign(cmd.Flags()); err != nil {
				return &usageError{err}
			}
			if err := o.Validate(); err != nil {
				return &usageError{err}
			}
			if err := checkMetricsAddr(ro.metricsAddr); err != nil {
				return &usageError{err}
			}
			ro.streams = streamsOf(cmd)
			return runF(cmd.Context(), ro)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of every scenario, each on fresh servers: the reference script's fixed design (given alone, or with --requests, instead of the adaptive default)")
	f.Int64Var(&o.Requests, "requests", o.Requests, "measured requests per attempt of a run of rounds")
	f.StringVar(&ro.precision, "precision", "", "measure adaptively until every comparison's 95% interval is within this many percent (the default, at "+stats.FormatPrecision(runner.DefaultPrecision)+", unless --rounds or --requests is given or the run needs rounds)")
	f.DurationVar(&o.MaxTime, "max-time", runner.DefaultMaxTime, "an adaptive run's time budget: it stops measuring then and says which comparisons fell short")
	f.DurationVar(&o.Slice, "slice", runner.DefaultSlice, "an adaptive run's slice: the measurements it alternates between the servers of a mode")
	f.StringVar(&o.CPUs, "cpus", runner.CPUsAuto, "where servers and the load generator run: auto (kvstore and redis targets and the load generator share CPU 0; clusters, command and attach targets unpinned), off, a CPU list both share (0), or server=CPUS,client=CPUS")
	addLoadFlags(f, &o.Load)
	f.IntVar(&o.ValueSize, "value-size", o.ValueSize, "value size in bytes")
	f.IntVar(&o.Retries, "retries", o.Retries, "retries of a failed attempt, each on a fresh server")
	f.Int64Var(&o.Seed, "seed", o.Seed, "seed base; round r uses seed+r")
	f.StringVar(&o.Alloc, "alloc", o.Alloc, "kvstore allocator: mypool, malloc or both (pool and go are accepted too)")
	f.IntVar(&o.KVPort, "kv-port", o.KVPort, "port the kvstore tries first; any free port when taken")
	f.StringVar(&o.SetCmd, "set-cmd", o.SetCmd, "kvstore write command; Redis uses SET")
	f.StringVar(&o.GetCmd, "get-cmd", o.GetCmd, "kvstore read command; Redis uses GET")
	f.IntVar(&o.Agents, "agents", o.Agents, "measure through this many local agent processes (bench --segment), merged; 0: in this process")
	f.StringSliceVar(&o.Targets, "targets", nil, "targets to run: names from --config, kvstore, redis, kvstore-cluster, redis-cluster (default: the --config file's targets; without --config, kvstore, and redis when redis-server is found)")
	f.IntVar(&o.Shards, "shards", o.Shards, "masters of the kvstore-cluster and redis-cluster targets")
	f.StringSliceVar(&o.Strategies, "strategies", nil, `strategies to run, or "all" (default: each target's defaults)`)
	f.StringSliceVar(&o.Modes, "modes", strings.Split(runner.DefaultModes, ","), "modes: set, get, mixed, recovery (kill -9 amid acknowledged writes, then a restart on the same files; kvstore and redis targets) (with --workloads, only when given)")
	f.StringSliceVar(&o.Workloads, "workloads", nil, "workloads to measure beside the modes: names (see bench --list-workloads) or YAML files")
	f.StringVar(&o.Order, "order", o.Order, "interleaved (each round shuffled) or sequential (all rounds of a scenario, then the next)")
	f.StringVar(&o.ConfigFile, "config", "", "YAML file describing targets (kvstore, kvstore-cluster, redis, redis-cluster, command, attach); they run instead of the built-in ones unless --targets names those")
	f.BoolVar(&o.AllowFlush, "allow-flush", false, "let attach targets that hold keys be emptied (FLUSHALL) before the first attempt; without it they are refused")
	f.StringVar(&o.RedisBin, "redis-bin", "", "redis-server executable (default: from PATH)")
	f.StringVar(&o.OutDir, "out", o.OutDir, "directory of the result files")
	f.StringVar(&o.Prefix, "prefix", o.Prefix, "start of the result files' names: PREFIX_detail_TIME.csv ...")
	f.StringVar(&o.Lang, "lang", o.Lang, "language of the report: en or zh")
	f.StringVar(&o.Baselines, "baseline", "", "baseline strategy per target, e.g. kvstore=nopersist,redis=none")
	f.StringVar(&o.Reference, "reference", "", "target the report's side-by-side tables compare the others with (default: redis when it runs, else the first target by name)")
	f.StringVar(&o.Chart, "chart", o.Chart, "chart format: svg, png or none")
	f.StringVar(&o.TempDir, "tmpdir", "", "where the servers' directories go (default: inside --out, on the results' disk)")
	f.BoolVar(&o.PowerLoss, "power-loss", false, "make each recovery attempt a power loss: the server's directory is on a FUSE file system that drops what was not fsynced after the kill -9 (needs /dev/fuse and root; else the attempts crash the process only), e.g. --modes recovery --power-loss --strategies all")
	f.DurationVar(&o.ReadyTimeout, "ready-timeout", o.ReadyTimeout, "time a server gets to answer PING")
	f.DurationVar(&o.Interval, "interval", o.Interval, "record each measured phase per interval of this length: the series CSV, the stall columns, the server's events (0: not at all)")
	f.StringVar(&o.Rates, "rates", "", "after each attempt's closed loop, measure a latency-throughput curve on the same server: an open-loop phase at each rate of this list, requests per second (20000,50000) or percentages of that closed loop's QPS (25%,50%,75%,90%); one detail row per rate")
	f.StringVar(&o.SLO, "slo", "", "after each attempt's closed loop, find the capacity at this latency objective, the highest rate at which it holds: STAT<DURATION joined by commas, STAT p50, p90, p99, p999 or max (p99<1ms); the capacity_qps column and the report's capacity table")
	f.StringVar(&o.SLOPrecision, "slo-precision", "", "with --slo, the capacity search stops when its bracket is this narrow, relative to its top (default "+runner.DefaultSLOPrecision+")")
	f.IntVar(&o.SLOMaxSteps, "slo-max-steps", 0, fmt.Sprintf("with --slo, the capacity search measures at most this many open-loop phases per attempt, a step measured again (not held) counting twice (0: %d)", runner.DefaultSLOMaxSteps))
	f.DurationVar(&o.Duration, "duration", 0, fmt.Sprintf("measure each attempt for this long instead of --requests (default with --persist-job: %v)", runner.DefaultPersistJobDuration))
	f.StringVar(&o.PersistJob, "persist-job", "", fmt.Sprintf("set this persistence job off on the server during every attempt's measured phase, on every master, and measure it: bgsave (a snapshot: Redis's BGSAVE, the kvstore's) or rewrite (a log rewrite: BGREWRITEAOF); the phase is then bounded by --duration and cut in --interval intervals (default %v)", runner.DefaultPersistJobInterval))
	f.DurationVar(&o.PersistJobAt, "persist-job-at", 0, "with --persist-job, when the job is set off, from the measured phase's start (default: its middle)")
	f.DurationVar(&o.PersistJobEvery, "persist-job-every", 0, "with --persist-job, set the job off every this long instead (one due while the last one runs starts once it is done)")
	addWaitFlags(f, &ro.wait, "a row of every workload's (redis targets need replicas: in --config; the kvstore has no replication)")
	f.BoolVar(&o.Profile, "profile", false, "record each server's CPU profile with perf in one more round of every scenario, after the measured ones, and draw flame graphs (PREFIX_flame_TARGET_STRATEGY_MODE_TIME.svg, and _flame_diff_ against the baseline strategy) linked from the HTML report")
	f.StringVar(&o.Label, "label", "", "name of the build or setup measured, written in the label column (for kvbench compare --by label)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the plan and its estimated time; run nothing (but the --estimate probe)")
	f.StringVar(&o.Estimate, "estimate", o.Estimate, "how the estimated time is made: auto (the last run's figures in --out where they fit; with --dry-run a short probe of the other targets), last (the last run's only), probe (every target probed), fixed (built-in figures)")
	addRunHistoryFlags(f, &ro.history)
	addMetricsFlag(f, &ro.metricsAddr, "kvbench_requests_total, kvbench_errors_total, kvbench_request_duration_seconds of every attempt's measured phase, by target, strategy, mode or workload, and command")
	addTLSFlags(f, &o.TLS, " to the redis, redis-cluster, command and attach targets (a target's tls: block overrides these flags; redis: kvbench makes the certificates; the kvstore is refused)")
	addRunEndpointFlags(f, o)
	for _, ev := range runner.EnvVars {
		f.Lookup(ev.Flag).Usage += " (env " + ev.Name + ")"
	}
	return cmd
}

// chooseDesign sets the run's design: adaptive (Options.Precision) when
// --precision is given, or by default; fixed rounds when --rounds or
// --requests is given (or their environment variables, ROUNDS and REQ),
// or when the run needs rounds (curves, recovery, workloads, profiles,
// agents), which the plan says.
func (ro *runOptions) chooseDesign(f *pflag.FlagSet) error {
	o := &ro.Options
	rounds := f.Changed("rounds") || f.Changed("requests")
	if f.Changed("precision") {
		if rounds {
			return errors.New("--precision measures until the intervals are narrow enough; --rounds and --requests fix the measurements: give one or the other")
		}
		p, err := stats.ParsePrecision(ro.precision)
		if err != nil {
			return fmt.Errorf("--precision: %w", err)
		}
		o.Precision = p
		return nil
	}
	if rounds {
		return nil
	}
	if err := o.Sliceable(); err != nil {
		ro.roundsWhy = err.Error()
		return nil
	}
	o.Precision = runner.DefaultPrecision
	return nil
}

// runRun runs the whole experiment.
func runRun(ctx context.Context, o *runOptions) (err error) {
	if f, ok := o.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.Live = true
	}
	if o.TLS.Insecure {
		fmt.Fprintln(o.ErrOut, "warning:", tlsconf.InsecureWarning)
	}
	o.Tracker = &target.Tracker{}
	stop := killOnSecondSignal(o.Tracker, o.ErrOut)
	defer stop()
	render.DisableWidthCache() // a process-wide setting: it belongs here
	if o.metricsAddr != "" {
		load, stopMetrics, err := startLoadMetrics(ctx, o.metricsAddr, o.ErrOut)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stopMetrics()) }()
		o.Meter = func(target, strategy, what string, cfg loadgen.Config) runner.AttemptMeter {
			return load.Meter(target, strategy, what, cfg)
		}
	}
	defer o.history.start(ctx, &o.Options, o.ErrOut)()
	if o.roundsWhy != "" {
		fmt.Fprintf(o.ErrOut, "note: measuring %d rounds, not adaptively: %s\n", o.Rounds, o.roundsWhy)
	}
	_, err = runner.Run(ctx, o.Options, o.Out, o.ErrOut)
	return runExit(err)
}

// persistJobFlags applies --persist-job's defaults to the flags not
// given: the series' interval DefaultPersistJobInterval (the runner
// bounds the phase by DefaultPersistJobDuration); a --requests given
// without --duration is refused, since the job is timed from the phase's
// start and the phase must be bounded by time.
func persistJobFlags(f *pflag.FlagSet, o *runner.Options) error {
	if o.PersistJob == "" {
		return nil
	}
	if !f.Changed("interval") {
		o.Interval = runner.DefaultPersistJobInterval
	}
	if f.Changed("requests") && !f.Changed("duration") {
		return fmt.Errorf("--persist-job: the measured phase is bounded by time, not --requests: give --duration (default %v)", runner.DefaultPersistJobDuration)
	}
	return nil
}

// applyEnv sets every flag that was not given from its environment
// variable, if set: flags win over the environment, which wins over the
// defaults.
func applyEnv(f *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var errs []error
	for _, ev := range runner.EnvVars {
		v, ok := lookup(ev.Name)
		if !ok || f.Changed(ev.Flag) {
			continue
		}
		if err := f.Set(ev.Flag, v); err != nil {
			errs = append(errs, fmt.Errorf("environment variable %s=%q (for --%s): %w", ev.Name, v, ev.Flag, err))
		}
	}
	return errors.Join(errs...)
}

// killOnSecondSignal waits, while the run lasts, for a second SIGINT or
// SIGTERM (the first cancels the command's context, in main): then it
// kills every server at once, removes their directories, and exits. It
// returns the function that stops waiting.
func killOnSecondSignal(tr *target.Tracker, stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ; {
			select {
			case <-quit:
				return
			case <-sigs:
				if n++; n < 2 {
					fmt.Fprintln(stderr, "\nkvbench: interrupted: stopping the servers and writing the partial report (Ctrl-C again to quit at once)")
					continue
				}
				tr.KillAll()
				fmt.Fprintln(stderr, "kvbench: interrupted twice: servers killed, exiting")
				os.Exit(ExitInterrupted)
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(quit)
		<-done
	}
}

// codedError is an error with its own exit status.
type codedError struct {
	err  error
	code exitError
}

func (e *codedError) Error() string   { return e.err.Error() }
func (e *codedError) Unwrap() []error { return []error{e.err, e.code} }

// runExit maps runner errors to exit statuses.
func runExit(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrOptions):
		return &usageError{err}
	case errors.Is(err, runner.ErrInterrupted):
		return &codedError{err, ExitInterrupted}
	}
	return err
}
