package calibration

import (
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// TestFromRows: a detail CSV's ok rows measured with the plan's load give
// a target's rates and timings, per shard for a cluster; rows of another
// load, failed rows and targets the plan does not name give none; a mixed
// rate not measured is combined from set and get.
func TestFromRows(t *testing.T) {
	row := func(target, mode, persistence string, qps float64, pipeline int) results.Row {
		return results.Row{Target: target, Strategy: "s", Persistence: persistence, Mode: mode, Status: results.StatusOK,
			Pipeline: pipeline, Connections: 1, ValueSize: 32, Requests: int64(qps), ElapsedS: 1, StartS: 0.2, StopS: 0.1}
	}
	cluster := row("cluster", "set", "none", 1000, 128)
	cluster.Shards = 4
	failed := row("kvstore", "get", "none", 1, 128)
	failed.Status = results.StatusFailed
	rows := []results.Row{
		row("kvstore", "set", "none", 100_000, 128), row("kvstore", "set", "always", 10_000, 128),
		row("kvstore", "get", "none", 300_000, 128), row("kvstore", "get", "none", 1, 16), failed,
		cluster, row("other", "set", "none", 5, 128),
	}
	got := FromRows(rows, Load{Pipeline: 128, Connections: 1, ValueSize: 32}, []string{"kvstore", "cluster", "absent"})
	if len(got) != 2 || got["other"] != nil || got["absent"] != nil {
		t.Fatalf("rates of %d targets: %v", len(got), got)
	}
	kv := got["kvstore"]
	if kv.Source != SourceLastRun || kv.QPS[KeyOf("none", "set", "set")] != 100_000 || kv.QPS[KeyOf("always", "set", "set")] != 10_000 ||
		kv.QPS[KeyOf("none", "get", "get")] != 300_000 {
		t.Errorf("kvstore: %+v", kv)
	}
	if q := kv.Rate(KeyOf("none", "mixed", "mixed"), 50); q != 150_000 {
		t.Errorf("mixed rate %v, want 150000 (a request's time the mix of set's and get's)", q)
	}
	if q := kv.Rate(KeyOf("none", "set", "ycsb-a"), 50); q != 100_000 {
		t.Errorf("workload rate %v, want the slower of set and get", q)
	}
	if c := got["cluster"]; c.Shards != 4 || c.Start != 50_000_000 {
		t.Errorf("cluster: %d shards, start %v a shard, want 4 and 50ms", c.Shards, c.Start)
	}
}
