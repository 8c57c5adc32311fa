package runner

import (
	"context"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// Recorder is told of a run as it goes, beside the detail CSV: package
// history implements it to keep every run in its store. Its calls come
// from the run's goroutine, one at a time.
type Recorder interface {
	// BeginRun is called once, before the first attempt, with the run id
	// of the detail CSV and the run's start.
	BeginRun(ctx context.Context, runID string, started time.Time) error
	// Attempt is called with each attempt's detail rows (a workload's
	// attempt has several) and its series rows (none unless the run
	// records series: Options.Interval) once they are in the CSVs.
	Attempt(ctx context.Context, rows []results.Row, series []results.SeriesRow) error
	// Finish is called once at the end, the run interrupted or not.
	Finish(ctx context.Context, interrupted bool) error
}

// recording drives the run's Recorder. The detail CSV is the run's
// record: a failing Recorder costs a one-line warning and is told nothing
// more, and the run goes on. Its calls outlive an interruption, so that
// the interrupted attempt and the run's end are recorded too.
type recording struct {
	rec  Recorder
	ctx  context.Context // the run's, without its cancellation
	warn func(format string, args ...any)
}

// begin starts recording the run; a nil Recorder records nothing.
func (r *recording) begin(ctx context.Context, rec Recorder, runID string, started time.Time, warn func(string, ...any)) {
	r.rec, r.ctx, r.warn = rec, context.WithoutCancel(ctx), warn
	r.do(func() error { return r.rec.BeginRun(r.ctx, runID, started) })
}

// attempt records an attempt's detail and series rows.
func (r *recording) attempt(rows []results.Row, series []results.SeriesRow) {
	r.do(func() error { return r.rec.Attempt(r.ctx, rows, series) })
}

// finish records the run's end.
func (r *recording) finish(interrupted bool) {
	r.do(func() error { return r.rec.Finish(r.ctx, interrupted) })
}

// do calls f unless recording stopped, and stops it on an error.
func (r *recording) do(f func() error) {
	if r.rec == nil {
		return
	}
	if err := f(); err != nil {
		r.warn("warning: %v; the run goes on without the history (the detail CSV has every row)", err)
		r.rec = nil
	}
}
