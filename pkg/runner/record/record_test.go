package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// store is a Recorder that keeps what it is told in memory and fails its
// attempts from the failAt-th on.
type store struct {
	begun    []string
	attempts int
	failAt   int
	finished bool
}

func (s *store) BeginRun(_ context.Context, runID string, _ time.Time) error {
	s.begun = append(s.begun, runID)
	if len(s.begun) == 1 {
		return fmt.Errorf("run %s: %w", runID, results.ErrRunExists)
	}
	return nil
}

func (s *store) Attempt(context.Context, []results.Row, []results.SeriesRow) error {
	s.attempts++
	if s.attempts >= s.failAt {
		return errors.New("disk full")
	}
	return nil
}

func (s *store) Finish(context.Context, bool) error { s.finished = true; return nil }

func (s *store) ImportArgs() []string { return []string{"--label", "x"} }

// TestRecording: a taken run id is the caller's to retry; the first
// failure costs one warning and stops the recording, which then says
// why and how to import the run.
func TestRecording(t *testing.T) {
	s := &store{failAt: 2}
	var warnings []string
	var r Recording
	r.Start(context.Background(), s, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) })
	if err := r.Begin("a", time.Now()); !errors.Is(err, results.ErrRunExists) {
		t.Fatalf("a taken id: %v", err)
	}
	if err := r.Begin("b", time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r.Attempt(nil, nil)
	}
	r.Finish(false)
	if s.attempts != 2 || s.finished || len(warnings) != 1 || !strings.Contains(warnings[0], "disk full") {
		t.Errorf("%d attempts told, finished %v, warnings %q", s.attempts, s.finished, warnings)
	}
	if err := r.Failed(); err == nil || err.Error() != "disk full" {
		t.Errorf("Failed() = %v", err)
	}
	if got := r.ImportCommand("d.csv"); got != "kvbench history import --label x d.csv" {
		t.Errorf("ImportCommand = %q", got)
	}
	var none Recording
	none.Start(context.Background(), nil, nil)
	if err := none.Begin("c", time.Now()); err != nil || none.Failed() != nil {
		t.Errorf("no Recorder: %v %v", err, none.Failed())
	}
	none.Attempt(nil, nil)
	none.Finish(true)
}
