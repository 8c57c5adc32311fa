package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// benchOptions are the flags of "kvbench bench".
type benchOptions struct {
	host     string
	port     int
	mode     string
	pattern  string
	setRatio int
	warmup   string
	output   string
	cfg      loadgen.Config
}

func newBenchCmd() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the load generator once against a Redis-protocol server",
		Long: `bench drives one RESP server with pipelined writes and reads and prints
QPS, average time per request, elapsed time and latency percentiles.

Latency runs from the write of a request's batch to the read that brought its
reply (with --rate, from the request's intended send time). Keys are
<prefix><index zero-padded to the keyspace's width>; the value of a key is a
function of (seed, key, value size), so --verify-get checks every byte.

Exit status: 0 on success, 1 when the run fails (connection, error reply,
verification), 2 for a usage error.`,
		Example: `  kvbench bench --mode set --pipeline 128 --keyspace 1000000 --requests 3000000
  kvbench bench --port 8888 --mode get --set-cmd RSET --get-cmd RGET --verify-get
  kvbench bench --mode mixed --connections 50 --pipeline 1 --duration 10s --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return &usageError{err}
			}
			out := loadgen.Output{Format: o.output}
			if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				out.Live = f
			}
			_, err := loadgen.Bench(cmd.Context(), o.cfg, cmd.OutOrStdout(), out)
			return err
		},
	}
	f := cmd.Flags()
	c := &o.cfg
	f.StringVar(&o.host, "host", loadgen.DefaultHost, "server host")
	f.IntVar(&o.port, "port", loadgen.DefaultPort, "server port")
	f.StringVar(&c.Password, "password", "", "password sent with AUTH on each connection")
	f.StringVar(&o.mode, "mode", string(loadgen.DefaultMode), "request mix: set, get or mixed")
	f.Int64Var(&c.Requests, "requests", loadgen.DefaultRequests, "total measured requests over all connections (not per second)")
	f.DurationVar(&c.Duration, "duration", 0, "measure for this long instead of --requests (e.g. 10s)")
	f.StringVar(&o.warmup, "warmup", "", "unmeasured warmup first: a duration (5s) or a number of requests")
	f.Float64Var(&c.Rate, "rate", 0, "open loop at this many requests per second in total; 0: closed loop")
	f.IntVar(&c.Pipeline, "pipeline", loadgen.DefaultPipeline, "requests per batch (closed loop), most in flight per connection (open loop)")
	f.IntVar(&c.Connections, "connections", loadgen.DefaultConnections, "number of connections")
	f.IntVar(&c.Threads, "threads", loadgen.DefaultThreads(), "worker threads (at most one per connection)")
	f.Int64Var(&c.Keyspace, "keyspace", loadgen.DefaultKeyspace, "number of distinct keys")
	f.IntVar(&c.ValueSize, "value-size", loadgen.DefaultValueSize, "value length in bytes")
	f.IntVar(&o.setRatio, "set-ratio", loadgen.DefaultSetRatio, "percentage of writes in mixed mode (0-100)")
	f.StringVar(&c.SetCmd, "set-cmd", loadgen.DefaultSetCmd, "write command: CMD key value (SET, RSET, HSET...)")
	f.StringVar(&c.GetCmd, "get-cmd", loadgen.DefaultGetCmd, "read command: CMD key (GET, RGET, HGET...)")
	f.StringVar(&c.KeyPrefix, "key-prefix", loadgen.DefaultKeyPrefix, "prefix of every key")
	f.StringVar(&o.pattern, "key-pattern", "", "key order: random, sequential, permutation or zipf (default permutation for set, random otherwise)")
	f.Float64Var(&c.Zipf, "zipf", 0, fmt.Sprintf("Zipf exponent for skewed keys; selects --key-pattern zipf (the zipf pattern defaults to %g)", loadgen.DefaultZipf))
	f.Int64Var(&c.Seed, "seed", 0, "random seed for keys and values (default: the current time, printed)")
	f.BoolVar(&c.VerifyGet, "verify-get", false, "check every read reply byte for byte against the value the seed writes")
	f.BoolVar(&c.AllowMisses, "allow-misses", false, "with --verify-get, count misses and wrong values without failing the run")
	f.BoolVar(&c.ContinueOnError, "continue-on-error", false, "count error replies and go on instead of failing at the first")
	f.DurationVar(&c.ConnectTimeout, "connect-timeout", loadgen.DefaultConnectTimeout, "time allowed to connect (and AUTH), per connection")
	f.DurationVar(&c.Timeout, "timeout", loadgen.DefaultTimeout, "fail when a connection waits this long for a reply")
	f.StringVar(&o.output, "output", loadgen.FormatText, "report format: text or json")
	return cmd
}

// complete turns the flags into o.cfg.
func (o *benchOptions) complete(cmd *cobra.Command) error {
	f := cmd.Flags()
	c := &o.cfg
	c.Addr = net.JoinHostPort(o.host, strconv.Itoa(o.port))
	c.Mode = loadgen.Mode(o.mode)
	c.KeyPattern = loadgen.KeyPattern(o.pattern)
	c.SetRatio = o.setRatio
	if o.setRatio == 0 {
		c.SetRatio = loadgen.SetRatioZero
	}
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
	if o.output != loadgen.FormatText && o.output != loadgen.FormatJSON {
		return fmt.Errorf("--output %q: want text or json", o.output)
	}
	_, err := c.Normalize()
	return err
}
