package history

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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

// testAttempt is one attempt's detail row with every column set.
func testAttempt(runID string, round int, qps float64) []results.Row {
	h := hdrhistogram.New(1, 10_000_000, 3)
	for i := range 1000 {
		h.RecordValue(int64(1000 + i*10))
	}
	enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return []results.Row{{
		RunID: runID, StartedAt: "2026-11-30T12:00:00Z", Target: "kvstore", Strategy: "persist_everysec", Persistence: "everysec",
		Alloc: "mypool", Mode: "set", Round: round, Attempt: 1, Status: results.StatusOK, Requests: 100000, Pipeline: 128,
		Connections: 1, Keyspace: 100000, ValueSize: 32, Seed: 12345 + int64(round), ElapsedS: 100000 / qps, QPS: qps,
		UsPerOp: 1e6 / qps, LatP50Us: 150.5, LatP99Us: 300.25, LatP999Us: 450, LatMaxUs: 900, PrefillS: 0.5,
		ServerVersion: "v1.2.3", ServerConfig: "persist=everysec", ClientHost: "box1", CPUModel: "Test CPU", Cores: 2,
		Kernel: "6.1.0", Label: "main", ClientCPUS: 0.7, ServerCPUS: 0.9, QPSPerServerCPUS: results.Opt(qps / 0.9), ClientBound: true,
		LatencyHist: string(enc), Agents: 1, TLS: true,
		ServerRSSBytes: 40 << 20, ServerUsedMemoryBytes: 30 << 20, ServerUsecPerCall: 0.25, ServerCalls: 100000,
	}}
}

// testSeries are an attempt's series rows: an interval with every figure
// and two events, one without requests (no percentiles, a qps of 0) and a
// last one of no length (no qps either).
func testSeries(runID string, round int) []results.SeriesRow {
	base := results.SeriesRow{RunID: runID, Target: "kvstore", Strategy: "persist_everysec", Mode: "set", Round: round, Attempt: 1,
		Command: "SET"}
	full, idle, last := base, base, base
	full.Requests, full.Errors, full.QPS = 5000, 2, ptr(5000.0)
	full.P50Us, full.P99Us, full.P999Us, full.MaxUs = ptr(100.0), ptr(200.0), ptr(300.5), ptr(400.0)
	full.Events = results.EventAOFRewrite + results.EventSep + results.EventDelayedFsync
	idle.TS, idle.QPS = 1, ptr(0.0)
	last.TS, last.Node = 2, "127.0.0.1:7000"
	return []results.SeriesRow{full, idle, last}
}

// TestRecordRoundTrip: on both stores, a recorded run keeps every column
// of every row, its histogram included, and its series rows, their empty
// figures empty and their events; it is listed with its status and
// counts.
func TestRecordRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := s.NewRecorder(RunInfo{Label: "main", Commit: "abc123", Branch: "dev", KvbenchVersion: "v9"})
		if err := rec.BeginRun(ctx, "20261130_120000", time.Now()); err != nil {
			t.Fatal(err)
		}
		var want []results.Row
		var series []results.SeriesRow
		for i := range 3 {
			rows := testAttempt("20261130_120000", i+1, 100000+float64(i))
			ss := testSeries("20261130_120000", i+1)
			if err := rec.Attempt(ctx, rows, ss); err != nil {
				t.Fatal(err)
			}
			want = append(want, rows...)
			series = append(series, ss...)
		}
		failed := results.Row{RunID: "20261130_120000", Target: "kvstore", Strategy: "persist_everysec", Mode: "get", Round: 1, Attempt: 1,
			Status: results.StatusFailed, Error: "connection refused", Requests: 42}
		if err := rec.Attempt(ctx, []results.Row{failed}, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, failed)
		runs, err := s.Runs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Status != StatusRunning || runs[0].Rows != 4 || runs[0].OKRows != 3 {
			t.Fatalf("runs while recording: %+v", runs)
		}
		if err := rec.Finish(ctx, false); err != nil {
			t.Fatal(err)
		}
		r, err := s.findRun(ctx, "20261130_120000")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != StatusComplete || r.Label != "main" || r.Commit != "abc123" || r.Branch != "dev" || r.KvbenchVersion != "v9" || r.Finished.IsZero() {
			t.Errorf("run %+v", r)
		}
		got, envs, err := s.detailOf(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i].Pos = results.Pos{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rows read back differ:\n got %+v\nwant %+v", got, want)
		}
		if envs[0] == 0 || envs[0] != envs[2] || envs[3] != 0 {
			t.Errorf("environments %v: want one for the ok rows, none for the failed one", envs)
		}
		gotSeries, err := s.seriesOf(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotSeries, series) {
			t.Errorf("series read back %+v, want %+v", gotSeries, series)
		}
		// The same run id from the same host is refused.
		if err := s.NewRecorder(RunInfo{}).BeginRun(ctx, "20261130_120000", time.Now()); !errors.Is(err, ErrDuplicateRun) {
			t.Errorf("a second run of the same id: %v, want ErrDuplicateRun", err)
		}
	})
}

// TestMigrations: on both stores, a store of an older schema is migrated
// when opened, its rows kept; one of a newer schema is refused and left
// as it was.
func TestMigrations(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		old, err := openWith(ctx, loc, migrations)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Import(ctx, oldCSVs[:1]); err != nil {
			t.Fatal(err)
		}
		old.Close()
		next := append(slices.Clone(migrations), func(dialect) []string {
			return []string{"ALTER TABLE detail ADD COLUMN next_column BIGINT NOT NULL DEFAULT 0"}
		})
		s, err := openWith(ctx, loc, next)
		if err != nil {
			t.Fatalf("migrate: %v", err)
		}
		var v, n, added int
		if err := s.db.QueryRow("SELECT version FROM schema_version").Scan(&v); err != nil || v != len(next) {
			t.Errorf("schema version %d (%v), want %d", v, err, len(next))
		}
		if err := s.db.QueryRow("SELECT COUNT(*), COALESCE(SUM(next_column), 0) FROM detail").Scan(&n, &added); err != nil || n != 30 {
			t.Errorf("after the migration: %d rows (%v), want 30", n, err)
		}
		s.Close()
		_, err = Open(ctx, loc)
		if !errors.Is(err, ErrNewerStore) {
			t.Fatalf("open a store newer than this kvbench: %v, want ErrNewerStore", err)
		}
		t.Log(err)
		s, err = openWith(ctx, loc, next)
		if err != nil {
			t.Fatalf("the refused store changed: %v", err)
		}
		s.Close()
	})
}

// TestSchemaHasEveryColumn: the detail table has a column for every
// column of the detail CSV, the series table one for every column of the
// series CSV; a column appended to results.Row or results.SeriesRow needs
// a migration.
func TestSchemaHasEveryColumn(t *testing.T) {
	s := openSQLite(t)
	rows, err := s.db.Query("SELECT name FROM pragma_table_info('detail')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		have[name] = true
	}
	for _, c := range results.Columns {
		if !have[c] {
			t.Errorf("detail CSV column %s has no column in the detail table: add a migration", c)
		}
	}
	series := map[string]bool{}
	cols, err := s.db.Query("SELECT name FROM pragma_table_info('series')")
	if err != nil {
		t.Fatal(err)
	}
	defer cols.Close()
	for cols.Next() {
		var name string
		cols.Scan(&name)
		series[name] = true
	}
	for _, c := range results.SeriesColumns {
		if !series[c] {
			t.Errorf("series CSV column %s has no column in the series table: add a migration", c)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestSeriesMigration: on both stores, a store of the schema before the
// series table held results.SeriesRow migrates with its series rows kept
// (the percentiles of an interval without requests become empty), and
// takes new rows after them.
func TestSeriesMigration(t *testing.T) {
	step := slices.IndexFunc(migrations, func(m migration) bool {
		return reflect.ValueOf(m).Pointer() == reflect.ValueOf(migration(seriesAsCSV)).Pointer()
	})
	if step < 0 {
		t.Fatal("seriesAsCSV is not among the migrations")
	}
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		old, err := openWith(ctx, loc, migrations[:step])
		if err != nil {
			t.Fatal(err)
		}
		run, err := old.insertRun(ctx, old.db, storedRun{RunID: "20261130_120000", Host: "box1", Started: time.Now(), Status: StatusImported})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			ts       float64
			requests int64
			p50      float64
		}{{0, 5000, 120}, {1, 0, 0}} {
			if _, err := old.exec(ctx, old.db, `INSERT INTO series (run, run_id, target, strategy, mode, round, attempt, command, t_s, requests, errors,
	qps, p50_us, p99_us, p999_us, max_us) VALUES (?, '20261130_120000', 'kvstore', 'nopersist', 'set', 1, 1, 'SET', ?, ?, 0, ?, ?, ?, ?, ?)`,
				run, r.ts, r.requests, float64(r.requests), r.p50, r.p50*2, r.p50*3, r.p50*4); err != nil {
				t.Fatal(err)
			}
		}
		old.Close()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatalf("migrate: %v", err)
		}
		defer s.Close()
		base := results.SeriesRow{RunID: "20261130_120000", Target: "kvstore", Strategy: "nopersist", Mode: "set", Round: 1, Attempt: 1, Command: "SET"}
		kept, idle := base, base
		kept.Requests, kept.QPS, kept.P50Us, kept.P99Us, kept.P999Us, kept.MaxUs = 5000, ptr(5000.0), ptr(120.0), ptr(240.0), ptr(360.0), ptr(480.0)
		idle.TS, idle.QPS = 1, ptr(0.0)
		added := testSeries("20261130_120000", 2)
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.writeSeries(ctx, tx, run, added) }); err != nil {
			t.Fatalf("series rows after the migration: %v", err)
		}
		got, err := s.seriesOf(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]results.SeriesRow{kept, idle}, added...); !reflect.DeepEqual(got, want) {
			t.Errorf("series after the migration:\n got %+v\nwant %+v", got, want)
		}
	})
}

// TestImportSeries: on both stores, a detail CSV imports with the series
// CSV beside it, each run with its series rows (their empty figures and
// events kept); the series CSV among the files is not read as a detail
// CSV, rows of a run the detail CSV lacks are left out with a warning,
// and a second import adds nothing.
func TestImportSeries(t *testing.T) {
	const runID = "20261130_120000"
	dir := t.TempDir()
	detail := filepath.Join(dir, "kvbench_detail_"+runID+".csv")
	dw, err := results.Create(detail)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := results.CreateSeries(results.SeriesPath(detail))
	if err != nil {
		t.Fatal(err)
	}
	var want []results.SeriesRow
	for round := 1; round <= 3; round++ {
		row := testAttempt(runID, round, 100000)[0]
		if err := dw.Write(&row); err != nil {
			t.Fatal(err)
		}
		ss := testSeries(runID, round)
		if err := sw.Write(ss); err != nil {
			t.Fatal(err)
		}
		want = append(want, ss...)
	}
	if err := sw.Write(testSeries("20261130_130000", 1)); err != nil { // a run the detail CSV lacks
		t.Fatal(err)
	}
	if err := errors.Join(dw.Close(), sw.Close()); err != nil {
		t.Fatal(err)
	}
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		files := []string{detail, results.SeriesPath(detail)}
		res, err := s.Import(ctx, files)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Runs) != 1 || res.Runs[0].Rows != 3 || res.Runs[0].Series != len(want) {
			t.Fatalf("imported %+v, want one run of 3 rows and %d series rows", res.Runs, len(want))
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Error(), "3 rows of run 20261130_130000") {
			t.Errorf("warnings %v, want one about the 3 rows of run 20261130_130000", res.Warnings)
		}
		r, err := s.findRun(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.seriesOf(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("series imported:\n got %+v\nwant %+v", got, want)
		}
		again, err := s.Import(ctx, files)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Runs) != 1 || !again.Runs[0].Existing || count(t, s, "series") != len(want) {
			t.Errorf("a second import: %+v, %d series rows, want the run existing and %d rows", again.Runs, count(t, s, "series"), len(want))
		}
	})
}
