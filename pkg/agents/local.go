package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Local agents' timing.
const (
	// LocalLead is the time RunLocal gives its agents, from starting their
	// processes to the common start, plus LocalLeadPerAgent for each.
	LocalLead         = 500 * time.Millisecond
	LocalLeadPerAgent = 100 * time.Millisecond
	// localGrace is how long an agent gets to exit after SIGTERM.
	localGrace = 2 * time.Second
)

// BenchArgs returns the "kvbench bench" arguments that run cfg (its
// address as --host and --port or --socket, its --user and --db; without
// its password, Progress, segment and start: RunLocal adds those). It is
// the inverse of bench's flag parsing for every Config field a flag sets.
// A cfg.TLS goes as the files it was read from, tlsFiles: --tls, --cacert,
// --cert, --key, --sni and --insecure.
func BenchArgs(cfg loadgen.Config, tlsFiles tlsconf.Options) ([]string, error) {
	if cfg.TLS != nil && !tlsFiles.Enabled {
		return nil, errors.New("the TLS settings cannot be passed to agents: no files they were read from")
	}
	var a []string
	if path, socket := control.SocketPath(cfg.Addr); socket {
		a = []string{"bench", "--socket", path}
	} else {
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", cfg.Addr, err)
		}
		a = []string{"bench", "--host", host, "--port", port}
	}
	add := func(name string, v any) { a = append(a, "--"+name, fmt.Sprint(v)) }
	if cfg.User != "" {
		add("user", cfg.User)
	}
	if cfg.DB > 0 {
		add("db", cfg.DB)
	}
	if len(cfg.Commands) == 0 {
		add("mode", cfg.Mode)
	} else if err := addCommands(add, cfg.Commands); err != nil {
		return nil, err
	}
	if cfg.Duration > 0 {
		add("duration", cfg.Duration)
	} else {
		add("requests", cfg.Requests)
	}
	if cfg.WarmupRequests > 0 {
		add("warmup", cfg.WarmupRequests)
	} else if cfg.Warmup > 0 {
		add("warmup", cfg.Warmup)
	}
	add("rate", strconv.FormatFloat(cfg.Rate, 'g', -1, 64))
	add("pipeline", cfg.Pipeline)
	add("connections", cfg.Connections)
	add("threads", cfg.Threads)
	add("keyspace", cfg.Keyspace)
	if len(cfg.ValueSizes) > 0 {
		add("data-size-list", keyspace.FormatValueSizes(cfg.ValueSizes))
	} else {
		add("value-size", cfg.ValueSize)
	}
	if cfg.KeyMedian > 0 {
		add("key-median", strconv.FormatFloat(cfg.KeyMedian, 'g', -1, 64))
	}
	if cfg.KeyStddev > 0 {
		add("key-stddev", strconv.FormatFloat(cfg.KeyStddev, 'g', -1, 64))
	}
	add("set-ratio", cfg.SetRatio)
	add("set-cmd", cfg.SetCmd)
	add("get-cmd", cfg.GetCmd)
	add("key-prefix", cfg.KeyPrefix)
	if cfg.KeyPattern != "" {
		add("key-pattern", cfg.KeyPattern)
	}
	if cfg.Zipf > 0 {
		add("zipf", strconv.FormatFloat(cfg.Zipf, 'g', -1, 64))
	}
	add("seed", cfg.Seed)
	add("connect-timeout", cfg.ConnectTimeout)
	add("timeout", cfg.Timeout)
	add("interval", cfg.Interval)
	add("stall-below", strconv.FormatFloat(cfg.StallBelow, 'g', -1, 64))
	add("stall-latency", cfg.StallLatency)
	for name, on := range map[string]bool{"verify-get": cfg.VerifyGet, "allow-misses": cfg.AllowMisses, "continue-on-error": cfg.ContinueOnError, "cluster": cfg.Cluster,
		"random-data": cfg.RandomData, "reconnect": cfg.Reconnect, "resp3": cfg.RESP3} {
		if on {
			a = append(a, "--"+name)
		}
	}
	if cfg.Reconnect {
		add("reconnect-attempts", cfg.ReconnectAttempts)
		add("reconnect-backoff", cfg.ReconnectBackoff)
	}
	if cfg.ExpiryMax > 0 {
		add("expiry-range", fmt.Sprintf("%d-%d", cfg.ExpiryMin, cfg.ExpiryMax))
	}
	if cfg.MultiKeyGet > 0 {
		add("multi-key-get", cfg.MultiKeyGet)
	}
	if cfg.ReadFromReplicas {
		a = append(a, "--read-from-replicas")
	}
	if len(cfg.Replicas) > 0 {
		add("replicas", strings.Join(cfg.Replicas, ","))
	}
	if cfg.TLS != nil {
		a = append(a, "--tls")
		for name, v := range map[string]string{"cacert": tlsFiles.CAFile, "cert": tlsFiles.CertFile, "key": tlsFiles.KeyFile, "sni": tlsFiles.ServerName} {
			if v != "" {
				add(name, v)
			}
		}
		if tlsFiles.Insecure {
			a = append(a, "--insecure")
		}
	}
	return a, nil
}

// addCommands adds a command mix as bench's --command flags, each followed
// by its --command-name, --command-ratio, --command-key-pattern and
// --command-then. A mix with an inline command has no flags.
func addCommands(add func(string, any), cmds []mix.Command) error {
	for _, c := range cmds {
		if c.Inline {
			return fmt.Errorf("command %s: inline commands cannot be passed to agents", c)
		}
		add("command", resp.QuoteInline(c.Args))
		if c.Name != "" {
			add("command-name", c.Name)
		}
		if c.Ratio > 0 {
			add("command-ratio", c.Ratio)
		}
		if c.KeyPattern != "" {
			add("command-key-pattern", c.KeyPattern)
		}
		if len(c.Then) > 0 {
			add("command-then", resp.QuoteInline(c.Then))
		}
	}
	return nil
}

// Local is the outcome of RunLocal.
type Local struct {
	Merged
	// CPU is the agents' processes' CPU time (user + system), summed.
	CPU time.Duration
}

// RunLocal runs cfg as n agent processes of the kvbench binary bin
// ("kvbench bench --segment i/n --start-at T --output json"), on this
// host, started together at T = now + LocalLead + n·LocalLeadPerAgent,
// and merges their results. Over TLS, the agents read tlsFiles (see
// BenchArgs). The password goes to them in their
// environment (KVBENCH_PASSWORD), not on their command line. Each runs
// in its own process group and is stopped (SIGTERM, then SIGKILL) when
// ctx ends. The error names the agents that failed, with their stderr.
func RunLocal(ctx context.Context, bin string, cfg loadgen.Config, tlsFiles tlsconf.Options, n int) (Local, error) {
	cfg, err := cfg.Normalize()
	if err != nil {
		return Local{}, fmt.Errorf("invalid configuration: %w", err)
	}
	args, err := BenchArgs(cfg, tlsFiles)
	if err != nil {
		return Local{}, err
	}
	start := time.Now().Add(LocalLead + time.Duration(n)*LocalLeadPerAgent)
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
	}
	procs := make([]*proc, n)
	for i := range procs {
		p := &proc{}
		a := append(append([]string{}, args...), "--segment", fmt.Sprintf("%d/%d", i, n),
			"--start-at", start.UTC().Format(time.RFC3339Nano), "--output", "json")
		p.cmd = exec.CommandContext(ctx, bin, a...)
		p.cmd.Env = append(os.Environ(), "KVBENCH_PASSWORD="+cfg.Password)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM) }
		p.cmd.WaitDelay = localGrace
		if err := p.cmd.Start(); err != nil {
			for _, q := range procs[:i] {
				_ = syscall.Kill(-q.cmd.Process.Pid, syscall.SIGKILL)
				_ = q.cmd.Wait()
			}
			return Local{}, fmt.Errorf("start agent %d/%d: %w", i, n, err)
		}
		procs[i] = p
	}
	var l Local
	var all []Agent
	var errs []error
	for i, p := range procs {
		werr := p.cmd.Wait()
		if st := p.cmd.ProcessState; st != nil {
			l.CPU += st.UserTime() + st.SystemTime()
		}
		if werr != nil {
			errs = append(errs, fmt.Errorf("agent %d/%d: %w: %s", i, n, werr, strings.TrimSpace(p.stderr.String())))
		}
		as, _, rerr := Read(&p.stdout, fmt.Sprintf("agent %d/%d", i, n))
		if rerr != nil && werr == nil {
			errs = append(errs, rerr)
		}
		all = append(all, as...)
	}
	if len(errs) > 0 {
		if len(all) > 0 {
			if m, err := Merge(all, 0); err == nil {
				l.Merged = m // the counts so far
			}
		}
		return l, errors.Join(errs...)
	}
	m, err := Merge(all, n)
	l.Merged = m
	return l, err
}
