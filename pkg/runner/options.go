package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/placement"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/kvbench/kvbench/pkg/workload"
)

// AttemptMeter follows one attempt's measured load: Interval is given to
// loadgen.Config.Observe (it sees the load as it goes, when it runs in
// this process), and Done the attempt's result once measured.
type AttemptMeter interface {
	Interval(measure.Point)
	Done(*measure.Result)
}

// Defaults: the reference script run_bench.hash.sh, and kvbench's own.
const (
	// DefaultRounds is the number of rounds (ROUNDS).
	DefaultRounds = 5
	// DefaultRequests is the number of measured requests per attempt (REQ).
	DefaultRequests = 1_000_000
	// DefaultKeyspace is the number of distinct keys (KEYSPACE).
	DefaultKeyspace = 1_000_000
	// DefaultPipeline is the pipeline depth (PIPE).
	DefaultPipeline = 128
	// DefaultValueSize is the value size in bytes (VSIZE).
	DefaultValueSize = 32
	// DefaultRetries is how many times a failed attempt is retried on a
	// fresh instance (RETRIES).
	DefaultRetries = 3
	// DefaultSeed is the seed base; round r uses DefaultSeed + r (SEED).
	DefaultSeed = 12345
	// DefaultConnections is the number of client connections.
	DefaultConnections = 1
	// DefaultSetRatio is the percentage of writes in mixed mode.
	DefaultSetRatio = 50
	// DefaultModes are the modes measured: the reference script's set, and get after a
	// prefill.
	DefaultModes = "set,get"
	// DefaultOrder is the order of the attempts.
	DefaultOrder = OrderInterleaved
	// DefaultOutDir is where the result files go.
	DefaultOutDir = "results"
	// DefaultPrefix starts every result file's name.
	DefaultPrefix = "kvbench"
	// DefaultPrefillPipeline is the least number of keys a prefill writes
	// per round trip (prefill.Prefill): prefilling is not measured, so it
	// goes as fast as the server takes writes; 1024 was as fast as any
	// (BenchmarkPrefill).
	DefaultPrefillPipeline = 1024

	// QuietLimit bounds the wait, after a prefill, for the server's
	// background persistence work (see target.WaitQuiet); past it the
	// attempt is measured anyway, with a warning.
	QuietLimit = 2 * time.Minute
	// DefaultStopGrace is how long a server stopped with SIGTERM (a
	// command target; kvstore and redis are killed at once) gets to exit
	// before SIGKILL.
	DefaultStopGrace = 5 * time.Second
	// InterruptStopGrace replaces DefaultStopGrace once the run is
	// interrupted, so that kvbench exits within seconds.
	InterruptStopGrace = time.Second
	// DefaultProgressInterval is how often the live display is updated.
	DefaultProgressInterval = 500 * time.Millisecond

	// DefaultPrecision is the half-width an adaptive run's intervals
	// reach (--precision 3%): the margin of its verdicts too.
	DefaultPrecision = stats.DefaultPrecision
	// DefaultMaxTime bounds an adaptive run (--max-time).
	DefaultMaxTime = 5 * time.Minute
	// DefaultSlice is an adaptive run's slice length (--slice).
	DefaultSlice = 500 * time.Millisecond
)

// Orders of the attempts.
const (
	// OrderInterleaved runs every scenario once per round, in an order
	// shuffled with the round's seed, so that slow drift of the machine
	// hits every strategy alike.
	OrderInterleaved = "interleaved"
	// OrderSequential runs all rounds of one scenario before the next, as
	// the reference script did.
	OrderSequential = "sequential"
)

// AllStrategies as the only element of Options.Strategies selects every
// strategy of every target.
const AllStrategies = "all"

// ErrOptions is wrapped by errors in the options (a usage error).
var ErrOptions = errors.New("invalid option")

// EnvVar is an environment variable of the reference script that kvbench run
// honours: it sets the flag Flag unless the flag is given.
type EnvVar struct {
	// Name is the variable's name.
	Name string
	// Flag is the flag it stands for.
	Flag string
}

// EnvVars are the environment variables of the reference script
// run_bench.hash.sh, in the order of its table.
var EnvVars = []EnvVar{
	{"ROUNDS", "rounds"},
	{"REQ", "requests"},
	{"KEYSPACE", "keyspace"},
	{"PIPE", "pipeline"},
	{"VSIZE", "value-size"},
	{"RETRIES", "retries"},
	{"SEED", "seed"},
	{"ALLOC", "alloc"},
	{"KV_PORT", "kv-port"},
	{"SET_CMD", "set-cmd"},
	{"GET_CMD", "get-cmd"},
}

// Options is what "kvbench run" was asked to do. Start from
// DefaultOptions: numeric fields are taken as given (0 rounds is an
// error, 0 retries means none), empty strings and nil lists mean the
// default.
type Options struct {
	// Rounds is the number of rounds of every scenario.
	Rounds int
	// Load is the load of every attempt (loadgen.Load): its requests,
	// keyspace, pipeline, connections, threads (0: one per CPU), value
	// size, mixed mode's set ratio, seed base (round r uses Seed + r),
	// reply timeout, intervals and stall thresholds, and whether the
	// targets that set no resp3: speak RESP3 (the load's connections and
	// kvbench's own alike; targetfile.Defaults.RESP3: the kvstore speaks
	// RESP2 only, and a kvstore target in the run is refused unless its
	// --config entry says resp3: false). Each attempt runs a copy of it
	// with the scenario's server, commands and round seed set
	// (loadConfig); VerifyGet checks the reads of every mode.
	loadgen.Load
	// Retries is how many times a failed attempt is retried.
	Retries int
	// Modes are the modes to measure (set, get, mixed, recovery); nil means
	// DefaultModes, or none when Workloads is set.
	Modes []string
	// Workloads are the workloads to measure beside the modes: names of
	// the workloads shipped in the binary (workload.List) or YAML files
	// (see package workload). Each is measured per target, strategy and
	// round like a mode, on a fresh server, after its prefill.
	Workloads []string
	// Order is OrderInterleaved or OrderSequential.
	Order string
	// Targets names the targets to run: names from ConfigFile, or the
	// built-in kvstore and redis (unless ConfigFile has targets of those
	// names). Nil means every target of ConfigFile, or without one kvstore
	// and, when redis-server is found, redis.
	Targets []string
	// Strategies names the strategies to run (a target runs those it
	// knows); nil means each target's defaults, {"all"} all of them.
	Strategies []string
	// Shards is the number of masters of the built-in kvstore-cluster and
	// redis-cluster targets; 0 means target.DefaultClusterShards.
	// (Targets of a --config file give their own.)
	Shards int

	// Alloc is the kvstore's allocator: mypool, malloc or both.
	Alloc string
	// KVPort is the port the kvstore tries first.
	KVPort int
	// SetCmd and GetCmd are the kvstore's commands (Redis uses SET/GET).
	SetCmd, GetCmd string
	// KvstoreBin is the kvbench binary that serves the kvstore (and runs
	// the agents); the running executable when empty.
	KvstoreBin string
	// Agents, when above 1, runs each measurement through that many
	// local agent processes of KvstoreBin ("kvbench bench --segment i/N
	// --start-at ... --output json"), merged into one row
	// (agents.RunLocal); 0 or 1 measures in this process.
	Agents int
	// RedisBin is redis-server; looked up on PATH when empty.
	RedisBin string
	// ConfigFile, when set, is a YAML file listing the targets (see
	// targetfile.Load); its targets run by default, and the built-in
	// ones only when Targets names them.
	ConfigFile string
	// AllowFlush lets the attach targets of ConfigFile empty a server
	// that holds keys before the run's first attempt on it; without it
	// (or the target's allow_flush) such a server is refused.
	AllowFlush bool
	// TLS is the TLS settings of the redis, redis-cluster, command and
	// attach targets,
	// which a target's tls: block overrides (targetfile.Defaults.TLS); with
	// TLS enabled, a kvstore target is refused.
	TLS tlsconf.Options
	// User is the ACL user of the attach targets that set none
	// (targetfile.Defaults.User).
	User string
	// DB is the database of the redis, command and single-server attach
	// targets that set none (targetfile.Defaults.DB); the kvstore and
	// clusters have only database 0.
	DB int

	// OutDir is the directory of the result files; Prefix starts their
	// names.
	OutDir, Prefix string
	// Lang is the report's language (en or zh); Baselines overrides the
	// baseline strategy per target ("kvstore=nopersist,redis=none").
	Lang, Baselines string
	// Reference is the target the report's side-by-side tables compare
	// the others with; "" means redis when it runs, else the first target
	// by name. It must be one of the run's targets.
	Reference string
	// Chart is the chart's format, svg or png; "none" draws no chart.
	Chart string
	// Label, when set, is written in every row's label column: the name of
	// the build or setup measured, for "kvbench compare --by label".
	Label string
	// TempDir holds the instances' directories; a new directory in OutDir
	// when empty (a disk, where fsync means something; /tmp may be
	// memory).
	TempDir string

	// Estimate is how the plan's estimate of the time is made: EstimateAuto
	// (the default), EstimateLastRun, EstimateProbe or EstimateFixed (see
	// Plan.Calibrate).
	Estimate string
	// DryRun prints the plan and an estimate of the time, and runs
	// nothing.
	DryRun bool
	// ReadyTimeout bounds a server's start. (Load.Timeout fails an
	// attempt when the server does not reply for that long.)
	ReadyTimeout time.Duration
	// PowerLoss makes each recovery attempt a power loss: the server's
	// directory is on a lazy file system (pkg/lazyfs) whose unsynced data
	// is dropped after the kill -9. Where FUSE cannot be mounted the
	// attempts crash the process only, and the log says so once.
	PowerLoss bool
	// StopGrace is how long a command target's server gets after
	// SIGTERM.
	StopGrace time.Duration
	// PrefillPipeline is the keys a prefill writes per round trip; 0
	// means the larger of Pipeline and DefaultPrefillPipeline.
	PrefillPipeline int
	// Profile records the servers' CPU profiles with perf, in one more
	// round of every scenario after the measured ones, and draws them as
	// flame graphs (see profile.go).
	Profile bool

	// Live redraws a progress line in place (stderr is a terminal);
	// otherwise progress is plain log lines.
	Live bool
	// ProgressInterval is how often the progress is updated.
	ProgressInterval time.Duration
	// Tracker, if set, records the servers' processes and the temporary
	// directory, so that the caller can kill and remove them at once.
	Tracker *target.Tracker
	// Observe, if set, is called with every event of the run, from the
	// run's goroutines, one call at a time.
	Observe func(Event)
	// Meter, if set, is asked for each attempt's meter of the measured
	// load (live metrics), with the scenario's target, strategy and mode
	// or workload, and the load's configuration.
	Meter func(target, strategy, what string, cfg loadgen.Config) AttemptMeter
	// Recorder, if set, records the run as it goes (the history store);
	// when it fails the run warns once and goes on without it.
	Recorder Recorder

	// Rates, when set, measures a latency–throughput curve in every
	// attempt after its closed loop, on the same server: an open-loop
	// phase at each rate of the list (curve.ParseRates: 20000,50000, or
	// 25%,50% of the attempt's closed-loop QPS), one detail row each.
	// SLO, when set, searches each attempt's capacity at this latency
	// objective (curve.ParseSLO: p99<1ms), to SLOPrecision
	// (curve.ParsePrecision: 5%; DefaultSLOPrecision when empty). Both
	// measure the modes, not workloads.
	Rates, SLO, SLOPrecision string
	// SLOMaxSteps bounds each search's open-loop phases
	// (curve.DefaultMaxSteps when 0).
	SLOMaxSteps int

	// PersistJob, when set (target.JobBGSave or target.JobRewrite), sets
	// that persistence job off on the server during every attempt's
	// measured phase, on every master, and measures it (persistjob.go):
	// the phase is then bounded by Load.Duration (DefaultPersistJobDuration
	// when 0), and its figures come from the series (Load.Interval). A
	// strategy without the job is refused when Strategies names it, else
	// left out with a warning (target.Desc.PersistJob).
	PersistJob string
	// PersistJobAt is when the job is set off, from the measured phase's
	// start; 0 means the middle of the phase. PersistJobEvery, instead,
	// sets it off every this long (a job due while the last one runs
	// starts once it is done).
	PersistJobAt, PersistJobEvery time.Duration
	// Wait, when enabled, follows the writes of every workload's mix
	// with WAIT (mix.Wait, wait.go): workloads only, on servers with
	// replicas.
	Wait mix.Wait

	// Precision, above 0, makes the run adaptive (adaptive.go): the
	// servers of a mode run side by side and are measured in short
	// slices, block after block, until every comparison the report makes
	// has a 95% interval of its ratio within ±Precision (0.03: ±3%), or
	// MaxTime has gone; Rounds and Requests are then not used. 0 runs
	// Rounds fixed rounds, each on fresh servers.
	Precision float64
	// MaxTime bounds an adaptive run's measuring, its servers' starts and
	// prefills included (DefaultMaxTime when 0).
	MaxTime time.Duration
	// Slice is the length an adaptive run aims its slices at
	// (DefaultSlice when 0); a slice is a number of requests, sized from
	// the scenario's rate.
	Slice time.Duration
	// CPUs places the servers' and the load generator's threads
	// (machine.ParsePlacement: "off", "0", "server=0,client=1"), or
	// CPUsAuto (the default, ""): see package placement.
	CPUs string

	// placement is CPUs resolved, by normalize.
	placement machine.Placement
	// workloads are Workloads loaded, by normalize.
	workloads []*workload.Workload
	// curve is Rates, SLO and SLOPrecision parsed, by normalize.
	curve curve.Spec
}

// DefaultOptions returns the options of "kvbench run" without flags.
func DefaultOptions() Options {
	load := loadgen.DefaultLoad()
	load.Requests, load.Keyspace, load.Pipeline = DefaultRequests, DefaultKeyspace, DefaultPipeline
	load.Connections, load.Threads, load.ValueSize = DefaultConnections, 0, DefaultValueSize
	load.SetRatio, load.Seed, load.VerifyGet = DefaultSetRatio, DefaultSeed, true
	return Options{
		Rounds:           DefaultRounds,
		Load:             load,
		Retries:          DefaultRetries,
		Shards:           target.DefaultClusterShards,
		Order:            DefaultOrder,
		Alloc:            target.DefaultAlloc,
		KVPort:           target.DefaultKvstorePort,
		SetCmd:           target.DefaultKvstoreSetCmd,
		GetCmd:           target.DefaultKvstoreGetCmd,
		OutDir:           DefaultOutDir,
		Prefix:           DefaultPrefix,
		Lang:             render.LangEN,
		Chart:            "svg",
		Estimate:         EstimateAuto,
		ReadyTimeout:     target.DefaultReadyTimeout,
		StopGrace:        DefaultStopGrace,
		ProgressInterval: DefaultProgressInterval,
	}
}

// Validate checks the options as Run would, without looking at any target:
// the error wraps ErrOptions.
func (o Options) Validate() error {
	_, err := o.normalize()
	return err
}

// normalize fills in the defaults of empty fields and checks the rest.
func (o Options) normalize() (Options, error) {
	d := DefaultOptions()
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if err := o.TLS.Validate(); err != nil {
		return o, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if o.DB < 0 {
		return o, fmt.Errorf("%w: --db %d: want a database number >= 0", ErrOptions, o.DB)
	}
	def(&o.Order, d.Order)
	def(&o.Alloc, d.Alloc)
	def(&o.SetCmd, d.SetCmd)
	def(&o.GetCmd, d.GetCmd)
	def(&o.OutDir, d.OutDir)
	def(&o.Prefix, d.Prefix)
	def(&o.Lang, d.Lang)
	def(&o.Chart, d.Chart)
	def(&o.Estimate, d.Estimate)
	if o.Modes == nil && len(o.Workloads) == 0 {
		o.Modes = strings.Split(DefaultModes, ",")
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = d.ReadyTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = d.StopGrace
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = d.ProgressInterval
	}
	if o.PrefillPipeline <= 0 {
		o.PrefillPipeline = max(o.Pipeline, DefaultPrefillPipeline)
	}
	if o.Precision > 0 {
		if o.MaxTime <= 0 {
			o.MaxTime = DefaultMaxTime
		}
		if o.Slice <= 0 {
			o.Slice = DefaultSlice
		}
	}

	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := o.Load.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, c := range []struct {
		name  string
		value int64
		least int64
	}{
		{"rounds", int64(o.Rounds), 1}, {"retries", int64(o.Retries), 0}, {"shards", int64(o.Shards), 0},
	} {
		if c.value < c.least {
			bad("--%s %d: want at least %d", c.name, c.value, c.least)
		}
	}
	if o.Agents < 0 || o.Agents > 1024 {
		bad("--agents %d: want 0 to 1024", o.Agents)
	}
	if o.KVPort < 0 || o.KVPort > 65535 {
		bad("kv-port %d: want 0 to 65535", o.KVPort)
	}
	if o.Order != OrderInterleaved && o.Order != OrderSequential {
		bad("order %q: want %s or %s", o.Order, OrderInterleaved, OrderSequential)
	}
	var modes []string
	badMode := false
	for _, m := range o.Modes {
		m = strings.ToLower(strings.TrimSpace(m))
		switch loadgen.Mode(m) {
		case "":
		case loadgen.ModeSet, loadgen.ModeGet, loadgen.ModeMixed, results.ModeRecovery:
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		default:
			bad("mode %q: want set, get, mixed or recovery", m)
			badMode = true
		}
	}
	if len(modes) == 0 && len(o.Modes) > 0 && !badMode {
		bad("no mode given")
	}
	o.Modes = modes
	o.workloads = nil
	for _, name := range o.Workloads {
		w, err := loadWorkload(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.ContainsFunc(o.workloads, func(x *workload.Workload) bool { return x.Name == w.Name }) {
			o.workloads = append(o.workloads, w)
		}
	}
	if a, err := target.ParseAlloc(o.Alloc); err != nil {
		errs = append(errs, err)
	} else {
		o.Alloc = a
	}
	if o.Lang != render.LangEN && o.Lang != render.LangZH {
		bad("lang %q: want %s or %s", o.Lang, render.LangEN, render.LangZH)
	}
	if _, err := report.ParseBaselines(o.Baselines); err != nil {
		errs = append(errs, err)
	}
	if o.Chart != "svg" && o.Chart != "png" && o.Chart != "none" {
		bad("chart %q: want svg, png or none", o.Chart)
	}
	if !slices.Contains([]string{EstimateAuto, EstimateLastRun, EstimateProbe, EstimateFixed}, o.Estimate) {
		bad("estimate %q: want %s, %s, %s or %s", o.Estimate, EstimateAuto, EstimateLastRun, EstimateProbe, EstimateFixed)
	}
	if strings.ContainsAny(o.Prefix, `/\`) {
		bad("prefix %q: want a file name prefix, not a path", o.Prefix)
	}
	if err := o.parseCurve(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.persistJobErrors()...) // persistjob.go
	errs = append(errs, o.waitErrors()...)       // wait.go
	if err := o.checkAdaptive(); err != nil {
		errs = append(errs, err)
	}
	if p, err := placement.Parse(o.CPUs); err != nil {
		errs = append(errs, err)
	} else {
		o.placement = p
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return o, nil
}

// loadWorkload loads a workload of Options.Workloads and checks what the
// detail CSV needs of it: no command may be named results.CommandTotal,
// the name of the whole mix's row.
func loadWorkload(name string) (*workload.Workload, error) {
	name = strings.TrimSpace(name)
	w, err := workload.Load(name)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", name, err)
	}
	var c loadgen.Config
	w.Apply(&c, func(string) bool { return false })
	for _, cmd := range c.Commands {
		if strings.EqualFold(cmd.Name, results.CommandTotal) {
			return nil, fmt.Errorf("workload %s: command %q: the name %q is the whole mix's; give it another name", name, cmd.String(), cmd.Name)
		}
	}
	return w, nil
}
