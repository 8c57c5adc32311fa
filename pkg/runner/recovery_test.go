package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/lazyfs"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunRecovery kills each strategy's server amid a stream of
// acknowledged writes and starts it on its files: a log strategy comes
// back with every acknowledged write and a recovery time; a snapshot
// strategy comes back with the snapshot taken after the prefill, and a
// recovery time, having lost every write since; a strategy without
// either comes back empty, without a recovery time, having lost them all.
func TestRunRecovery(t *testing.T) {
	cases := []struct {
		target     string
		strategies []string
		keeps      map[string]bool // strategy → keeps every acknowledged write
		snapshot   string          // the strategy that comes back with its snapshot
	}{
		{"kvstore", []string{"nopersist", "persist_no", "persist_everysec", "persist_always"},
			map[string]bool{"persist_no": true, "persist_everysec": true, "persist_always": true}, ""},
		{"redis", []string{"none", "rdb_default", "aof_no", "aof_everysec", "aof_always"},
			map[string]bool{"aof_no": true, "aof_everysec": true, "aof_always": true}, "rdb_default"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			if c.target == "redis" {
				testutil.RequireRedisServer(t)
			}
			o := runOptions(t)
			o.Targets, o.Strategies, o.Modes = []string{c.target}, c.strategies, []string{results.ModeRecovery}
			o.Rounds, o.Requests, o.Keyspace, o.Connections = 1, 2_000, 2_000, 4
			res, stdout, _, err := runQuiet(t, context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			rows := readDetail(t, res)
			if len(rows) != len(c.strategies) {
				t.Fatalf("%d rows, want %d", len(rows), len(c.strategies))
			}
			for _, r := range rows {
				if !r.OK() || r.Mode != results.ModeRecovery {
					t.Errorf("%s: status %s mode %s: %s", r.Strategy, r.Status, r.Mode, r.Error)
					continue
				}
				if r.AckedWrites == nil || *r.AckedWrites <= 0 || r.AckedLost == nil {
					t.Errorf("%s: acked_writes %v acked_lost %v: want both counted", r.Strategy, r.AckedWrites, r.AckedLost)
					continue
				}
				if c.keeps[r.Strategy] {
					switch {
					case r.Persistence == "everysec" && *r.AckedLost > 0:
						// Redis postpones writing its log while an fsync is
						// slow (a busy machine), up to 2 s.
						if r.LostWindowS == nil || *r.LostWindowS > report.EverysecWindow {
							t.Errorf("%s: %d of %d acknowledged writes lost on kill -9, lost window %v: want at most %gs", r.Strategy, *r.AckedLost, *r.AckedWrites, fmtWindow(r.LostWindowS), report.EverysecWindow)
						}
					case *r.AckedLost != 0 || r.LostWindowS != nil:
						t.Errorf("%s: %d of %d acknowledged writes lost on kill -9 (lost window %v)", r.Strategy, *r.AckedLost, *r.AckedWrites, fmtWindow(r.LostWindowS))
					}
					if r.RecoveryS == nil || *r.RecoveryS <= 0 || r.RecoveryKeysPerS == nil || r.RecoveryMBPerS == nil {
						t.Errorf("%s: recovery_s %v keys/s %v MB/s %v: want all measured", r.Strategy, r.RecoveryS, r.RecoveryKeysPerS, r.RecoveryMBPerS)
					}
				} else {
					if *r.AckedLost != *r.AckedWrites {
						t.Errorf("%s: %d of %d lost: want every acknowledged write lost", r.Strategy, *r.AckedLost, *r.AckedWrites)
					}
					if r.LostWindowS == nil || *r.LostWindowS <= 0 {
						t.Errorf("%s: lost window %v: want the stream's length, measured", r.Strategy, r.LostWindowS)
					}
					switch {
					case r.Strategy == c.snapshot && r.RecoveryS == nil:
						t.Errorf("%s: no recovery_s: the snapshot of the prefill did not come back", r.Strategy)
					case r.Strategy != c.snapshot && r.RecoveryS != nil:
						t.Errorf("%s: recovery_s %v of a server that came back empty", r.Strategy, *r.RecoveryS)
					}
				}
			}
			if !strings.Contains(stdout, "Recovery after kill -9") || !strings.Contains(stdout, "came back empty") {
				t.Errorf("the report has no recovery table:\n%s", stdout)
			}
			if strings.Contains(stdout, "promises to keep them") {
				t.Errorf("a broken promise reported:\n%s", stdout)
			}
			checkClean(t, o)
		})
	}
}

// TestPlanRecoveryRefused: a target kvbench does not start itself cannot
// be killed and started again, and the plan says so.
func TestPlanRecoveryRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "attach.yaml")
	yaml := "targets:\n  - name: remote\n    kind: attach\n    addr: 127.0.0.1:1\n    strategies: [as_configured]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOptions(t)
	o.ConfigFile = cfg
	o.Modes = []string{results.ModeRecovery}
	_, err := NewPlan(o)
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "cannot be killed and started again") {
		t.Fatalf("err %v: want the recovery mode refused for an attached server", err)
	}
}

// TestRunRecoveryPowerLoss cuts the power of each log strategy's server
// amid a stream of acknowledged writes lasting recovery.PowerLossStream: a log
// fsynced before each acknowledgement loses none, one fsynced every
// second at most the writes of the last EverysecWindow, and one never
// fsynced reports what it lost.
func TestRunRecoveryPowerLoss(t *testing.T) {
	requireFUSE(t)
	cases := []struct {
		target     string
		strategies []string
		keeps      string // the strategy that keeps every acknowledged write
		everysec   string // the strategy that loses at most its window
	}{
		{"kvstore", []string{"persist_no", "persist_everysec", "persist_always"}, "persist_always", "persist_everysec"},
		{"redis", []string{"aof_no", "aof_everysec", "aof_always"}, "aof_always", "aof_everysec"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			if c.target == "redis" {
				testutil.RequireRedisServer(t)
			}
			o := runOptions(t)
			o.Targets, o.Strategies, o.Modes = []string{c.target}, c.strategies, []string{results.ModeRecovery}
			// Requests never reached: the stream lasts recovery.PowerLossStream.
			o.Rounds, o.Requests, o.Keyspace, o.Connections = 1, 1<<40, 1_000, 2
			o.PowerLoss = true
			res, stdout, _, err := runQuiet(t, context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			rows := readDetail(t, res)
			if len(rows) != len(c.strategies) {
				t.Fatalf("%d rows, want %d", len(rows), len(c.strategies))
			}
			for _, r := range rows {
				if !r.OK() || r.Crash != results.CrashPower {
					t.Errorf("%s: status %s crash %q: %s", r.Strategy, r.Status, r.Crash, r.Error)
					continue
				}
				if r.AckedWrites == nil || *r.AckedWrites <= 0 || r.AckedLost == nil || *r.AckedLost > *r.AckedWrites {
					t.Errorf("%s: acked_writes %v acked_lost %v: want both counted", r.Strategy, r.AckedWrites, r.AckedLost)
					continue
				}
				if r.Strategy == c.keeps && *r.AckedLost != 0 {
					t.Errorf("%s: %d of %d acknowledged writes lost on a power loss", r.Strategy, *r.AckedLost, *r.AckedWrites)
				}
				if r.Strategy == c.everysec && r.LostWindowS != nil && *r.LostWindowS > report.EverysecWindow {
					t.Errorf("%s: lost the writes acknowledged up to %.2fs before the power loss, past its %gs", r.Strategy, *r.LostWindowS, report.EverysecWindow)
				}
				if (*r.AckedLost > 0) != (r.LostWindowS != nil) {
					t.Errorf("%s: %d lost, lost window %v: want a window exactly when writes were lost", r.Strategy, *r.AckedLost, r.LostWindowS)
				}
				t.Logf("%s: %d of %d lost, window %v s", r.Strategy, *r.AckedLost, *r.AckedWrites, fmtWindow(r.LostWindowS))
			}
			if !strings.Contains(stdout, "power") {
				t.Errorf("the report's recovery table does not name the power loss:\n%s", stdout)
			}
			checkClean(t, o)
		})
	}
}

// requireFUSE skips a test that needs a lazy file system where none can
// be mounted, failing it instead under KVBENCH_REQUIRE_FUSE=1; it runs
// only under KVBENCH_TEST_FUSE=1 (make test-fuse).
func requireFUSE(t *testing.T) {
	t.Helper()
	if os.Getenv("KVBENCH_TEST_FUSE") != "1" {
		t.Skip("mounting FUSE file systems is opt-in: KVBENCH_TEST_FUSE=1 (make test-fuse)")
	}
	if err := lazyfs.Available(); err != nil {
		if os.Getenv("KVBENCH_REQUIRE_FUSE") == "1" {
			t.Fatalf("KVBENCH_REQUIRE_FUSE=1: %v", err)
		}
		t.Skip(err)
	}
}

// TestPlanPowerLossNeedsRecovery: --power-loss without the recovery mode
// would do nothing, and the plan says so.
func TestPlanPowerLossNeedsRecovery(t *testing.T) {
	o := runOptions(t)
	o.Modes, o.PowerLoss = []string{"set"}, true
	_, err := NewPlan(o)
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--power-loss") {
		t.Fatalf("err %v: want --power-loss refused without the recovery mode", err)
	}
}

func fmtWindow(w *float64) string {
	if w == nil {
		return "-"
	}
	return strconv.FormatFloat(*w, 'f', 3, 64)
}
