package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner"
)

// execute runs args through the whole command tree in-process and returns
// the exit status and what was printed.
func execute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestBenchOptions: the flags reach the load generator's Config, and an
// allowed zero is kept.
func TestBenchOptions(t *testing.T) {
	var got *benchOptions
	cmd := newBenchCmd(func(_ context.Context, o *benchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--port", "7000", "--mode", "get", "--value-size", "0", "--set-ratio", "0",
		"--pipeline", "3", "--warmup", "2s", "--output", "json", "--seed", "9"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	c := got.Config
	if c.Addr != "127.0.0.1:7000" || c.Mode != loadgen.ModeGet || c.ValueSize != 0 || c.SetRatio != 0 ||
		c.Pipeline != 3 || c.Warmup.Seconds() != 2 || got.Output != output.FormatJSON || c.Seed != 9 {
		t.Errorf("options %+v", got)
	}
}

// TestBenchLeavesOtherKeys: bench against a server holding data deletes
// nothing: it writes and reads its own keys (--key-prefix) only.
func TestBenchLeavesOtherKeys(t *testing.T) {
	r := testutil.StartRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	ctx := context.Background()
	if err := rc.Set(ctx, "user:1", "precious", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(r.Addr, ":")
	for _, mode := range []string{"set", "get", "mixed"} {
		code, _, stderr := execute(t, "bench", "--host", "127.0.0.1", "--port", port, "--mode", mode,
			"--requests", "2000", "--keyspace", "1000", "--seed", "1", "--output", "json")
		if code != 0 {
			t.Fatalf("bench --mode %s: exit status %d\n%s", mode, code, stderr)
		}
	}
	if v, err := rc.Get(ctx, "user:1").Result(); err != nil || v != "precious" {
		t.Errorf("user:1 after bench: %q, %v", v, err)
	}
	if n, err := rc.DBSize(ctx).Result(); err != nil || n != 1+1000 {
		t.Errorf("DBSIZE %d (%v): want 1001, the user's key and bench's 1000", n, err)
	}
}

// TestUsageErrors: every bad flag value of every command is a usage error
// (exit 2) that names the flag or field, and nothing runs.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--pipeline", "0"}, "pipeline 0"},
		{[]string{"bench", "--connections", "0"}, "connections 0"},
		{[]string{"bench", "--requests", "0"}, "requests 0"},
		{[]string{"bench", "--keyspace", "0"}, "keyspace 0"},
		{[]string{"bench", "--threads", "-1"}, "--threads -1"},
		{[]string{"bench", "--output", "xml"}, "--output"},
		{[]string{"bench", "--prefill", "--tests", "get"}, "--tests cannot be used with --segment or --prefill"},
		{[]string{"bench", "--cluster", "--command", "MSET __key__ x __key__ y"}, "CROSSSLOT"},
		{[]string{"bench", "--pipeline", "x"}, "--pipeline"},
		{[]string{"serve", "--alloc", "foo"}, "--alloc"},
		{[]string{"serve", "--persist", "sometimes"}, "--persist"},
		{[]string{"serve", "--io", "kqueue"}, `--io "kqueue": want auto, epoll or uring`},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"report", "--format", "xml", "x.csv"}, "--format"},
		{[]string{"report", "--lang", "fr", "x.csv"}, "--lang"},
		{[]string{"report"}, "at least one detail CSV"},
		{[]string{"report", "--precision", "0", "x.csv"}, "--precision"},
		{[]string{"report", "--precision", "x%", "x.csv"}, "--precision"},
		{[]string{"compare", "--precision", "60%", "a.csv", "b.csv"}, "--precision"},
		{[]string{"history", "check", "--history", "off", "--precision", "0"}, "--precision"},
		{[]string{"history", "trend", "--history", "off", "--precision", "-1%"}, "--precision"},
		{[]string{"report", "--reference", "valkey", "../../testdata/report/seed000/*.csv"}, `reference "valkey": no such target (the rows have kvstore, redis)`},
		{[]string{"run", "--dry-run", "--targets", "kvstore", "--reference", "redis"}, `reference "redis": not a target of the run (kvstore)`},
		{[]string{"run", "--rounds", "0"}, "rounds 0"},
		{[]string{"run", "--pipeline", "0"}, "pipeline 0"},
		{[]string{"run", "--workloads", "ycsb-z"}, `workload ycsb-z: no workload named "ycsb-z"`},
		{[]string{"run", "--workloads", "ycsb-a,none.yaml"}, "workload none.yaml: open none.yaml"},
		{[]string{"bench", "--set-cmd", "RSET", "--mode", "set", "--requests", "100000", "--keyspace", "20000"}, "RSET only inserts: a set run of 100000 requests over 20000 keys would have 80000 refused writes"},
		{[]string{"bench", "--set-cmd", "rset", "--mode", "mixed"}, "rset only inserts: the writes of a mixed run meet keys written before"},
		{[]string{"run", "--dry-run", "--targets", "kvstore", "--modes", "set", "--requests", "100000", "--keyspace", "20000"}, "target kvstore, mode set: RSET only inserts"},
		{[]string{"run", "--dry-run", "--targets", "kvstore", "--modes", "mixed"}, "target kvstore, mode mixed: RSET only inserts"},
		{[]string{"run", "extra"}, "unknown command"},
		{[]string{"version", "extra"}, "unknown command"},
	} {
		code, _, stderr := execute(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestServeAllocNames: serve takes the allocators' names of run and of the
// reference script (mypool, malloc) and its own (pool, go).
func TestServeAllocNames(t *testing.T) {
	for name, want := range map[string]string{"mypool": "pool", "pool": "pool", "malloc": "go", "go": "go", "MyPool": "pool"} {
		var got string
		cmd := newServeCmd(func(_ context.Context, o *serveOptions) error { got = o.alloc; return nil })
		cmd.SetArgs([]string{"--alloc", name})
		if err := cmd.Execute(); err != nil || got != want {
			t.Errorf("--alloc %s: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestApplyEnv: the environment sets the flags not given, a flag given
// wins, and a bad value names the variable and its flag.
func TestApplyEnv(t *testing.T) {
	flags := func() (*pflag.FlagSet, *runner.Options) {
		o := runner.DefaultOptions()
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.IntVar(&o.Rounds, "rounds", o.Rounds, "")
		f.Int64Var(&o.Requests, "requests", o.Requests, "")
		f.IntVar(&o.ValueSize, "value-size", o.ValueSize, "")
		f.StringVar(&o.SetCmd, "set-cmd", o.SetCmd, "")
		return f, &o
	}
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}

	f, o := flags()
	if err := f.Parse([]string{"--rounds", "7"}); err != nil {
		t.Fatal(err)
	}
	err := applyEnv(f, env(map[string]string{"ROUNDS": "3", "REQ": "1000", "VSIZE": "0", "SET_CMD": "HSET", "UNRELATED": "x"}))
	if err != nil || o.Rounds != 7 || o.Requests != 1000 || o.ValueSize != 0 || o.SetCmd != "HSET" {
		t.Errorf("rounds %d requests %d value size %d set-cmd %s, err %v; want 7 1000 0 HSET",
			o.Rounds, o.Requests, o.ValueSize, o.SetCmd, err)
	}

	f, _ = flags()
	err = applyEnv(f, env(map[string]string{"REQ": "many"}))
	if err == nil || !strings.Contains(err.Error(), `REQ="many" (for --requests)`) {
		t.Errorf("bad REQ: %v", err)
	}
}

// TestRunOptions: run's flags and environment reach runner.Options.
func TestRunOptions(t *testing.T) {
	t.Setenv("PIPE", "16")
	var got *runOptions
	cmd := newRunCmd(func(_ context.Context, o *runOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--rounds", "2", "--value-size", "0", "--targets", "kvstore"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Rounds != 2 || got.ValueSize != 0 || got.Pipeline != 16 || len(got.Targets) != 1 {
		t.Errorf("options %+v", got.Options)
	}
	// --workloads alone measures no mode; --modes beside it does.
	for _, tc := range []struct {
		args  []string
		modes []string
	}{
		{[]string{"--workloads", "ycsb-a"}, []string{}},
		{[]string{"--workloads", "ycsb-a", "--modes", "get"}, []string{"get"}},
		{nil, []string{"set", "get"}},
	} {
		cmd := newRunCmd(func(_ context.Context, o *runOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Modes, tc.modes) {
			t.Errorf("%v: modes %q, want %q", tc.args, got.Modes, tc.modes)
		}
	}
}

// detailCSV writes a detail CSV of one scenario whose rounds have the
// given QPS, and returns its path.
func detailCSV(t *testing.T, qps ...float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kvbench_detail_1.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range qps {
		r := results.Row{Target: "kvstore", Strategy: "nopersist", Mode: "set", Round: i + 1, Status: results.StatusOK, QPS: q}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompareExit: the gate exits 3 on a significant regression, 0 on an
// improvement; mismatched arguments are usage errors.
func TestCompareExit(t *testing.T) {
	fast := detailCSV(t, 100100, 99800, 100300, 99900, 100050, 100200)
	slow := detailCSV(t, 90100, 89800, 90300, 89900, 90050, 90200)
	code, stdout, stderr := execute(t, "compare", "--threshold", "5", fast, slow)
	if code != ExitRegression || !strings.Contains(stdout, "-9.99% !") || !strings.Contains(stderr, "significant regression") {
		t.Errorf("regression: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr = execute(t, "compare", "--threshold", "5", slow, fast); code != 0 {
		t.Errorf("improvement: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"compare", fast}, {"compare", "--by", "label", "a", "b"}, {"compare", "--format", "xml", fast, slow}} {
		if code, _, stderr := execute(t, args...); code != 2 {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// TestReportReference: --reference chooses the column the side-by-side
// tables divide by.
func TestReportReference(t *testing.T) {
	for ref, want := range map[string]string{"": "kvstore/redis QPS", "kvstore": "redis/kvstore QPS"} {
		args := []string{"report", "../../testdata/report/seed000/*.csv"}
		if ref != "" {
			args = append(args, "--reference", ref)
		}
		code, out, stderr := execute(t, args...)
		if code != 0 || !strings.Contains(out, "| "+want+" |") {
			t.Errorf("--reference %q: exit %d, %s; the side-by-side tables lack %q:\n%s", ref, code, stderr, want, out)
		}
	}
}

// TestReportComparisons: --comparisons-csv writes a row per comparison,
// and --precision is the margin of their verdicts: the kvstore's
// persist_no is within 1% of nopersist in the adaptive test run, so it is
// "equivalent" at 3% and undecided at 0.1%.
func TestReportComparisons(t *testing.T) {
	dir := t.TempDir()
	for precision, want := range map[string]string{"3%": "kvstore,persist_no,set,kvstore,nopersist,qps,1.0041,0.9994,1.0087,0.9512,equivalent,10",
		"0.1": "kvstore,persist_no,set,kvstore,nopersist,qps,1.0041,0.9994,1.0087,0.9512,undecided,10"} {
		file := filepath.Join(dir, "comparisons.csv")
		code, out, stderr := execute(t, "report", "--precision", precision, "--comparisons-csv", file, "../../testdata/report/synthetic/adaptive.csv")
		if code != 0 || !strings.Contains(out, "## Comparisons") {
			t.Fatalf("--precision %s: exit %d, %s\n%s", precision, code, stderr, out)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(got), "target,strategy,mode,against_target,against_strategy,metric,ratio,ratio_lo,ratio_hi,confidence,verdict,measurements\n"+want+"\n") {
			t.Errorf("--precision %s: the comparisons CSV does not start with the header and %q:\n%s", precision, want, got)
		}
	}
}

// TestReportDirectory: a directory stands for its detail CSVs, as
// "kvbench run --out DIR" wrote them, for report as for compare; one with
// none is an error naming it.
func TestReportDirectory(t *testing.T) {
	code, fromDir, stderr := execute(t, "report", "../../testdata/report/seed000")
	if code != 0 {
		t.Fatalf("report DIR: exit %d: %s", code, stderr)
	}
	if _, fromGlob, _ := execute(t, "report", "../../testdata/report/seed000/*_detail*.csv"); fromDir != fromGlob {
		t.Errorf("report DIR and report DIR/*_detail_*.csv differ:\n%s\n---\n%s", fromDir, fromGlob)
	}
	empty := t.TempDir()
	if code, _, stderr := execute(t, "report", empty); code != 1 || !strings.Contains(stderr, "no *_detail*.csv in directory "+empty) {
		t.Errorf("report of an empty directory: exit %d: %s", code, stderr)
	}
}
