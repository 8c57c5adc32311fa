package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kvbench/kvbench/pkg/bench"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Environment variables of bench (package bench reads them).
const (
	PasswordEnv = bench.PasswordEnv
	JobIndexEnv = bench.JobIndexEnv
)

// benchOptions is what "kvbench bench" was asked to do: bench.Options,
// filled from the flags.
type benchOptions struct {
	bench.Options
	listWorkloads bool
	wait          waitFlags
	streams
}

// newBenchCmd is "kvbench bench": flags into benchOptions, validated,
// then runF (runBench when nil).
func newBenchCmd(runF func(context.Context, *benchOptions) error) *cobra.Command {
	if runF == nil {
		runF = runBench
	}
	o := &benchOptions{Options: bench.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the load generator once against a Redis-protocol server",
		Long: `bench drives one RESP server with pipelined writes and reads and prints
QPS, average time per request, elapsed time and latency percentiles.

redis-benchmark's short flags work: -p port, -c connections, -n requests,
-P pipeline, -d value size, -r keyspace, -t tests, -q quiet, -a password,
-u URI, -s socket. But -h is this help, not the host: give --host. The
arguments after the flags are a command, run as with --command (kvbench
bench -p 6379 -n 1000 SET __key__ __data__; after -- too): the flags end
at the first argument that is not one.

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
  kvbench bench -c 50 -n 100000 LPUSH __key__ __data__
  kvbench bench --mode get --percentiles 50,99,99.9,99.99 --hdr-file-prefix out/get --output csv
  kvbench bench --workload ycsb-b --keyspace 1000000 --prefill --duration 30s
  kvbench bench --tls --cacert ca.crt --cert client.crt --key client.key --port 6380 --pipeline 128
  kvbench bench --uri redis://bench:secret@127.0.0.1:6379/3 --mode set
  kvbench bench --socket /run/redis/redis.sock --user bench --password secret --db 2
  kvbench bench --cluster --port 7000 --connections 1 --pipeline 128 --mode set
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
  kvbench bench --resp3 --mode get --prefill --verify-get
  kvbench bench --mode set --wait-ratio 1:10 --num-replicas 1 --wait-timeout 100ms`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.listWorkloads {
				return listWorkloads(cmd.OutOrStdout())
			}
			o.Command = args
			o.Given = givenFlags(cmd.Flags())
			if err := o.wait.apply(cmd.Flags(), &o.Config.Wait); err != nil {
				return &usageError{err}
			}
			o.streams = streamsOf(cmd)
			o.Stdin, o.Log = o.In, o.ErrOut
			if f, ok := o.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				o.Live = f
			}
			if err := o.Validate(); err != nil {
				return &usageError{err}
			}
			return runF(cmd.Context(), o)
		},
	}
	addBenchFlags(cmd.Flags(), o)
	// As redis-benchmark, the flags end at the first argument that is not
	// one: what follows is the command to send, its own dashes included.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// addBenchFlags adds bench's flags, bound to o.
func addBenchFlags(f *pflag.FlagSet, o *benchOptions) {
	c := &o.Config
	f.StringVar(&o.Host, "host", o.Host, "server host")
	f.IntVarP(&o.Port, "port", "p", o.Port, "server port")
	f.StringVarP(&o.URI, "uri", "u", "", "server URI instead of --host/--port/--user/--password/--db: redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or unix:///path/to/socket")
	f.StringVarP(&o.Socket, "socket", "s", "", "Unix socket of the server, instead of --host and --port (e.g. /run/redis/redis.sock)")
	f.StringVar(&c.User, "user", "", "ACL user: each connection sends AUTH user password (with --password or $"+PasswordEnv+")")
	f.StringVarP(&c.Password, "password", "a", "", "password sent with AUTH on each connection (default $"+PasswordEnv+")")
	f.IntVar(&c.DB, "db", 0, "database selected with SELECT on each connection, the prefill's and checks' included (not with --cluster)")
	f.BoolVar(&c.Cluster, "cluster", false, "drive a Redis Cluster: the slot map read from --host/--port, --connections per master, each request to its key's master")
	f.BoolVar(&c.ReadFromReplicas, "read-from-replicas", false,
		"with --cluster, send each read to a replica of its key's slot (in turn over its replicas, each connection sending READONLY), writes to the masters; a slot range without a replica is read from its master")
	f.StringVar(&o.ReplicaList, "replicas", "",
		"without --cluster, replicas of the server as host:port,host:port: reads go to them in turn, writes to --host/--port (or --uri)")
	addTLSFlags(f, &o.TLSFiles, "")

	f.StringVar((*string)(&c.Mode), "mode", string(c.Mode), "request mix: set, get or mixed")
	f.Int64VarP(&c.Requests, "requests", "n", c.Requests, "total measured requests over all connections (not per second)")
	f.DurationVar(&c.Duration, "duration", 0, "measure for this long instead of --requests (e.g. 10s)")
	f.StringVar(&o.WarmupSpec, "warmup", "", "unmeasured warmup first: a duration (5s) or a number of requests")
	f.Float64Var(&c.Rate, "rate", 0, "open loop at this many requests per second in total; 0: closed loop")
	addLoadFlags(f, &c.Load)
	f.Float64Var(&c.KeyMedian, "key-median", 0, "center of the gaussian key pattern, a key index (default the middle of the keyspace)")
	f.Float64Var(&c.KeyStddev, "key-stddev", 0, "standard deviation of the gaussian key pattern, in keys (default a sixth of the keyspace)")
	f.StringVarP(&o.ValueSizeSpec, "value-size", "d", o.ValueSizeSpec, "value length in bytes (0: empty values), or with a command mix a uniform range MIN-MAX (32-1024)")
	f.StringVar(&o.DataSizeList, "data-size-list", "", "with a command mix, value sizes by weight, memtier_benchmark style: SIZE:WEIGHT,... (32:60,1024:30,16384:10)")
	f.StringVar(&c.SetCmd, "set-cmd", c.SetCmd, "write command: CMD key value (SET, RSET, HSET...)")
	f.StringVar(&c.GetCmd, "get-cmd", c.GetCmd, "read command: CMD key (GET, RGET, HGET...)")
	f.StringVar(&c.KeyPrefix, "key-prefix", c.KeyPrefix, "prefix of every key")
	f.StringVar((*string)(&c.KeyPattern), "key-pattern", "", "key order: random, sequential, permutation, zipf or gaussian; in a command mix also latest or insert (default permutation for set, random otherwise)")
	f.Float64Var(&c.Zipf, "zipf", 0, fmt.Sprintf("Zipf exponent for skewed keys; selects --key-pattern zipf (the zipf pattern defaults to %g)", keyspace.DefaultZipf))
	f.Int64Var(&c.Seed, "seed", 0, "random seed for keys and values (default: the current time, printed)")
	f.BoolVar(&c.VerifyGet, "verify-get", false, "check every read reply byte for byte against the value the seed writes")
	f.BoolVar(&o.Verify, "verify", false, "check every reply whose value is known: --verify-get, and in a command mix the GETs of keys it or the prefill writes, and with one connection the counters (INCR, LPUSH lengths)")
	f.BoolVar(&c.AllowMisses, "allow-misses", false, "with --verify-get, count misses and wrong values without failing the run")
	f.BoolVar(&c.ContinueOnError, "continue-on-error", false, "count error replies and go on instead of failing at the first")
	f.DurationVar(&c.ConnectTimeout, "connect-timeout", c.ConnectTimeout, "time allowed to connect (and AUTH), per connection")
	f.DurationVar(&c.Interval, "interval", c.Interval, "record the measured phase per interval of this length, aligned on the clock (JSON series; 0: not at all)")
	f.BoolVarP(&c.RESP3, "resp3", "3", false, "speak RESP3: every connection (the load's, the prefill's, the checks' and a cluster's) starts with HELLO 3 and every reply is read as RESP3 (a missing key's is _)")
	f.BoolVar(&c.RandomData, "random-data", false, "write random bytes that do not compress, still a function of (seed, key) so --verify-get checks them, instead of printable values")
	f.StringVar(&o.CPUs, "cpus", "", "bind the load generator's threads to these CPUs (a list as taskset -c takes: 1, 0-1, 0,2; the same flag as run's and serve's); threads default to one per CPU of the list (default: unpinned)")
	f.StringVar(&o.ExpiryRange, "expiry-range", "", "give each SET EX n, n seconds drawn uniformly per key from MIN-MAX (e.g. 60-600); needs the write command SET")
	f.IntVar(&c.MultiKeyGet, "multi-key-get", 0, "send each read as one MGET of this many keys, counted as one request (with --verify-get every value checked); needs the read command GET")
	f.BoolVar(&c.Reconnect, "reconnect", false, "redial a connection the server closed or reset mid-run (a restart), counting its requests in flight as errors (kind reconnect), instead of failing the run")
	f.IntVar(&c.ReconnectAttempts, "reconnect-attempts", c.ReconnectAttempts, "with --reconnect, redials of a lost connection before the run fails")
	f.DurationVar(&c.ReconnectBackoff, "reconnect-backoff", c.ReconnectBackoff,
		fmt.Sprintf("with --reconnect, the wait after a failed redial, doubling after each next one up to %v", loadgen.MaxReconnectBackoff))
	addWorkloadFlags(f, o)
	f.StringVar(&o.ReplayFile, "replay", "", "send the commands of FILE, a redis-cli MONITOR capture or one inline command per line, each captured client's in order on one connection (e.g. --replay monitor.txt)")
	f.Float64Var(&c.ReplaySpeed, "replay-speed", 0, "with --replay of a MONITOR capture, send at its captured pace times this (1: as captured, 2: twice as fast); 0: as fast as possible")
	f.IntVar(&o.ReplayLoops, "replay-loops", o.ReplayLoops, "with --replay, send the file this many times")
	addWaitFlags(f, &o.wait, "the write acknowledged by that many replicas (--mode becomes its command mix)")

	f.StringVar(&o.SegmentSpec, "segment", "", "run agent I's share of the load, of N agents: I/N (I from 0), or auto/N to take I from $"+JobIndexEnv)
	f.StringVar(&o.StartAtSpec, "start-at", "", "start the run (after connecting) at this RFC 3339 time, e.g. 2026-01-02T15:04:05Z")
	f.StringVar(&o.LoadJSON, "load-json", "", "the load as JSON, the settings of a result (\"kvbench run --agents\" and \"kvbench k8s job\" pass it to their agents): the document itself, a file, or - for standard input; with it give only --"+strings.Join(bench.AgentFlags[1:], ", --"))
	f.BoolVar(&o.Prefill, "prefill", false, "first write every key of the keyspace once (with --segment, this agent's share)")

	f.StringVar(&o.Rates, "rates", "", "measure a latency-throughput curve: an open-loop phase at each rate of this list, requests per second (20000,50000) or percentages of the closed-loop peak, measured first (25%,50%,75%,90%)")
	f.StringVar(&o.SLO, "slo", "", "find the capacity at this latency objective, the highest rate at which it holds: STAT<DURATION joined by commas, STAT p50, p90, p99, p999 or max (p99<1ms)")
	f.StringVar(&o.SLOPrecision, "slo-precision", o.SLOPrecision, "the capacity search stops when its bracket is this narrow, relative to its top")
	f.IntVar(&o.SLOMaxSteps, "slo-max-steps", 0, fmt.Sprintf("the capacity search measures at most this many open-loop phases, a step measured again (not held) counting twice (0: %d)", curve.DefaultMaxSteps))
	f.IntVar(&o.ConnectionsStart, "connections-start", 0, "run a connection ramp: a closed-loop step (open loop with --rate) at this many connections, then at more by --connections-step, up to --connections (default --connections-step), e.g. --connections-start 10 --connections-step 10 --connections 100 --step-duration 10s; each step dials its connections anew and settles for --warmup (default "+bench.DefaultRampSettle.String()+") unmeasured first")
	f.IntVar(&o.ConnectionsStep, "connections-step", 0, "connections added at each step of a connection ramp")
	f.DurationVar(&o.StepDuration, "step-duration", o.StepDuration, "how long each step of a connection ramp is measured, after its settle")

	f.StringVar(&o.Output, "output", o.Output, "report format: text, json or csv (one row per command or test: "+strings.Join(output.CSVHeader, ",")+"; latencies in µs)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only one line per command or test: its QPS and p50, as redis-benchmark -q")
	f.StringVar(&o.Percentiles, "percentiles", "", `latency percentiles to report, e.g. 50,99,99.9,99.99: the text's columns, the CSV's columns after its own (p99.99_us), and in JSON "percentiles_us" ({"p99.99": ...}) for the run and each command`)
	f.StringVar(&o.HDRPrefix, "hdr-file-prefix", "", "write each histogram as PATH_<command>.hgrm (HdrHistogram's percentile distribution, µs) and PATH_<command>.hlog (its interval log, compressed and base64-encoded); the whole run is PATH_"+output.HDRWhole+", and --mode mixed writes its write and read commands' too")
	f.Var((*pidValue)(&o.ProfilePID), "profile-pid", "record the CPU profile of the server process PID on this host with perf during the load, and draw it as a flame graph kvbench_flame_bench_TIME.svg (e.g. --profile-pid $(pidof redis-server))")
	f.StringVar(&o.ProfileOut, "profile-out", "", "directory of the --profile-pid flame graph (default: the current directory)")
	addMetricsFlag(f, &o.MetricsAddr, "kvbench_requests_total, kvbench_errors_total, kvbench_request_duration_seconds; target=the server's HOST:PORT, strategy empty")
}

// givenFlags are the names of the flags given in f.
func givenFlags(f *pflag.FlagSet) map[string]bool {
	given := make(map[string]bool)
	f.Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	return given
}

// runBench runs bench.Run. An interrupt ends it with ExitInterrupted.
func runBench(ctx context.Context, o *benchOptions) error {
	res, err := bench.Run(ctx, o.Options, o.Out)
	what := "the load stopped before its end; the report above counts what was done until then"
	if !res.Measured {
		what = "stopped during the prefill, before the measurement"
	}
	return interrupted(ctx, err, what)
}
