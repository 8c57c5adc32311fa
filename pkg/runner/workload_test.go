package runner

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/workloadrun"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/workload"
)

// TestRunWorkloadUnsupported: rb-six (SADD, ZADD) on the kvstore, which
// has no sets, and on Redis: the kvstore's rows are unsupported, one line
// says which commands it lacks, Redis is measured, and the run succeeds.
func TestRunWorkloadUnsupported(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Workloads = []string{"rb-six"}
	o.Rounds, o.Requests, o.Keyspace = 2, 6_000, 1_000
	o.Strategies = []string{"nopersist", "none"}
	o.Chart = "none"
	res, stdout, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	cmds := []string{"SET", "GET", "INCR", "SADD", "HSET", "ZADD", results.CommandTotal}
	count := make(map[string]int) // target status
	for _, r := range rows {
		if r.Mode != results.ModeWorkload || r.Workload != "rb-six" || !slices.Contains(cmds, r.Command) {
			t.Errorf("%s: mode %q workload %q command %q", r.Pos, r.Mode, r.Workload, r.Command)
		}
		count[r.Target+" "+r.Status]++
	}
	// 7 rows (6 commands and the total) per round and target.
	if want := map[string]int{"kvstore unsupported": 14, "redis ok": 14}; !maps.Equal(count, want) {
		t.Errorf("rows by target and status %v, want %v", count, want)
	}
	if n := strings.Count(stderr, "UNSUPPORTED"); n != 1 || !strings.Contains(stderr, "has no SADD, ZADD") {
		t.Errorf("want one line saying the kvstore has no SADD, ZADD; stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout, "- kvstore: not measured, unsupported: ") || !strings.Contains(stdout, "### rb-six: commands") {
		t.Errorf("the report lacks the workload table or the unsupported line:\n%s", stdout)
	}
	if len(res.Report.Failed) != 0 {
		t.Errorf("unsupported rows listed as failed attempts: %v", res.Report.Failed)
	}
}

// TestRunWorkloadYCSB: ycsb-a on the kvstore, three rounds: per attempt
// one row per command and the total, the commands' requests summing to
// the total's; the report trims each command on its own and has the
// workload's table, the same as "kvbench report" of the CSV gives.
func TestRunWorkloadYCSB(t *testing.T) {
	o := runOptions(t)
	o.Targets = []string{"kvstore"}
	o.Strategies = []string{"nopersist", "persist_no"}
	o.Workloads = []string{"ycsb-a"}
	o.Modes = []string{"set"}
	o.SetCmd, o.GetCmd = "SET", "GET" // the set rows overwrite: more requests than keys
	o.Requests, o.Keyspace = 10_000, 2_000
	o.Chart = "none"
	res, stdout, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	type attempt struct {
		strategy string
		round    int
	}
	sum := make(map[attempt]int64)
	total := make(map[attempt]int64)
	var set int
	for _, r := range rows {
		if !r.OK() {
			t.Errorf("%s: %s: %s", r.Pos, r.Status, r.Error)
		}
		if r.Mode == "set" {
			set++
			continue
		}
		a := attempt{r.Strategy, r.Round}
		switch r.Command {
		case "READ", "UPDATE":
			sum[a] += r.Requests
		case results.CommandTotal:
			total[a] = r.Requests
			if r.ValueSize != 1000 {
				t.Errorf("%s: value size %d, want ycsb-a's 1000", r.Pos, r.ValueSize)
			}
		default:
			t.Errorf("%s: command %q", r.Pos, r.Command)
		}
	}
	if set != 6 || len(total) != 6 {
		t.Errorf("%d set rows and %d workload attempts, want 6 each (2 strategies × 3 rounds)", set, len(total))
	}
	for a, n := range total {
		if n != o.Requests || sum[a] != n {
			t.Errorf("%v: total %d requests, commands %d; want %d", a, n, sum[a], o.Requests)
		}
	}
	rep := res.Report
	for _, mode := range []string{"ycsb-a READ", "ycsb-a UPDATE", "ycsb-a total"} {
		for _, st := range o.Strategies {
			sc := rep.Targets[0].Scenario(st, mode)
			if sc == nil || len(sc.Rounds) != 3 || sc.DroppedRound == 0 {
				t.Fatalf("scenario %s %s: %+v, want 3 rounds, one dropped", st, mode, sc)
			}
		}
	}
	if len(rep.Workloads) != 1 || len(rep.Workloads[0].Rows) != 6 {
		t.Fatalf("workload tables %+v, want one of 6 rows (3 commands × 2 strategies)", rep.Workloads)
	}
	if c := rep.Workloads[0].Rows[1].Change; c == nil || !c.Pct.Valid() {
		t.Errorf("persist_no READ: no change from the baseline: %+v", rep.Workloads[0].Rows[1])
	}
	again, err := results.ReadFiles([]string{res.Files.Detail})
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := report.Build(again, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep2.AddSeriesFile(res.Files.Series); err != nil { // as kvbench report reads it beside
		t.Fatal(err)
	}
	var md strings.Builder
	if err := output.Markdown(rep2, &md); err != nil {
		t.Fatal(err)
	}
	if md.String() != stdout {
		t.Errorf("kvbench report of the CSV differs from the run's report")
	}
}

// TestWorkloadOptions: a bad workload name or file is a usage error
// before any server starts, naming the file and line; --workloads alone
// measures no mode.
func TestWorkloadOptions(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("commands:\n  - command: GET __key__\n    ratio: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	total := filepath.Join(dir, "total.yaml")
	if err := os.WriteFile(total, []byte("commands:\n  - command: GET __key__\n    name: total\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ workload, want string }{
		{"no-such-workload", `no workload named "no-such-workload"`},
		{bad, bad + ":3: "},
		{total, `the name "total" is the whole mix's`},
	} {
		o := runOptions(t)
		o.Workloads = []string{c.workload}
		_, err := NewPlan(o)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrOptions with %q", c.workload, err, c.want)
		}
	}
	o := runOptions(t)
	o.Targets = []string{"kvstore"}
	o.Modes = nil
	o.Workloads = []string{"ycsb-c", "ycsb-c"}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) != 3 || p.Scenarios[0].Workload == nil || p.Scenarios[0].Name() != "kvstore/persist_no/ycsb-c" {
		t.Errorf("scenarios %v, want ycsb-c once per default strategy, no mode", p.Scenarios)
	}
}

// TestCheckWorkloadProbe: a server without COMMAND (renamed away) is
// asked with the commands themselves, on keys it is left without.
func TestCheckWorkloadProbe(t *testing.T) {
	testutil.RequireRedisServer(t)
	r, err := target.NewRedis(target.RedisConfig{Config: []string{`rename-command COMMAND ""`, `rename-command SADD ""`}})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Desc()
	st, _ := d.Select([]string{"none"})
	inst, err := r.Start(context.Background(), st[0], target.Env{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	cfg := workloadConfig(DefaultOptions(), mustWorkload(t, "rb-six"))
	cfg.Addr = inst.Info().Addr
	err = workloadrun.Check(context.Background(), cfg)
	if !errors.Is(err, mix.ErrUnsupported) || !strings.HasSuffix(err.Error(), "has no SADD") {
		t.Errorf("check: %v, want SADD unsupported", err)
	}
	b, err := control.Query(context.Background(), cfg.Addr, control.Options{}, "DBSIZE")
	if err != nil || string(b) != ":0\r\n" {
		t.Errorf("DBSIZE after the probe: %q %v, want 0", b, err)
	}
}

func mustWorkload(t *testing.T, name string) *workload.Workload {
	t.Helper()
	w, err := loadWorkload(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRunWorkloadAgents runs workloads through two agent processes (run
// --workloads with --agents 2) on Redis: ycsb-f (named commands, a
// read-modify-write, 1,000-byte values) and ycsb-d (latest and insert
// keys). Each command's row is the agents' merge, and ycsb-d's commands'
// requests add up to the mix's (ycsb-f's RMW is one operation of two).
func TestRunWorkloadAgents(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Rounds, o.Retries = []string{"redis"}, []string{"none"}, 1, 0
	o.Workloads, o.Modes, o.Agents, o.Connections = []string{"ycsb-f", "ycsb-d"}, []string{"set"}, 2, 2
	o.Requests, o.Keyspace, o.Chart = 6_000, 2_000, "none"
	res, _, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	checkClean(t, o)
	sum, total := map[string]int64{}, map[string]int64{}
	for _, r := range readDetail(t, res) {
		if !r.OK() || r.Agents != 2 {
			t.Errorf("%s %s %s: status %s (%s), %d agents; want ok, 2", r.Pos, r.Workload, r.Command, r.Status, r.Error, r.Agents)
		}
		switch {
		case r.Mode == "set":
		case r.Command == results.CommandTotal:
			total[r.Workload] = r.Requests
		default:
			sum[r.Workload] += r.Requests
			if r.Workload == "ycsb-f" && r.Command != "READ" && r.Command != "RMW" {
				t.Errorf("ycsb-f command %q, want READ or RMW", r.Command)
			}
		}
	}
	for _, w := range o.Workloads {
		if sum[w] == 0 || total[w] == 0 {
			t.Errorf("%s: commands %d requests, total %d", w, sum[w], total[w])
		}
	}
	if sum["ycsb-d"] != total["ycsb-d"] || total["ycsb-d"] != o.Requests {
		t.Errorf("ycsb-d: commands %d, total %d; want %d each", sum["ycsb-d"], total["ycsb-d"], o.Requests)
	}
}
