package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequirePrometheusEnv, set to 1 (make test sets it), makes a missing
// Prometheus toolchain a test failure rather than a skip.
const RequirePrometheusEnv = "KVBENCH_REQUIRE_PROMETHEUS"

// RequirePrometheusTool returns the path of Debian's promtool or
// prometheus (name), skipping the test without it unless
// KVBENCH_REQUIRE_PROMETHEUS=1.
func RequirePrometheusTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(RequirePrometheusEnv) == "1" {
			t.Fatalf("%s not found and %s=1: %v (apt-get install prometheus, or make deps)", name, RequirePrometheusEnv, err)
		}
		t.Skipf("%s not found (apt-get install prometheus, or make deps): %v", name, err)
	}
	return p
}

// Scrape returns the text of the metrics at u, failing the test on any
// error or a status other than 200.
func Scrape(t testing.TB, u string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := httpGet(ctx, u)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return string(b)
}

func httpGet(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b, nil
}

// PromtoolCheck fails the test unless "promtool check metrics" finds the
// exposition text clean: no error, no lint finding.
func PromtoolCheck(t testing.TB, text string) {
	t.Helper()
	promtool := RequirePrometheusTool(t, "promtool")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\nthe metrics:\n%s", err, out, text)
	}
}

// Prometheus is a Prometheus server a test started.
type Prometheus struct {
	// URL is its HTTP API's base, http://127.0.0.1:PORT.
	URL string
	log *SyncBuffer
}

// SyncBuffer is a bytes.Buffer a process writes while the test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartPrometheus starts a Prometheus server on a free loopback port,
// scraping targets (HOST:PORT, at /metrics) every interval, with its
// storage in a temporary directory, and waits until it is ready. It is
// stopped (SIGTERM, then SIGKILL) and waited for when the test ends.
func StartPrometheus(t testing.TB, interval time.Duration, targets ...string) *Prometheus {
	t.Helper()
	bin := RequirePrometheusTool(t, "prometheus")
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	config := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n  - job_name: kvbench\n    static_configs:\n      - targets: [%s]\n",
		interval, interval, strings.Join(quoted, ", "))
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	p := &Prometheus{URL: "http://127.0.0.1:" + strconv.Itoa(port), log: &SyncBuffer{}}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port), "--log.level=warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute): // a bound on a failure, not a figure
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := httpGet(ctx, p.URL+"/-/ready")
		cancel()
		if err == nil {
			return p
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("prometheus exited: %v\n%s", err, p.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30s: %v\n%s", err, p.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PromSample is one series of a query's result: its labels and value.
type PromSample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant query through the HTTP API (/api/v1/query).
func (p *Prometheus) Query(t testing.TB, query string) []PromSample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := httpGet(ctx, p.URL+"/api/v1/query?query="+url.QueryEscape(query))
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	var r struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("query %s: %v\n%s", query, err, b)
	}
	if r.Status != "success" || r.Data.ResultType != "vector" {
		t.Fatalf("query %s: status %s, result %s: %s", query, r.Status, r.Data.ResultType, r.Error)
	}
	out := make([]PromSample, len(r.Data.Result))
	for i, s := range r.Data.Result {
		out[i].Labels = s.Metric
		if v, ok := s.Value[1].(string); ok {
			out[i].Value, _ = strconv.ParseFloat(v, 64)
		}
	}
	return out
}

// WaitQuery runs query until ok accepts its result, failing the test
// after within.
func (p *Prometheus) WaitQuery(t testing.TB, query string, within time.Duration, ok func([]PromSample) bool) []PromSample {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := p.Query(t, query)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %s: after %v, %+v\nprometheus log:\n%s", query, within, s, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
