package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestRunYoungServer: a server that implements only what it is measured
// on, SET and GET, answering PING, INFO, CONFIG, COMMAND, DBSIZE and
// FLUSHALL with "ERR unknown command", is measured by run in one attempt
// per scenario, as an attach target and as a command target: its error
// reply to PING shows it up, and what it lacks is said in the rows'
// notes, not retried.
func TestRunYoungServer(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	young := testutil.StartYoungServer(t)
	for _, tc := range []struct {
		name, yaml string
		notes      []string
	}{
		{"attach", fmt.Sprintf("targets:\n  - name: young\n    kind: attach\n    addr: %s\n    allow_flush: true\n    baseline: as_configured\n    strategies: [as_configured]\n", young),
			[]string{target.NoteNoInfo, target.NoteNoConfig, target.NoteNoFlush}},
		{"command", fmt.Sprintf("targets:\n  - name: young\n    kind: command\n    command: [%q, %s, \"{port}\"]\n    baseline: plain\n    strategies:\n      plain: []\n", self, testutil.YoungServerArg),
			[]string{target.NoteNoInfo, target.NoteNoConfig}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "young.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			o := runOptions(t)
			o.ConfigFile, o.Rounds, o.Requests, o.Keyspace, o.Retries = cfg, 2, 2000, 2000, 3
			o.Modes = []string{"set", "get"}
			res, _, stderr, err := runQuiet(t, context.Background(), o)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			rows := readDetail(t, res)
			if len(rows) != 4 {
				t.Fatalf("%d rows, want 4, one attempt per scenario and round: %+v", len(rows), rows)
			}
			for _, r := range rows {
				if !r.OK() || r.Attempt != 1 || r.QPS <= 0 {
					t.Errorf("row %s/%s round %d attempt %d: %s %q, QPS %v: want ok at the first attempt", r.Strategy, r.Mode, r.Round, r.Attempt, r.Status, r.Error, r.QPS)
				}
				for _, n := range tc.notes {
					if !strings.Contains(r.Notes, n) {
						t.Errorf("row %s round %d: notes %q, want %q", r.Mode, r.Round, r.Notes, n)
					}
				}
			}
			if strings.Count(stderr, "note: "+target.NoteNoConfig) != 1 {
				t.Errorf("stderr says the config was not verified %d times, want once:\n%s", strings.Count(stderr, "note: "+target.NoteNoConfig), stderr)
			}
			checkClean(t, o)
		})
	}
}

// TestRunYoungServerNotEmpty: an attach target that can count no keys
// (neither INFO keyspace nor DBSIZE) is refused at once, naming the flag
// that lets it be measured, not retried.
func TestRunYoungServerNotEmpty(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "young.yaml")
	yaml := fmt.Sprintf("targets:\n  - name: young\n    kind: attach\n    addr: %s\n    baseline: as_configured\n    strategies: [as_configured]\n", testutil.StartYoungServer(t))
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOptions(t)
	o.ConfigFile, o.Rounds, o.Requests, o.Keyspace, o.Retries = cfg, 1, 1000, 1000, 3
	o.Modes = []string{"set"}
	res, _, _, err := runQuiet(t, context.Background(), o)
	if !errors.Is(err, ErrScenariosFailed) {
		t.Fatalf("err %v, want ErrScenariosFailed", err)
	}
	rows := readDetail(t, res)
	if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, "neither INFO keyspace nor DBSIZE") || !strings.Contains(rows[0].Error, "--allow-flush") {
		t.Fatalf("rows %+v: want one failed attempt naming what the server lacks and --allow-flush", rows)
	}
}
