package runner

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/status"
)

// TestDisplayEndLine writes the end of a step's last attempt through the
// display (not live, into a buffer): the time left follows a one-line
// error on the same line, and goes on a line of its own, indented, after
// an error quoting several lines of server output.
func TestDisplayEndLine(t *testing.T) {
	p, err := NewPlan(planOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 18 {
		t.Fatalf("%d steps: want 3 strategies × 2 modes × 3 rounds", len(p.Steps))
	}
	// Nothing measured yet: the time left after step 1 is the plan's
	// estimate of the other steps.
	var rest time.Duration
	for _, st := range p.Steps[1:] {
		rest += p.estimate(st.Scenario)
	}
	left := " [" + status.Duration(rest) + " left]"
	step := p.Steps[0]
	prefix := "[ 1/18] " + step.Scenario.Name() + " round 1"

	tests := []struct {
		name string
		err  error
		want string
	}{
		{"one line", errors.New("start: server not ready after 10s"),
			prefix + ": FAILED, no retries left: start: server not ready after 10s" + left + "\n"},
		{"server output", errors.New("start: server exited: exit status 1; its last lines:\nFATAL: bad config\n>>> 'appendfsync sometimes'"),
			prefix + ": FAILED, no retries left: start: server exited: exit status 1; its last lines:\n" +
				"    FATAL: bad config\n    >>> 'appendfsync sometimes'\n   " + left + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			d := newDisplay(&buf, false, p)
			d.send(Event{Kind: EventStart, Step: 1, Steps: len(p.Steps), Scenario: step.Scenario, Round: step.Round, Attempt: 1})
			d.send(Event{Kind: EventEnd, Step: 1, Steps: len(p.Steps), Scenario: step.Scenario, Round: step.Round, Attempt: 1,
				Row: results.Row{Status: results.StatusFailed, Error: tt.err.Error()}, Err: tt.err, Final: true})
			d.close()
			if got := buf.String(); got != tt.want {
				t.Errorf("display wrote\n%q\nwant\n%q", got, tt.want)
			}
			if n := strings.Count(buf.String(), "left]"); n != 1 {
				t.Errorf("the time left appears %d times", n)
			}
		})
	}
}
