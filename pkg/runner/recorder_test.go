package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/history"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// recordedRun is the run runID as the history store at loc shows it.
func recordedRun(t *testing.T, loc, runID string) history.Shown {
	t.Helper()
	var out bytes.Buffer
	if err := history.Show(context.Background(), history.ShowOptions{Location: loc, Run: runID, Format: render.JSON}, &out); err != nil {
		t.Fatal(err)
	}
	var shown history.Shown
	if err := json.Unmarshal(out.Bytes(), &shown); err != nil {
		t.Fatalf("history show: %v\n%s", err, out.String())
	}
	return shown
}

// TestRunRecordsSeries: a run with an interval records every attempt's
// series rows in the history store with its detail rows, the series
// CSV's rows, which add up to the detail rows' requests; a run without
// an interval records none.
func TestRunRecordsSeries(t *testing.T) {
	ctx := context.Background()
	loc := filepath.Join(t.TempDir(), "history.db")
	store, err := history.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	o := runOptions(t)
	o.Rounds = 2
	o.Targets = []string{"kvstore"}
	o.Strategies = []string{"nopersist"}
	o.Modes = []string{"set", "get"}
	o.Interval = 50 * time.Millisecond
	o.Recorder = store.NewRecorder(history.RunInfo{})
	res, _, stderr, err := runQuiet(t, ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	shown := recordedRun(t, loc, res.RunID)
	if len(shown.Rows) != 4 {
		t.Fatalf("%d detail rows recorded, want 4\n%s", len(shown.Rows), stderr)
	}
	csv := readSeries(t, res)
	for i := range csv {
		csv[i].Pos = results.Pos{}
	}
	if len(shown.Series) == 0 || !reflect.DeepEqual(shown.Series, csv) {
		t.Fatalf("series rows recorded differ from the series CSV's:\n got %+v\nwant %+v", shown.Series, csv)
	}
	sums := make(map[string]int64)
	for _, s := range shown.Series {
		sums[attemptKey(s.Target, s.Strategy, s.Mode, s.Workload, s.Round, s.Attempt)] += s.Requests
	}
	for _, r := range shown.Rows {
		k := attemptKey(r.Target, r.Strategy, r.Mode, r.Workload, r.Round, r.Attempt)
		if r.Status != results.StatusOK || r.Requests == 0 || sums[k] != r.Requests {
			t.Errorf("%s: status %s, the recorded series add up to %d requests, the detail row has %d", k, r.Status, sums[k], r.Requests)
		}
	}

	// The same output directory: a run started in the same second gets
	// a run id of its own.
	out := o.OutDir
	o = runOptions(t)
	o.OutDir = out
	o.Rounds = 1
	o.Targets = []string{"kvstore"}
	o.Strategies = []string{"nopersist"}
	o.Modes = []string{"set"}
	o.Interval = 0
	o.Recorder = store.NewRecorder(history.RunInfo{})
	res, _, _, err = runQuiet(t, ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if shown := recordedRun(t, loc, res.RunID); len(shown.Rows) != 1 || len(shown.Series) != 0 {
		t.Errorf("a run without an interval recorded %d detail rows and %d series rows, want 1 and none", len(shown.Rows), len(shown.Series))
	}
}

// TestRunIDsUniquePerStore: runs started in the same second, from other
// output directories, each get a run id of their own in the history (and
// the detail CSV's run_id with it); a run that could not be recorded
// fails, naming the import command that records it, commit and all.
func TestRunIDsUniquePerStore(t *testing.T) {
	ctx := context.Background()
	loc := filepath.Join(t.TempDir(), "history.db")
	store, err := history.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Another run holds the ids of the next few seconds.
	now := time.Now()
	for s := range 30 {
		id := now.Add(time.Duration(s) * time.Second).Format("20060102_150405")
		if err := store.NewRecorder(history.RunInfo{}).BeginRun(ctx, id, now); err != nil {
			t.Fatal(err)
		}
	}
	o := runOptions(t)
	o.Rounds, o.Targets, o.Strategies, o.Modes = 1, []string{"kvstore"}, []string{"nopersist"}, []string{"set"}
	o.Recorder = store.NewRecorder(history.RunInfo{Commit: "abc1234"})
	res, _, stderr, err := runQuiet(t, ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.HasSuffix(res.RunID, "_2") || !strings.Contains(res.Files.Detail, res.RunID) {
		t.Errorf("run id %s, detail %s: want the second id of its second", res.RunID, res.Files.Detail)
	}
	if shown := recordedRun(t, loc, res.RunID); len(shown.Rows) != 1 || shown.Rows[0].RunID != res.RunID || shown.Run.Commit != "abc1234" {
		t.Errorf("recorded %d rows of run %q (commit %q), want 1 of %s", len(shown.Rows), shown.Run.RunID, shown.Run.Commit, res.RunID)
	}

	// A store that fails: the run is measured and reported, then fails
	// with the command that records it.
	broken, err := history.Open(ctx, filepath.Join(t.TempDir(), "broken.db"))
	if err != nil {
		t.Fatal(err)
	}
	rec := broken.NewRecorder(history.RunInfo{Commit: "abc1234", Branch: "main"})
	broken.Close()
	o = runOptions(t)
	o.Rounds, o.Targets, o.Strategies, o.Modes = 1, []string{"kvstore"}, []string{"nopersist"}, []string{"set"}
	o.Recorder = rec
	res, stdout, _, err := runQuiet(t, ctx, o)
	want := "kvbench history import --commit abc1234 --branch main " + res.Files.Detail
	if !errors.Is(err, ErrNotRecorded) || !strings.Contains(err.Error(), want) || !strings.Contains(stdout, "QPS") {
		t.Fatalf("a run whose history failed: %v; want ErrNotRecorded naming %q, and the report", err, want)
	}
	later := filepath.Join(t.TempDir(), "later.db")
	if err := history.ImportFiles(ctx, history.ImportOptions{Location: later, Files: []string{res.Files.Detail}, Commit: "abc1234", Branch: "main"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if shown := recordedRun(t, later, res.RunID); len(shown.Rows) != 1 || shown.Run.Commit != "abc1234" || shown.Run.Branch != "main" {
		t.Errorf("imported run: %d rows, commit %q, branch %q; want 1, abc1234, main", len(shown.Rows), shown.Run.Commit, shown.Run.Branch)
	}
}
