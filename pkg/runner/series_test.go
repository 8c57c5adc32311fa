package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/results"
)

// readSeries reads the run's series CSV back.
func readSeries(t *testing.T, res *Result) []results.SeriesRow {
	t.Helper()
	rows, err := results.ReadSeriesFile(res.Files.Series)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files.Series != results.SeriesPath(res.Files.Detail) {
		t.Errorf("series CSV %s is not beside the detail CSV %s", res.Files.Series, res.Files.Detail)
	}
	return rows
}

// attemptKey joins a series row to its detail rows.
func attemptKey(target, strategy, mode, workload string, round, attempt int) string {
	return fmt.Sprintf("%s/%s/%s/%s/r%d/a%d", target, strategy, mode, workload, round, attempt)
}

// TestRunSeries: with --interval, every attempt's intervals are in the
// series CSV, and per command they add up exactly to its detail row's
// requests; the detail rows hold the stall columns.
func TestRunSeries(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Rounds, o.Requests, o.Keyspace = 1, 100_000, 100_000
	o.Targets = []string{"kvstore", "redis"}
	o.Strategies = []string{"persist_everysec", "aof_everysec"}
	o.Modes = []string{"set", "get"}
	o.Workloads = []string{"rb-six"}
	o.Interval = 10 * time.Millisecond // a 100,000-request attempt may take under 100 ms
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	detail := readDetail(t, res)
	series := readSeries(t, res)
	if len(series) == 0 {
		t.Fatal("no series rows")
	}
	raw, _ := os.ReadFile(res.Files.Series)
	if h, _, _ := strings.Cut(string(raw), "\n"); h != strings.Join(results.SeriesColumns, ",") {
		t.Errorf("series header %s", h)
	}
	// Requests per attempt and command, over the rows without a node.
	sums := make(map[string]int64)
	intervals := make(map[string]int)
	for _, s := range series {
		if s.RunID != res.RunID {
			t.Errorf("%v: run_id %q", s.Pos, s.RunID)
		}
		if s.Node != "" {
			continue
		}
		k := attemptKey(s.Target, s.Strategy, s.Mode, s.Workload, s.Round, s.Attempt) + "/" + s.Command
		sums[k] += s.Requests
		intervals[k]++
		if s.Requests > 0 && (s.P99Us == nil || s.QPS == nil) {
			t.Errorf("%v: requests %d without p99 or qps", s.Pos, s.Requests)
		}
	}
	checked := 0
	for _, r := range detail {
		if !r.OK() {
			continue
		}
		if r.Stalls == nil || r.LongestStallMs == nil {
			t.Errorf("%v: stall columns empty with --interval", r.Pos)
		}
		cmd := r.Command
		if cmd == "" { // the mode's command: the kvstore's own, redis's SET and GET
			cmd = map[string]string{"kvstore/set": o.SetCmd, "kvstore/get": o.GetCmd, "redis/set": "SET", "redis/get": "GET"}[r.Target+"/"+r.Mode]
		}
		k := attemptKey(r.Target, r.Strategy, r.Mode, r.Workload, r.Round, r.Attempt) + "/" + cmd
		if sums[k] != r.Requests {
			t.Errorf("%s: the series' requests add up to %d, the detail row has %d", k, sums[k], r.Requests)
		}
		if intervals[k] < 2 {
			t.Errorf("%s: %d intervals of 10ms", k, intervals[k])
		}
		checked++
	}
	// kvstore and redis: set and get; redis: rb-six's six commands and
	// total (the kvstore lacks SADD and ZADD).
	if checked != 2*2+7 {
		t.Errorf("%d detail rows checked, want %d", checked, 2*2+7)
	}
}

// TestRunSeriesOff: --interval 0 writes no series CSV and leaves the
// stall columns empty.
func TestRunSeriesOff(t *testing.T) {
	o := runOptions(t)
	o.Rounds = 1
	o.Targets = []string{"kvstore"}
	o.Strategies = []string{"nopersist"}
	o.Modes = []string{"set"}
	o.Interval = 0
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Files.Series); !os.IsNotExist(err) {
		t.Errorf("series CSV with --interval 0: %v", err)
	}
	raw, err := os.ReadFile(res.Files.Detail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), ",stalls,longest_stall_ms") {
		t.Errorf("detail header without the stall columns")
	}
	for _, r := range readDetail(t, res) {
		if r.Stalls != nil || r.LongestStallMs != nil {
			t.Errorf("%v: stall columns %v %v without a series", r.Pos, *r.Stalls, *r.LongestStallMs)
		}
	}
}

// TestRunSeriesRewriteEvent: a BGREWRITEAOF started mid-measurement on
// an aof_everysec redis, slowed to last several intervals
// (rdb-key-save-delay), is in the events of the intervals it spans.
func TestRunSeriesRewriteEvent(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Rounds, o.Requests, o.Keyspace = 1, 20_000_000, 5_000
	o.Pipeline = 16
	o.Targets = []string{"redis"}
	o.Strategies = []string{"aof_everysec"}
	o.Modes = []string{"get"}
	o.Interval = 100 * time.Millisecond
	o.Retries = 0
	o.ProgressInterval = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var (
		mu      sync.Mutex
		addr    string
		started bool
		done    = make(chan error, 1)
	)
	o.Observe = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Kind == EventReady:
			addr = e.Instance.Addr
		case e.Kind == EventProgress && e.Progress.Phase == "run" && e.Progress.Done > 0 && !started && addr != "":
			started = true
			go func(addr string) { done <- rewriteThenStop(ctx, addr, cancel) }(addr)
		}
	}
	res, _, _, _ := runQuiet(t, ctx, o)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("the measurement never began")
	}
	var marked []float64
	for _, s := range readSeries(t, res) {
		if slices.Contains(results.SplitEvents(s.Events), results.EventAOFRewrite) {
			marked = append(marked, s.TS)
		}
	}
	if len(marked) < 2 {
		t.Fatalf("the rewrite is in the events of %d intervals (at %v), want at least 2", len(marked), marked)
	}
	for i := 1; i < len(marked); i++ {
		if d := marked[i] - marked[i-1]; d < 0.05 || d > 0.15 {
			t.Errorf("the rewrite's intervals at %v are not consecutive", marked)
		}
	}
}

// rewriteThenStop slows the server's saves (rdb-key-save-delay, µs per
// key), starts an AOF rewrite, waits for it to end and cancels the run.
func rewriteThenStop(ctx context.Context, addr string, cancel context.CancelFunc) error {
	defer cancel()
	c, err := control.Dial(ctx, addr, control.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do(ctx, "CONFIG", "SET", "rdb-key-save-delay", "100"); err != nil {
		return err
	}
	if _, err := c.Do(ctx, "BGREWRITEAOF"); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		m, err := c.Info(ctx, "persistence")
		if err != nil {
			return err
		}
		if m["aof_rewrite_in_progress"] == "0" && m["aof_rewrite_scheduled"] == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the rewrite did not end within a minute")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestRunSeriesCluster: a cluster target's series has a row per master
// and interval beside the whole's; each master's rows add up to its row
// of the nodes CSV, and the whole's to the detail row.
func TestRunSeriesCluster(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.ConfigFile = "../../testdata/run/redis-cluster.yaml"
	o.Rounds, o.Strategies, o.Modes, o.Requests, o.Keyspace, o.Pipeline = 1, []string{"none"}, []string{"set"}, 100_000, 100_000, 16
	o.Interval = 100 * time.Millisecond
	res, _, _, err := runQuiet(t, context.Background(), o)
	checkClean(t, o)
	if err != nil {
		t.Fatal(err)
	}
	detail := readDetail(t, res)
	if len(detail) != 1 || !detail[0].OK() {
		t.Fatalf("detail rows %+v", detail)
	}
	byNode := make(map[string]int64)
	var whole int64
	for _, s := range readSeries(t, res) {
		if s.Node == "" {
			whole += s.Requests
		} else {
			byNode[s.Node] += s.Requests
		}
	}
	if whole != detail[0].Requests {
		t.Errorf("the whole's intervals add up to %d requests, the detail row has %d", whole, detail[0].Requests)
	}
	if len(res.Nodes) != 3 {
		t.Fatalf("%d node rows, want 3", len(res.Nodes))
	}
	for _, n := range res.Nodes {
		if byNode[n.Node] != n.Requests {
			t.Errorf("node %s: its intervals add up to %d requests, its nodes CSV row has %d", n.Node, byNode[n.Node], n.Requests)
		}
	}
}
