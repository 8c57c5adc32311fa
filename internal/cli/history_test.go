package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/history"
	"github.com/kvbench/kvbench/pkg/results"
)

// kvbenchOnce builds the kvbench binary once for the tests that run it
// as a process of its own; TestMain removes it with removeKvbench.
var kvbenchOnce = sync.OnceValues(func() (string, error) {
	bin, cleanup, err := testutil.BuildKvbench()
	if err == nil {
		removeKvbench = cleanup
	}
	return bin, err
})

// removeKvbench removes the binary kvbenchOnce built, if it did.
var removeKvbench = func() {}

// kvbenchBin returns the built binary.
func kvbenchBin(t *testing.T) string {
	t.Helper()
	bin, err := kvbenchOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// smallRun are run's flags for a run of seconds on the kvstore.
func smallRun(t *testing.T, rounds int, extra ...string) []string {
	return append([]string{"run", "--targets", "kvstore", "--strategies", "nopersist", "--modes", "set", "--rounds", fmt.Sprint(rounds),
		"--requests", "5000", "--keyspace", "5000", "--kv-port", "0", "--chart", "none", "--out", t.TempDir(), "--tmpdir", t.TempDir()}, extra...)
}

// listRuns is "history list --format json".
func listRuns(t *testing.T, store string) []history.Run {
	t.Helper()
	code, out, errOut := execute(t, "history", "--history", store, "list", "--format", "json")
	if code != 0 {
		t.Fatalf("history list: exit %d\n%s", code, errOut)
	}
	var runs []history.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("history list: %v\n%s", err, out)
	}
	return runs
}

// TestRunRecords: a real run records itself with its commit, branch and
// label, complete; a store that cannot be opened costs a warning and
// the run goes on.
func TestRunRecords(t *testing.T) {
	bin := kvbenchBin(t)
	store := filepath.Join(t.TempDir(), "h.db")
	out, err := exec.Command(bin, smallRun(t, 2, "--history", store, "--commit", "abc123", "--branch", "main", "--label", "patched")...).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	runs := listRuns(t, store)
	if len(runs) != 1 || runs[0].Status != history.StatusComplete || runs[0].Commit != "abc123" || runs[0].Branch != "main" ||
		runs[0].Label != "patched" || runs[0].OKRows != 2 {
		t.Fatalf("recorded runs %+v", runs)
	}
	if !strings.Contains(string(out), runs[0].RunID) {
		t.Errorf("the run id %s is not the run's:\n%s", runs[0].RunID, out)
	}
	out, err = exec.Command(bin, smallRun(t, 1, "--history", "/proc/kvbench/nowhere.db")...).CombinedOutput()
	if err != nil {
		t.Fatalf("run with a broken store: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "the run goes on without the history"); n != 1 {
		t.Errorf("%d warnings about the history, want 1:\n%s", n, out)
	}
}

// TestKilledRun: a real run killed with SIGKILL after its first attempt
// leaves a store that opens, with the attempts it recorded, the run
// listed as incomplete.
func TestKilledRun(t *testing.T) {
	bin := kvbenchBin(t)
	store := filepath.Join(t.TempDir(), "h.db")
	args := smallRun(t, 50, "--history", store)
	tmp := args[len(args)-3]
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { testutil.KillProcesses(testutil.Processes(tmp)) }() // the servers of the killed run
	deadline := time.Now().Add(time.Minute)
	for {
		if runs := listRuns(t, store); len(runs) == 1 && runs[0].Rows > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no attempt recorded within a minute")
		}
		time.Sleep(50 * time.Millisecond) // bounded by the deadline
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	runs := listRuns(t, store)
	if len(runs) != 1 || runs[0].Status != history.StatusIncomplete || runs[0].Rows == 0 || runs[0].Rows >= 50 {
		t.Fatalf("after the kill: %+v, want one incomplete run with some of its rows", runs)
	}
}

// writeDetail writes a detail CSV of one run: 5 rounds of set at qps.
func writeDetail(t *testing.T, dir, runID, label string, qps []float64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("run_id,started_at,target,strategy,persistence,mode,round,attempt,status,requests,pipeline,keyspace,value_size,qps,client_host,cpu_model,label\n")
	started, _ := time.Parse("20060102_150405", runID)
	for i, q := range qps {
		fmt.Fprintf(&b, "%s,%s,kvstore,nopersist,none,set,%d,1,ok,100000,128,100000,32,%.2f,box,Test CPU,%s\n", runID, started.Format(time.RFC3339), i+1, q, label)
	}
	path := filepath.Join(dir, "kvbench_detail_"+runID+".csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHistoryCommands: import, list, show, trend and check on a history
// whose last runs dropped 10%: check exits 3 with a 5% gate, 0 with 20%.
// A run's series CSV among the files is imported beside its detail CSV,
// and show counts its rows.
func TestHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(t.TempDir(), "h.db")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	noise := []float64{1.01, 0.99, 1.015, 0.985, 1.0}
	for i := range 12 {
		level := 100000.0
		if i >= 8 {
			level = 90000
		}
		qps := make([]float64, 5)
		for j := range qps {
			qps[j] = level * (noise[(i+j)%5] + 0.001*float64(i%3))
		}
		writeDetail(t, dir, t0.Add(time.Duration(i)*time.Hour).Format("20060102_150405"), fmt.Sprintf("b%d", i), qps)
	}
	// One run has its series CSV beside its detail CSV: three intervals
	// of its first round, the last without requests, in the columns an
	// earlier kvbench wrote (before latency_hist).
	series := strings.Join(results.SeriesColumns[:18], ",") + "\n" +
		"20261101_030000,kvstore,nopersist,set,1,1,SET,0,60000,0,100000,120,300,450,900,,,aof_rewrite\n" +
		"20261101_030000,kvstore,nopersist,set,1,1,SET,0.6,40000,0,100000,110,280,400,800,,,\n" +
		"20261101_030000,kvstore,nopersist,set,1,1,SET,1,0,0,0,,,,,,,\n"
	if err := os.WriteFile(filepath.Join(dir, "kvbench_series_20261101_030000.csv"), []byte(series), 0o644); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(dir, "*.csv")
	code, out, errOut := execute(t, "history", "--history", store, "import", glob)
	if code != 0 || strings.Count(out, "imported 5 rows") != 12 || !strings.Contains(out, "run 20261101_030000 (b3): imported 5 rows and 3 series rows") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = execute(t, "history", "--history", store, "import", glob); code != 0 || strings.Count(out, "already in the history") != 12 {
		t.Errorf("a second import:\n%s", out)
	}
	if runs := listRuns(t, store); len(runs) != 12 || runs[0].Label != "b11" {
		t.Errorf("list: %+v", runs)
	}
	code, out, errOut = execute(t, "history", "--history", store, "show", "20261101_030000")
	if code != 0 || !strings.Contains(out, "# Run 20261101_030000") || !strings.Contains(out, "# kvbench report") ||
		!strings.Contains(out, "| series rows | 3 ") {
		t.Errorf("show: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = execute(t, "history", "--history", store, "check", "--threshold", "5", "--format", "md")
	if code != ExitRegression || !strings.Contains(out, "| kvstore/nopersist/set | b7 (20261101_070000) | b8 (20261101_080000) |") {
		t.Errorf("check --threshold 5: exit %d, want %d\n%s%s", code, ExitRegression, out, errOut)
	}
	if code, out, errOut = execute(t, "history", "--history", store, "check", "--threshold", "20"); code != 0 || !strings.Contains(out, "qps -10") {
		t.Errorf("check --threshold 20: exit %d, want 0\n%s%s", code, out, errOut)
	}
	code, out, _ = execute(t, "history", "--history", store, "trend", "--format", "html")
	if code != 0 || strings.Count(out, "<svg") != 1 {
		t.Errorf("trend --format html: exit %d, %d plots", code, strings.Count(out, "<svg"))
	}
	if code, out, _ = execute(t, "history", "--history", store, "prune", "--keep", "10", "--dry-run"); code != 0 || !strings.Contains(out, "would delete 2 runs") {
		t.Errorf("prune --dry-run:\n%s", out)
	}
}

// TestHistoryDefaults: a test binary records nowhere unless told, so that
// go test leaves the home directory alone; KVBENCH_HISTORY and --history
// say where, "off" and --no-history nowhere.
func TestHistoryDefaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv(HistoryEnv, "") // restored when the test ends
	os.Unsetenv(HistoryEnv)
	if loc, err := historyLocation("", false); err != nil || loc != "" {
		t.Errorf("in a test without --history or %s: %q, %v; want nowhere", HistoryEnv, loc, err)
	}
	if code, _, errOut := execute(t, "history", "list"); code != 1 || !strings.Contains(errOut, "give --history") {
		t.Errorf("history list without a store: exit %d\n%s", code, errOut)
	}
	t.Setenv(HistoryEnv, filepath.Join(home, "env.db"))
	if loc, _ := historyLocation("", false); loc != filepath.Join(home, "env.db") {
		t.Errorf("with %s: %q", HistoryEnv, loc)
	}
	if loc, _ := historyLocation("x.db", true); loc != "x.db" {
		t.Errorf("--history x.db: %q", loc)
	}
	t.Setenv(HistoryEnv, "off")
	if loc, _ := historyLocation("", false); loc != "" {
		t.Errorf("%s=off: %q", HistoryEnv, loc)
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		t.Errorf("written in the home directory: %s", e.Name())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "--history", "x.db", "list", "--format", "xml"}, `--format "xml"`},
		{[]string{"history", "--history", "x.db", "prune"}, "give --older-than"},
		{[]string{"history", "--history", "x.db", "prune", "--older-than", "3y"}, `--older-than "3y"`},
		{[]string{"history", "--history", "x.db", "check", "--metric", "rss"}, `--metric "rss"`},
		{[]string{"history", "--history", "x.db", "show"}, "accepts 1 arg"},
	} {
		if code, _, errOut := execute(t, tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

// TestParseAge: days, weeks and Go durations.
func TestParseAge(t *testing.T) {
	for s, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour, "1.5d": 36 * time.Hour} {
		if got, err := parseAge(s); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"d", "-1d", "0h", "soon"} {
		if _, err := parseAge(s); err == nil {
			t.Errorf("parseAge(%q): no error", s)
		}
	}
}
