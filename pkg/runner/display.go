package runner

import (
	"io"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/status"
	"github.com/kvbench/kvbench/pkg/target"
)

// EventKind says what an Event reports (status.Kind).
type EventKind = status.Kind

// The kinds of event, in the order an attempt sends them: see status.Kind.
const (
	// EventLog is a message for the log (Event.Msg).
	EventLog = status.Log
	// EventStart: an attempt starts its server.
	EventStart = status.Start
	// EventReady: the server answers; Event.Instance describes it.
	EventReady = status.Ready
	// EventProgress: the load generator's progress (Event.Progress), in
	// the prefill and the measurement.
	EventProgress = status.Progress
	// EventEnd: the attempt ended; Event.Row is its detail row, Event.Err
	// its error, Event.Timing where its time went, Event.Final whether the
	// step is over (ok, out of retries or interrupted).
	EventEnd = status.End
	// EventSkip: a step is skipped because its scenario has failed, or
	// because its target lacks the workload's commands (Row is then the
	// unsupported total row written for it).
	EventSkip = status.Skip
)

// Event is a step of the run, for the progress display and for Observe.
type Event struct {
	// Kind says what happened.
	Kind EventKind
	// Step is the step's index in Plan.Steps, from 1; Steps their number.
	Step, Steps int
	// Scenario, Round and Attempt say which attempt (nil Scenario for a
	// log message).
	Scenario *Scenario
	Round    int
	Attempt  int
	// Instance is the server (EventReady and later).
	Instance target.Info
	// Progress is the load generator's progress (EventProgress).
	Progress loadgen.Progress
	// Row is the attempt's detail row (EventEnd).
	Row results.Row
	// Err is the attempt's error (EventEnd).
	Err error
	// Timing is where the attempt's time went (EventEnd).
	Timing Timing
	// Final is set on the EventEnd of a step's last attempt.
	Final bool
	// Msg is the message of an EventLog.
	Msg string
	// Block is an adaptive run's block (its slices' Round is the
	// scenario's slice number); 0 in a run of rounds.
	Block int
}

// shown is e as the display shows it.
func (e Event) shown() status.Event {
	s := status.Event{Kind: e.Kind, Step: e.Step, Steps: e.Steps, Round: e.Round, Attempt: e.Attempt, Block: e.Block,
		Progress: e.Progress, Row: e.Row, Err: e.Err, Final: e.Final, Msg: e.Msg,
		Start: e.Timing.Start, Prefill: e.Timing.Prefill, Stop: e.Timing.Stop, Total: e.Timing.Total()}
	if e.Scenario != nil {
		s.Scenario = e.Scenario.Name()
	}
	return s
}

// display shows the run's events on stderr (package status).
type display struct{ d *status.Display }

// newDisplay starts the display of plan's run on w.
func newDisplay(w io.Writer, live bool, plan *Plan) *display {
	sch := status.Schedule{Planned: make(map[string]time.Duration)}
	for _, st := range plan.Steps {
		sch.Steps = append(sch.Steps, st.Scenario.Name())
	}
	for _, sc := range plan.Scenarios {
		sch.Planned[sc.Name()] = plan.estimate(sc)
	}
	return &display{status.New(w, live, sch)}
}

// send delivers an event (status.Display.Send).
func (d *display) send(e Event) { d.d.Send(e.shown()) }

// close stops the display once it has written every event.
func (d *display) close() { d.d.Close() }
