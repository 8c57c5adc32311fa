// Package persistjob is the persistence job of "kvbench run"
// (--persist-job): the background work a server's persistence does while
// it serves, set off on purpose during the measured phase: a snapshot
// (BGSAVE) or a log rewrite (BGREWRITEAOF), on every master. The job step
// (Start) sends the command at its times from the phase's start, polls
// INFO persistence until the server says the job is done, samples the
// server's memory (its fork's included), and reads what the server says
// the job cost (Run); the load's series, cut at the job's spans, gives the
// latency and throughput before, during and after it, and the time p99
// takes to come back (SetColumns).
package persistjob

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// Defaults of a run with a persistence job.
const (
	// DefaultDuration is the measured phase's length when a job is set
	// and the phase's duration is not: long enough to see the latency
	// before the job, during it and after it.
	DefaultDuration = 20 * time.Second
	// DefaultInterval is the series' interval "kvbench run" uses with
	// --persist-job when --interval is not given: the resolution of the
	// job's figures (the recovery time above all).
	DefaultInterval = 100 * time.Millisecond
	// Poll is how often INFO persistence is read while a job runs: the
	// resolution of its end.
	Poll = 20 * time.Millisecond
	// RecoveredWithin is how close to its level before the job the p99 of
	// an interval must be for the latency to have recovered: 10%.
	RecoveredWithin = 0.10
)

// phaseStartTick is how often the load reports its progress in an
// attempt with a job: the first report tells the job step when the
// measured phase started.
const phaseStartTick = 50 * time.Millisecond

// Offsets are the job's times from the measured phase's start, for a
// phase of duration: at (the middle of the phase when 0), or every
// every when that is set.
func Offsets(at, every, duration time.Duration) []time.Duration {
	if every > 0 {
		var out []time.Duration
		for t := every; t < duration; t += every {
			out = append(out, t)
		}
		return out
	}
	if at > 0 {
		return []time.Duration{at}
	}
	return []time.Duration{duration / 2}
}

// Config is what the job step takes of the run and its server.
type Config struct {
	// Job is the job's name (target.JobBGSave or target.JobRewrite), Cmd
	// the command that sets it off (target.Desc.PersistJob).
	Job string
	Cmd []string
	// Offsets are its times from the measured phase's start (Offsets).
	Offsets []time.Duration
	// Info is the server, Control how to reach its masters.
	Info    target.Info
	Control control.Options
	// Wait bounds the wait, after the phase, for a job still running:
	// past it the job's end is not known.
	Wait time.Duration
}

// Span is one job: from its command's reply to the poll that found it
// done on every master (Ended), or to when the step stopped looking.
type Span struct {
	Start, End time.Time
	Ended      bool
}

// Run is what the job step returned: the jobs set off and what the
// server said of them, and the memory of its processes.
type Run struct {
	// Job is the job's name, Spans the jobs set off.
	Job   string
	Spans []Span
	// ForkUs is the longest pause to start a job (latest_fork_usec of a
	// master), Cow the most a job copied or kept alive (its masters'
	// sum): -1 when not reported.
	ForkUs, Cow int64
	// MemBefore is the server's memory (target.ServerMemory) before the
	// first job, MemPeak its peak from then to the phase's end; 0 when
	// not known.
	MemBefore, MemPeak int64
}

// Step is the job step under way: a goroutine that sets off the jobs at
// their times from the phase's start, follows them, and stops once the
// phase is over (PhaseOver) and the last job done (Finish).
type Step struct {
	cfg Config

	startOnce sync.Once
	started   chan time.Time
	over      chan struct{}
	overOnce  sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
	out       Run
	err       error // why the job was not done: the attempt fails with it
}

// Start starts the job step, and makes load's progress tell it when the
// measured phase starts.
func Start(ctx context.Context, cfg Config, load *loadgen.Config) *Step {
	ctx, cancel := context.WithCancel(ctx)
	j := &Step{cfg: cfg, started: make(chan time.Time, 1), over: make(chan struct{}),
		cancel: cancel, done: make(chan struct{}), out: Run{Job: cfg.Job, ForkUs: -1, Cow: -1}}
	progress := load.Progress
	load.ProgressInterval = phaseStartTick
	load.Progress = func(p loadgen.Progress) {
		if p.Phase == "run" {
			j.startOnce.Do(func() { j.started <- time.Now().Add(-p.Elapsed) })
		}
		if progress != nil {
			progress(p)
		}
	}
	go j.run(ctx)
	return j
}

// PhaseOver tells the job step that the measured phase ended: it sets
// off no more jobs, and waits for the one running.
func (j *Step) PhaseOver() {
	if j != nil {
		j.overOnce.Do(func() { close(j.over) })
	}
}

// Abort stops the job step at once (the attempt failed).
func (j *Step) Abort() {
	if j != nil {
		j.PhaseOver()
		j.cancel()
		<-j.done
	}
}

// Finish waits for the job step and returns what it found; the error
// says why a job was not done (the server refused it, or it could not be
// followed).
func (j *Step) Finish() (*Run, error) {
	j.PhaseOver()
	<-j.done
	j.cancel()
	return &j.out, j.err
}

// masterState is what one master's INFO persistence says of the job.
type masterState struct {
	running bool
	count   int64 // jobs of the kind done so far; -1 when not reported
	seen    bool  // running was seen
}

// jobFields are the INFO persistence fields of a job: in progress, the
// count of those done, its copy-on-write.
func jobFields(job string) (running, count, cow string) {
	if job == target.JobRewrite {
		return "aof_rewrite_in_progress", "aof_rewrites", "aof_last_cow_size"
	}
	return "rdb_bgsave_in_progress", "rdb_saves", "rdb_last_cow_size"
}

// run is the job step's goroutine.
func (j *Step) run(ctx context.Context) {
	defer close(j.done)
	var conns []*control.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, a := range j.cfg.Info.Masters() {
		c, err := control.Dial(ctx, a, j.cfg.Control)
		if err != nil {
			j.err = fmt.Errorf("persist job: %s: %w", a, err)
			return
		}
		conns = append(conns, c)
	}
	var start time.Time
	select {
	case start = <-j.started:
	case <-j.over:
		j.err = fmt.Errorf("persist job %s: not set off: the measured phase ended before it reported its start", j.cfg.Job)
		return
	case <-ctx.Done():
		return
	}
	mem := &memPeak{info: j.cfg.Info}
	for _, off := range j.cfg.Offsets {
		if !j.sleepUntil(ctx, start.Add(off), mem) {
			break
		}
		if err := j.one(ctx, conns, mem); err != nil {
			j.err = err
			return
		}
	}
	// The memory's peak after the last job, to the phase's end.
	j.sleepUntil(ctx, time.Time{}, mem)
	j.out.MemBefore, j.out.MemPeak = mem.before, mem.peak
	if len(j.out.Spans) == 0 && ctx.Err() == nil {
		j.err = fmt.Errorf("persist job %s: not set off: the server ran a snapshot or rewrite of its own until the measured phase ended", j.cfg.Job)
	}
}

// sleepUntil waits for t (forever when zero) or the phase's end,
// sampling the server's memory meanwhile once the first job was set off;
// false when the phase ended first.
func (j *Step) sleepUntil(ctx context.Context, t time.Time, mem *memPeak) bool {
	tick := time.NewTicker(target.RSSInterval)
	defer tick.Stop()
	var at <-chan time.Time
	if !t.IsZero() {
		timer := time.NewTimer(time.Until(t))
		defer timer.Stop()
		at = timer.C
	}
	for {
		select {
		case <-at:
			return true
		case <-j.over:
			mem.sample()
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
			mem.sample()
		}
	}
}

// one sets the job off on every master and follows it until every master
// says it is done. A job the server runs by itself (an automatic
// rewrite) delays it until it is done: a server runs one at a time.
func (j *Step) one(ctx context.Context, conns []*control.Conn, mem *memPeak) error {
	if idle, err := j.waitIdle(ctx, conns); err != nil || !idle {
		return err
	}
	runningF, countF, cowF := jobFields(j.cfg.Job)
	states := make([]masterState, len(conns))
	forks := make([]int64, len(conns))
	for i, c := range conns {
		m, err := c.Info(ctx, "persistence")
		if err != nil {
			return fmt.Errorf("persist job: %s: INFO persistence: %w", c.Addr(), err)
		}
		states[i].count = infoInt(m, countF)
		forks[i] = forkCount(ctx, c)
	}
	mem.first()
	for _, c := range conns {
		v, err := c.Do(ctx, j.cfg.Cmd...)
		if err != nil {
			return fmt.Errorf("persist job %s: %s: %s: %w", j.cfg.Job, c.Addr(), strings.Join(j.cfg.Cmd, " "), err)
		}
		if _, ok := v.(string); !ok {
			return fmt.Errorf("persist job %s: %s: %s answered %v", j.cfg.Job, c.Addr(), strings.Join(j.cfg.Cmd, " "), v)
		}
	}
	span := Span{Start: time.Now()}
	var overAt time.Time
	over := j.over
	poll := time.NewTicker(Poll)
	defer poll.Stop()
	lastMem := time.Now()
	for !span.Ended {
		select {
		case <-ctx.Done():
			return nil
		case <-over:
			over, overAt = nil, time.Now()
			continue
		case <-poll.C:
		}
		if !overAt.IsZero() && time.Since(overAt) > j.cfg.Wait {
			break
		}
		if time.Since(lastMem) >= target.RSSInterval {
			mem.sample()
			lastMem = time.Now()
		}
		all := true
		for i, c := range conns {
			m, err := c.Info(ctx, "persistence")
			if err != nil {
				return fmt.Errorf("persist job: %s: INFO persistence: %w", c.Addr(), err)
			}
			st := &states[i]
			was := st.count
			st.running = m[runningF] == "1"
			st.seen = st.seen || st.running
			now := infoInt(m, countF)
			doneHere := !st.running && (was >= 0 && now > was || was < 0 && st.seen)
			all = all && doneHere
		}
		if all {
			span.End, span.Ended = time.Now(), true
		}
	}
	if !span.Ended {
		span.End = time.Now()
	}
	j.out.Spans = append(j.out.Spans, span)
	if !span.Ended {
		return nil
	}
	// What it cost: the longest fork, the masters' copies summed.
	var cow int64 = -1
	for i, c := range conns {
		if m, err := c.Info(ctx, "persistence"); err == nil {
			if n := infoInt(m, cowF); n >= 0 {
				cow = max(cow, 0) + n
			}
		}
		if us := forkUsec(ctx, c, forks[i]); us >= 0 {
			j.out.ForkUs = max(j.out.ForkUs, us)
		}
	}
	j.out.Cow = max(j.out.Cow, cow)
	return nil
}

// waitIdle waits until no master runs a snapshot or a rewrite; false
// when the phase ended first.
func (j *Step) waitIdle(ctx context.Context, conns []*control.Conn) (bool, error) {
	poll := time.NewTicker(Poll)
	defer poll.Stop()
	for {
		busy := false
		for _, c := range conns {
			m, err := c.Info(ctx, "persistence")
			if err != nil {
				return false, fmt.Errorf("persist job: %s: INFO persistence: %w", c.Addr(), err)
			}
			busy = busy || m["rdb_bgsave_in_progress"] == "1" || m["aof_rewrite_in_progress"] == "1"
		}
		if !busy {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-j.over:
			return false, nil
		case <-poll.C:
		}
	}
}

// infoInt is an integer field of an INFO section; -1 when absent or not
// a number.
func infoInt(m map[string]string, field string) int64 {
	n, err := strconv.ParseInt(m[field], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// forkCount is INFO stats' total_forks, -1 when the server does not
// report it (the kvstore forks nothing).
func forkCount(ctx context.Context, c *control.Conn) int64 {
	m, err := c.Info(ctx, "stats")
	if err != nil {
		return -1
	}
	return infoInt(m, "total_forks")
}

// forkUsec is the server's latest_fork_usec after a job: -1 when it does
// not report it, or when it counts forks and none was made since before
// (forksBefore).
func forkUsec(ctx context.Context, c *control.Conn, forksBefore int64) int64 {
	m, err := c.Info(ctx, "stats")
	if err != nil {
		return -1
	}
	if n := infoInt(m, "total_forks"); forksBefore >= 0 && n <= forksBefore {
		return -1
	}
	return infoInt(m, "latest_fork_usec")
}

// memPeak follows the server's memory (target.ServerMemory) from the
// first job on: its level then and its peak since.
type memPeak struct {
	info         target.Info
	before, peak int64
	started      bool
	lost         bool // a sample failed: the figures are not known
}

// first takes the sample before the first job.
func (m *memPeak) first() {
	if m.started {
		return
	}
	m.started = true
	n, ok := target.ServerMemory(m.info)
	if !ok {
		m.lost = true
		return
	}
	m.before, m.peak = n, n
}

// sample takes a sample after the first job started.
func (m *memPeak) sample() {
	if !m.started || m.lost {
		return
	}
	if n, ok := target.ServerMemory(m.info); ok {
		m.peak = max(m.peak, n)
	}
}

// jobFigures are the load's figures around the jobs, from its series.
type jobFigures struct {
	p99Before, p99During, p99After float64 // µs; 0: no interval of the kind
	qpsBefore, qpsDuring, qpsAfter float64
	// recoveryS is the longest time from a job's end to the start of the
	// first interval whose p99 is within RecoveredWithin of p99Before;
	// recovered is false when some job's p99 did not come back before
	// the next job or the phase's end.
	recoveryS float64
	recovered bool
}

// interval is one interval of a phase: its part within the phase, its
// requests and latencies.
type interval struct {
	from, to time.Time
	requests int64
	hist     *hdrhistogram.Histogram
}

// intervals are every interval of m's measured phase in order, empty
// ones too (a stopped server leaves no point), each cut to the phase.
func intervals(m *measure.Result) []interval {
	s := m.Series
	if s == nil || s.Interval <= 0 || !m.End.After(m.Start) {
		return nil
	}
	first := m.Start.Truncate(s.Interval)
	var out []interval
	pi := 0
	for t := first; t.Before(m.End); t = t.Add(s.Interval) {
		iv := interval{from: t, to: t.Add(s.Interval)}
		for pi < len(s.Points) && s.Points[pi].Start.Before(t) {
			pi++
		}
		if pi < len(s.Points) && s.Points[pi].Start.Equal(t) {
			iv.requests, iv.hist = s.Points[pi].Requests, s.Points[pi].Histogram
		}
		if iv.from.Before(m.Start) {
			iv.from = m.Start
		}
		if iv.to.After(m.End) {
			iv.to = m.End
		}
		if iv.to.After(iv.from) {
			out = append(out, iv)
		}
	}
	return out
}

// figuresOf cuts m's series at the spans: the intervals that end before
// the first job starts, those that meet a job, those that start after
// the last one ends.
func figuresOf(m *measure.Result, spans []Span) jobFigures {
	f := jobFigures{recovered: len(spans) > 0}
	ivs := intervals(m)
	if len(spans) == 0 || len(ivs) == 0 {
		return jobFigures{}
	}
	meets := func(iv interval) bool {
		return slices.ContainsFunc(spans, func(s Span) bool { return iv.from.Before(s.End) && iv.to.After(s.Start) })
	}
	first, last := spans[0].Start, spans[len(spans)-1].End
	var before, during, after []interval
	for _, iv := range ivs {
		switch {
		case !iv.to.After(first):
			before = append(before, iv)
		case meets(iv):
			during = append(during, iv)
		case !iv.from.Before(last):
			after = append(after, iv)
		}
	}
	f.p99Before, f.qpsBefore = p99QPS(before)
	f.p99During, f.qpsDuring = p99QPS(during)
	f.p99After, f.qpsAfter = p99QPS(after)
	if f.p99Before <= 0 {
		f.recovered = false
		return f
	}
	limit := f.p99Before * (1 + RecoveredWithin)
	for k, s := range spans {
		until := m.End
		if k+1 < len(spans) {
			until = spans[k+1].Start
		}
		back := false
		for _, iv := range ivs {
			if iv.from.Before(s.End) || !iv.from.Before(until) || iv.hist == nil || iv.hist.TotalCount() == 0 {
				continue
			}
			if us := float64(iv.hist.ValueAtQuantile(99)) / 1e3; us <= limit {
				f.recoveryS = max(f.recoveryS, iv.from.Sub(s.End).Seconds())
				back = true
				break
			}
		}
		if !s.Ended || !back {
			f.recovered = false
		}
	}
	return f
}

// p99QPS is the p99 (µs) of the intervals' requests merged, and their
// requests per second of their length; zeros for none.
func p99QPS(ivs []interval) (p99, qps float64) {
	h := measure.NewIntervalHistogram()
	var n int64
	var length time.Duration
	for _, iv := range ivs {
		n += iv.requests
		length += iv.to.Sub(iv.from)
		if iv.hist != nil {
			h.Merge(iv.hist)
		}
	}
	if h.TotalCount() > 0 {
		p99 = float64(h.ValueAtQuantile(99)) / 1e3
	}
	if length > 0 {
		qps = float64(n) / length.Seconds()
	}
	return p99, qps
}

// ClearColumns empties the job's figures of a row, its name kept: a
// workload's command row (the figures are the whole attempt's).
func ClearColumns(row *results.Row) {
	row.JobS, row.ForkMs, row.CowBytes, row.RSSBeforeBytes, row.RSSPeakBytes = nil, nil, nil, nil, nil
	row.P99BeforeUs, row.P99DuringUs, row.P99RecoveryS, row.P99AfterUs = nil, nil, nil, nil
	row.QPSBefore, row.QPSDuring, row.QPSAfter = nil, nil, nil
}

// SetColumns fills the row's persistence job columns from the job step
// (jr, nil when it did not run) and the load's series m.
func SetColumns(row *results.Row, jr *Run, m *measure.Result) {
	if jr == nil {
		return
	}
	row.PersistJob = jr.Job
	pos := func(x float64) *float64 {
		if x > 0 && !math.IsInf(x, 0) {
			x = stats.Round2(x)
			return &x
		}
		return nil
	}
	var longest float64
	allEnded := len(jr.Spans) > 0
	for _, s := range jr.Spans {
		allEnded = allEnded && s.Ended
		longest = max(longest, s.End.Sub(s.Start).Seconds())
	}
	if allEnded {
		row.JobS = pos(longest)
	}
	if jr.ForkUs >= 0 {
		ms := float64(jr.ForkUs) / 1e3 // whole µs: exact in 3 decimals
		row.ForkMs = &ms
	}
	if jr.Cow >= 0 {
		c := jr.Cow
		row.CowBytes = &c
	}
	if jr.MemBefore > 0 {
		b, p := jr.MemBefore, jr.MemPeak
		row.RSSBeforeBytes, row.RSSPeakBytes = &b, &p
	}
	if m == nil {
		return
	}
	f := figuresOf(m, jr.Spans)
	row.P99BeforeUs, row.P99DuringUs, row.P99AfterUs = pos(f.p99Before), pos(f.p99During), pos(f.p99After)
	row.QPSBefore, row.QPSDuring, row.QPSAfter = pos(f.qpsBefore), pos(f.qpsDuring), pos(f.qpsAfter)
	if f.recovered {
		r := math.Round(f.recoveryS*1e3) / 1e3
		row.P99RecoveryS = &r
	}
}
