// Package status is what "kvbench run" writes on stderr while it runs:
// a log line per event (an attempt's end, a skipped step, a message) and,
// on a terminal, a status line redrawn below them with the attempt's
// phase, its progress and the time the run has left (Display); and the
// run's formats of a duration and a count (Duration, Thousands).
package status

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
)

// Kind says what an Event reports.
type Kind int

// The kinds of event, in the order an attempt sends them.
const (
	// Log is a message for the log (Event.Msg).
	Log Kind = iota
	// Start: an attempt starts its server.
	Start
	// Ready: the server answers; the runner's Event.Instance describes it.
	Ready
	// Progress: the load generator's progress (Event.Progress), in
	// the prefill and the measurement.
	Progress
	// End: the attempt ended; Event.Row is its detail row, Event.Err
	// its error, Event's times where its time went, Event.Final whether the
	// step is over (ok, out of retries or interrupted).
	End
	// Skip: a step is skipped because its scenario has failed, or
	// because its target lacks the workload's commands (Row is then the
	// unsupported total row written for it).
	Skip
)

// Event is a step of the run as the display shows it: the runner's
// Event, its scenario named.
type Event struct {
	// Kind says what happened.
	Kind Kind
	// Step is the step's index in the plan's steps, from 1; Steps their
	// number.
	Step, Steps int
	// Scenario names the scenario ("" for a log message); Round and
	// Attempt say which attempt; Block is an adaptive run's block (its
	// slices' Round is the scenario's slice number), 0 in a run of
	// rounds.
	Scenario              string
	Round, Attempt, Block int
	// Progress is the load generator's progress (Progress).
	Progress loadgen.Progress
	// Row is the attempt's detail row, Err its error (End).
	Row results.Row
	Err error
	// Start, Prefill and Stop are where the attempt's time went, Total
	// all of it (End).
	Start, Prefill, Stop, Total time.Duration
	// Final is set on the End of a step's last attempt.
	Final bool
	// Msg is the message of a Log.
	Msg string
}

// Schedule is what the display knows of the plan, for the time left:
// each step's scenario in order, and the plan's estimate of an attempt
// of each scenario.
type Schedule struct {
	Steps   []string
	Planned map[string]time.Duration
}

// Display owns stderr while the run lasts: one goroutine receives the
// events and writes log lines, and on a terminal (live) redraws a status
// line below them.
type Display struct {
	w      io.Writer
	live   bool
	plan   Schedule
	events chan Event
	done   chan struct{}

	// Owned by the display goroutine.
	measured  map[string]time.Duration // last ok attempt's time, by scenario
	sumActual time.Duration            // time of ok attempts so far
	sumPlan   time.Duration            // their planned time
	cur       Event                    // the attempt running
	curStart  time.Time
	phase     string
	percent   float64
	last      loadgen.Progress
	rate      float64
	drawn     bool
}

// New starts the display of a run of plan on w.
func New(w io.Writer, live bool, plan Schedule) *Display {
	d := &Display{w: w, live: live, plan: plan, events: make(chan Event, 64), done: make(chan struct{}),
		measured: make(map[string]time.Duration)}
	go d.loop()
	return d
}

// Send delivers an event; progress events are dropped rather than
// waited for when the display is behind.
func (d *Display) Send(e Event) {
	if e.Kind == Progress {
		select {
		case d.events <- e:
		default:
		}
		return
	}
	d.events <- e
}

// Close stops the display once it has written every event.
func (d *Display) Close() {
	close(d.events)
	<-d.done
}

func (d *Display) loop() {
	defer close(d.done)
	for e := range d.events {
		d.handle(e)
	}
	d.clear()
}

func (d *Display) handle(e Event) {
	switch e.Kind {
	case Log:
		d.println(e.Msg)
	case Start:
		d.cur, d.curStart, d.phase, d.percent, d.rate, d.last = e, time.Now(), "start", 0, 0, loadgen.Progress{}
	case Ready:
		d.phase = "ready"

	case Progress:
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
	case End:
		if e.Block > 0 { // an adaptive run's slice: its block's line says how it went
			d.phase = ""
			break
		}
		if e.Err == nil {
			d.measured[e.Scenario] = e.Total
			d.sumActual += e.Total
			d.sumPlan += d.plan.Planned[e.Scenario]
		}
		d.println(d.endLine(e))
		d.phase = ""
	case Skip:
		why := "the scenario has failed"
		if e.Row.Status == results.StatusUnsupported {
			why = e.Row.Error
		}
		d.println(fmt.Sprintf("%s skipped: %s", d.prefix(e), why))
	}
	d.status()
}

// prefix is "[ 3/36] kvstore/persist_no/get round 1".
func (d *Display) prefix(e Event) string {
	if e.Block > 0 {
		return fmt.Sprintf("[block %d] %s slice %d", e.Block, e.Scenario, e.Round)
	}
	w := len(strconv.Itoa(e.Steps))
	s := fmt.Sprintf("[%*d/%d] %s round %d", w, e.Step, e.Steps, e.Scenario, e.Round)
	if e.Attempt > 1 {
		s += fmt.Sprintf(" attempt %d", e.Attempt)
	}
	return s
}

// endLine is the log line of an ended attempt.
func (d *Display) endLine(e Event) string {
	var b strings.Builder
	b.WriteString(d.prefix(e))
	r := e.Row
	t := e
	switch {
	case e.Err == nil && r.Mode == results.ModeRecovery:
		fmt.Fprintf(&b, ": ok %s; start %.2fs", recoveryLine(r), t.Start.Seconds())
	case e.Err == nil:
		fmt.Fprintf(&b, ": ok %s QPS, %.2f us/op, p99 %.1f us; start %.2fs", Thousands(r.QPS), r.UsPerOp, r.LatP99Us, t.Start.Seconds())
	}
	if e.Err == nil {
		if t.Prefill > 0 {
			fmt.Fprintf(&b, ", prefill %.2fs", t.Prefill.Seconds())
		}
		fmt.Fprintf(&b, ", stop %.2fs", t.Stop.Seconds())
		if r.Conflicts > 0 {
			fmt.Fprintf(&b, "; WARNING: %s of %s writes refused (EXIST): the QPS counts writes that did not happen, and the round is compared with nothing",
				Thousands(float64(r.Conflicts)), Thousands(float64(r.Requests)))
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
		fmt.Fprintf(&b, " [%s left]", Duration(left))
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
		fmt.Fprintf(&b, ", %s of %s acknowledged writes lost", Thousands(float64(*r.AckedLost)), Thousands(float64(*r.AckedWrites)))
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
func (d *Display) estimateOf(sc string) time.Duration {
	if m, ok := d.measured[sc]; ok {
		return m
	}
	est := d.plan.Planned[sc]
	if d.sumPlan > 0 {
		est = time.Duration(float64(est) * float64(d.sumActual) / float64(d.sumPlan))
	}
	return est
}

// left estimates the time to the end of the run from step (1-based), of
// which elapsed has passed.
func (d *Display) left(step int, elapsed time.Duration) time.Duration {
	var t time.Duration
	for i := step; i < len(d.plan.Steps); i++ {
		t += d.estimateOf(d.plan.Steps[i])
	}
	if step >= 1 && step <= len(d.plan.Steps) && elapsed > 0 {
		t += max(0, d.estimateOf(d.plan.Steps[step-1])-elapsed)
	}
	return t
}

// status redraws the status line (terminal only).
func (d *Display) status() {
	if !d.live || d.cur.Scenario == "" || d.phase == "" {
		d.clear()
		return
	}
	var b strings.Builder
	b.WriteString("\r\033[K")
	b.WriteString(d.prefix(d.cur))
	fmt.Fprintf(&b, ": %s", d.phase)
	if d.phase == "run" || d.phase == "prefill" || d.phase == "warmup" {
		fmt.Fprintf(&b, " %3.0f%% %s req/s", d.percent, Thousands(d.rate))
	}
	if d.cur.Block == 0 {
		fmt.Fprintf(&b, " | %s left", Duration(d.left(d.cur.Step, time.Since(d.curStart))))
	}
	io.WriteString(d.w, b.String())
	d.drawn = true
}

// clear erases the status line.
func (d *Display) clear() {
	if d.drawn {
		io.WriteString(d.w, "\r\033[K")
		d.drawn = false
	}
}

// println writes a log line above the status line.
func (d *Display) println(s string) {
	d.clear()
	io.WriteString(d.w, s+"\n")
}

// Thousands formats x rounded to an integer with comma separators.
func Thousands(x float64) string {
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

// Duration rounds d for people: 40ms, 1.2s, 45s, 3m20s, 1h05m.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	h := d / time.Hour
	m := (d - h*time.Hour).Round(time.Minute) / time.Minute
	return fmt.Sprintf("%dh%02dm", h, m)
}
