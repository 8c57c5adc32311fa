package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/flame"
)

// requirePerf skips a test where perf cannot record: not installed, or
// not permitted.
func requirePerf(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("perf: runs in the full suite")
	}
	if _, err := exec.LookPath(flame.DefaultPerf); err != nil {
		t.Skip("no perf (apt-get install linux-perf)")
	}
}

// TestProfile: with Profile every scenario gets a flame graph of its
// server's CPU, taken in a round of its own whose row is not written: the
// kvstore's holds its command execution, Redis's its command dispatch;
// the variant strategy gets a differential graph against the baseline;
// the HTML report links every graph, and the graphs render in Chromium.
func TestProfile(t *testing.T) {
	requirePerf(t)
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore", "redis"}, []string{"nopersist", "persist_no", "none"}, []string{"set"}
	o.Rounds, o.Retries, o.Requests, o.Keyspace = 1, 0, 1_000_000, 1_000_000 // a second of load: enough samples for every frame looked for
	o.Profile = true
	res, _, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	checkClean(t, o)
	if rows := readDetail(t, res); len(rows) != 3 {
		t.Errorf("%d detail rows, want 3: the profile rounds write none", len(rows))
	}
	dir, id := o.OutDir, res.RunID
	want := map[string]string{
		"kvbench_flame_kvstore_nopersist_set_" + id + ".svg":       "kvstore.(*conn).exec",
		"kvbench_flame_kvstore_persist_no_set_" + id + ".svg":      "kvstore.(*conn).exec",
		"kvbench_flame_diff_kvstore_persist_no_set_" + id + ".svg": "baseline",
		"kvbench_flame_redis_none_set_" + id + ".svg":              "processCommand",
	}
	page, err := os.ReadFile(res.Files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for name, frame := range want {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%v\n%s", err, stderr)
			continue
		}
		if !strings.Contains(string(svg), frame) {
			t.Errorf("%s lacks %q", name, frame)
		}
		if !strings.Contains(string(page), `href="`+name+`"`) {
			t.Errorf("the HTML report does not link %s", name)
		}
	}
	if len(res.Files.Flames) != 3 {
		t.Errorf("%d profiles in Files.Flames, want 3: %+v", len(res.Files.Flames), res.Files.Flames)
	}
	chromium := testutil.RequireChromium(t)
	for name := range want {
		dom, log := testutil.Headless(t, chromium, filepath.Join(dir, name), "--dump-dom")
		if !strings.Contains(dom, `data-n="all"`) || strings.Contains(log, "Uncaught") {
			t.Errorf("%s did not render with its script:\n%.2000s\n%s", name, dom, log)
		}
	}
}

// TestProfileWithoutPerf: without perf on PATH, "kvbench run --profile"
// says so in one line and the run completes.
func TestProfileWithoutPerf(t *testing.T) {
	o := runOptions(t)
	cmd := exec.Command(kvbenchBin, "run", "--profile", "--targets", "kvstore", "--strategies", "nopersist", "--modes", "set",
		"--rounds", "1", "--requests", "5000", "--keyspace", "5000", "--kv-port", "0", "--chart", "none",
		"--out", o.OutDir, "--tmpdir", o.TempDir)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "--profile") || strings.Contains(l, "perf") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "--profile: no profiles:") {
		t.Errorf("lines about profiling: %q, want one\n%s", lines, out)
	}
	if m, _ := filepath.Glob(filepath.Join(o.OutDir, "*flame*")); len(m) > 0 {
		t.Errorf("flame graphs written without perf: %v", m)
	}
}

// TestProfileRecoveryAndCurve: a recovery scenario, which has no measured
// load, is not profiled, with a line saying so; a scenario with a load
// curve is profiled in its closed loop, and its profile round writes no
// row.
func TestProfileRecoveryAndCurve(t *testing.T) {
	requirePerf(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"persist_no"}, []string{"get", "recovery"}
	o.Rounds, o.Retries, o.Requests, o.Keyspace = 1, 0, 100_000, 100_000
	o.Rates = "50%"
	o.Profile = true
	res, _, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	checkClean(t, o)
	if !strings.Contains(stderr, "kvstore/persist_no/recovery: no profile: recovery has no measured load") {
		t.Errorf("no line about the recovery scenario:\n%s", stderr)
	}
	if len(res.Files.Flames) != 1 || res.Files.Flames[0].Mode != "get" {
		t.Errorf("profiles %+v, want the get scenario's", res.Files.Flames)
	}
	for _, row := range readDetail(t, res) {
		if row.Round != 1 {
			t.Errorf("a detail row of round %d: the profile round wrote its row", row.Round)
		}
	}
}
