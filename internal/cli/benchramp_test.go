package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
)

// clientProbe samples the server's connected_clients (less the probe's
// own connection) until stop is called, which returns every count seen;
// seen, when set, is called with each sample.
func clientProbe(t *testing.T, addr string, seen func(n int)) (stop func() map[int]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	c, err := control.Dial(ctx, addr, control.Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	counts := map[int]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer c.Close()
		for ctx.Err() == nil {
			info, err := c.Info(ctx, "clients")
			if err != nil {
				return
			}
			n, err := strconv.Atoi(info["connected_clients"])
			if err != nil {
				return
			}
			mu.Lock()
			counts[n-1] = true
			mu.Unlock()
			if seen != nil {
				seen(n - 1)
			}
		}
	}()
	return func() map[int]bool {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return counts
	}
}

// TestBenchRamp: a ramp of 1, 3 and 5 connections against redis-server
// measures three steps, each with its connections (the server saw each
// count), its requests and latencies; the JSON keeps the run's fields (the
// last step's) and the CSV has a row per step.
func TestBenchRamp(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	stop := clientProbe(t, r.Addr, nil)
	code, stdout, stderr := execute(t, "bench", "--port", port, "--mode", "get", "--prefill", "--keyspace", "2000",
		"--pipeline", "1", "--threads", "1", "--verify-get", "--seed", "1",
		"--connections-start", "1", "--connections-step", "2", "--connections", "5",
		"--step-duration", "300ms", "--warmup", "100ms", "--output", "json")
	counts := stop()
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct {
		Requests int64 `json:"requests"`
		Config   struct {
			Connections int     `json:"connections"`
			DurationS   float64 `json:"duration_s"`
		} `json:"settings"`
		Curve *json.RawMessage `json:"curve"`
		Ramp  []struct {
			Connections  int
			Rate         *float64
			QPS          float64
			Latency      map[string]float64 `json:"latency_us"`
			SendLagP99Us *float64           `json:"send_lag_p99_us"`
			Requests     int64
			Errors       int64
			ElapsedS     float64 `json:"elapsed_s"`
		} `json:"ramp"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(doc.Ramp) != 3 || doc.Curve != nil {
		t.Fatalf("%d steps, curve %v; want 3 steps and no curve:\n%s", len(doc.Ramp), doc.Curve, stdout)
	}
	for i, s := range doc.Ramp {
		want := 1 + 2*i
		if s.Connections != want || s.Rate != nil || s.SendLagP99Us != nil || s.Requests <= 0 || s.Errors != 0 ||
			s.QPS <= 0 || s.ElapsedS <= 0 || s.Latency["p50"] <= 0 || s.Latency["p999"] < s.Latency["p99"] {
			t.Errorf("step %d: %+v; want %d connections, measured, closed loop", i, s, want)
		}
		if !counts[want] {
			t.Errorf("step %d: the server never had %d clients (saw %v)", i, want, counts)
		}
	}
	if last := doc.Ramp[2]; doc.Requests != last.Requests || doc.Config.Connections != 5 || doc.Config.DurationS != 0.3 {
		t.Errorf("run fields: %d requests, %+v; want the last step's (%d requests, 5 connections, 0.3 s)", doc.Requests, doc.Config, last.Requests)
	}

	code, stdout, stderr = execute(t, "bench", "--port", port, "--mode", "get", "--keyspace", "2000", "--pipeline", "1",
		"--connections-start", "2", "--connections-step", "2", "--connections", "3", "--step-duration", "100ms", "--output", "csv")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || lines[0] != "connections,command,requests,qps,avg_us,p50_us,p99_us,p999_us,max_us,errors,refused_writes,qps_counts_refused" ||
		!strings.HasPrefix(lines[1], "2,GET,") || !strings.HasPrefix(lines[2], "3,GET,") {
		t.Errorf("csv:\n%s", stdout)
	}
}

// TestBenchRampInterrupted: Ctrl-C during the second step stops the ramp
// and prints the step measured before it, with the interrupted exit.
func TestBenchRampInterrupted(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The second step's connections: the first step (one) is over.
	stop := clientProbe(t, r.Addr, func(n int) {
		if n >= 3 {
			cancel()
		}
	})
	code, stdout, stderr := executeCtx(ctx, "bench", "--port", port, "--mode", "set", "--keyspace", "1000",
		"--pipeline", "1", "--threads", "1", "--connections-start", "1", "--connections-step", "3", "--connections", "7",
		"--step-duration", "300ms", "--warmup", "2s")
	stop()
	if code != ExitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d; want %d\n%s", code, ExitInterrupted, stderr)
	}
	var rows []string
	_, table, ok := strings.Cut(stdout, "connection ramp (us):\n")
	for _, l := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		rows = append(rows, strings.Fields(l)[0])
	}
	if !ok || fmt.Sprint(rows) != "[1]" || !strings.Contains(stderr, "stopped after 1 of 3 steps") {
		t.Errorf("steps %v; want [1]\nstdout:\n%s\nstderr:\n%s", rows, stdout, stderr)
	}
}

// TestBenchRampUsageErrors: a bad staircase, and what a ramp cannot run
// with, are usage errors naming the flag.
func TestBenchRampUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--connections-start", "0", "--connections-step", "1"}, "--connections-start 0: want at least 1"},
		{[]string{"--connections-start", "1", "--connections-step", "0"}, "--connections-step 0: want at least 1"},
		{[]string{"--connections-step", "-2"}, "--connections-step -2"},
		{[]string{"--connections-start", "60", "--connections-step", "1", "--connections", "50"}, "--connections-start 60: above --connections 50"},
		{[]string{"--connections-start", "1", "--connections-step", "1", "--step-duration", "0s"}, "--step-duration 0s"},
		{[]string{"--connections-start", "1"}, "give --connections-step too"},
		{[]string{"--step-duration", "5s"}, "--step-duration: give --connections-step"},
		{[]string{"--connections-step", "5", "--connections", "1"}, "--connections-step 5: the first step, above --connections 1"},
		{[]string{"--connections-step", "5", "--rates", "50%"}, "--rates and a connection ramp"},
		{[]string{"--connections-step", "5", "--slo", "p99<1ms"}, "--slo and a connection ramp"},
		{[]string{"--connections-step", "5", "--requests", "1000"}, "--requests and a connection ramp"},
		{[]string{"--connections-step", "5", "--duration", "10s"}, "--duration and a connection ramp"},
		{[]string{"--connections-step", "5", "--segment", "0/2"}, "--segment and a connection ramp"},
		{[]string{"--connections-step", "5", "--tests", "get"}, "--tests and a connection ramp"},
		{[]string{"--connections-step", "5", "--start-at", "2026-01-02T15:04:05Z"}, "--start-at and a connection ramp"},
		{[]string{"--connections-step", "5", "-q"}, "--quiet and a connection ramp"},
		{[]string{"--connections-step", "5", "--mode", "set", "--set-cmd", "RSET"}, "RSET only inserts"},
	} {
		code, _, stderr := execute(t, append([]string{"bench", "--port", "1", "--connections", "10"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}
