package telemetry

import (
	"encoding/csv"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestServerCPUTooShort: server CPU time below MinServerCPU, or below ten
// steps of its readings' resolution, leaves server_cpu_s and
// qps_per_server_cpu_s empty in the detail CSV, never 0.
func TestServerCPUTooShort(t *testing.T) {
	res := loadgen.Result{Result: measure.Result{Elapsed: 20 * time.Millisecond, QPS: 1e6}}
	res.Config.Threads = 1
	for _, tc := range []struct {
		before, after target.Sample
		want          float64
	}{
		{target.Sample{CPU: time.Second, CPUStep: time.Nanosecond}, target.Sample{CPU: time.Second + 500*time.Microsecond, CPUStep: time.Nanosecond}, 0},
		{target.Sample{CPU: time.Second, CPUStep: time.Nanosecond}, target.Sample{CPU: time.Second + 1500*time.Microsecond, CPUStep: time.Nanosecond}, 0.0015},
		{target.Sample{CPU: time.Second, CPUStep: 10 * time.Millisecond}, target.Sample{CPU: time.Second + 20*time.Millisecond, CPUStep: 10 * time.Millisecond}, 0},
		{target.Sample{CPU: time.Second, CPUStep: time.Microsecond}, target.Sample{CPU: 900 * time.Millisecond, CPUStep: time.Microsecond}, 0},
	} {
		row := results.Row{Target: "kvstore", Strategy: "none", Mode: "set", Round: 1, Status: results.StatusOK, QPS: res.QPS, ElapsedS: res.Elapsed.Seconds()}
		c := CPUOf(res, time.Millisecond, tc.before, tc.after)
		row.ClientCPUS, row.ClientBound, row.ServerCPUS, row.QPSPerServerCPUS = c.ClientS, c.ClientBound, c.ServerS, c.QPSPerCPU
		if float64(row.ServerCPUS) != tc.want || (tc.want == 0) != (row.QPSPerServerCPUS == 0) {
			t.Errorf("server CPU %v to %v: server_cpu_s %v, qps_per_server_cpu_s %v, want %v", tc.before.CPU, tc.after.CPU, row.ServerCPUS, row.QPSPerServerCPUS, tc.want)
		}
		path := t.TempDir() + "/detail.csv"
		w, err := results.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&row); err != nil {
			t.Fatal(err)
		}
		w.Close()
		cells := csvCells(t, path)
		for _, c := range []string{"server_cpu_s", "qps_per_server_cpu_s"} {
			if got := cells[c]; (got == "") != (tc.want == 0) || got == "0" {
				t.Errorf("server CPU %v to %v: %s cell %q", tc.before.CPU, tc.after.CPU, c, got)
			}
		}
	}
}

// csvCells reads the one row of a detail CSV by column.
func csvCells(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%s: %d records, %v", path, len(recs), err)
	}
	m := make(map[string]string)
	for i, h := range recs[0] {
		m[h] = recs[1][i]
	}
	return m
}

// TestWorkloadCommands: a workload's commands are named as commandstats
// names them; a server command two workload commands share cannot be
// told apart, and leaves them both without figures.
func TestWorkloadCommands(t *testing.T) {
	cfg := loadgen.Config{Commands: []mix.Command{
		{Name: "READ", Args: []string{"GET", "__key__"}},
		{Name: "RMW", Args: []string{"HGET", "__key__", "f"}, Then: []string{"HSET", "__key__", "f", "__data__"}},
		{Name: "SCAN", Args: []string{"ZRANGE", "__key__", "0", "9"}},
		{Name: "SCAN2", Args: []string{"zrange", "__key__", "0", "99"}},
	}}
	each, all := WorkloadCommands(cfg)
	want := [][]string{{"get"}, {"hget", "hset"}, nil, nil}
	if !slices.EqualFunc(each, want, slices.Equal) || !slices.Equal(all, []string{"get", "hget", "hset", "zrange"}) {
		t.Errorf("each %v, all %v", each, all)
	}
}

// TestPhaseUnfinished: a phase whose readings were taken but that was
// never finished (the attempt failed between them) gives no figure, its
// RSS included.
func TestPhaseUnfinished(t *testing.T) {
	p := &Phase{ok: true, peakRSS: 1 << 20,
		before: target.Telemetry{Nodes: []map[string]string{{"cmdstat_get": "calls=1,usec=1", "used_memory": "100"}}}}
	rss, used := p.Memory()
	usec, calls := p.Commands([]string{"get"})
	if rss != 0 || used != 0 || usec != 0 || calls != 0 {
		t.Errorf("rss %v, used %v, usec per call %v, calls %v: want none", rss, used, usec, calls)
	}
}

// TestClientBoundRule: a generator busy for 85% of its threads' wall time
// or more is marked client-bound; the server's CPU time gives QPS per
// server CPU-second.
func TestClientBoundRule(t *testing.T) {
	res := loadgen.Result{Result: measure.Result{Elapsed: 2 * time.Second, QPS: 100_000}}
	res.Config.Threads = 2
	for _, tc := range []struct {
		client time.Duration
		bound  bool
	}{{3300 * time.Millisecond, false}, {3400 * time.Millisecond, true}, {4 * time.Second, true}, {0, false}} {
		c := CPUOf(res, tc.client, target.Sample{CPU: time.Second}, target.Sample{CPU: 1500 * time.Millisecond})
		if c.ClientBound != tc.bound || c.ClientS != tc.client.Seconds() || c.ServerS != 0.5 || c.QPSPerCPU != 400_000 {
			t.Errorf("client %v of 2 threads x 2s: %+v", tc.client, c)
		}
	}
	c := CPUOf(res, time.Second, target.Sample{CPU: -1}, target.Sample{CPU: -1})
	if c.ServerS != 0 || c.QPSPerCPU != 0 {
		t.Errorf("server CPU unknown: %+v", c)
	}
}
