package metrics_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/metrics"
)

// startKvstore runs the embedded server on a free loopback port.
func startKvstore(t *testing.T) *kvstore.Server {
	t.Helper()
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// serveLoad serves a new Load from a registry of its own.
func serveLoad(t *testing.T) (*metrics.Load, *metrics.Server) {
	t.Helper()
	load := metrics.NewLoad()
	reg := prometheus.NewRegistry()
	reg.MustRegister(load)
	srv, err := metrics.Serve(context.Background(), "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return load, srv
}

var sampleRE = regexp.MustCompile(`(?m)^(\w+)\{([^}]*)\} (\S+)$`)

// sum adds the samples of name in an exposition text whose labels hold
// every pair of want ("k=\"v\"").
func sum(t *testing.T, text, name string, want ...string) float64 {
	t.Helper()
	var s float64
	for _, m := range sampleRE.FindAllStringSubmatch(text, -1) {
		if m[1] != name {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(","+m[2]+",", ","+w+",")
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		s += v
	}
	return s
}

// TestLoadAddsUpToRun: at the end of a run, the scraped counters and the
// histogram's count equal the run's requests and latencies, per command,
// and promtool finds the text clean.
func TestLoadAddsUpToRun(t *testing.T) {
	kv := startKvstore(t)
	load, srv := serveLoad(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Requests, cfg.WarmupRequests, cfg.Keyspace = kv.Addr(), 20_000, 2000, 1000
	cfg.Connections, cfg.Pipeline, cfg.Interval = 4, 8, 5*time.Millisecond
	cfg.Commands = []mix.Command{{Args: []string{"SET", "__key__", "__data__"}}, {Args: []string{"GET", "__key__"}, Ratio: 3}}
	meter := load.Meter("kvstore", "nopersist", "commands", cfg)
	cfg.Observe = meter.Interval
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	meter.Done(&res.Result)
	text := testutil.Scrape(t, srv.URL())
	if got := sum(t, text, metrics.RequestsName); got != float64(res.Requests) {
		t.Errorf("%s: %v, the run's requests %d\n%s", metrics.RequestsName, got, res.Requests, text)
	}
	if got := sum(t, text, metrics.DurationName+"_count"); got != float64(res.Histogram.TotalCount()) {
		t.Errorf("%s_count: %v, the run's latencies %d", metrics.DurationName, got, res.Histogram.TotalCount())
	}
	if got := sum(t, text, metrics.DurationName+"_bucket", `le="+Inf"`); got != float64(res.Histogram.TotalCount()) {
		t.Errorf("%s_bucket{le=\"+Inf\"}: %v, the run's latencies %d", metrics.DurationName, got, res.Histogram.TotalCount())
	}
	for _, c := range res.Commands {
		labels := []string{`target="kvstore"`, `strategy="nopersist"`, `mode="commands"`, `command="` + c.Name + `"`}
		if got := sum(t, text, metrics.RequestsName, labels...); got != float64(c.Requests) || c.Requests == 0 {
			t.Errorf("%s %v: %v, the run's %d", metrics.RequestsName, labels, got, c.Requests)
		}
	}
	testutil.PromtoolCheck(t, text)
}

// TestDoneWithoutSeries: a run without intervals (or in agent processes)
// is counted whole at its end, labelled by its mode's command.
func TestDoneWithoutSeries(t *testing.T) {
	kv := startKvstore(t)
	load, srv := serveLoad(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.Requests, cfg.Keyspace, cfg.Interval = kv.Addr(), loadgen.ModeSet, 5000, 1000, 0
	meter := load.Meter(kv.Addr(), "", "set", cfg)
	cfg.Observe = meter.Interval
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := testutil.Scrape(t, srv.URL())
	if got := sum(t, text, metrics.RequestsName); got != 0 {
		t.Errorf("before Done: %v requests without a series", got)
	}
	meter.Done(&res.Result)
	text = testutil.Scrape(t, srv.URL())
	if got := sum(t, text, metrics.RequestsName, `command="SET"`, `mode="set"`); got != float64(res.Requests) {
		t.Errorf("after Done: %v requests, the run's %d\n%s", got, res.Requests, text)
	}
	meter.Done(&res.Result) // a second run of the attempt adds its own
	text = testutil.Scrape(t, srv.URL())
	if got := sum(t, text, metrics.RequestsName); got != float64(2*res.Requests) {
		t.Errorf("after two runs: %v requests, want %d", got, 2*res.Requests)
	}
}

// TestBuckets: a latency counts in the first bucket whose bound holds the
// highest value its histogram bucket may hold; the sum is in seconds.
func TestBuckets(t *testing.T) {
	load, srv := serveLoad(t)
	h := measure.NewIntervalHistogram()
	for _, ns := range []int64{10_000, 90_000, 3_000_000, 20_000_000_000} {
		if err := h.RecordValue(ns); err != nil {
			t.Fatal(err)
		}
	}
	load.Attempt(metrics.Labels{Target: "t", Mode: "set", Command: "SET"}).Interval(measure.Point{Requests: 4, Errors: 1, Histogram: h})
	text := testutil.Scrape(t, srv.URL())
	for le, want := range map[string]float64{"2.5e-05": 1, "0.0001": 2, "0.001": 2, "0.005": 3, "10": 3, "+Inf": 4} {
		if got := sum(t, text, metrics.DurationName+"_bucket", `le="`+le+`"`); got != want {
			t.Errorf("le=%s: %v, want %v", le, got, want)
		}
	}
	if got := sum(t, text, metrics.ErrorsName); got != 1 {
		t.Errorf("errors: %v, want 1", got)
	}
	if got := sum(t, text, metrics.DurationName+"_sum"); got < 20.003 || got > 20.3 {
		t.Errorf("sum: %v s, want about 20.0031", got)
	}
	testutil.PromtoolCheck(t, text)
}

// TestServeClose: a port in use is an error; Close leaves no port
// listening and no goroutine.
func TestServeClose(t *testing.T) {
	before := runtime.NumGoroutine()
	_, srv := serveLoad(t)
	addr := srv.Addr()
	testutil.Scrape(t, srv.URL())
	if _, err := metrics.Serve(context.Background(), addr, prometheus.NewRegistry()); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("a second server on %s: %v, want an error naming the address", addr, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Close", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after Close: %v, want connection refused", err)
	}
	http.DefaultClient.CloseIdleConnections() // the scrape's side of its connection
	deadline := time.Now().Add(time.Minute)   // a bound on a failure, not a figure
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPrometheusScrapesLoad: a real Prometheus server scraping a run's
// metrics shows kvbench_requests_total with the run's labels.
func TestPrometheusScrapesLoad(t *testing.T) {
	testutil.RequirePrometheusTool(t, "prometheus")
	kv := startKvstore(t)
	load, srv := serveLoad(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.Duration, cfg.Requests, cfg.Rate, cfg.Keyspace = kv.Addr(), loadgen.ModeSet, time.Minute, 0, 2000, 1000
	cfg.Interval = 100 * time.Millisecond
	meter := load.Meter("kvstore", "nopersist", "set", cfg)
	cfg.Observe = meter.Interval
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := loadgen.Run(ctx, cfg)
		done <- err
	}()
	defer func() {
		cancel()
		<-done
	}()
	prom := testutil.StartPrometheus(t, 200*time.Millisecond, srv.Addr())
	got := prom.WaitQuery(t, metrics.RequestsName, 30*time.Second, func(s []testutil.PromSample) bool {
		return len(s) == 1 && s[0].Value > 0
	})
	want := map[string]string{"__name__": metrics.RequestsName, "target": "kvstore", "strategy": "nopersist", "mode": "set", "command": "SET", "job": "kvbench", "instance": srv.Addr()}
	for k, v := range want {
		if got[0].Labels[k] != v {
			t.Errorf("label %s: %q, want %q (%v)", k, got[0].Labels[k], v, got[0].Labels)
		}
	}
	prom.WaitQuery(t, "histogram_quantile(0.99, "+metrics.DurationName+"_bucket)", 30*time.Second, func(s []testutil.PromSample) bool {
		return len(s) == 1 && s[0].Value > 0
	})
}
