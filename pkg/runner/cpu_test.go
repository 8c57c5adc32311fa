package runner

import (
	"context"
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/internal/testutil"
)

// TestWhoIsTheBottleneck: every measured row carries its whole latency
// histogram, and records the client's and the
// server's CPU time and QPS per server CPU-second; a server that waits on
// fsync before every reply leaves the generator idle (not client-bound),
// and redis-server answering pipelined GETs outruns a generator slowed by
// the race detector (client-bound). On this project's 2-core machines the
// plain generator was never the bottleneck: it used 17-47% of its thread
// against the kvstore and redis-server in every setting tried.
func TestWhoIsTheBottleneck(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Rounds, o.Retries = []string{"redis"}, []string{"none", "aof_always"}, 1, 0
	o.Modes, o.Threads, o.Requests, o.Keyspace = []string{"set", "get"}, 1, 20_000, 20_000
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows := readDetail(t, res)
	for _, r := range rows {
		if r.ClientCPUS <= 0 || r.ServerCPUS <= 0 || math.Abs(r.QPSPerServerCPUS-r.QPS*r.ElapsedS/r.ServerCPUS) > 1e-6*r.QPSPerServerCPUS {
			t.Errorf("%s/%s: client %vs, server %vs, %v QPS per server CPU-second for %v QPS",
				r.Strategy, r.Mode, r.ClientCPUS, r.ServerCPUS, r.QPSPerServerCPUS, r.QPS)
		}
		if h, err := hdrhistogram.Decode([]byte(r.LatencyHist)); err != nil {
			t.Errorf("%s/%s: latency_hist: %v", r.Strategy, r.Mode, err)
		} else if h.TotalCount() != r.Requests || math.Abs(float64(h.ValueAtQuantile(99))/1e3-r.LatP99Us) > 0.01*r.LatP99Us {
			t.Errorf("%s/%s: latency_hist holds %d values for %d requests, p99 %v us against %v us",
				r.Strategy, r.Mode, h.TotalCount(), r.Requests, float64(h.ValueAtQuantile(99))/1e3, r.LatP99Us)
		}
		busy := r.ClientCPUS / r.ElapsedS
		t.Logf("%s/%s: %.0f QPS, generator busy %.0f%%, client-bound %v", r.Strategy, r.Mode, r.QPS, 100*busy, r.ClientBound)
		switch {
		case r.Strategy == "aof_always" && r.Mode == "set" && r.ClientBound:
			t.Errorf("aof_always set: client-bound, yet the server fsyncs before replying (generator busy %.0f%%)", 100*busy)
		case raceEnabled && r.Strategy == "none" && r.Mode == "get" && !r.ClientBound:
			t.Errorf("none get under the race detector: not client-bound (generator busy %.0f%%)", 100*busy)
		}
	}
}
