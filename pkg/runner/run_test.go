package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// runOptions are small options writing into the test's directories.
func runOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.KvstoreBin = kvbenchBin
	o.Rounds, o.Requests, o.Keyspace = 3, 20_000, 20_000
	o.OutDir = filepath.Join(t.TempDir(), "results")
	o.TempDir = t.TempDir()
	o.KVPort = 0
	o.Tracker = &target.Tracker{}
	return o
}

// runQuiet runs o and returns the result, what it printed and its error.
func runQuiet(t *testing.T, ctx context.Context, o Options) (res *Result, stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	res, err = Run(ctx, o, &out, &errOut)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr:\n%s", errOut.String())
		}
	})
	return res, out.String(), errOut.String(), err
}

// checkClean checks that no server is left in the process table and no
// temporary directory on disk.
func checkClean(t *testing.T, o Options) {
	t.Helper()
	if ps := testutil.Processes(o.TempDir); len(ps) > 0 {
		testutil.KillProcesses(ps)
		t.Errorf("servers left running: %+v", ps)
	}
	if n := o.Tracker.Live(); n > 0 {
		t.Errorf("%d process groups still live", n)
	}
	entries, _ := os.ReadDir(o.TempDir)
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

// readDetail reads the detail CSV back as "kvbench report" does.
func readDetail(t *testing.T, res *Result) []results.Row {
	t.Helper()
	raw, err := os.ReadFile(res.Files.Detail)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(raw), "\n")
	if header != strings.Join(results.Columns, ",") {
		t.Errorf("detail header %s\nwant %s", header, strings.Join(results.Columns, ","))
	}
	rows, err := results.ReadFiles([]string{res.Files.Detail})
	if err != nil {
		t.Fatalf("the detail CSV does not parse: %v", err)
	}
	return rows
}

// okRounds counts the ok rows per "target/strategy/mode round".
func okRounds(rows []results.Row) map[string]int {
	m := make(map[string]int)
	for _, r := range rows {
		if r.OK() {
			m[fmt.Sprintf("%s/%s/%s %d", r.Target, r.Strategy, r.Mode, r.Round)]++
		}
	}
	return m
}

func TestRunEndToEnd(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	res, stdout, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)

	f := res.Files
	for _, p := range []string{f.Detail, f.Summary, f.Trimmed, f.Report, f.HTML, f.Chart} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("result file %s: %v", p, err)
		}
	}
	for _, p := range []string{f.Detail, f.Summary, f.Trimmed, f.Report} {
		if !strings.HasPrefix(filepath.Base(p), "kvbench_") || !strings.Contains(p, res.RunID) {
			t.Errorf("file name %s: want kvbench_<kind>_%s", p, res.RunID)
		}
	}

	// One ok row per round × scenario: kvstore and redis, 3 strategies
	// each, set and get, 3 rounds.
	rows := readDetail(t, res)
	ok := okRounds(rows)
	if len(ok) != 36 {
		t.Errorf("%d ok (scenario, round) pairs, want 36", len(ok))
	}
	for k, n := range ok {
		if n != 1 {
			t.Errorf("%s: %d ok rows", k, n)
		}
	}
	for _, r := range rows {
		if !r.OK() {
			continue
		}
		if r.ServerVersion == "" || !strings.Contains(r.ServerConfig, "appendonly=") || r.RunID != res.RunID {
			t.Errorf("row %v: version %q config %q run %q", r.Pos, r.ServerVersion, r.ServerConfig, r.RunID)
		}
		if r.Seed != DefaultSeed+int64(r.Round) || r.Requests != 20_000 || r.Keyspace != 20_000 || r.Pipeline != DefaultPipeline {
			t.Errorf("row %v: seed %d requests %d keyspace %d pipeline %d", r.Pos, r.Seed, r.Requests, r.Keyspace, r.Pipeline)
		}
		if r.ClientHost == "" || r.CPUModel == "" || r.Cores != runtime.NumCPU() || r.Kernel == "" {
			t.Errorf("row %v: machine %q, %q, %d cores, kernel %q", r.Pos, r.ClientHost, r.CPUModel, r.Cores, r.Kernel)
		}
		if (r.Mode == "get") != (r.PrefillS > 0) {
			t.Errorf("row %v: %s with prefill %v s", r.Pos, r.Mode, r.PrefillS)
		}
		if r.Mode == "get" && (r.Misses != 0 || r.VerifyFailures != 0) {
			t.Errorf("row %v: %d misses, %d wrong values", r.Pos, r.Misses, r.VerifyFailures)
		}
	}

	// The report's figures are those of "kvbench report" on the same CSV.
	dir := t.TempDir()
	var trimmed, jsonOut bytes.Buffer
	opts := output.RunOptions{Inputs: []string{f.Detail}, Format: render.CSV, SummaryCSV: filepath.Join(dir, "summary.csv")}
	if err := output.Run(context.Background(), opts, &trimmed); err != nil {
		t.Fatal(err)
	}
	sameFile(t, f.Trimmed, trimmed.Bytes())
	summary, _ := os.ReadFile(opts.SummaryCSV)
	sameFile(t, f.Summary, summary)
	opts.Format, opts.SummaryCSV = render.JSON, ""
	if err := output.Run(context.Background(), opts, &jsonOut); err != nil {
		t.Fatal(err)
	}
	var mine bytes.Buffer
	if err := output.JSON(res.Report, &mine); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mine.Bytes(), jsonOut.Bytes()) {
		t.Error("the run's report differs from kvbench report's JSON on the same CSV")
	}
	var page bytes.Buffer
	opts.Format = render.HTML
	if err := output.Run(context.Background(), opts, &page); err != nil {
		t.Fatal(err)
	}
	sameFile(t, f.HTML, page.Bytes())
	checkSideBySide(t, stdout)
	// The markdown file is the printed report with a link to the chart
	// beside it.
	md, _ := os.ReadFile(f.Report)
	link := "\n![Trimmed mean QPS per scenario](" + filepath.Base(f.Chart) + ")\n"
	if strings.Replace(string(md), link, "", 1) != stdout || !strings.Contains(string(md), link) ||
		!strings.Contains(stdout, "## redis") || !strings.Contains(stdout, "## kvstore") {
		t.Errorf("stdout is not the markdown report without the chart's link:\n%.300s", stdout)
	}
	// The printed markdown is what "kvbench report" prints on the detail
	// CSV, byte for byte, though the rows came in the run's shuffled
	// order: the report orders targets and strategies by what the CSV says.
	var fromCSV bytes.Buffer
	if err := output.Run(context.Background(), output.RunOptions{Inputs: []string{f.Detail}}, &fromCSV); err != nil {
		t.Fatal(err)
	}
	if fromCSV.String() != stdout {
		t.Errorf("the run's markdown differs from kvbench report's on the same CSV:\n%s\nwant:\n%s", stdout, fromCSV.String())
	}
	if !strings.Contains(stdout, "- load generator: ") || strings.Index(stdout, "## kvstore") > strings.Index(stdout, "## redis") {
		t.Errorf("the markdown lacks the machine, or redis comes before the kvstore:\n%.600s", stdout)
	}
	if !strings.Contains(stderr, "[36/36]") || !strings.Contains(stderr, "orchestration") {
		t.Errorf("stderr lacks the progress lines:\n%s", stderr)
	}
	if res.Timing.Measure <= 0 || res.Timing.Start <= 0 || res.Timing.Prefill <= 0 || res.Wall < res.Timing.Total() {
		t.Errorf("timing %+v, wall %v", res.Timing, res.Wall)
	}
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from kvbench report's:\n%s\nwant:\n%s", path, got, want)
	}
}

// killer returns an Observe function that kills the server of the first
// attempt of every step in its measurement phase, once it has replied to
// some requests, for the first kills steps.
func killer(kills int) (func(Event), func() int) {
	var mu sync.Mutex
	killed := make(map[int]bool)
	return func(e Event) {
			if e.Kind != EventProgress || e.Attempt != 1 || e.Progress.Phase != "run" || e.Progress.Done == 0 || e.Progress.Final {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if killed[e.Step] || len(killed) >= kills {
				return
			}
			killed[e.Step] = true
			_ = syscall.Kill(-e.Instance.PID, syscall.SIGKILL)
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(killed)
		}
}

func TestRunServerKilledMidRound(t *testing.T) {
	tests := []struct {
		name      string
		retries   int
		wantErr   error
		wantRows  []string // status of each row, in order
		wantSkips int
	}{
		{"retried", 1, nil, []string{results.StatusFailed, results.StatusOK, results.StatusOK}, 0},
		{"out of retries", 0, ErrScenariosFailed, []string{results.StatusFailed}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runOptions(t)
			o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"persist_everysec"}, []string{"set"}
			o.Rounds, o.Requests, o.Keyspace, o.Pipeline = 2, 200_000, 200_000, 16
			o.Retries = tt.retries
			o.ProgressInterval = 5 * time.Millisecond
			observe, kills := killer(1)
			skips := 0
			o.Observe = func(e Event) {
				observe(e)
				if e.Kind == EventSkip {
					skips++
				}
			}
			res, _, stderr, err := runQuiet(t, context.Background(), o)
			checkClean(t, o)
			if kills() != 1 {
				t.Fatalf("the server was not killed mid-round (the measurement ended first?)")
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			rows := readDetail(t, res)
			var statuses []string
			for _, r := range rows {
				statuses = append(statuses, r.Status)
			}
			if !slices.Equal(statuses, tt.wantRows) {
				t.Fatalf("rows %v, want %v", statuses, tt.wantRows)
			}
			failed := rows[0]
			if failed.Round != 1 || failed.Attempt != 1 || !strings.Contains(failed.Error, "server exited") || !strings.Contains(failed.Error, "killed") {
				t.Errorf("failed row: round %d attempt %d error %q", failed.Round, failed.Attempt, failed.Error)
			}
			if len(rows) > 1 && (rows[1].Round != 1 || rows[1].Attempt != 2) {
				t.Errorf("retry: round %d attempt %d", rows[1].Round, rows[1].Attempt)
			}
			if skips != tt.wantSkips {
				t.Errorf("%d skipped steps, want %d", skips, tt.wantSkips)
			}
			if res.Report == nil || len(res.Report.Failed) != 1 {
				t.Errorf("report lists %v failed attempts, want 1", res.Report)
			}
			if tt.wantErr != nil && !strings.Contains(stderr, "FAILED, no retries left") {
				t.Errorf("stderr does not say the scenario failed:\n%s", stderr)
			}
		})
	}
}

func TestRunInterrupted(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"nopersist", "persist_no"}, []string{"set"}
	o.Rounds, o.Requests, o.Keyspace, o.Pipeline = 1, 100_000, 100_000, 16
	o.ProgressInterval = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	o.Observe = func(e Event) {
		// Cancel in the second step's measurement: the first has ended.
		if e.Kind == EventProgress && e.Step == 2 && e.Progress.Phase == "run" && e.Progress.Done > 0 && cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
	}
	res, stdout, _, err := runQuiet(t, ctx, o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if cancelled.IsZero() {
		t.Fatal("the second measurement ended before it could be interrupted")
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 2 || rows[0].Status != results.StatusOK || rows[1].Status != results.StatusInterrupted {
		t.Fatalf("rows %+v: want ok, interrupted", rows)
	}
	if !res.Interrupted || !strings.Contains(stdout, "# kvbench report") || !strings.Contains(stdout, "interrupted") {
		t.Errorf("no partial report printed:\n%s", stdout)
	}
}

func TestRunCommandTargetFromYAML(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.ConfigFile = "../../testdata/run/redis-command.yaml"
	o.Rounds, o.Modes = 2, []string{"set", "get"}
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if ok := okRounds(rows); len(ok) != 8 {
		t.Errorf("ok rounds %v: want 2 strategies × 2 modes × 2 rounds", ok)
	}
	for _, r := range rows {
		want := "save=;appendonly=no;appendfsync=everysec"
		if r.Strategy == "aof_everysec" {
			want = "save=;appendonly=yes;appendfsync=everysec"
		}
		if r.Target != "redis-cmd" || r.ServerConfig != want || r.Persistence != map[string]string{"none": "none", "aof_everysec": "everysec"}[r.Strategy] {
			t.Errorf("row %v: %s %s persistence %s config %q", r.Pos, r.Target, r.Strategy, r.Persistence, r.ServerConfig)
		}
	}
	// The baseline is found from the persistence column.
	if tr := res.Report.Targets[0]; len(tr.Overheads) == 0 || tr.Overheads[0].Baseline != "none" {
		t.Errorf("no overhead table against none: %+v", tr.Overheads)
	}
}

// TestRunAttachFlushes: an attach target holding keys before the run is
// refused, once, without a retry and without a key deleted, unless
// emptying it is allowed (--allow-flush, or allow_flush: true); then the
// first row says it was flushed, and so does the report.
func TestRunAttachFlushes(t *testing.T) {
	tests := []struct {
		name      string
		flag      bool
		fileFlush bool
		allowed   bool
	}{
		{name: "refused"},
		{name: "--allow-flush", flag: true, allowed: true},
		{name: "allow_flush", fileFlush: true, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testutil.StartRedis(t)
			cfg := filepath.Join(t.TempDir(), "attach.yaml")
			yaml := fmt.Sprintf("targets:\n  - name: remote\n    kind: attach\n    addr: %s\n    baseline: as_configured\n    strategies: [as_configured, again]\n", r.Addr)
			if tt.fileFlush {
				yaml += "    allow_flush: true\n"
			}
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			// 1,234 keys of someone's, in one MSET.
			mset := fmt.Sprintf("*%d\r\n$4\r\nMSET\r\n", 1+2*1234)
			for i := range 1234 {
				k := fmt.Sprintf("user:%04d", i)
				mset += fmt.Sprintf("$%d\r\n%s\r\n$1\r\nx\r\n", len(k), k)
			}
			if err := redisCmd(r.Addr, mset, nil); err != nil {
				t.Fatal(err)
			}
			o := runOptions(t)
			o.ConfigFile, o.Rounds, o.Requests, o.Keyspace, o.AllowFlush = cfg, 2, 5000, 1000, tt.flag
			res, stdout, _, err := runQuiet(t, context.Background(), o)
			rows := readDetail(t, res)
			var n int
			if err := redisCmd(r.Addr, "*1\r\n$6\r\nDBSIZE\r\n", &n); err != nil {
				t.Fatal(err)
			}
			if err := testutil.Ping(r.Addr, time.Second); err != nil {
				t.Errorf("the attached server is gone: %v", err)
			}
			if !tt.allowed {
				if !errors.Is(err, ErrScenariosFailed) {
					t.Fatalf("err %v, want ErrScenariosFailed", err)
				}
				want := "remote: server not empty: " + r.Addr + " holds 1,234 keys; kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target"
				if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, want) || rows[0].Flushed {
					t.Errorf("rows %+v: want one failed row saying %q", rows, want)
				}
				if len(res.Failed) != 4 {
					t.Errorf("failed scenarios %v: want all 4 (2 strategies × set, get)", res.Failed)
				}
				if n != 1234 {
					t.Errorf("DBSIZE %d after the refusal: want the 1234 keys kept", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok := okRounds(rows); len(ok) != 8 {
				t.Errorf("ok rounds %v", ok)
			}
			for i, row := range rows {
				if row.Flushed != (i == 0) {
					t.Errorf("row %d: flushed %v, want %v (only the first attempt found keys kvbench had not written)", i+1, row.Flushed, i == 0)
				}
			}
			if !strings.Contains(stdout, "Flushed: remote held keys kvbench had not written") {
				t.Errorf("the report does not say remote was flushed:\n%s", stdout)
			}
			if n != 1000 {
				t.Errorf("DBSIZE %d after the run: want the last attempt's 1000 keys", n)
			}
		})
	}
}

// redisCmd sends one encoded command and reads an integer reply into n
// (when set).
func redisCmd(addr, cmd string, n *int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte(cmd)); err != nil {
		return err
	}
	buf := make([]byte, 64)
	m, err := c.Read(buf)
	if err != nil || n == nil {
		return err
	}
	_, err = fmt.Sscanf(string(buf[:m]), ":%d", n)
	return err
}

func TestRunDryRunWritesNothing(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.DryRun = []string{"kvstore"}, true
	res, stdout, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "estimated time:") || !strings.Contains(stdout, "18. round 3") {
		t.Errorf("dry run output:\n%s", stdout)
	}
	if _, err := os.Stat(o.OutDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created %s", o.OutDir)
	}
	if res.Plan == nil || res.Files.Detail != "" {
		t.Errorf("result %+v", res)
	}
}

// TestRunPrefillsKvstoreWithMSET runs get attempts on the kvstore with
// SET/GET, which the prefill writes with MSET: every read finds its value.
func TestRunPrefillsKvstoreWithMSET(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"persist_everysec"}, []string{"get", "mixed"}
	o.SetCmd, o.GetCmd, o.Rounds = "SET", "GET", 1
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, r := range rows {
		if !r.OK() || r.PrefillS <= 0 || r.Misses != 0 || r.VerifyFailures != 0 || r.Requests != o.Requests {
			t.Errorf("row %v: %s %s, prefill %v s, %d requests, %d misses, %d wrong values", r.Pos, r.Mode, r.Status, r.PrefillS, r.Requests, r.Misses, r.VerifyFailures)
		}
	}
}

// TestRunRefusesNonEmptyServer: a server that starts with a key (a
// command target loading an RDB file) fails its get attempt before the
// prefill writes anything.
func TestRunRefusesNonEmptyServer(t *testing.T) {
	r := testutil.StartRedis(t)
	if err := redisCmd(r.Addr, "*3\r\n$3\r\nSET\r\n$5\r\nstale\r\n$1\r\nx\r\n", nil); err != nil {
		t.Fatal(err)
	}
	if err := redisCmd(r.Addr, "*1\r\n$4\r\nSAVE\r\n", nil); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "stale.rdb")
	raw, err := os.ReadFile(filepath.Join(r.Dir, "dump.rdb"))
	if err == nil {
		err = os.WriteFile(dump, raw, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "preloaded.yaml")
	yaml := fmt.Sprintf(`targets:
  - name: preloaded
    kind: command
    command: ["redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--daemonize", "no", "--dir", %q, "--dbfilename", "stale.rdb"]
    baseline: none
    strategies:
      none: ["--save", "", "--appendonly", "no"]
`, filepath.Dir(dump))
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOptions(t)
	o.ConfigFile, o.Modes, o.Rounds, o.Retries = cfg, []string{"get"}, 1, 0
	res, _, _, err := runQuiet(t, context.Background(), o)
	if !errors.Is(err, ErrScenariosFailed) {
		t.Fatalf("err %v, want ErrScenariosFailed", err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, "server not empty: DBSIZE on 127.0.0.1:") ||
		!strings.Contains(rows[0].Error, "is 1 before the prefill") {
		t.Fatalf("rows %+v: want one failed row saying the server was not empty", rows)
	}
}

// checkSideBySide: the markdown has a side-by-side table per mode (set,
// get), kvstore against redis, and every ratio is the ratio of the two
// trimmed QPS as the table shows them.
func checkSideBySide(t *testing.T, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	tables := 0
	for i, line := range lines {
		if !strings.HasPrefix(line, "| persistence ") {
			continue
		}
		tables++
		cells := func(line string) []string {
			var out []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				out = append(out, strings.TrimSpace(c))
			}
			return out
		}
		header := cells(line)
		k, r, ratio := slices.Index(header, "kvstore QPS"), slices.Index(header, "redis QPS"), slices.Index(header, "kvstore/redis QPS")
		if min(k, r, ratio) < 0 {
			t.Fatalf("side-by-side header %q", header)
		}
		rows := 0
		for _, l := range lines[i+2:] {
			if !strings.HasPrefix(l, "|") {
				break
			}
			row := cells(l)
			kq, err1 := strconv.ParseFloat(row[k], 64)
			rq, err2 := strconv.ParseFloat(row[r], 64)
			if err1 != nil || err2 != nil {
				t.Errorf("row %q: a strategy without a counterpart", row)
				continue
			}
			if got, want := strings.Fields(row[ratio])[0], stats.Format2(kq/rq); got != want {
				t.Errorf("row %q: ratio %s, want %s", row, got, want)
			}
			rows++
		}
		if rows != 3 {
			t.Errorf("%d rows in a side-by-side table, want 3 (none, no, everysec)", rows)
		}
	}
	if tables != 2 {
		t.Errorf("%d side-by-side tables, want 2", tables)
	}
}

// TestRunRedisCluster runs a 3-shard redis-cluster target from a YAML file
// end to end: every row ok with shards 3, the get mode's prefill spread
// over the masters whose keys sum to the keyspace, every node stopped, and
// the report built.
func TestRunRedisCluster(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.ConfigFile = "../../testdata/run/redis-cluster.yaml"
	o.Rounds, o.Modes, o.Requests, o.Keyspace = 2, []string{"set", "get"}, 5000, 3000
	var mu sync.Mutex
	prefilled := make(map[string][]int) // "strategy round": keys per master after the prefill
	o.Observe = func(e Event) {
		if e.Kind != EventProgress || e.Progress.Phase != "prefill" || !e.Progress.Final {
			return
		}
		var keys []int
		for _, addr := range e.Instance.Nodes {
			var n int
			if err := redisCmd(addr, "*1\r\n$6\r\nDBSIZE\r\n", &n); err != nil {
				t.Errorf("DBSIZE on %s: %v", addr, err)
			}
			keys = append(keys, n)
		}
		mu.Lock()
		defer mu.Unlock()
		prefilled[fmt.Sprintf("%s %d", e.Scenario.Strategy.Name, e.Round)] = keys
	}
	res, stdout, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if ok := okRounds(rows); len(ok) != 8 || len(rows) != 8 {
		t.Errorf("%d rows, ok rounds %v: want 2 strategies × 2 modes × 2 rounds, all ok", len(rows), ok)
	}
	for _, r := range rows {
		if r.Target != "redis-cluster" || r.Shards != 3 {
			t.Errorf("row %v: target %s shards %d: want redis-cluster, 3 shards", r.Pos, r.Target, r.Shards)
		}
	}
	// The nodes CSV: each attempt's three masters, their requests summing
	// to the attempt's, their slots to the cluster's.
	f, err := os.Open(res.Files.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := results.ReadNodesCSV(f, res.Files.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3*len(rows) {
		t.Errorf("%d node rows, want 3 per attempt (%d)", len(nodes), 3*len(rows))
	}
	for _, r := range rows {
		var requests int64
		var slots int
		addrs := map[string]bool{}
		for _, n := range nodes {
			if n.RunID == r.RunID && n.Strategy == r.Strategy && n.Mode == r.Mode && n.Round == r.Round && n.Attempt == r.Attempt {
				requests += n.Requests
				slots += n.Slots
				addrs[n.Node] = true
				if n.Target != r.Target || n.Requests == 0 || n.QPS <= 0 || n.LatP99Us < n.LatP50Us || n.LatP50Us <= 0 {
					t.Errorf("row %v: node %+v", r.Pos, n)
				}
			}
		}
		if requests != r.Requests || slots != cluster.Slots || len(addrs) != 3 {
			t.Errorf("row %v: %d nodes with %d requests and %d slots; want 3 with the row's %d requests and %d slots",
				r.Pos, len(addrs), requests, slots, r.Requests, cluster.Slots)
		}
	}
	if len(prefilled) != 4 {
		t.Errorf("prefills seen %v: want 2 strategies × 2 rounds of get", prefilled)
	}
	for k, keys := range prefilled {
		sum := 0
		for _, n := range keys {
			if n == 0 {
				t.Errorf("%s: a master holds no keys after the prefill: %v", k, keys)
			}
			sum += n
		}
		if len(keys) != 3 || sum != int(o.Keyspace) {
			t.Errorf("%s: keys per master %v: want 3 masters holding %d in all", k, keys, o.Keyspace)
		}
	}
	if len(res.Report.Targets) != 1 || !strings.Contains(stdout, "redis-cluster") {
		t.Errorf("the report does not cover redis-cluster:\n%s", stdout)
	}
}

// TestRunRedisClusterAgents: with --agents the agents drive the cluster in
// cluster mode too, and their merged row is ok.
func TestRunRedisClusterAgents(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.ConfigFile, o.Agents, o.Connections = "../../testdata/run/redis-cluster.yaml", 2, 2
	o.Rounds, o.Strategies, o.Modes, o.Requests, o.Keyspace = 1, []string{"none"}, []string{"set", "get"}, 5000, 3000
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if ok := okRounds(rows); len(ok) != 2 || len(rows) != 2 {
		t.Errorf("%d rows, ok rounds %v: want set and get, ok", len(rows), ok)
	}
	for _, r := range rows {
		if r.Agents != 2 || r.Shards != 3 || r.Errors != 0 {
			t.Errorf("row %v: agents %d shards %d errors %d", r.Pos, r.Agents, r.Shards, r.Errors)
		}
	}
}
