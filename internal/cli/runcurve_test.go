package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestRunCurveUsageErrors: run's bad rate lists and objectives, and a
// curve of insert-only writes, are usage errors naming the flag, refused
// before any server starts.
func TestRunCurveUsageErrors(t *testing.T) {
	for _, tc := range slices.Concat(curveFlagErrors, []curveFlagError{
		{[]string{"--rates", "50%", "--workloads", "ycsb-a"}, "not workloads"},
		{[]string{"--rates", "50%", "--modes", "set", "--set-cmd", "RSET"}, "RSET only inserts"},
	}) {
		args := append([]string{"run", "--targets", "kvstore", "--out", t.TempDir(), "--estimate", "fixed"}, tc.args...)
		code, _, stderr := execute(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRunCurveDryRun: the plan's estimate counts the curve's phases.
func TestRunCurveDryRun(t *testing.T) {
	base := []string{"run", "--dry-run", "--estimate", "fixed", "--targets", "kvstore", "--modes", "get", "--strategies", "nopersist", "--rounds", "1", "--requests", "4000000", "--out", t.TempDir()}
	estimate := func(extra ...string) string {
		code, stdout, stderr := execute(t, append(base, extra...)...)
		if code != 0 {
			t.Fatalf("run --dry-run %v: exit %d\n%s", extra, code, stderr)
		}
		if len(extra) > 0 && !strings.Contains(stdout, "after each closed loop, on its server: open-loop phases at 50%, 100%") {
			t.Errorf("the plan does not say what follows each closed loop:\n%s", stdout)
		}
		_, after, ok := strings.Cut(stdout, "estimated time: ")
		if !ok {
			t.Fatalf("no estimated time in\n%s", stdout)
		}
		return strings.Fields(after)[0]
	}
	plain, curve := estimate(), estimate("--rates", "50%,100%")
	if plain == curve {
		t.Errorf("estimated time %s with and without --rates", plain)
	}
}
