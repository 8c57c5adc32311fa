package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRecoveryTable: recovery rows make a table per target beside each
// policy's promise, with medians over the rounds that recovered, a server
// that came back empty said so instead of a time, failed attempts listed,
// and a warning for a strategy that lost what its policy promises to keep.
func TestRecoveryTable(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int64) *int64 { return &x }
	row := func(strategy, persistence string, round int, rec *float64, acked, lost int64) results.Row {
		r := results.Row{Target: "kvstore", Strategy: strategy, Persistence: persistence, Mode: results.ModeRecovery,
			Round: round, Attempt: 1, Status: results.StatusOK, AckedWrites: n(acked), AckedLost: n(lost), RecoveryS: rec}
		if rec != nil {
			r.RecoveryKeysPerS, r.RecoveryMBPerS = f(1000 / *rec), f(2 / *rec)
		}
		return r
	}
	failed := row("persist_always", "always", 1, nil, 0, 0)
	failed.Status, failed.Error, failed.AckedWrites, failed.AckedLost = results.StatusFailed, "restart after kill -9 (the server did not come back): server exited: kvstore", nil, nil
	rows := []results.Row{
		row("persist_no", "no", 1, f(0.5), 100, 0),
		row("persist_no", "no", 2, f(0.25), 100, 0),
		row("persist_no", "no", 3, f(1), 100, 0),
		row("nopersist", "none", 1, nil, 80, 80),
		row("persist_everysec", "everysec", 1, f(0.2), 90, 3), // lost, and no window to hold to its bound
		row("aof_everysec", "everysec", 1, f(0.3), 90, 3),
		row("aof_everysec", "everysec", 2, f(0.3), 90, 0),
		failed,
		{Target: "kvstore", Strategy: "nopersist", Persistence: "none", Mode: "set", Round: 1, Attempt: 1, Status: results.StatusOK, QPS: 1000},
	}
	rows[5].LostWindowS = f(0.069) // aof_everysec's round 1
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recovery) != 1 || rep.Recovery[0].Target != "kvstore" {
		t.Fatalf("recovery tables %+v: want one, kvstore's", rep.Recovery)
	}
	var order []string
	by := map[string]*report.RecoveryRow{}
	for _, r := range rep.Recovery[0].Rows {
		order = append(order, r.Strategy)
		by[r.Strategy] = r
	}
	if got := strings.Join(order, " "); got != "nopersist persist_no aof_everysec persist_everysec persist_always" {
		t.Errorf("order %s: want by persistence", got)
	}
	if r := by["persist_no"]; r.Rounds != 3 || r.RecoveryS != 0.5 || r.KeysPerS != 2000 || r.MBPerS != 4 || r.AckedWrites != 300 || r.AckedLost != 0 || r.Broken || r.Promise != report.PromiseNothing {
		t.Errorf("persist_no %+v: want 3 rounds, median 0.5 s, 2000 keys/s, 4 MB/s, 0 of 300 lost", r)
	}
	if r := by["nopersist"]; r.Empty != 1 || r.RecoveryS.Valid() || r.AckedLost != 80 || r.Broken || r.Promise != report.PromiseAll {
		t.Errorf("nopersist %+v: want came back empty, no recovery time, 80 lost as promised", r)
	}
	if r := by["aof_everysec"]; r.Broken || r.Promise != report.PromiseSlowFsync || r.LostWindowS.String() != "0.07" {
		t.Errorf("aof_everysec %+v: want 3 lost in its last 0.07 s, as a slow fsync allows", r)
	}
	if r := by["persist_everysec"]; !r.Broken {
		t.Errorf("persist_everysec %+v: want a broken promise", r)
	}
	if r := by["persist_always"]; r.Failed != 1 || r.Rounds != 0 {
		t.Errorf("persist_always %+v: want one failed attempt", r)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"## Recovery after kill -9", "| came back empty |", "3 (!)", "persist_everysec (process crash): 3 of 90", "did not come back", report.PromiseAll} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if len(rep.Targets) != 1 || len(rep.Targets[0].Scenarios) != 1 {
		t.Errorf("the QPS tables hold the recovery rows: %+v", rep.Targets)
	}
}

// TestRecoveryTablePowerLoss: power-loss rows make rows of their own
// beside the process crashes of the same strategy, with the promises
// against a power loss: an always log that lost writes is warned of, an
// everysec or no log that lost some is not.
func TestRecoveryTablePowerLoss(t *testing.T) {
	n := func(x int64) *int64 { return &x }
	row := func(strategy, persistence, crash string, acked, lost int64, window float64) results.Row {
		r := results.Row{Target: "redis", Strategy: strategy, Persistence: persistence, Mode: results.ModeRecovery, Crash: crash,
			Round: 1, Attempt: 1, Status: results.StatusOK, AckedWrites: n(acked), AckedLost: n(lost)}
		if window > 0 {
			r.LostWindowS = &window
		}
		return r
	}
	rep, err := report.Build([]results.Row{
		row("aof_always", "always", results.CrashPower, 100, 2, 0.01),
		row("aof_always", "always", "", 100, 0, 0), // written before the crash column: a process crash
		row("aof_everysec", "everysec", results.CrashPower, 100, 60, 1.2),
		row("aof_everysec", "everysec", results.CrashPower, 100, 30, 0.6),
		row("kvstore_everysec", "everysec", results.CrashPower, 100, 90, 2.5), // past its window
		row("aof_no", "no", results.CrashPower, 100, 100, 2.9),
	}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recovery) != 1 || len(rep.Recovery[0].Rows) != 5 {
		t.Fatalf("recovery tables %+v: want one of 5 rows", rep.Recovery)
	}
	by := map[[2]string]*report.RecoveryRow{}
	for _, r := range rep.Recovery[0].Rows {
		by[[2]string{r.Strategy, r.Crash}] = r
	}
	cases := []struct {
		strategy, crash, promise string
		broken                   bool
		window                   string // the widest of the rounds
	}{
		{"aof_always", results.CrashPower, report.PromiseNothingPower, true, "0.01"},
		{"aof_always", results.CrashProcess, report.PromiseNothing, false, "-"},
		{"aof_everysec", results.CrashPower, report.PromiseSecond, false, "1.20"},
		{"kvstore_everysec", results.CrashPower, report.PromiseSecond, true, "2.50"},
		{"aof_no", results.CrashPower, report.PromiseUnwritten, false, "2.90"},
	}
	for _, c := range cases {
		r := by[[2]string{c.strategy, c.crash}]
		if r == nil || r.Promise != c.promise || r.Broken != c.broken || r.LostWindowS.String() != c.window {
			t.Errorf("%s %s: %+v: want promise %q, broken %v, lost window %s", c.strategy, c.crash, r, c.promise, c.broken, c.window)
		}
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"| aof_always       | always      | power ", "aof_always (power crash): 2 of 100", report.PromiseSecond,
		"lost window s", "kvstore_everysec (power crash): 90 of 100, acknowledged up to 2.50s before the crash, past its 2s"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}
