package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// The status of a run in the store.
const (
	// StatusRunning: the run began and has not finished; when its
	// process is gone it was killed, and readers show it as incomplete.
	StatusRunning = "running"
	// StatusComplete: the run ended.
	StatusComplete = "complete"
	// StatusInterrupted: the run was interrupted (Ctrl-C) and ended
	// early, its partial results kept.
	StatusInterrupted = "interrupted"
	// StatusImported: the run was loaded from a detail CSV.
	StatusImported = "imported"
	// StatusIncomplete is shown for a running run whose process is gone.
	StatusIncomplete = "incomplete"
)

// RunInfo is what a run is recorded with beside its rows.
type RunInfo struct {
	// Label names the build or setup measured ("run --label").
	Label string
	// Commit and Branch are the server under test's ("run --commit",
	// "run --branch").
	Commit, Branch string
	// KvbenchVersion is the version of the kvbench that measured it.
	KvbenchVersion string
}

// timeFormat is how times are stored: RFC 3339 in UTC with fixed
// fractional digits, so that text order is time order.
const timeFormat = "2006-01-02T15:04:05.000000Z"

// formatTime formats t for the store.
func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// Recorder records one run as it goes: the run when it begins, each
// attempt's detail and series rows in a transaction of their own, its
// status when it ends. It implements runner.Recorder.
type Recorder struct {
	s    *Store
	info RunInfo
	run  int64
	envs map[string]int64
}

// NewRecorder returns a recorder of one run into the store.
func (s *Store) NewRecorder(info RunInfo) *Recorder {
	return &Recorder{s: s, info: info, envs: make(map[string]int64)}
}

// ErrDuplicateRun: a run of that id from the same host is in the store
// already.
var ErrDuplicateRun = results.ErrRunExists

// ImportArgs are the flags of "kvbench history import" that record a run
// with what this Recorder would have recorded: its commit and branch (the
// label is a column of the detail CSV).
func (r *Recorder) ImportArgs() []string {
	var args []string
	for _, f := range []struct{ flag, value string }{{"--commit", r.info.Commit}, {"--branch", r.info.Branch}} {
		if f.value != "" {
			args = append(args, f.flag, shellQuote(f.value))
		}
	}
	return args
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// BeginRun records the run, as running, before its first attempt.
func (r *Recorder) BeginRun(ctx context.Context, runID string, started time.Time) error {
	host, _ := os.Hostname()
	id, err := r.s.insertRun(ctx, r.s.db, storedRun{
		RunID: runID, Host: host, Started: started, Status: StatusRunning, Label: r.info.Label,
		Commit: r.info.Commit, Branch: r.info.Branch, KvbenchVersion: r.info.KvbenchVersion, Source: "run", PID: os.Getpid(),
	})
	if err != nil {
		return err
	}
	r.run = id
	return nil
}

// Attempt records one attempt's detail rows and its series rows (none
// when the run records no series), in one transaction.
func (r *Recorder) Attempt(ctx context.Context, rows []results.Row, series []results.SeriesRow) error {
	if r.run == 0 {
		return errors.New("history: Attempt before BeginRun")
	}
	err := r.s.inTx(ctx, func(tx *sql.Tx) error {
		if err := r.s.writeAttempts(ctx, tx, r.run, attempts(rows), r.envs); err != nil {
			return err
		}
		return r.s.writeSeries(ctx, tx, r.run, series)
	})
	if err != nil {
		clear(r.envs) // an environment inserted by the failed transaction is gone
		return fmt.Errorf("history: record the attempt: %w", err)
	}
	return nil
}

// Finish records the run's end: complete, or interrupted.
func (r *Recorder) Finish(ctx context.Context, interrupted bool) error {
	if r.run == 0 {
		return errors.New("history: Finish before BeginRun")
	}
	status := StatusComplete
	if interrupted {
		status = StatusInterrupted
	}
	if _, err := r.s.exec(ctx, r.s.db, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", status, formatTime(time.Now()), r.run); err != nil {
		return fmt.Errorf("history: record the run's end: %w", err)
	}
	return nil
}

// storedRun is a row of the runs table.
type storedRun struct {
	ID             int64
	RunID, Host    string
	Started        time.Time
	Finished       time.Time
	Status, Label  string
	Commit, Branch string
	KvbenchVersion string
	Source         string
	PID            int
}

// insertRun inserts a run and returns its id; a run of the same id and
// host is ErrDuplicateRun.
func (s *Store) insertRun(ctx context.Context, q execer, r storedRun) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, s.d.rebind(`INSERT INTO runs (run_id, host, started_at, status, label, vcs_commit, branch, kvbench_version, source, pid)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, host) DO NOTHING RETURNING id`),
		r.RunID, r.Host, formatTime(r.Started), r.Status, r.Label, r.Commit, r.Branch, r.KvbenchVersion, r.Source, r.PID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("history: run %s of host %s: %w", r.RunID, orDash(r.Host), ErrDuplicateRun)
	}
	if err != nil {
		return 0, fmt.Errorf("history: record the run: %w", err)
	}
	return id, nil
}

// shownStatus is the status a reader shows: a running run whose process
// is gone from this host is incomplete. A run of another host cannot be
// checked and shows as running.
func shownStatus(status, host string, pid int) string {
	if status != StatusRunning {
		return status
	}
	if h, _ := os.Hostname(); h == host && pid > 0 {
		if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return StatusIncomplete
		}
	}
	return status
}
