package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// Run is a run of the store.
type Run struct {
	// RunID is the run_id its detail CSV carries; Host the load
	// machine's name (with RunID, the run's key).
	RunID string `json:"run_id"`
	Host  string `json:"host,omitempty"`
	// Started and Finished are when it began and ended (Finished zero
	// while running).
	Started  time.Time `json:"started_at"`
	Finished time.Time `json:"finished_at,omitzero"`
	// Status is StatusComplete, StatusInterrupted, StatusImported,
	// StatusRunning or StatusIncomplete (running, its process gone).
	Status string `json:"status"`
	// Label, Commit and Branch are what it was recorded with.
	Label  string `json:"label,omitempty"`
	Commit string `json:"commit,omitempty"`
	Branch string `json:"branch,omitempty"`
	// KvbenchVersion is the version of the kvbench that measured it.
	KvbenchVersion string `json:"kvbench_version,omitempty"`
	// Source is "run" for a recorded run, else the file imported.
	Source string `json:"source,omitempty"`
	// Rows and OKRows count its detail rows, and those of measured rounds.
	Rows   int `json:"rows"`
	OKRows int `json:"ok_rows"`

	id int64
}

// Name is how reports name the run: its label and commit, or its run id
// when it has neither.
func (r *Run) Name() string {
	var parts []string
	if r.Label != "" {
		parts = append(parts, r.Label)
	}
	if r.Commit != "" {
		c := r.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return r.RunID
	}
	return strings.Join(parts, " ")
}

// Analyzed reports whether the run's figures enter trends and checks: a
// run still running, or killed, is left out.
func (r *Run) Analyzed() bool { return r.Status != StatusRunning && r.Status != StatusIncomplete }

// parseTime reads a stored time; "" is the zero time.
func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// runColumns are the columns runs reads, in scanRun's order.
const runColumns = "r.id, r.run_id, r.host, r.started_at, r.finished_at, r.status, r.label, r.vcs_commit, r.branch, r.kvbench_version, r.source, r.pid"

// scanRun reads a row of runColumns (and dest's extra columns).
func scanRun(sc interface{ Scan(...any) error }, extra ...any) (*Run, error) {
	var r Run
	var started, finished string
	var pid int
	dest := append([]any{&r.id, &r.RunID, &r.Host, &started, &finished, &r.Status, &r.Label, &r.Commit, &r.Branch,
		&r.KvbenchVersion, &r.Source, &pid}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	r.Started, r.Finished = parseTime(started), parseTime(finished)
	r.Status = shownStatus(r.Status, r.Host, pid)
	return &r, nil
}

// Runs lists the runs, newest first, with their row counts; limit > 0
// keeps the newest limit.
func (s *Store) Runs(ctx context.Context, limit int) ([]*Run, error) {
	q := "SELECT " + runColumns + `, COUNT(d.id), COALESCE(SUM(CASE WHEN d.status = 'ok' THEN 1 ELSE 0 END), 0)
FROM runs r LEFT JOIN detail d ON d.run = r.id GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC`
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("history: list the runs: %w", err)
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		var n, ok int
		r, err := scanRun(rows, &n, &ok)
		if err != nil {
			return nil, fmt.Errorf("history: list the runs: %w", err)
		}
		r.Rows, r.OKRows = n, ok
		out = append(out, r)
	}
	return out, rows.Err()
}

// findRun finds a run by its run id, or "RUNID@HOST" when two hosts have
// a run of that id; "latest" is the newest run.
func (s *Store) findRun(ctx context.Context, ref string) (*Run, error) {
	q := "SELECT " + runColumns + " FROM runs r WHERE r.run_id = ?"
	args := []any{ref}
	switch id, host, ok := strings.Cut(ref, "@"); {
	case ref == "latest":
		q, args = "SELECT "+runColumns+" FROM runs r ORDER BY r.started_at DESC, r.id DESC LIMIT 1", nil
	case ok:
		q += " AND r.host = ?"
		args = []any{id, host}
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("history: find run %s: %w", ref, err)
	}
	defer rows.Close()
	var found []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("history: find run %s: %w", ref, err)
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: find run %s: %w", ref, err)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w %q in %s (kvbench history list shows them)", ErrNotFound, ref, s.Location)
	case 1:
		return found[0], nil
	}
	var hosts []string
	for _, r := range found {
		hosts = append(hosts, ref+"@"+r.Host)
	}
	return nil, fmt.Errorf("%w: run %s is on several hosts: name one of %s", ErrOption, ref, strings.Join(hosts, ", "))
}

// detailOf reads a run's detail rows, in the order they were stored, and
// the environment id of each (0 for none).
func (s *Store) detailOf(ctx context.Context, run int64) ([]results.Row, []int64, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind("SELECT env, "+names(detailFields, "")+" FROM detail WHERE run = ? ORDER BY id"), run)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []results.Row
	var envs []int64
	for rows.Next() {
		var r results.Row
		var env sql.NullInt64
		dest := append([]any{&env}, fieldPtrs(reflect.ValueOf(&r).Elem(), detailFields)...)
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		r.Pos = results.Pos{Index: len(out) + 1}
		out = append(out, r)
		envs = append(envs, env.Int64)
	}
	return out, envs, rows.Err()
}

// environments reads the environments by id.
func (s *Store) environments(ctx context.Context) (map[int64]Environment, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, "+names(envFields, "")+" FROM environments")
	if err != nil {
		return nil, fmt.Errorf("history: read the environments: %w", err)
	}
	defer rows.Close()
	out := map[int64]Environment{}
	for rows.Next() {
		var id int64
		var e Environment
		if err := rows.Scan(append([]any{&id}, fieldPtrs(reflect.ValueOf(&e).Elem(), envFields)...)...); err != nil {
			return nil, fmt.Errorf("history: read the environments: %w", err)
		}
		out[id] = e
	}
	return out, rows.Err()
}

// errNoRuns: the store holds no run.
var errNoRuns = errors.New("the history holds no run")
