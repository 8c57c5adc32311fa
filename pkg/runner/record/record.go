// Package record hands a "kvbench run" to its Recorder as it goes
// (package history implements one): the run's start, each attempt's rows,
// its end. The detail CSV is the run's record: a failing Recorder costs a
// warning, and the run says how to import it afterwards (Recording).
package record

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// Recorder is told of a run as it goes, beside the detail CSV: package
// history implements it to keep every run in its store. Its calls come
// from the run's goroutine, one at a time.
type Recorder interface {
	// BeginRun is called once, before the first attempt, with the run id
	// of the detail CSV and the run's start. An error wrapping
	// results.ErrRunExists says the id is taken: the run then asks again
	// with another.
	BeginRun(ctx context.Context, runID string, started time.Time) error
	// Attempt is called with each attempt's detail rows (a workload's
	// attempt has several) and its series rows (none unless the run
	// records series: --interval) once they are in the CSVs.
	Attempt(ctx context.Context, rows []results.Row, series []results.SeriesRow) error
	// Finish is called once at the end, the run interrupted or not.
	Finish(ctx context.Context, interrupted bool) error
}

// Recording drives the run's Recorder. The detail CSV is the run's
// record: a failing Recorder costs a warning and is told nothing more,
// and the run goes on; at its end the run fails (ErrNotRecorded: Failed)
// saying how to import it (ImportCommand). Its calls outlive an
// interruption, so that the interrupted attempt and the run's end are
// recorded too.
type Recording struct {
	rec  Recorder
	ctx  context.Context // the run's, without its cancellation
	warn func(format string, args ...any)
	// failed is why the run is not (wholly) in the history.
	failed error
	// importArgs are history import's flags that keep what the run
	// would have recorded (its commit, branch, label).
	importArgs []string
}

// ErrNotRecorded is wrapped by the run's error (runner.Run) when the run was measured and
// reported but its Recorder failed: the run is missing from the history
// until "kvbench history import" adds it from the detail CSV.
var ErrNotRecorded = errors.New("the run is not in the history")

// ImportArgs is implemented by a Recorder that can say which "kvbench
// history import" flags record a run as it would have.
type ImportArgs interface {
	ImportArgs() []string
}

// Start makes rec the run's Recorder; a nil Recorder records nothing.
// Its calls take ctx without its cancellation; warn writes a warning.
func (r *Recording) Start(ctx context.Context, rec Recorder, warn func(string, ...any)) {
	r.rec, r.ctx, r.warn = rec, context.WithoutCancel(ctx), warn
	if a, ok := rec.(ImportArgs); ok {
		r.importArgs = a.ImportArgs()
	}
}

// Begin records the run's start. It returns only an error wrapping
// results.ErrRunExists (the id is taken: try another); any other failure
// stops the recording, as do's.
func (r *Recording) Begin(runID string, started time.Time) error {
	if r.rec == nil {
		return nil
	}
	err := r.rec.BeginRun(r.ctx, runID, started)
	if errors.Is(err, results.ErrRunExists) {
		return err
	}
	r.do(func() error { return err })
	return nil
}

// ImportCommand is the command that records the run from its detail CSV.
func (r *Recording) ImportCommand(detail string) string {
	return strings.Join(append(append([]string{"kvbench history import"}, r.importArgs...), detail), " ")
}

// Attempt records an attempt's detail and series rows.
func (r *Recording) Attempt(rows []results.Row, series []results.SeriesRow) {
	r.do(func() error { return r.rec.Attempt(r.ctx, rows, series) })
}

// Finish records the run's end.
func (r *Recording) Finish(interrupted bool) {
	r.do(func() error { return r.rec.Finish(r.ctx, interrupted) })
}

// do calls f unless recording stopped, and stops it on an error.
func (r *Recording) do(f func() error) {
	if r.rec == nil {
		return
	}
	if err := f(); err != nil {
		r.warn("warning: %v; the run goes on without the history (the detail CSV has every row)", err)
		r.rec, r.failed = nil, err
	}
}

// Failed is why the run is not (wholly) in the history; nil when every
// call succeeded (or nothing was to record).
func (r *Recording) Failed() error { return r.failed }
