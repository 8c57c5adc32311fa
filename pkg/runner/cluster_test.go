package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunClusterMasterKilled kills one master of a spawned 3-master
// redis-cluster in the middle of the first attempt's measurement: that
// attempt fails with a reason naming the node, the retry runs on a fresh
// cluster, and the run completes.
func TestRunClusterMasterKilled(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.ConfigFile = "../../testdata/run/redis-cluster.yaml"
	o.Rounds, o.Strategies, o.Modes, o.Requests, o.Keyspace, o.Pipeline = 1, []string{"none"}, []string{"set"}, 300_000, 100_000, 16
	o.Retries = 1
	o.ProgressInterval = 5 * time.Millisecond
	var mu sync.Mutex
	var victim string // the killed master's address
	o.Observe = func(e Event) {
		if e.Kind != EventProgress || e.Attempt != 1 || e.Progress.Phase != "run" || e.Progress.Done == 0 || e.Progress.Final {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if victim != "" || len(e.Instance.NodePIDs) != 3 {
			return
		}
		victim = e.Instance.Nodes[1]
		_ = syscall.Kill(-e.Instance.NodePIDs[1], syscall.SIGKILL)
	}
	start := time.Now()
	res, _, _, err := runQuiet(t, context.Background(), o)
	checkClean(t, o)
	if victim == "" {
		t.Fatal("no master was killed mid-round (the measurement ended first?)")
	}
	if err != nil {
		t.Fatalf("run: %v (after %v)", err, time.Since(start))
	}
	rows := readDetail(t, res)
	var statuses []string
	for _, r := range rows {
		statuses = append(statuses, r.Status)
	}
	if want := []string{results.StatusFailed, results.StatusOK}; !slices.Equal(statuses, want) {
		t.Fatalf("rows %v, want %v", statuses, want)
	}
	if e := rows[0].Error; !strings.Contains(e, "cluster node "+victim+" lost mid-run") || !strings.Contains(e, "no other master serves") {
		t.Errorf("failed row's reason %q does not name the killed node %s and why the run cannot go on", e, victim)
	}
	if rows[1].Attempt != 2 || rows[1].Shards != 3 || rows[1].Errors != 0 {
		t.Errorf("retry: attempt %d shards %d errors %d", rows[1].Attempt, rows[1].Shards, rows[1].Errors)
	}
}

// TestRunKvstoreClusterVsRedisCluster runs the built-in kvstore-cluster
// and redis-cluster targets side by side: every row ok with 3 shards,
// every node's keys counted, nothing left running, and the report
// compares the two strategy by strategy.
func TestRunKvstoreClusterVsRedisCluster(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets = []string{"kvstore-cluster", "redis-cluster"}
	o.Baselines = "kvstore-cluster=nopersist,redis-cluster=none"
	o.Strategies = []string{"nopersist", "none"}
	o.Rounds, o.Modes, o.Requests, o.Keyspace = 1, []string{"set", "get"}, 4000, 4000
	res, stdout, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 4 || len(okRounds(rows)) != 4 {
		t.Fatalf("%d rows, ok %v: want 2 targets × 2 modes, all ok", len(rows), okRounds(rows))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Target] = true
		if r.Shards != 3 || r.Errors != 0 || r.Requests != o.Requests {
			t.Errorf("row %v: target %s shards %d errors %d requests %d", r.Pos, r.Target, r.Shards, r.Errors, r.Requests)
		}
	}
	if !seen["kvstore-cluster"] || !seen["redis-cluster"] {
		t.Errorf("targets %v", seen)
	}
	if len(res.Nodes) != 3*len(rows) {
		t.Errorf("%d node rows, want 3 per attempt", len(res.Nodes))
	}
	if !strings.Contains(stdout, "kvstore-cluster") || !strings.Contains(stdout, "redis-cluster") {
		t.Errorf("the report does not cover both clusters:\n%s", stdout)
	}
	// The spread over the nodes: a line per cluster scenario.
	_, spread, _ := strings.Cut(stdout, "## Cluster nodes: spread of load and latency")
	for _, want := range []string{"| kvstore-cluster | nopersist | get  |      3 |", "| redis-cluster   | none      | set  |      3 |"} {
		if !strings.Contains(spread, want) {
			t.Errorf("the report's node spread lacks %q:\n%s", want, spread)
		}
	}
}
