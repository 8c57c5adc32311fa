package runner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// EventKind says what an Event reports.
type EventKind int

// The kinds of event, in the order an attempt sends them.
const (
	// EventLog is a message for the log (Event.Msg).
	EventLog EventKind = iota
	// EventStart: an attempt starts its server.
	EventStart
	// EventReady: the server answers; Event.Instance describes it.
	EventReady
	// EventProgress: the load generator's progress (Event.Progress), in
	// the prefill and the measurement.
	EventProgress
	// EventEnd: the attempt ended; Event.Row is its detail row, Event.Err
	// its error, Event.Timing where its time went, Event.Final whether the
	// step is over (ok, out of retries or interrupted).
	EventEnd
	// EventSkip: a step is skipped because its scenario has failed, or
	// because its target lacks the workload's commands (Row is then the
	// unsupported total row written for it).
	EventSkip
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

// display owns stderr while the run lasts: one goroutine receives the
// events and writes log lines, and on a terminal redraws a status line
// below them.
type display struct {
	w      io.Writer
	live   bool
	plan   *Plan
	events chan Event
	done   chan struct{}

	// Owned by the display goroutine.
	measured  map[*Scenario]time.Duration // last ok attempt's time
	sumActual time.Duration               // time of ok attempts so far
	sumPlan   time.Duration               // their planned time
	cur       Event                       // the attempt running
	curStart  time.Time
	phase     string
	percent   float64
	last      loadgen.Progress
	rate      float64
	drawn     bool
}

func newDisplay(w io.Writer, live bool, plan *Plan) *display {
	d := &display{w: w, live: live, plan: plan, events: make(chan Event, 64), done: make(chan struct{}),
		measured: make(map[*Scenario]time.Duration)}
	go d.loop()
	return d
}

// send delivers an event; progress events are dropped rather than
// waited for when the display is behind.
func (d *display) send(e Event) {
	if e.Kind == EventProgress {
		select {
		case d.events <- e:
		default:
		}
		return
	}
	d.events <- e
}

// close stops the display once it has written every event.
func (d *display) close() {
	close(d.events)
	<-d.done
}

func (d *display) loop() {
	defer close(d.done)
	for e := range d.events {
		d.handle(e)
	}
	d.clear()
}

func (d *display) handle(e Event) {
	switch e.Kind {
	case EventLog:
		d.println(e.Msg)
	case EventStart:
		d.cur, d.curStart, d.phase, d.percent, d.rate, d.last = e, time.Now(), "start", 0, 0, loadgen.Progress{}
	case EventReady:
		d.phase = "ready"
	case EventProgress:
		p := e.Progress
		if p.Phase != d.last.Phase {
			d.last = loadgen.Progress{Phase: p.Phase}
		}
		if dt := (p.Elapsed - d.last.Elapsed).Seconds(); dt > 0 {
			d.rate = float64(p.Done-d.last.Done) / dt
		}
		d.last, d.phase = p, p.Phase
		if p.Total > 0 {
			d.percent = 100 * float64(p.Done) / float64(p.Total)
		}
	case EventEnd:
		if e.Block > 0 { // an adaptive run's slice: its block's line says how it went
			d.phase = ""
			break
		}
		if e.Err == nil {
			d.measured[e.Scenario] = e.Timing.Total()
			d.sumActual += e.Timing.Total()
			d.sumPlan += d.plan.estimate(e.Scenario)
		}
		d.println(d.endLine(e))
		d.phase = ""
	case EventSkip:
		why := "the scenario has failed"
		if e.Row.Status == results.StatusUnsupported {
			why = e.Row.Error
		}
		d.println(fmt.Sprintf("%s skipped: %s", d.prefix(e), why))
	}
	d.status()
}

// prefix is "[ 3/36] kvstore/persist_no/get round 1".
func (d *display) prefix(e Event) string {
	if e.Block > 0 {
		return fmt.Sprintf("[block %d] %s slice %d", e.Block, e.Scenario.Name(), e.Round)
	}
	w := len(strconv.Itoa(e.Steps))
	s := fmt.Sprintf("[%*d/%d] %s round %d", w, e.Step, e.Steps, e.Scenario.Name(), e.Round)
	if e.Attempt > 1 {
		s += fmt.Sprintf(" attempt %d", e.Attempt)
	}
	return s
}

// endLine is the log line of an ended attempt.
func (d *display) endLine(e Event) string {
	var b strings.Builder
	b.WriteString(d.prefix(e))
	r := e.Row
	t := e.Timing
	switch {
	case e.Err == nil && r.Mode == results.ModeRecovery:
		fmt.Fprintf(&b, ": ok %s; start %.2fs", recoveryLine(r), t.Start.Seconds())
	case e.Err == nil:
		fmt.Fprintf(&b, ": ok %s QPS, %.2f us/op, p99 %.1f us; start %.2fs", thousands(r.QPS), r.UsPerOp, r.LatP99Us, t.Start.Seconds())
	}
	if e.Err == nil {
		if t.Prefill > 0 {
			fmt.Fprintf(&b, ", prefill %.2fs", t.Prefill.Seconds())
		}
		fmt.Fprintf(&b, ", stop %.2fs", t.Stop.Seconds())
		if r.Conflicts > 0 {
			fmt.Fprintf(&b, "; WARNING: %s of %s writes refused (EXIST): the QPS counts writes that did not happen, and the round is compared with nothing",
				thousands(float64(r.Conflicts)), thousands(float64(r.Requests)))
		}
	} else {
		what := "failed, retrying"
		switch {
		case r.Status == results.StatusInterrupted:
			what = "interrupted"
		case r.Status == results.StatusUnsupported:
			what = "UNSUPPORTED, not measured"
		case e.Final:
			what = "FAILED, no retries left"
		}
		fmt.Fprintf(&b, ": %s: %s", what, indent(e.Err.Error()))
	}
	if left := d.left(e.Step, 0); left > 0 && e.Final && e.Step < e.Steps && r.Status != results.StatusInterrupted {
		if strings.Contains(b.String(), "\n") {
			b.WriteString("\n   ") // after a quoted server output, not glued to its last line
		}
		fmt.Fprintf(&b, " [%s left]", formatDuration(left))
	}
	return b.String()
}

// recoveryLine describes a recovery row for the log: its recovery time,
// or that the server came back empty, and its acknowledged writes lost.
func recoveryLine(r results.Row) string {
	var b strings.Builder
	if r.Crash == results.CrashPower {
		b.WriteString("after a power loss, ")
	}
	if r.RecoveryS != nil {
		fmt.Fprintf(&b, "recovered in %.3fs", *r.RecoveryS)
	} else {
		b.WriteString("came back empty")
	}
	if r.AckedWrites != nil && r.AckedLost != nil {
		fmt.Fprintf(&b, ", %s of %s acknowledged writes lost", thousands(float64(*r.AckedLost)), thousands(float64(*r.AckedWrites)))
	}
	if r.LostWindowS != nil {
		fmt.Fprintf(&b, " (acknowledged in the last %.3fs)", *r.LostWindowS)
	}
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// estimateOf is the expected time of one attempt of sc: its last measured
// time, or the plan's estimate scaled by how the measured attempts
// compared with theirs.
func (d *display) estimateOf(sc *Scenario) time.Duration {
	if m, ok := d.measured[sc]; ok {
		return m
	}
	est := d.plan.estimate(sc)
	if d.sumPlan > 0 {
		est = time.Duration(float64(est) * float64(d.sumActual) / float64(d.sumPlan))
	}
	return est
}

// left estimates the time to the end of the run from step (1-based), of
// which elapsed has passed.
func (d *display) left(step int, elapsed time.Duration) time.Duration {
	var t time.Duration
	for i := step; i < len(d.plan.Steps); i++ {
		t += d.estimateOf(d.plan.Steps[i].Scenario)
	}
	if step >= 1 && step <= len(d.plan.Steps) && elapsed > 0 {
		t += max(0, d.estimateOf(d.plan.Steps[step-1].Scenario)-elapsed)
	}
	return t
}

// status redraws the status line (terminal only).
func (d *display) status() {
	if !d.live || d.cur.Scenario == nil || d.phase == "" {
		d.clear()
		return
	}
	var b strings.Builder
	b.WriteString("\r\033[K")
	b.WriteString(d.prefix(d.cur))
	fmt.Fprintf(&b, ": %s", d.phase)
	if d.phase == "run" || d.phase == "prefill" || d.phase == "warmup" {
		fmt.Fprintf(&b, " %3.0f%% %s req/s", d.percent, thousands(d.rate))
	}
	if d.cur.Block == 0 {
		fmt.Fprintf(&b, " | %s left", formatDuration(d.left(d.cur.Step, time.Since(d.curStart))))
	}
	io.WriteString(d.w, b.String())
	d.drawn = true
}

// clear erases the status line.
func (d *display) clear() {
	if d.drawn {
		io.WriteString(d.w, "\r\033[K")
		d.drawn = false
	}
}

// println writes a log line above the status line.
func (d *display) println(s string) {
	d.clear()
	io.WriteString(d.w, s+"\n")
}

// thousands formats x rounded to an integer with comma separators.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(x+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
