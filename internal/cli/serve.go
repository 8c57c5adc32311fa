package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/pkg/machine"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/target"
)

// serveOptions is what "kvbench serve" was asked to do.
type serveOptions struct {
	// cpus binds the server's threads (--cpus), "" unpinned.
	cpus        string
	bind        string
	port        int
	requirePass string
	protected   string
	timeout     int
	maxMemory   string
	maxPolicy   string
	maxBytes    int64
	maxClients  int
	limits      resp.Limits
	outputLimit int64
	logLevel    string
	cpuProfile  string
	alloc       string
	loops       int
	io          string
	persist     string
	dir         string
	rewritePct  int
	rewriteMin  int64
	repair      bool
	yes         bool
	level       slog.Level
	// clusterConfig and clusterID make the server a node of a Redis
	// Cluster; cluster is the parsed file.
	clusterConfig string
	clusterID     string
	cluster       *kvstore.ClusterConfig
	portSet       bool
	metricsAddr   string
	streams
}

// newServeCmd is "kvbench serve": flags into serveOptions, then runF
// (runServe when nil).
func newServeCmd(runF func(context.Context, *serveOptions) error) *cobra.Command {
	if runF == nil {
		runF = runServe
	}
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded kvstore server",
		Long: `Run the kvstore that kvbench measures: a RESP2 server with the kvstore's
own command families (HSET key value / HGET key ... on the hash engine,
RSET / RGET / RDEL / RMOD / REXIST on the ordered engine) and a
Redis-compatible subset (SET, GET, INCR, MSET, Redis hashes, INFO,
CONFIG GET, ...), so redis-cli and redis-benchmark work against it.

With --persist other than none it keeps an append-only operation log in
--dir (Redis's multi-part AOF: base, incremental files, manifest), replays
it at start and acknowledges a write only once its record has reached the
kernel (no, everysec) or the disk (always).

With --cluster-config and --cluster-id it is one master of a Redis
Cluster whose nodes and slot ranges the file lists (see docs/serve.md):
it answers CLUSTER SLOTS, SHARDS, NODES and INFO and redirects keys of
other nodes with -MOVED. The layout is fixed: no gossip, no failover.

It serves with io_uring where the kernel offers it (--io auto): four
system calls per round of its event loop for all the connections'
receives and sends; --io epoll serves as Redis does, a read and a write
per request.
The log and INFO say which.

It stops cleanly on SIGINT, SIGTERM or SHUTDOWN and exits 0.`,
		Example: `  # the port of the reference script run_bench.hash.sh
  kvbench serve --port 8888

  # any free port (printed in the ready line), with a password
  kvbench serve --port 0 --requirepass secret

  # with an operation log, fsynced every second
  kvbench serve --persist everysec --dir /var/lib/kvstore

  # a log damaged in the middle refuses to start; cut it at the damage
  kvbench serve --repair --dir /var/lib/kvstore

  # the epoll event loop, whatever the kernel offers
  kvbench serve --io epoll

  # node-a of the cluster that cluster.yaml describes
  kvbench serve --cluster-config cluster.yaml --cluster-id node-a

  # the server's counters as Prometheus metrics at http://127.0.0.1:9101/metrics
  kvbench serve --persist everysec --metrics-addr 127.0.0.1:9101

  # then, from another shell
  redis-cli -p 8888 RSET user:1 alice
  redis-benchmark -p 8888 -t set,get -P 16 -q`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.portSet = cmd.Flags().Changed("port")
			if err := opts.validate(); err != nil {
				return &usageError{err}
			}
			opts.streams = streamsOf(cmd)
			return runF(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.bind, "bind", "127.0.0.1", "address to listen on")
	f.IntVar(&opts.port, "port", 8888, "TCP port (0 picks a free one)")
	f.StringVar(&opts.requirePass, "requirepass", "", "password clients must AUTH with")
	f.StringVar(&opts.protected, "protected-mode", "yes", "yes: without --requirepass, refuse clients of addresses other than 127.0.0.1 and ::1 (Redis's protected mode); no: serve everyone")
	f.IntVar(&opts.timeout, "timeout", 0, "close a client idle for this many seconds (0: never)")
	f.StringVar(&opts.maxMemory, "maxmemory", "0", "most memory the data may take, in bytes or with k/kb/m/mb/g/gb (Redis's units): past it writes are refused with -OOM and reads go on; 0: what the machine has, less a reserve")
	f.StringVar(&opts.maxPolicy, "maxmemory-policy", kvstore.PolicyNoEviction, "what happens past --maxmemory: noeviction (writes refused), the only policy")
	f.IntVar(&opts.maxClients, "maxclients", kvstore.DefaultMaxClients, "most clients connected at once")
	f.Int64Var(&opts.limits.MaxBulkLen, "proto-max-bulk-len", resp.DefaultMaxBulkLen, "largest bulk string argument, in bytes")
	f.IntVar(&opts.limits.MaxInlineLen, "max-inline-len", resp.DefaultMaxInlineLen, "longest inline request, in bytes")
	f.IntVar(&opts.limits.MaxArgs, "max-args", resp.DefaultMaxArgs, "most arguments in one request")
	f.Int64Var(&opts.limits.MaxQueryBuffer, "client-query-buffer-limit", resp.DefaultMaxQueryBuffer, "most bytes one pending request may occupy")
	f.Int64Var(&opts.outputLimit, "client-output-buffer-limit", kvstore.DefaultOutputBufferLimit, "most bytes of replies held for one client; a client over it is disconnected")
	f.StringVar(&opts.alloc, "alloc", target.AllocMypool, "allocator: mypool (records packed outside the Go heap) or malloc (one Go allocation per key and value); pool and go are the same")
	f.IntVar(&opts.loops, "loops", kvstore.DefaultLoops(), "event loops serving the connections")
	machineDefault(f, "loops", "half the CPUs, at least 1")
	f.StringVar(&opts.io, "io", kvstore.IOAuto, "event loop: uring (io_uring: a few system calls per round for all the connections), epoll (a read and a write per request), or auto (uring when the kernel offers it, else epoll)")
	f.StringVar(&opts.persist, "persist", kvstore.PersistNone, "operation log: none, no (write before replying), everysec (and fsync each second) or always (fsync before replying)")
	f.StringVar(&opts.dir, "dir", ".", "data directory for the operation log (created if missing)")
	f.IntVar(&opts.rewritePct, "auto-aof-rewrite-percentage", kvstore.DefaultAutoRewritePercentage, "compact the log when it has grown this much past its base (negative: never)")
	f.Int64Var(&opts.rewriteMin, "auto-aof-rewrite-min-size", kvstore.DefaultAutoRewriteMinSize, "... and is at least this many bytes")
	f.BoolVar(&opts.repair, "repair", false, "check the log in --dir and cut it at the first damaged record, after confirming; then exit")
	f.BoolVarP(&opts.yes, "yes", "y", false, "with --repair: do not ask for confirmation")
	f.StringVar(&opts.clusterConfig, "cluster-config", "", "serve as a Redis Cluster node: the YAML file listing every node's id, host, port and slots")
	f.StringVar(&opts.clusterID, "cluster-id", "", "with --cluster-config: the id of this node in the file")
	f.StringVar(&opts.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&opts.cpus, "cpus", "", "bind the server's threads to these CPUs (a list as taskset -c takes: 0, 0-1, 0,2; the same flag as run's and bench's), its Go scheduler sized to them (default: unpinned)")
	f.StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) to this file until the server stops")
	addMetricsFlag(f, &opts.metricsAddr, "the kvstore's kvstore_* counters, memory, keys and log fsyncs, read when scraped")
	return cmd
}

// serveAllocs maps every name --alloc accepts to the server's allocator.
var serveAllocs = map[string]string{
	target.AllocMypool: kvstore.AllocPool, kvstore.AllocPool: kvstore.AllocPool,
	target.AllocMalloc: kvstore.AllocGo, kvstore.AllocGo: kvstore.AllocGo,
}

// validate checks every flag and puts alloc in the server's words.
func (o *serveOptions) validate() error {
	if err := o.level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if o.protected != "yes" && o.protected != "no" {
		return fmt.Errorf("--protected-mode %q: want yes or no", o.protected)
	}
	var err error
	if o.maxBytes, err = kvstore.ParseMemory(o.maxMemory); err != nil {
		return fmt.Errorf("--maxmemory: %w", err)
	}
	if o.maxPolicy != kvstore.PolicyNoEviction {
		return fmt.Errorf("--maxmemory-policy %q: want %s (writes past --maxmemory are refused; no eviction policy is implemented)", o.maxPolicy, kvstore.PolicyNoEviction)
	}
	if o.timeout < 0 {
		return fmt.Errorf("--timeout %d: want 0 (never) or a number of seconds", o.timeout)
	}
	if o.port < 0 || o.port > 65535 {
		return fmt.Errorf("--port %d: want 0 to 65535", o.port)
	}
	alloc, ok := serveAllocs[strings.ToLower(o.alloc)]
	if !ok {
		return fmt.Errorf("--alloc %q: want mypool or malloc (or their other names, pool and go)", o.alloc)
	}
	o.alloc = alloc
	switch o.persist {
	case kvstore.PersistNone, kvstore.PersistNo, kvstore.PersistEverysec, kvstore.PersistAlways:
	default:
		return fmt.Errorf("--persist %q: want none, no, everysec or always", o.persist)
	}
	switch o.io {
	case kvstore.IOAuto, kvstore.IOEpoll, kvstore.IOUring:
	default:
		return fmt.Errorf("--io %q: want auto, epoll or uring", o.io)
	}
	if err := checkMetricsAddr(o.metricsAddr); err != nil {
		return err
	}
	return o.validateCluster()
}

// validateCluster reads --cluster-config and checks that --cluster-id
// names one of its nodes, whose port is the one served.
func (o *serveOptions) validateCluster() error {
	switch {
	case o.clusterConfig == "" && o.clusterID == "":
		return nil
	case o.clusterConfig == "":
		return errors.New("--cluster-id needs --cluster-config")
	case o.clusterID == "":
		return errors.New("--cluster-config needs --cluster-id, the id of this node in the file")
	}
	f, err := os.Open(o.clusterConfig)
	if err != nil {
		return fmt.Errorf("--cluster-config: %w", err)
	}
	defer f.Close()
	cfg, err := kvstore.ParseClusterConfig(f, o.clusterConfig)
	if err != nil {
		return fmt.Errorf("--cluster-config: %w", err)
	}
	node := cfg.Node(o.clusterID)
	if node == nil {
		ids := make([]string, len(cfg.Nodes))
		for i, n := range cfg.Nodes {
			ids[i] = n.ID
		}
		return fmt.Errorf("--cluster-id %q: no such node in %s (its nodes: %s)", o.clusterID, o.clusterConfig, strings.Join(ids, ", "))
	}
	switch {
	case !o.portSet:
		o.port = node.Port
	case o.port != node.Port:
		return fmt.Errorf("--port %d: node %q listens on port %d in %s", o.port, node.ID, node.Port, o.clusterConfig)
	}
	o.cluster = cfg
	return nil
}

// runServe serves until the context ends or a client sends SHUTDOWN; with
// --repair it repairs the log instead.
func runServe(ctx context.Context, opts *serveOptions) (err error) {
	if opts.repair {
		return runRepair(opts)
	}
	logger := slog.New(slog.NewTextHandler(opts.ErrOut, &slog.HandlerOptions{Level: opts.level}))
	if opts.cpus != "" && opts.cpus != machine.Unpinned {
		set, err := machine.ParseCPUSet(opts.cpus)
		if err != nil {
			return &usageError{fmt.Errorf("--cpus: %w", err)}
		}
		if err := machine.PinSelf(set); err != nil {
			return fmt.Errorf("--cpus: %w", err)
		}
		runtime.GOMAXPROCS(len(set))
	}
	if opts.cpuProfile != "" {
		f, err := os.Create(opts.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := kvstore.Start(kvstore.Config{
		Addr:              net.JoinHostPort(opts.bind, strconv.Itoa(opts.port)),
		RequirePass:       opts.requirePass,
		ProtectedModeOff:  opts.protected == "no",
		Timeout:           time.Duration(opts.timeout) * time.Second,
		MaxMemory:         opts.maxBytes,
		MaxMemoryPolicy:   opts.maxPolicy,
		MaxClients:        opts.maxClients,
		Limits:            opts.limits,
		Logger:            logger,
		OutputBufferLimit: opts.outputLimit,
		Alloc:             opts.alloc,
		Loops:             opts.loops,
		IO:                opts.io,
		Version:           buildVersion(),
		Persist:           opts.persist,
		Dir:               opts.dir,
		Cluster:           opts.cluster,
		ClusterID:         opts.clusterID,

		AutoRewritePercentage: opts.rewritePct,
		AutoRewriteMinSize:    opts.rewriteMin,
	})
	var le *kvstore.LogError
	switch {
	case errors.As(err, &le) && le.NoRepair:
		return err
	case errors.As(err, &le) && le.Fix != "":
		return fmt.Errorf("%w\nto %s, run:\n  kvbench serve --repair --dir %s", err, le.Fix, opts.dir)
	case errors.As(err, &le):
		return fmt.Errorf("%w\nthe operation log is damaged there and nothing after it can be trusted; to cut the log where its valid records end (losing what follows), run:\n  kvbench serve --repair --dir %s", err, opts.dir)
	}
	if err != nil {
		return err
	}
	if opts.metricsAddr != "" {
		url, stop, err := startMetrics(ctx, opts.metricsAddr, srv.Collector())
		if err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return errors.Join(err, srv.Shutdown(sctx))
		}
		logger.Info("serving metrics", "url", url)
		defer func() { err = errors.Join(err, stop()) }()
	}
	select {
	case <-ctx.Done():
		logger.Info("signal received, shutting down")
	case <-srv.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// runRepair checks the log in opts.dir and cuts it at the first damaged
// record once the user confirms.
func runRepair(opts *serveOptions) error {
	br := bufio.NewReader(opts.In)
	errOut := opts.ErrOut
	confirm := func(q string) bool {
		fmt.Fprintln(errOut, q)
		if opts.yes {
			fmt.Fprintln(errOut, "(--yes given)")
			return true
		}
		fmt.Fprint(errOut, "Type yes to proceed: ")
		line, _ := br.ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "yes")
	}
	return kvstore.Repair(opts.dir, opts.limits, confirm, opts.Out)
}
