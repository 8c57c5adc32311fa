package runner

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/telemetry"
	"github.com/kvbench/kvbench/pkg/runner/workloadrun"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/workload"
)

// TestServerTelemetry: a run of 20,000 requests against the kvstore and
// redis-server records the server's CPU time to the microsecond (never 0,
// consistent with the QPS), and the server's telemetry: its peak RSS above
// its used_memory, its time per call of the measured commands, and their
// calls (the kvstore's exactly the requests; redis's at least).
func TestServerTelemetry(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Rounds, o.Retries = []string{"kvstore", "redis"}, []string{"nopersist", "none"}, 1, 0
	o.Modes, o.Requests, o.Keyspace = []string{"set", "get", "mixed"}, 20_000, 20_000
	o.SetCmd, o.GetCmd = "SET", "GET" // mixed overwrites
	o.Chart = "none"
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6 (2 targets x 3 modes)", len(rows))
	}
	for _, r := range rows {
		name := r.Target + "/" + r.Mode
		if !r.OK() {
			t.Errorf("%s: %s: %s", name, r.Status, r.Error)
			continue
		}
		cpu, perCPU := float64(r.ServerCPUS), float64(r.QPSPerServerCPUS)
		if !(cpu > 0) || math.Abs(perCPU-r.QPS*r.ElapsedS/cpu) > 1e-6*perCPU || perCPU < 1e3 || perCPU > 1e8 {
			t.Errorf("%s: server %vs of CPU in %vs, %v QPS per server CPU-second for %v QPS", name, cpu, r.ElapsedS, perCPU, r.QPS)
		}
		calls := int64(r.ServerCalls)
		switch {
		case r.Target == "kvstore" && calls != r.Requests, r.Target == "redis" && calls < r.Requests:
			t.Errorf("%s: the server counted %d calls for %d requests", name, calls, r.Requests)
		}
		if !(r.ServerUsecPerCall > 0) || r.ServerUsecPerCall > 1e4 {
			t.Errorf("%s: %v µs per call", name, r.ServerUsecPerCall)
		}
		if r.ServerUsedMemoryBytes <= 0 || r.ServerRSSBytes <= r.ServerUsedMemoryBytes {
			t.Errorf("%s: RSS %d bytes, used_memory %d bytes", name, r.ServerRSSBytes, r.ServerUsedMemoryBytes)
		}
		t.Logf("%s: %.0f QPS, server CPU %.6fs, %.0f QPS per CPU-second, %.3f µs per call, %d calls, RSS %d, used %d",
			name, r.QPS, cpu, perCPU, r.ServerUsecPerCall, calls, r.ServerRSSBytes, r.ServerUsedMemoryBytes)
	}
	md, err := os.ReadFile(res.Files.Report)
	if err != nil {
		t.Fatal(err)
	}
	if _, section, ok := strings.Cut(string(md), "## Server telemetry\n"); !ok || !strings.Contains(section, "### kvstore") || !strings.Contains(section, "### redis") {
		t.Errorf("the report has no telemetry table per target:\n%s", md)
	}
}

// TestServerTelemetryWorkload: each command row of a workload carries its
// own command's commandstats (the kvstore counts exactly its requests),
// and the total row the whole mix's and the attempt's memory.
func TestServerTelemetryWorkload(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.Strategies, o.Rounds, o.Retries = []string{"kvstore"}, []string{"nopersist"}, 1, 0
	o.Workloads, o.Modes = []string{"ycsb-a"}, nil
	o.Requests, o.Keyspace = 20_000, 2_000
	o.Chart = "none"
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	var commands []string
	for _, r := range rows {
		if !r.OK() {
			t.Errorf("%s: %s: %s", r.Command, r.Status, r.Error)
			continue
		}
		commands = append(commands, r.Command)
		if int64(r.ServerCalls) != r.Requests || !(r.ServerUsecPerCall > 0) {
			t.Errorf("%s: %d requests, the server counted %d calls of %v µs", r.Command, r.Requests, r.ServerCalls, r.ServerUsecPerCall)
		}
		if total := r.Command == results.CommandTotal; total != (r.ServerRSSBytes > 0 && r.ServerUsedMemoryBytes > 0) {
			t.Errorf("%s: RSS %d bytes, used_memory %d bytes: want them on the total row only", r.Command, r.ServerRSSBytes, r.ServerUsedMemoryBytes)
		}
	}
	if want := []string{"READ", "UPDATE", results.CommandTotal}; !slices.Equal(commands, want) {
		t.Errorf("rows %v, want %v", commands, want)
	}
}

// TestTelemetryUnfinished: an attempt that failed between the readings
// (Finish never called) fills no telemetry column in its workload's rows.
func TestTelemetryUnfinished(t *testing.T) {
	p := telemetry.Start(context.Background(), target.Info{}, "")
	total := results.Row{Status: results.StatusFailed}
	total.ServerRSSBytes, total.ServerUsedMemoryBytes = p.Memory()
	total.ServerUsecPerCall, total.ServerCalls = p.Commands([]string{"get"})
	rows := workloadrun.Rows(total, &workload.Workload{Name: "read"}, loadgen.Config{Commands: []mix.Command{{Name: "READ", Args: []string{"GET", "__key__"}}}}, nil, p)
	for _, r := range rows {
		if r.ServerRSSBytes != 0 || r.ServerUsedMemoryBytes != 0 || r.ServerUsecPerCall != 0 || r.ServerCalls != 0 {
			t.Errorf("%s: %+v", r.Command, r)
		}
	}
}
