package history

import (
	"reflect"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
)

// migration is one step of the schema: the statements that take a store
// from the previous version to this one. Steps are only ever appended; a
// store records the last step it took in schema_version.
type migration func(d dialect) []string

// migrations are the schema's steps; the store's version is the number of
// steps taken. A column appended to results.Row needs a step adding it to
// detail, one appended to results.SeriesRow a step adding it to series
// (TestSchemaHasEveryColumn fails until then).
var migrations = []migration{schemaV1, addDetailColumns("reconnects", "start_s", "stop_s"), addDetailColumns("stalls", "longest_stall_ms"),
	addDetailColumns("server_rss_bytes", "server_used_memory_bytes", "server_usec_per_call", "server_calls"),
	seriesAsCSV,
	addDetailColumns("recovery_s", "recovery_keys_per_s", "recovery_mb_per_s", "acked_writes", "acked_lost"),
	addDetailColumns("rate", "rate_spec", "capacity_qps", "slo", "send_lag_p99_us"),
	addDetailColumns("crash"),
	addDetailColumns("lost_window_s"),
	func(d dialect) []string {
		return append(addDetailColumns("resp3")(d), addEnvironmentColumns("resp3")(d)...)
	},
	func(d dialect) []string {
		return append(addDetailColumns("placement", "block", "slice", "steal_cpus", "other_cpus", "load1", "cpu_mhz", "disturbed")(d),
			addEnvironmentColumns("placement")(d)...)
	},
	addDetailColumns("notes"),
	addDetailColumns("capacity_why"),
	func(d dialect) []string {
		return append(addDetailColumns("persist_job", "job_s", "fork_ms", "cow_bytes", "rss_before_bytes", "rss_peak_bytes",
			"p99_before_us", "p99_during_us", "p99_recovery_s", "p99_after_us", "qps_before", "qps_during", "qps_after")(d),
			addSeriesColumns("latency_hist")(d)...)
	},
}

// SchemaVersion is the version of the schema this kvbench writes.
var SchemaVersion = len(migrations)

// addDetailColumns is the step that adds detail columns appended to
// results.Row, each with the SQL type of its field and a zero default
// (what rows written before read as).
func addDetailColumns(cols ...string) migration {
	return func(dialect) []string {
		var out []string
		for _, c := range cols {
			out = append(out, "ALTER TABLE detail ADD COLUMN "+c+" "+detailColumnType(c))
		}
		return out
	}
}

// addSeriesColumns is the step that adds series columns appended to
// results.SeriesRow, each with the SQL type of its field and a zero
// default.
func addSeriesColumns(cols ...string) migration {
	return func(dialect) []string {
		var out []string
		for _, c := range cols {
			out = append(out, "ALTER TABLE series ADD COLUMN "+c+" "+columnType(reflect.TypeFor[results.SeriesRow](), seriesFields, c))
		}
		return out
	}
}

// addEnvironmentColumns is the step that adds environment columns
// appended to Environment, each with the SQL type of its field and a zero
// default.
func addEnvironmentColumns(cols ...string) migration {
	return func(dialect) []string {
		var out []string
		for _, c := range cols {
			out = append(out, "ALTER TABLE environments ADD COLUMN "+c+" "+columnType(reflect.TypeFor[Environment](), envFields, c))
		}
		return out
	}
}

// detailColumnType is the SQL type and default of detail column c, from
// its results.Row field.
func detailColumnType(c string) string {
	return columnType(reflect.TypeFor[results.Row](), detailFields, c)
}

// columnType is the SQL type and default of column c of a table whose
// columns are fields of struct type st.
func columnType(st reflect.Type, fields []fieldCol, c string) string {
	for _, f := range fields {
		if f.name != c {
			continue
		}
		t := st.Field(f.index).Type
		if t.Kind() == reflect.Pointer { // an optional column: NULL when empty
			switch t.Elem().Kind() {
			case reflect.Float32, reflect.Float64:
				return "DOUBLE PRECISION"
			default:
				return "BIGINT"
			}
		}
		switch t.Kind() {
		case reflect.String:
			return "TEXT NOT NULL DEFAULT ''"
		case reflect.Bool:
			return "BOOLEAN NOT NULL DEFAULT FALSE"
		case reflect.Float32, reflect.Float64:
			return "DOUBLE PRECISION NOT NULL DEFAULT 0"
		default:
			return "BIGINT NOT NULL DEFAULT 0"
		}
	}
	panic("history: no column " + c + " in " + st.Name())
}

// schemaV1 is the first schema: runs, environments, detail rows and series
// rows.
func schemaV1(d dialect) []string {
	return []string{
		`CREATE TABLE runs (
	id ` + d.serial + `,
	run_id TEXT NOT NULL,
	host TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL,
	finished_at TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	label TEXT NOT NULL DEFAULT '',
	vcs_commit TEXT NOT NULL DEFAULT '',
	branch TEXT NOT NULL DEFAULT '',
	kvbench_version TEXT NOT NULL DEFAULT '',
	source TEXT NOT NULL DEFAULT '',
	pid BIGINT NOT NULL DEFAULT 0,
	UNIQUE (run_id, host)
)`,
		`CREATE INDEX runs_started ON runs (started_at)`,
		`CREATE TABLE environments (
	id ` + d.serial + `,
	fingerprint TEXT NOT NULL UNIQUE,
	client_host TEXT NOT NULL DEFAULT '',
	cpu_model TEXT NOT NULL DEFAULT '',
	cores BIGINT NOT NULL DEFAULT 0,
	kernel TEXT NOT NULL DEFAULT '',
	server_config TEXT NOT NULL DEFAULT '',
	tls BOOLEAN NOT NULL DEFAULT FALSE,
	shards BIGINT NOT NULL DEFAULT 0,
	agents BIGINT NOT NULL DEFAULT 0,
	requests BIGINT NOT NULL DEFAULT 0,
	keyspace BIGINT NOT NULL DEFAULT 0,
	pipeline BIGINT NOT NULL DEFAULT 0,
	connections BIGINT NOT NULL DEFAULT 0,
	value_size BIGINT NOT NULL DEFAULT 0
)`,
		`CREATE TABLE detail (
	id ` + d.serial + `,
	run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	env BIGINT REFERENCES environments (id),
	run_id TEXT NOT NULL DEFAULT '',
	started_at TEXT NOT NULL DEFAULT '',
	target TEXT NOT NULL DEFAULT '',
	strategy TEXT NOT NULL DEFAULT '',
	persistence TEXT NOT NULL DEFAULT '',
	alloc TEXT NOT NULL DEFAULT '',
	mode TEXT NOT NULL DEFAULT '',
	round BIGINT NOT NULL DEFAULT 0,
	attempt BIGINT NOT NULL DEFAULT 0,
	status TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT '',
	requests BIGINT NOT NULL DEFAULT 0,
	pipeline BIGINT NOT NULL DEFAULT 0,
	connections BIGINT NOT NULL DEFAULT 0,
	keyspace BIGINT NOT NULL DEFAULT 0,
	value_size BIGINT NOT NULL DEFAULT 0,
	seed BIGINT NOT NULL DEFAULT 0,
	elapsed_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	qps DOUBLE PRECISION NOT NULL DEFAULT 0,
	us_per_op DOUBLE PRECISION NOT NULL DEFAULT 0,
	lat_p50_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	lat_p99_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	lat_p999_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	lat_max_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	errors BIGINT NOT NULL DEFAULT 0,
	conflicts BIGINT NOT NULL DEFAULT 0,
	misses BIGINT NOT NULL DEFAULT 0,
	verify_failures BIGINT NOT NULL DEFAULT 0,
	prefill_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	server_version TEXT NOT NULL DEFAULT '',
	server_config TEXT NOT NULL DEFAULT '',
	client_host TEXT NOT NULL DEFAULT '',
	cpu_model TEXT NOT NULL DEFAULT '',
	cores BIGINT NOT NULL DEFAULT 0,
	kernel TEXT NOT NULL DEFAULT '',
	label TEXT NOT NULL DEFAULT '',
	client_cpu_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	server_cpu_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	qps_per_server_cpu_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	client_bound BOOLEAN NOT NULL DEFAULT FALSE,
	flushed BOOLEAN NOT NULL DEFAULT FALSE,
	latency_hist TEXT NOT NULL DEFAULT '',
	agents BIGINT NOT NULL DEFAULT 0,
	shards BIGINT NOT NULL DEFAULT 0,
	moved BIGINT NOT NULL DEFAULT 0,
	ask BIGINT NOT NULL DEFAULT 0,
	workload TEXT NOT NULL DEFAULT '',
	command TEXT NOT NULL DEFAULT '',
	tls BOOLEAN NOT NULL DEFAULT FALSE
)`,
		`CREATE INDEX detail_run ON detail (run)`,
		`CREATE TABLE series (
	id ` + d.serial + `,
	run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	run_id TEXT NOT NULL DEFAULT '',
	target TEXT NOT NULL DEFAULT '',
	strategy TEXT NOT NULL DEFAULT '',
	mode TEXT NOT NULL DEFAULT '',
	round BIGINT NOT NULL DEFAULT 0,
	attempt BIGINT NOT NULL DEFAULT 0,
	command TEXT NOT NULL DEFAULT '',
	t_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	requests BIGINT NOT NULL DEFAULT 0,
	errors BIGINT NOT NULL DEFAULT 0,
	qps DOUBLE PRECISION NOT NULL DEFAULT 0,
	p50_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	p99_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	p999_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	max_us DOUBLE PRECISION NOT NULL DEFAULT 0,
	workload TEXT NOT NULL DEFAULT '',
	node TEXT NOT NULL DEFAULT ''
)`,
		`CREATE INDEX series_run ON series (run)`,
	}
}

// seriesAsCSV makes the series table hold results.SeriesRow: an events
// column, and the figures an interval may lack (qps, the percentiles)
// nullable. SQLite cannot drop NOT NULL in place, so the table is rebuilt,
// its rows copied with their ids; the percentiles of an interval without
// requests, stored as 0 before, become NULL.
func seriesAsCSV(d dialect) []string {
	const cols = "id, run, run_id, target, strategy, mode, round, attempt, command, t_s, requests, errors, qps, " +
		"p50_us, p99_us, p999_us, max_us, workload, node"
	empty := func(c string) string { return "CASE WHEN requests = 0 THEN NULL ELSE " + c + " END" }
	return append(append([]string{
		`CREATE TABLE series_new (
	id ` + d.serial + `,
	run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	run_id TEXT NOT NULL DEFAULT '',
	target TEXT NOT NULL DEFAULT '',
	strategy TEXT NOT NULL DEFAULT '',
	mode TEXT NOT NULL DEFAULT '',
	round BIGINT NOT NULL DEFAULT 0,
	attempt BIGINT NOT NULL DEFAULT 0,
	command TEXT NOT NULL DEFAULT '',
	t_s DOUBLE PRECISION NOT NULL DEFAULT 0,
	requests BIGINT NOT NULL DEFAULT 0,
	errors BIGINT NOT NULL DEFAULT 0,
	qps DOUBLE PRECISION,
	p50_us DOUBLE PRECISION,
	p99_us DOUBLE PRECISION,
	p999_us DOUBLE PRECISION,
	max_us DOUBLE PRECISION,
	workload TEXT NOT NULL DEFAULT '',
	node TEXT NOT NULL DEFAULT '',
	events TEXT NOT NULL DEFAULT ''
)`,
		"INSERT INTO series_new (" + cols + ") SELECT id, run, run_id, target, strategy, mode, round, attempt, command, t_s, requests, errors, qps, " +
			empty("p50_us") + ", " + empty("p99_us") + ", " + empty("p999_us") + ", " + empty("max_us") + ", workload, node FROM series",
		"DROP TABLE series",
		"ALTER TABLE series_new RENAME TO series",
	}, d.renamed("series_new", "series")...), "CREATE INDEX series_run ON series (run)")
}

// migrate brings the store's schema to the version of ms, in one
// transaction, or refuses a store that is newer.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	latest := len(ms)
	// The common case, a store already current, needs no write lock.
	var v int
	if err := s.db.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v); err == nil && v == latest {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.migrateLock != "" {
			if _, err := tx.ExecContext(ctx, s.d.migrateLock); err != nil {
				return fmt.Errorf("lock the schema: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"); err != nil {
			return fmt.Errorf("schema_version: %w", err)
		}
		err := tx.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			v = 0
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES (0)"); err != nil {
				return fmt.Errorf("schema_version: %w", err)
			}
		case err != nil:
			return fmt.Errorf("schema_version: %w", err)
		}
		if v > latest {
			return fmt.Errorf("%w: its schema is version %d and this kvbench knows versions up to %d; use the kvbench that wrote it (or a later one), or another store", ErrNewerStore, v, latest)
		}
		for i := v; i < latest; i++ {
			for _, stmt := range ms[i](s.d) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migrate the schema to version %d: %s: %w", i+1, firstLine(stmt), err)
				}
			}
		}
		if _, err := s.exec(ctx, tx, "UPDATE schema_version SET version = ?", latest); err != nil {
			return fmt.Errorf("schema_version: %w", err)
		}
		return nil
	})
}

// firstLine is a statement's first line, for messages.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
