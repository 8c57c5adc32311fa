package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/flame"
)

// TestBenchProfilePID: bench --profile-pid records a Redis server during
// the load and writes its flame graph, which holds Redis's command
// dispatch, in --profile-out. The load lasts 2 s, some 2,000 samples: a
// count of requests can end in a few hundred on a fast machine.
func TestBenchProfilePID(t *testing.T) {
	if testing.Short() {
		t.Skip("perf: runs in the full suite")
	}
	if _, err := exec.LookPath(flame.DefaultPerf); err != nil {
		t.Skip("no perf (apt-get install linux-perf)")
	}
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	dir := t.TempDir()
	code, _, stderr := execute(t, "bench", "--port", port, "--mode", "set", "--duration", "2s", "--keyspace", "1000",
		"--pipeline", "16", "-q", "--profile-pid", strconv.Itoa(r.PID()), "--profile-out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kvbench_flame_bench_*.svg"))
	if len(files) != 1 {
		t.Fatalf("flame graphs %v, want one\n%s", files, stderr)
	}
	svg, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "processCommand") || !strings.Contains(string(svg), "redis-server") {
		t.Errorf("%s lacks Redis's processCommand", files[0])
	}
}

// TestBenchProfilePIDErrors: a --profile-pid that is no process is a usage
// error naming the flag.
func TestBenchProfilePIDErrors(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"abc", "want a process id"},
		{"-3", "want a process id"},
		{"2147483646", "no process 2147483646 on this host"},
	} {
		code, _, stderr := execute(t, "bench", "--profile-pid", tc.arg)
		if code != 2 || !strings.Contains(stderr, "--profile-pid") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--profile-pid %s: exit %d, %q; want 2 and %q", tc.arg, code, stderr, tc.want)
		}
	}
}
