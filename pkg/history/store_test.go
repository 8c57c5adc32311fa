package history

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// openSQLite opens a new store in the test's directory.
func openSQLite(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// count is the number of rows of a table.
func count(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// oldCSVs are detail CSVs of earlier versions: the reference script's
// column set, compare's fixtures without started_at, a file without a
// run_id column, columns in another order.
var oldCSVs = []string{
	"../../testdata/report/seed000/kvstore_detail.csv",
	"../../testdata/report/seed000/redis_detail.csv",
	"../../testdata/compare/before/kvbench_detail_20261130_120000.csv",
	"../../testdata/compare/after/kvbench_detail_20261130_120000.csv",
	"../../testdata/report/synthetic/mixed.csv",
}

// TestImportOldCSVs: every old detail CSV imports, each run under its run
// id (or its file's), with all its rows; a second import adds nothing.
func TestImportOldCSVs(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	want := 0
	for _, f := range oldCSVs {
		rows, err := results.ReadFiles([]string{f})
		if err != nil {
			t.Fatal(err)
		}
		want += len(rows)
	}
	res, err := s.Import(ctx, oldCSVs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res.Runs {
		ids = append(ids, r.RunID)
		if r.Existing {
			t.Errorf("run %s: existing on the first import", r.RunID)
		}
	}
	// compare's before and after files are named alike but hold their
	// own run ids; mixed.csv has no run_id column.
	wantIDs := []string{"hash_bench_fair_20260307_062549", "redis_bigkey_20260307_063158", "before", "after", "mixed"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("runs %v, want %v", ids, wantIDs)
	}
	if n := count(t, s, "detail"); n != want {
		t.Errorf("%d detail rows, want %d", n, want)
	}
	again, err := s.Import(ctx, oldCSVs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again.Runs {
		if !r.Existing {
			t.Errorf("run %s imported twice", r.RunID)
		}
	}
	if n := count(t, s, "detail"); n != want {
		t.Errorf("after a second import: %d detail rows, want %d", n, want)
	}
	if n := count(t, s, "runs"); n != len(wantIDs) {
		t.Errorf("after a second import: %d runs, want %d", n, len(wantIDs))
	}
	// The time of a run without started_at comes from its file's name.
	var started string
	if err := s.db.QueryRow("SELECT started_at FROM runs WHERE run_id = 'before'").Scan(&started); err != nil {
		t.Fatal(err)
	}
	if want := formatTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.Local)); started != want {
		t.Errorf("run before started %s, want %s", started, want)
	}
}

// TestNewerStoreRefused: a store whose schema is newer than this kvbench
// knows is refused, and left as it was.
func TestNewerStoreRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("UPDATE schema_version SET version = ?", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrNewerStore) {
		t.Fatalf("open a newer store: %v, want ErrNewerStore", err)
	}
	t.Log(err)
}
