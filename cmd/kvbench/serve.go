package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	kvstore "github.com/kvbench/kvbench/embedded-server"
	"github.com/kvbench/kvbench/pkg/resp"
)

type serveOptions struct {
	bind        string
	port        int
	requirePass string
	maxClients  int
	limits      resp.Limits
	logLevel    string
	cpuProfile  string
	alloc       string
}

func newServeCmd() *cobra.Command {
	opts := serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded kvstore server",
		Long: `Run the kvstore that kvbench measures: a RESP2 server with the kvstore's
own command families (HSET key value / HGET key ... on the hash engine,
RSET / RGET / RDEL / RMOD / REXIST on the ordered engine) and a
Redis-compatible subset (SET, GET, INCR, MSET, Redis hashes, INFO,
CONFIG GET, ...), so redis-cli and redis-benchmark work against it.

It stops cleanly on SIGINT, SIGTERM or SHUTDOWN and exits 0.`,
		Example: `  # the seeds' port
  kvbench serve --port 8888

  # any free port (printed in the ready line), with a password
  kvbench serve --port 0 --requirepass secret

  # then, from another shell
  redis-cli -p 8888 RSET user:1 alice
  redis-benchmark -p 8888 -t set,get -P 16 -q`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), opts, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.bind, "bind", "127.0.0.1", "address to listen on")
	f.IntVar(&opts.port, "port", 8888, "TCP port (0 picks a free one)")
	f.StringVar(&opts.requirePass, "requirepass", "", "password clients must AUTH with")
	f.IntVar(&opts.maxClients, "maxclients", kvstore.DefaultMaxClients, "most clients connected at once")
	f.Int64Var(&opts.limits.MaxBulkLen, "proto-max-bulk-len", resp.DefaultMaxBulkLen, "largest bulk string argument, in bytes")
	f.IntVar(&opts.limits.MaxInlineLen, "max-inline-len", resp.DefaultMaxInlineLen, "longest inline request, in bytes")
	f.IntVar(&opts.limits.MaxArgs, "max-args", resp.DefaultMaxArgs, "most arguments in one request")
	f.Int64Var(&opts.limits.MaxQueryBuffer, "client-query-buffer-limit", resp.DefaultMaxQueryBuffer, "most bytes one pending request may occupy")
	f.StringVar(&opts.alloc, "alloc", kvstore.AllocPool, "allocator: pool (records packed outside the Go heap, the C kvstore's mypool) or go (one Go allocation per key and value, malloc)")
	f.StringVar(&opts.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) to this file until the server stops")
	return cmd
}

func runServe(ctx context.Context, opts serveOptions, logOut interface {
	Write([]byte) (int, error)
}) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		return &usageError{fmt.Errorf("--log-level: %w", err)}
	}
	if opts.port < 0 || opts.port > 65535 {
		return &usageError{fmt.Errorf("--port %d: want 0 to 65535", opts.port)}
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
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
		Addr:        net.JoinHostPort(opts.bind, strconv.Itoa(opts.port)),
		RequirePass: opts.requirePass,
		MaxClients:  opts.maxClients,
		Limits:      opts.limits,
		Logger:      logger,
		Alloc:       opts.alloc,
		Version:     buildVersion(),
	})
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		logger.Info("signal received, shutting down")
	case <-srv.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
