package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/testutil"
)

// startMetricsProc starts "kvbench args... --metrics-addr 127.0.0.1:0".
func startMetricsProc(t *testing.T, args ...string) *runProc {
	t.Helper()
	return startKvbench(t, nil, append(args, "--metrics-addr", "127.0.0.1:0")...)
}

// waitFor waits until re matches the process's stderr and returns the
// match's first group.
func (p *runProc) waitFor(t *testing.T, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("%v exited: %v\nstderr:\n%s", p.cmd.Args, p.err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: no %s after %v\nstderr:\n%s", p.cmd.Args, re, within, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop interrupts the process, waits for it, checks its exit status and
// that its metrics port no longer listens.
func (p *runProc) stop(t *testing.T, metricsURL string, code int) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute): // a bound on a failure, not a figure
		t.Fatalf("%v still running 30s after SIGINT\nstderr:\n%s", p.cmd.Args, p.stderr.String())
	}
	if got := p.cmd.ProcessState.ExitCode(); got != code {
		t.Errorf("%v: exit status %d, want %d\nstderr:\n%s", p.cmd.Args, got, code, p.stderr.String())
	}
	addr := hostPort(metricsURL)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still listening after the process ended", addr)
	}
}

var (
	benchMetricsRE = regexp.MustCompile(`metrics: (http://\S+/metrics)`)
	serveMetricsRE = regexp.MustCompile(`serving metrics"? url=(http://\S+/metrics)`)
	serveReadyRE   = regexp.MustCompile(`ready to accept connections"? addr=(\S+:\d+)`)
)

// hostPort is the HOST:PORT of a metrics URL.
func hostPort(u string) string {
	return strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/metrics")
}

// waitScrape scrapes u until it holds want, and returns the text.
func waitScrape(t *testing.T, u, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		text := testutil.Scrape(t, u)
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %s after %v:\n%s", u, want, within, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetricsBenchServe: kvbench serve and kvbench bench against it
// serve their metrics while they run: promtool finds both clean, a
// Prometheus server scrapes both and shows the series with their labels,
// and each port is closed once its process has ended.
func TestMetricsBenchServe(t *testing.T) {
	testutil.RequirePrometheusTool(t, "promtool")
	dir := t.TempDir()
	serve := startMetricsProc(t, serveArgs("--port", "0", "--persist", "always", "--dir", dir)...)
	addr := serve.waitFor(t, serveReadyRE, time.Minute)
	serveURL := serve.waitFor(t, serveMetricsRE, time.Minute)
	bench := startMetricsProc(t, "bench", "--host", "127.0.0.1", "--port", addr[strings.LastIndex(addr, ":")+1:],
		"--mode", "set", "--duration", "120s", "--rate", "2000", "--interval", "100ms", "--keyspace", "1000")
	benchURL := bench.waitFor(t, benchMetricsRE, time.Minute)

	text := waitScrape(t, benchURL, `kvbench_requests_total{command="SET",mode="set",strategy="",target="`+addr+`"}`, time.Minute)
	testutil.PromtoolCheck(t, text)
	text = waitScrape(t, serveURL, "kvstore_aof_fsyncs_total", time.Minute)
	testutil.PromtoolCheck(t, text)
	for _, name := range []string{"kvstore_commands_processed_total", "kvstore_keys{keyspace=\"strings\"}", "kvstore_used_memory_bytes", "kvstore_aof_fsync_seconds_total", "kvstore_aof_rewrites_total"} {
		if !strings.Contains(text, "\n"+name+" ") {
			t.Errorf("serve's metrics: no %s\n%s", name, text)
		}
	}

	if _, err := exec.LookPath("prometheus"); err == nil || os.Getenv(testutil.RequirePrometheusEnv) == "1" {
		prom := testutil.StartPrometheus(t, 200*time.Millisecond, hostPort(benchURL), hostPort(serveURL))
		got := prom.WaitQuery(t, "kvbench_requests_total", 30*time.Second, func(s []testutil.PromSample) bool { return len(s) == 1 && s[0].Value > 0 })
		for k, v := range map[string]string{"target": addr, "mode": "set", "command": "SET", "instance": hostPort(benchURL)} {
			if got[0].Labels[k] != v {
				t.Errorf("kvbench_requests_total: label %s=%q, want %q (%v)", k, got[0].Labels[k], v, got[0].Labels)
			}
		}
		if s, ok := got[0].Labels["strategy"]; ok {
			t.Errorf("bench's strategy label: %q, want none (empty)", s)
		}
		prom.WaitQuery(t, "kvstore_commands_processed_total", 30*time.Second, func(s []testutil.PromSample) bool { return len(s) == 1 && s[0].Value > 0 })
		prom.WaitQuery(t, "kvstore_aof_fsyncs_total", 30*time.Second, func(s []testutil.PromSample) bool { return len(s) == 1 && s[0].Value > 0 })
	}
	bench.stop(t, benchURL, cli.ExitInterrupted)
	serve.stop(t, serveURL, 0)
}

// TestMetricsRun: kvbench run serves each attempt's load, labelled by
// target, strategy, mode and command, while it measures.
func TestMetricsRun(t *testing.T) {
	testutil.RequirePrometheusTool(t, "promtool")
	out, tmp := t.TempDir(), t.TempDir()
	p := startMetricsProc(t, append([]string{"run"}, longRun(out, tmp)...)...)
	u := p.waitFor(t, benchMetricsRE, time.Minute)
	text := waitScrape(t, u, `kvbench_requests_total{command="SET",mode="set",strategy="`, 60*time.Second)
	if !strings.Contains(text, `target="kvstore"`) {
		t.Errorf("no target=\"kvstore\" label:\n%s", text)
	}
	testutil.PromtoolCheck(t, text)
	p.stop(t, u, cli.ExitInterrupted)
	checkNoServers(t, tmp)
}

// TestMetricsAddrInUse: a metrics port in use fails the command with an
// error naming the flag.
func TestMetricsAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "--port", "1", "--requests", "10"},
		serveArgs("--port", "0", "--dir", dir),
		{"run", "--targets", "kvstore", "--rounds", "1", "--out", dir, "--tmpdir", dir},
	} {
		cmd := exec.Command(kvbenchBin, append(args, "--metrics-addr", ln.Addr().String())...)
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(b), "--metrics-addr") || !strings.Contains(string(b), "address already in use") {
			t.Errorf("%v: %v, want exit status 1 and an error naming --metrics-addr and the port in use:\n%s", args, err, b)
		}
	}
}
