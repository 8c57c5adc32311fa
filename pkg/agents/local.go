package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
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

// LoadJSON returns the load an agent is given ("kvbench bench
// --load-json"): cfg normalized, as JSON (loadgen's codec: no password,
// no TLS material, only whether TLS is on). A replay's capture is not in
// it, and cannot be passed.
func LoadJSON(cfg loadgen.Config) ([]byte, error) {
	n, err := cfg.Normalize()
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	if n.Replay != nil {
		return nil, errors.New("a replay's capture cannot be passed to agents")
	}
	return json.Marshal(n)
}

// TLSArgs returns the bench flags that give an agent the TLS files of
// tlsFiles: --tls, --cacert, --cert, --key, --sni and --insecure; none
// when TLS is off.
func TLSArgs(tlsFiles tlsconf.Options) []string {
	if !tlsFiles.Enabled {
		return nil
	}
	a := []string{"--tls"}
	for _, f := range []struct{ name, v string }{
		{"cacert", tlsFiles.CAFile}, {"cert", tlsFiles.CertFile}, {"key", tlsFiles.KeyFile}, {"sni", tlsFiles.ServerName},
	} {
		if f.v != "" {
			a = append(a, "--"+f.name, f.v)
		}
	}
	if tlsFiles.Insecure {
		a = append(a, "--insecure")
	}
	return a
}

// Local is the outcome of RunLocal.
type Local struct {
	Merged
	// CPU is the agents' processes' CPU time (user + system), summed.
	CPU time.Duration
}

// RunLocal runs cfg as n agent processes of the kvbench binary bin
// ("kvbench bench --load-json - --segment i/n --start-at T --output
// json", the load's JSON on their standard input, LoadJSON), on this
// host, started together at T = now + LocalLead + n·LocalLeadPerAgent,
// and merges their results. Over TLS, the agents read tlsFiles
// (TLSArgs). The password goes to them in their environment
// (KVBENCH_PASSWORD), not on their command line. Each runs in its own
// process group and is stopped (SIGTERM, then SIGKILL) when ctx ends.
// The error names the agents that failed, with their stderr.
func RunLocal(ctx context.Context, bin string, cfg loadgen.Config, tlsFiles tlsconf.Options, n int) (Local, error) {
	if cfg.TLS != nil && !tlsFiles.Enabled {
		return Local{}, errors.New("the TLS settings cannot be passed to agents: no files they were read from")
	}
	load, err := LoadJSON(cfg)
	if err != nil {
		return Local{}, err
	}
	args := append([]string{"bench", "--load-json", "-"}, TLSArgs(tlsFiles)...)
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
		p.cmd.Stdin = bytes.NewReader(load)
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
