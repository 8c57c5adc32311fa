package agents

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// agent makes segment i of n's JSON document: requests latencies of lat
// ns each, measured from start for d.
func agent(t *testing.T, i, n int, requests, lat int64, start time.Time, d time.Duration) string {
	t.Helper()
	cfg, err := loadgen.Config{Addr: "127.0.0.1:6379", Mode: loadgen.ModeGet, SetCmd: "SET", GetCmd: "GET", Segment: i, Segments: n, Load: loadgen.Load{Requests: 1000, Pipeline: 1, Connections: n, Threads: 1, Keyspace: 10, KeyPrefix: "k:"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	h := hdrhistogram.New(1, 3600e9, 3)
	if err := h.RecordValues(lat, requests); err != nil {
		t.Fatal(err)
	}
	r := loadgen.Result{Config: cfg, Result: measure.Result{Counts: measure.Counts{Requests: requests, Sent: requests, Gets: requests}, Histogram: h,
		Start: start, End: start.Add(d), Elapsed: d, Errors: map[string]int64{"ERR": 1}}}
	var b bytes.Buffer
	if err := output.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMerge: histograms add (the merged p50 is a value no agent's mean
// would give), counters sum, QPS is over the union of the windows, and
// the overlap is the intersection over the union.
func TestMerge(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	stream := agent(t, 1, 2, 3000, 100_000, t0.Add(time.Second), 2*time.Second) + "log line\n" +
		agent(t, 0, 2, 1000, 1_000, t0, 2*time.Second)
	as, notes, err := Read(strings.NewReader(stream), "logs")
	if err != nil || len(as) != 2 || len(notes) != 1 || !strings.HasPrefix(notes[0].Error(), "logs:") {
		t.Fatalf("Read: %d agents, notes %v, %v", len(as), notes, err)
	}
	m, err := Merge(as, 2)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Result
	if r.Requests != 4000 || r.Errors["ERR"] != 2 || r.Elapsed != 3*time.Second || r.QPS != 4000.0/3 || r.Config.Segments != 1 {
		t.Errorf("merged: %d requests, errors %v, elapsed %v, QPS %g, segments %d", r.Requests, r.Errors, r.Elapsed, r.QPS, r.Config.Segments)
	}
	if r.Histogram.TotalCount() != 4000 || r.Latency.P50 < 99 || r.Latency.P50 > 101 {
		t.Errorf("merged histogram: %d values, p50 %g us; want 4000 and 100 us", r.Histogram.TotalCount(), r.Latency.P50)
	}
	if m.Overlap != 1.0/3 || len(r.Warnings) == 0 || !errors.Is(r.Warnings[0], ErrNoOverlap) {
		t.Errorf("overlap %g, warnings %v; want 1/3 and ErrNoOverlap", m.Overlap, r.Warnings)
	}
	if m.Agents[0].Result.Config.Segment != 0 {
		t.Error("agents not in segment order")
	}
	if _, err := Merge(as[:1], 2); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "segment 0") {
		t.Errorf("one of two: %v", err)
	}
	if _, _, err := Read(strings.NewReader(`{"requests": "many"}`), "bad.json"); err == nil || !strings.HasPrefix(err.Error(), "bad.json:1:") {
		t.Errorf("a bad document: %v, want its position", err)
	}
}

// TestMergeNodes: agents of a cluster run merge per node: requests,
// redirects and histograms add up node by node, and the whole run's
// redirects are the sums.
func TestMergeNodes(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	doc := func(i int, lat int64, moved int64) string {
		cfg, err := loadgen.Config{Addr: "127.0.0.1:7000", Mode: loadgen.ModeSet, SetCmd: "SET", GetCmd: "GET", Cluster: true, Segment: i, Segments: 2, Load: loadgen.Load{Requests: 200, Pipeline: 1, Connections: 2, Threads: 1, Keyspace: 200, KeyPrefix: "k:"}}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		whole := hdrhistogram.New(1, 3600e9, 3)
		var nodes []measure.Node
		for k, addr := range []string{"127.0.0.1:7000", "127.0.0.1:7001"} {
			h := hdrhistogram.New(1, 3600e9, 3)
			if err := h.RecordValues(lat*int64(k+1), 50); err != nil {
				t.Fatal(err)
			}
			whole.Merge(h)
			nodes = append(nodes, measure.Node{Addr: addr, Role: "master", Slots: 8192, Requests: 50, Histogram: h, Moved: moved})
		}
		r := loadgen.Result{Config: cfg, Result: measure.Result{Counts: measure.Counts{Requests: 100, Sent: 100, Sets: 100, Moved: 2 * moved, Ask: 1},
			Histogram: whole, Start: t0, End: t0.Add(time.Second), Elapsed: time.Second, Shards: 2, Nodes: nodes}}
		var b bytes.Buffer
		if err := output.WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	as, _, err := Read(strings.NewReader(doc(0, 1000, 1)+doc(1, 3000, 2)), "logs")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(as, 2)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Result
	if r.Shards != 2 || r.Moved != 6 || r.Ask != 2 || len(r.Nodes) != 2 {
		t.Fatalf("merged: %d shards, %d moved, %d ask, %d nodes; want 2, 6, 2, 2", r.Shards, r.Moved, r.Ask, len(r.Nodes))
	}
	for k, n := range r.Nodes {
		if n.Requests != 100 || n.Moved != 3 || n.Histogram.TotalCount() != 100 || n.QPS != 100 || n.Slots != 8192 {
			t.Errorf("node %s: %d requests, %d moved, %d latencies, QPS %g; want 100, 3, 100, 100", n.Addr, n.Requests, n.Moved, n.Histogram.TotalCount(), n.QPS)
		}
		// Half the node's latencies are agent 0's, half agent 1's (3x).
		if lo, hi := float64(1000*(k+1))/1000, float64(3000*(k+1))/1000; n.Latency.P50 < lo*0.99 || n.Latency.P50 > lo*1.01 || n.Latency.Max < hi*0.99 {
			t.Errorf("node %s: p50 %g us, max %g us; want %g and %g", n.Addr, n.Latency.P50, n.Latency.Max, lo, hi)
		}
	}
}
