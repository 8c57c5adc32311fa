package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/metrics"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// benchOptions is what "kvbench bench" was asked to do.
type benchOptions struct {
	host    string
	port    int
	mode    string
	pattern string
	warmup  string
	segment string
	startAt string

	valueSize    string
	dataSizeList string
	verify       bool
	expiryRange  string

	tests        string
	commands     commandList
	workload     string
	workloadName string
	metricsAddr  string
	// meter feeds the live metrics (--metrics-addr), nil without.
	meter         *metrics.Attempt
	listWorkloads bool
	tls           tlsconf.Options
	curve         curveOptions
	ramp          rampOptions
	profile       profileFlags
	endpoint      endpointFlags
	replicas      replicaFlags
	replay        replayFlags
	benchOutput
	// Tests are redis-benchmark's tests to run (--tests), in its order.
	Tests []rbtests.Test
	// Prefill writes this agent's share of the keyspace before the run.
	Prefill bool
	// Output is output.FormatText or output.FormatJSON.
	Output string
	// Config is the load generator's run, complete once validate has run.
	Config loadgen.Config
	// Live, when set, receives the progress line (a terminal).
	Live *os.File
	streams
}

// newBenchCmd is "kvbench bench": flags into benchOptions, then runF
// (runBench when nil).
func newBenchCmd(runF func(context.Context, *benchOptions) error) *cobra.Command {
	if runF == nil {
		runF = runBench
	}
	o := &benchOptions{Config: loadgen.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the load generator once against a Redis-protocol server",
		Long: `bench drives one RESP server with pipelined writes and reads and prints
QPS, average time per request, elapsed time and latency percentiles.

redis-benchmark's short flags work: -p port, -c connections, -n requests,
-P pipeline, -d value size, -r keyspace, -t tests, -q quiet, -a password,
-u URI, -s socket; a command after -- is run as with --command
(kvbench bench -- SET __key__ __data__). But -h is this help, not the
host: give --host.

Latency runs from the write of a request's batch to the read that brought its
reply (with --rate, from the request's intended send time). Keys are
<prefix><index zero-padded to the keyspace's width>; the value of a key is a
function of (seed, key, value size), so --verify-get checks every byte.

Several agents (processes, perhaps on several hosts) share one load with
--segment I/N: together they do exactly what one run would, and
"kvbench merge" adds up their --output json results; --start-at makes them
start at once (see docs/distributed.md).

Exit status: 0 on success, 1 when the run fails (connection, error reply,
verification), 2 for a usage error, 130 when interrupted (Ctrl-C or
SIGTERM: the report of what was done so far is printed first).`,
		Example: `  kvbench bench --mode set --pipeline 128 --keyspace 1000000 --requests 3000000
  kvbench bench --port 8888 --mode get --set-cmd RSET --get-cmd RGET --verify-get
  kvbench bench --mode mixed --connections 50 --pipeline 1 --duration 10s --output json
  kvbench bench --tests set,get,lpush,lrange_100 --connections 50 --pipeline 16
  kvbench bench --command 'SET __key__ __data__' --command-ratio 1 --command 'GET __key__' --command-ratio 10
  kvbench bench -p 6379 -c 50 -n 100000 -P 16 -d 64 -r 10000 -t set,get -q
  kvbench bench -c 50 -n 100000 -- LPUSH __key__ __data__
  kvbench bench --mode get --percentiles 50,99,99.9,99.99 --hdr-file-prefix out/get --output csv
  kvbench bench --workload ycsb-b --keyspace 1000000 --prefill --duration 30s
  kvbench bench --tls --cacert ca.crt --cert client.crt --key client.key --port 6380 --pipeline 128
  kvbench bench --uri redis://bench:secret@127.0.0.1:6379/3 --mode set
  kvbench bench --socket /run/redis/redis.sock --user bench --password secret --db 2
  kvbench bench --cluster --port 7000 --connections 1 --threads 3 --pipeline 128 --mode set
  kvbench bench --cluster --port 7000 --read-from-replicas --mode mixed --set-ratio 10
  kvbench bench --port 6379 --replicas 127.0.0.1:6380,127.0.0.1:6381 --mode get --prefill
  kvbench bench --segment 1/4 --connections 16 --start-at 2026-01-02T15:04:05Z --duration 30s --output json
  kvbench bench --mode get --prefill --connections 50 --pipeline 1 --rates 25%,50%,75%,90% --slo 'p99<1ms'
  kvbench bench --mode get --prefill --connections-start 10 --connections-step 10 --connections 100 --step-duration 10s
  kvbench bench --port 8888 --duration 60s --metrics-addr 127.0.0.1:9100
  kvbench bench --mode mixed --duration 60s --reconnect --reconnect-attempts 20
  kvbench bench --mode set --random-data --expiry-range 60-600 --value-size 1024
  kvbench bench --mode get --multi-key-get 10 --verify-get --random-data --seed 42
  kvbench bench --replay monitor.txt --connections 50 --pipeline 16
  kvbench bench --replay monitor.txt --replay-speed 2 --duration 60s
  kvbench bench --resp3 --mode get --prefill --verify-get`,
		Args: benchArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.listWorkloads {
				return listWorkloads(cmd.OutOrStdout())
			}
			if err := o.takeCommand(cmd.Flags(), args); err != nil {
				return &usageError{err}
			}
			if err := o.validate(cmd.Flags()); err != nil {
				return &usageError{err}
			}
			o.streams = streamsOf(cmd)
			if f, ok := o.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				o.Live = f
			}
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	c := &o.Config
	f.StringVar(&o.host, "host", loadgen.DefaultHost, "server host")
	f.IntVarP(&o.port, "port", "p", loadgen.DefaultPort, "server port")
	f.StringVarP(&c.Password, "password", "a", "", "password sent with AUTH on each connection (default $"+PasswordEnv+")")
	f.BoolVar(&c.Cluster, "cluster", false, "drive a Redis Cluster: the slot map read from --host/--port, --connections per master, each request to its key's master")
	f.StringVar(&o.mode, "mode", string(loadgen.DefaultMode), "request mix: set, get or mixed")
	f.Int64VarP(&c.Requests, "requests", "n", c.Requests, "total measured requests over all connections (not per second)")
	f.DurationVar(&c.Duration, "duration", 0, "measure for this long instead of --requests (e.g. 10s)")
	f.StringVar(&o.warmup, "warmup", "", "unmeasured warmup first: a duration (5s) or a number of requests")
	f.Float64Var(&c.Rate, "rate", 0, "open loop at this many requests per second in total; 0: closed loop")
	f.IntVarP(&c.Pipeline, "pipeline", "P", c.Pipeline, "requests per batch (closed loop), most in flight per connection (open loop)")
	f.IntVarP(&c.Connections, "connections", "c", c.Connections, "number of connections")
	f.IntVar(&c.Threads, "threads", c.Threads, "worker threads (at most one per connection)")
	machineDefault(f, "threads", "one per CPU")
	f.Int64VarP(&c.Keyspace, "keyspace", "r", c.Keyspace, "number of distinct keys")
	f.Float64Var(&c.KeyMedian, "key-median", 0, "center of the gaussian key pattern, a key index (default the middle of the keyspace)")
	f.Float64Var(&c.KeyStddev, "key-stddev", 0, "standard deviation of the gaussian key pattern, in keys (default a sixth of the keyspace)")
	f.StringVarP(&o.valueSize, "value-size", "d", strconv.Itoa(c.ValueSize), "value length in bytes (0: empty values), or with a command mix a uniform range MIN-MAX (32-1024)")
	f.StringVar(&o.dataSizeList, "data-size-list", "", "with a command mix, value sizes by weight, memtier_benchmark style: SIZE:WEIGHT,... (32:60,1024:30,16384:10)")
	f.IntVar(&c.SetRatio, "set-ratio", c.SetRatio, "percentage of writes in mixed mode (0-100)")
	f.StringVar(&c.SetCmd, "set-cmd", c.SetCmd, "write command: CMD key value (SET, RSET, HSET...)")
	f.StringVar(&c.GetCmd, "get-cmd", c.GetCmd, "read command: CMD key (GET, RGET, HGET...)")
	f.StringVar(&c.KeyPrefix, "key-prefix", c.KeyPrefix, "prefix of every key")
	f.StringVar(&o.pattern, "key-pattern", "", "key order: random, sequential, permutation, zipf or gaussian; in a command mix also latest or insert (default permutation for set, random otherwise)")
	f.Float64Var(&c.Zipf, "zipf", 0, fmt.Sprintf("Zipf exponent for skewed keys; selects --key-pattern zipf (the zipf pattern defaults to %g)", keyspace.DefaultZipf))
	f.Int64Var(&c.Seed, "seed", 0, "random seed for keys and values (default: the current time, printed)")
	f.BoolVar(&c.VerifyGet, "verify-get", false, "check every read reply byte for byte against the value the seed writes")
	f.BoolVar(&o.verify, "verify", false, "check every reply whose value is known: --verify-get, and in a command mix the GETs of keys it or the prefill writes, and with one connection the counters (INCR, LPUSH lengths)")
	f.BoolVar(&c.AllowMisses, "allow-misses", false, "with --verify-get, count misses and wrong values without failing the run")
	f.BoolVar(&c.ContinueOnError, "continue-on-error", false, "count error replies and go on instead of failing at the first")
	f.DurationVar(&c.ConnectTimeout, "connect-timeout", c.ConnectTimeout, "time allowed to connect (and AUTH), per connection")
	f.DurationVar(&c.Timeout, "timeout", c.Timeout, "fail when a connection waits this long for a reply")
	f.DurationVar(&c.Interval, "interval", c.Interval, "record the measured phase per interval of this length, aligned on the clock (JSON series; 0: not at all)")
	f.Float64Var(&c.StallBelow, "stall-below", c.StallBelow, "an interval whose QPS is below this fraction of the median interval's is a stall")
	f.DurationVar(&c.StallLatency, "stall-latency", c.StallLatency, "an interval in which a request waited longer than this is a stall (0: no such rule)")
	f.StringVar(&o.Output, "output", output.FormatText, "report format: text, json or csv (one row per command or test: "+strings.Join(output.CSVHeader, ",")+"; latencies in µs)")
	f.StringVar(&o.segment, "segment", "", "run agent I's share of the load, of N agents: I/N (I from 0), or auto/N to take I from $"+JobIndexEnv)
	f.StringVar(&o.startAt, "start-at", "", "start the run (after connecting) at this RFC 3339 time, e.g. 2026-01-02T15:04:05Z")
	f.BoolVar(&o.Prefill, "prefill", false, "first write every key of the keyspace once (with --segment, this agent's share)")
	addWorkloadFlags(f, o)
	addBenchClientFlags(f, o)
	addRESP3Flag(f, c)
	addCurveFlags(f, &o.curve)
	addRampFlags(f, &o.ramp)
	addProfileFlags(f, &o.profile)
	addTLSFlags(f, &o.tls, "")
	addMetricsFlag(f, &o.metricsAddr, "kvbench_requests_total, kvbench_errors_total, kvbench_request_duration_seconds; target=the server's HOST:PORT, strategy empty")
	addEndpointFlags(f, &o.endpoint)
	addBenchOutputFlags(f, &o.benchOutput)
	addReplicaFlags(f, o)
	addReplayFlags(f, o)
	return cmd
}

// validate completes o.Config from the flags and checks it: every error is
// a usage error.
func (o *benchOptions) validate(f *pflag.FlagSet) error {
	c := &o.Config
	if err := o.endpoint.resolve(f, o.host, o.port, c, &o.tls); err != nil {
		return err
	}
	c.Mode = loadgen.Mode(o.mode)
	c.KeyPattern = keyspace.Pattern(o.pattern)
	if !f.Changed("seed") {
		c.Seed = time.Now().UnixNano()
	}
	if f.Changed("duration") && !f.Changed("requests") {
		c.Requests = 0
	}
	if w := strings.TrimSpace(o.warmup); w != "" {
		if n, err := strconv.ParseInt(w, 10, 64); err == nil {
			c.WarmupRequests = n
		} else if d, err := time.ParseDuration(w); err == nil {
			c.Warmup = d
		} else {
			return fmt.Errorf("--warmup %q: want a duration (5s) or a number of requests", o.warmup)
		}
	}
	if !f.Changed("password") && c.Password == "" {
		if p, ok := os.LookupEnv(PasswordEnv); ok {
			c.Password = p
		}
	}
	if o.segment != "" {
		i, n, err := parseSegment(o.segment, os.LookupEnv)
		if err != nil {
			return err
		}
		c.Segment, c.Segments = i, n
	}
	if o.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, o.startAt)
		if err != nil {
			return fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", o.startAt)
		}
		c.StartAt = t
	}
	if err := o.validateSizes(f); err != nil {
		return err
	}
	c.VerifyGet = c.VerifyGet || o.verify
	tc, err := o.tls.Config()
	if err != nil {
		return err
	}
	c.TLS = tc
	if err := o.benchOutput.validate(o.Output); err != nil {
		return err
	}
	if err := o.validateClient(f); err != nil {
		return err
	}
	if err := o.validateReplicas(f); err != nil {
		return err
	}
	if err := o.validateWorkload(f); err != nil {
		return err
	}
	if err := o.validateReplay(f); err != nil {
		return err
	}
	if err := checkMetricsAddr(o.metricsAddr); err != nil {
		return err
	}
	if len(c.ValueSizes) > 0 && len(c.Commands) == 0 && len(o.Tests) == 0 {
		return fmt.Errorf("value size ranges and lists need a command mix (--command, --workload or --tests)")
	}
	n, err := c.Normalize()
	if err != nil {
		return err
	}
	if err := o.curve.validate(f, o); err != nil {
		return err
	}
	if err := o.ramp.validate(f, o); err != nil {
		return err
	}
	if len(o.Tests) == 0 {
		return n.InsertOnlyErrors()
	}
	return nil
}

// validateSizes sets the value size, or sizes, from --value-size and
// --data-size-list.
func (o *benchOptions) validateSizes(f *pflag.FlagSet) error {
	c := &o.Config
	if f.Changed("value-size") && f.Changed("data-size-list") {
		return fmt.Errorf("--value-size and --data-size-list cannot be used together")
	}
	size, ranges, err := keyspace.ParseValueSize(o.valueSize)
	if err != nil {
		return fmt.Errorf("--value-size %w", err)
	}
	c.ValueSize, c.ValueSizes = size, ranges
	if o.dataSizeList != "" {
		if c.ValueSizes, err = keyspace.ParseValueSizes(o.dataSizeList); err != nil {
			return fmt.Errorf("--data-size-list %w", err)
		}
	}
	return nil
}

// Environment variables of bench.
const (
	// PasswordEnv holds the password when --password is not given (a
	// Kubernetes Secret reaches an agent this way).
	PasswordEnv = "KVBENCH_PASSWORD"
	// JobIndexEnv is the index of a pod of a Kubernetes Indexed Job, the
	// I of --segment auto/N.
	JobIndexEnv = "JOB_COMPLETION_INDEX"
)

// parseSegment parses --segment: "I/N" or "auto/N", I from lookup.
func parseSegment(s string, lookup func(string) (string, bool)) (i, n int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	n, nerr := strconv.Atoi(ns)
	if !ok || nerr != nil || n < 1 {
		return 0, 0, fmt.Errorf("--segment %q: want I/N with 0 <= I < N, or auto/N", s)
	}
	if is == "auto" {
		v, ok := lookup(JobIndexEnv)
		if !ok {
			return 0, 0, fmt.Errorf("--segment %s: %s is not set (a Kubernetes Indexed Job sets it)", s, JobIndexEnv)
		}
		if i, err = strconv.Atoi(v); err != nil || i < 0 || i >= n {
			return 0, 0, fmt.Errorf("--segment %s: %s=%q: want 0 to %d", s, JobIndexEnv, v, n-1)
		}
		return i, n, nil
	}
	if i, err = strconv.Atoi(is); err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--segment %q: want I/N with 0 <= I < N, or auto/N", s)
	}
	return i, n, nil
}

// runBench runs the load generator once and prints its report; with
// --prefill it first writes the keyspace (or its segment's share). An
// interrupt ends it with ExitInterrupted.
func runBench(ctx context.Context, o *benchOptions) (err error) {
	defer func() {
		err = interrupted(ctx, resp3Error(err), "the load stopped before its end; the report above counts what was done until then")
	}()
	c := o.Config
	o.reportReplay(o.ErrOut)
	if o.tls.Insecure {
		fmt.Fprintln(o.ErrOut, "warning:", tlsconf.InsecureWarning)
	}
	if !c.StartAt.IsZero() && time.Until(c.StartAt) < -loadgen.MaxStartLate {
		return fmt.Errorf("--start-at %s: %w", c.StartAt.Format(time.RFC3339Nano), loadgen.ErrLateStart)
	}
	if o.Prefill {
		res, err := loadgen.Prefill(ctx, c)
		for _, w := range res.Warnings {
			fmt.Fprintln(o.ErrOut, "warning:", w)
		}
		if err != nil {
			return interrupted(ctx, err, "stopped during the prefill, before the measurement")
		}
		lo, hi := loadgen.PrefillRange(res.Config)
		fmt.Fprintf(o.ErrOut, "prefill: keys %d to %d written in %.3f s\n", lo, hi-1, res.Elapsed.Seconds())
	}
	if o.metricsAddr != "" {
		load, stop, err := startLoadMetrics(ctx, o.metricsAddr, o.ErrOut)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
		o.meter = load.Meter(c.Addr, "", o.metricsMode(), c)
		c.Observe = o.meter.Interval
		o.Config.Observe = c.Observe
	}
	defer o.profile.start(ctx, o.ErrOut)()
	if len(o.Tests) > 0 {
		return runTests(ctx, o)
	}
	if o.curve.enabled() {
		return runCurve(ctx, o)
	}
	if o.ramp.enabled() {
		return runRamp(ctx, o)
	}
	res, err := output.Bench(ctx, c, o.Out, output.Output{Format: o.Output, Live: o.Live,
		Quiet: o.quiet, Percentiles: o.percentiles, HDRPrefix: o.hdrPrefix, Log: o.ErrOut})
	o.meter.Done(&res.Result)
	return err
}

// metricsMode is bench's mode label: the mode, "tests", the workload's
// name, or "commands" for a mix of --command.
func (o *benchOptions) metricsMode() string {
	switch {
	case o.Config.Replay != nil:
		return "replay"
	case len(o.Tests) > 0:
		return "tests"
	case o.workloadName != "":
		return o.workloadName
	case len(o.Config.Commands) > 0:
		return "commands"
	}
	return string(o.Config.Mode)
}
