package runner

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
	"github.com/kvbench/kvbench/pkg/runner/series"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// A persistence job (Options.PersistJob) is the background work a
// server's persistence does while it serves, set off on purpose during
// the measured phase: a snapshot (BGSAVE) or a log rewrite
// (BGREWRITEAOF), on every master. The job step sends the command at its
// time from the phase's start, polls INFO persistence until the server
// says the job is done, samples the server's memory (its fork's
// included), and reads what the server says the job cost; the load's
// series, cut at the job's span, gives the latency and throughput before,
// during and after it, and the time p99 takes to come back.

// Defaults of a run with a persistence job.
const (
	// DefaultPersistJobDuration is the measured phase's length when
	// Options.PersistJob is set and Duration is not: long enough to see
	// the latency before the job, during it and after it.
	DefaultPersistJobDuration = 20 * time.Second
	// DefaultPersistJobInterval is the series' interval "kvbench run"
	// uses with --persist-job when --interval is not given: the
	// resolution of the job's figures (the recovery time above all).
	DefaultPersistJobInterval = 100 * time.Millisecond
	// PersistJobPoll is how often INFO persistence is read while a job
	// runs: the resolution of its end.
	PersistJobPoll = 20 * time.Millisecond
	// PersistJobWait bounds the wait, after the phase, for a job still
	// running: past it the job's end is not known.
	PersistJobWait = QuietLimit
	// RecoveredWithin is how close to its level before the job the p99 of
	// an interval must be for the latency to have recovered: 10%.
	RecoveredWithin = 0.10
)

// phaseStartTick is how often the load reports its progress in an
// attempt with a job: the first report tells the job step when the
// measured phase started.
const phaseStartTick = 50 * time.Millisecond

// persistJobErrors checks the persistence job's options (normalize): the
// job's name and times against the phase's Duration, which defaults to
// DefaultPersistJobDuration, and what does not go with a job.
func (o *Options) persistJobErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.PersistJob == "" {
		if o.PersistJobAt != 0 || o.PersistJobEvery != 0 {
			bad("--persist-job-at and --persist-job-every go with --persist-job")
		}
		return errs
	}
	if !slices.Contains(target.PersistJobNames, o.PersistJob) {
		bad("--persist-job %q: want %s", o.PersistJob, strings.Join(target.PersistJobNames, " or "))
	}
	if o.Duration == 0 {
		o.Duration = DefaultPersistJobDuration
	}
	switch {
	case o.PersistJobAt < 0 || o.PersistJobEvery < 0:
		bad("--persist-job-at %v and --persist-job-every %v: want a time from the measured phase's start", o.PersistJobAt, o.PersistJobEvery)
	case o.PersistJobAt > 0 && o.PersistJobEvery > 0:
		bad("--persist-job-at %v and --persist-job-every %v: give one of them", o.PersistJobAt, o.PersistJobEvery)
	case o.PersistJobAt >= o.Duration:
		bad("--persist-job-at %v: want a time within the measured phase, before --duration %v", o.PersistJobAt, o.Duration)
	case o.PersistJobEvery >= o.Duration:
		bad("--persist-job-every %v: want less than --duration %v, or the job never runs", o.PersistJobEvery, o.Duration)
	}
	if o.Interval <= 0 {
		bad("--persist-job: its figures come from the series: want an --interval (%v with --persist-job)", DefaultPersistJobInterval)
	}
	if slices.Contains(o.Modes, results.ModeRecovery) {
		bad("--persist-job: the recovery mode measures no phase to set a job off in: drop recovery from --modes")
	}
	if o.Rates != "" || o.SLO != "" {
		bad("--persist-job: the job runs in the closed loop; a load curve's phases (--rates, --slo) would follow it on the same server: measure them in a run of their own")
	}
	if o.Agents > 1 {
		bad("--persist-job: the job is timed from the measured phase's start, which agent processes keep to themselves: drop --agents")
	}
	return errs
}

// persistJobOffsets are the job's times from the measured phase's start:
// PersistJobAt (the middle of the phase when 0), or every
// PersistJobEvery.
func (o *Options) persistJobOffsets() []time.Duration {
	if o.PersistJobEvery > 0 {
		var out []time.Duration
		for t := o.PersistJobEvery; t < o.Duration; t += o.PersistJobEvery {
			out = append(out, t)
		}
		return out
	}
	if o.PersistJobAt > 0 {
		return []time.Duration{o.PersistJobAt}
	}
	return []time.Duration{o.Duration / 2}
}

// persistJobStrategies keeps the strategies of sel that have the run's
// job (target.Desc.PersistJob). One the user named (explicit) without it
// is an error naming it and why; among a target's defaults, or all of
// them, it is left out with a warning.
func (p *Plan) persistJobStrategies(d target.Desc, sel []target.Strategy, explicit bool) ([]target.Strategy, error) {
	job := p.Options.PersistJob
	if job == "" {
		return sel, nil
	}
	var out []target.Strategy
	for _, s := range sel {
		if _, err := d.PersistJob(s, job); err != nil {
			if explicit {
				return nil, fmt.Errorf("%w: --persist-job %s: %w: leave %s out of --strategies", ErrOptions, job, err, s.Name)
			}
			p.Warnings = append(p.Warnings, fmt.Errorf("--persist-job %s: %w: %s/%s left out", job, err, d.Name, s.Name))
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// jobSpan is one job: from its command's reply to the poll that found
// it done on every master (ended), or to when the step stopped looking.
type jobSpan struct {
	start, end time.Time
	ended      bool
}

// jobRun is what the persistence job step returned: the jobs set off
// and what the server said of them, and the memory of its processes.
type jobRun struct {
	job   string
	spans []jobSpan
	// forkUs is the longest pause to start a job (latest_fork_usec of a
	// master), cow the most a job copied or kept alive (its masters'
	// sum): -1 when not reported.
	forkUs, cow int64
	// memBefore is the server's memory (target.ServerMemory) before the
	// first job, memPeak its peak from then to the phase's end; 0 when
	// not known.
	memBefore, memPeak int64
}

// persistJob is the job step under way: a goroutine that sets off the
// jobs at their times from the phase's start (phaseStarted), follows
// them, and stops once the phase is over and the last job done
// (finish).
type persistJob struct {
	job     string
	cmd     []string
	offsets []time.Duration
	info    target.Info
	copts   control.Options

	startOnce sync.Once
	started   chan time.Time
	over      chan struct{}
	overOnce  sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
	out       jobRun
	err       error // why the job was not done: the attempt fails with it
}

// startPersistJob starts the job step of attempt e on its server, and
// makes cfg's load tell it when the measured phase starts.
func (r *run) startPersistJob(ctx context.Context, e Event, srv *server, cfg *loadgen.Config) (*persistJob, error) {
	sc := e.Scenario
	cmd, err := sc.Desc.PersistJob(sc.Strategy, r.o.PersistJob)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	j := &persistJob{job: r.o.PersistJob, cmd: cmd, offsets: r.o.persistJobOffsets(), info: srv.info,
		copts: srv.info.Control(sc.Desc.Password), started: make(chan time.Time, 1), over: make(chan struct{}),
		cancel: cancel, done: make(chan struct{}), out: jobRun{job: r.o.PersistJob, forkUs: -1, cow: -1}}
	progress := cfg.Progress
	cfg.ProgressInterval = phaseStartTick
	cfg.Progress = func(p loadgen.Progress) {
		if p.Phase == "run" {
			j.startOnce.Do(func() { j.started <- time.Now().Add(-p.Elapsed) })
		}
		if progress != nil {
			progress(p)
		}
	}
	go j.run(ctx)
	return j, nil
}

// phaseOver tells the job step that the measured phase ended: it sets
// off no more jobs, and waits for the one running.
func (j *persistJob) phaseOver() {
	if j != nil {
		j.overOnce.Do(func() { close(j.over) })
	}
}

// abort stops the job step at once (the attempt failed).
func (j *persistJob) abort() {
	if j != nil {
		j.phaseOver()
		j.cancel()
		<-j.done
	}
}

// finish waits for the job step, marks the jobs' spans in the series'
// events, and returns what it found; the error says why a job was not
// done (the server refused it, or it could not be followed).
func (j *persistJob) finish(events *series.Events) (*jobRun, error) {
	j.phaseOver()
	<-j.done
	j.cancel()
	for _, s := range j.out.spans {
		events.Mark(s.start, s.end, results.EventPersistJob)
	}
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
func (j *persistJob) run(ctx context.Context) {
	defer close(j.done)
	var conns []*control.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, a := range j.info.Masters() {
		c, err := control.Dial(ctx, a, j.copts)
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
		j.err = fmt.Errorf("persist job %s: not set off: the measured phase ended before it reported its start", j.job)
		return
	case <-ctx.Done():
		return
	}
	mem := &memPeak{info: j.info}
	for _, off := range j.offsets {
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
	j.out.memBefore, j.out.memPeak = mem.before, mem.peak
	if len(j.out.spans) == 0 && ctx.Err() == nil {
		j.err = fmt.Errorf("persist job %s: not set off: the server ran a snapshot or rewrite of its own until the measured phase ended", j.job)
	}
}

// sleepUntil waits for t (forever when zero) or the phase's end,
// sampling the server's memory meanwhile once the first job was set off;
// false when the phase ended first.
func (j *persistJob) sleepUntil(ctx context.Context, t time.Time, mem *memPeak) bool {
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
func (j *persistJob) one(ctx context.Context, conns []*control.Conn, mem *memPeak) error {
	if idle, err := j.waitIdle(ctx, conns); err != nil || !idle {
		return err
	}
	runningF, countF, cowF := jobFields(j.job)
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
		v, err := c.Do(ctx, j.cmd...)
		if err != nil {
			return fmt.Errorf("persist job %s: %s: %s: %w", j.job, c.Addr(), strings.Join(j.cmd, " "), err)
		}
		if _, ok := v.(string); !ok {
			return fmt.Errorf("persist job %s: %s: %s answered %v", j.job, c.Addr(), strings.Join(j.cmd, " "), v)
		}
	}
	span := jobSpan{start: time.Now()}
	var overAt time.Time
	over := j.over
	poll := time.NewTicker(PersistJobPoll)
	defer poll.Stop()
	lastMem := time.Now()
	for !span.ended {
		select {
		case <-ctx.Done():
			return nil
		case <-over:
			over, overAt = nil, time.Now()
			continue
		case <-poll.C:
		}
		if !overAt.IsZero() && time.Since(overAt) > PersistJobWait {
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
			span.end, span.ended = time.Now(), true
		}
	}
	if !span.ended {
		span.end = time.Now()
	}
	j.out.spans = append(j.out.spans, span)
	if !span.ended {
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
			j.out.forkUs = max(j.out.forkUs, us)
		}
	}
	j.out.cow = max(j.out.cow, cow)
	return nil
}

// waitIdle waits until no master runs a snapshot or a rewrite; false
// when the phase ended first.
func (j *persistJob) waitIdle(ctx context.Context, conns []*control.Conn) (bool, error) {
	poll := time.NewTicker(PersistJobPoll)
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
func figuresOf(m *measure.Result, spans []jobSpan) jobFigures {
	f := jobFigures{recovered: len(spans) > 0}
	ivs := intervals(m)
	if len(spans) == 0 || len(ivs) == 0 {
		return jobFigures{}
	}
	meets := func(iv interval) bool {
		return slices.ContainsFunc(spans, func(s jobSpan) bool { return iv.from.Before(s.end) && iv.to.After(s.start) })
	}
	first, last := spans[0].start, spans[len(spans)-1].end
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
			until = spans[k+1].start
		}
		back := false
		for _, iv := range ivs {
			if iv.from.Before(s.end) || !iv.from.Before(until) || iv.hist == nil || iv.hist.TotalCount() == 0 {
				continue
			}
			if us := float64(iv.hist.ValueAtQuantile(99)) / 1e3; us <= limit {
				f.recoveryS = max(f.recoveryS, iv.from.Sub(s.end).Seconds())
				back = true
				break
			}
		}
		if !s.ended || !back {
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

// clearJobFigures empties the job's figures of a row, its name kept: a
// workload's command row (the figures are the whole attempt's).
func clearJobFigures(row *results.Row) {
	row.JobS, row.ForkMs, row.CowBytes, row.RSSBeforeBytes, row.RSSPeakBytes = nil, nil, nil, nil, nil
	row.P99BeforeUs, row.P99DuringUs, row.P99RecoveryS, row.P99AfterUs = nil, nil, nil, nil
	row.QPSBefore, row.QPSDuring, row.QPSAfter = nil, nil, nil
}

// setJobColumns fills the row's persistence job columns from the job
// step (jr, nil when it did not run) and the load's series m.
func setJobColumns(row *results.Row, jr *jobRun, m *measure.Result) {
	if jr == nil {
		return
	}
	row.PersistJob = jr.job
	pos := func(x float64) *float64 {
		if x > 0 && !math.IsInf(x, 0) {
			x = stats.Round2(x)
			return &x
		}
		return nil
	}
	var longest float64
	allEnded := len(jr.spans) > 0
	for _, s := range jr.spans {
		allEnded = allEnded && s.ended
		longest = max(longest, s.end.Sub(s.start).Seconds())
	}
	if allEnded {
		row.JobS = pos(longest)
	}
	if jr.forkUs >= 0 {
		ms := float64(jr.forkUs) / 1e3 // whole µs: exact in 3 decimals
		row.ForkMs = &ms
	}
	if jr.cow >= 0 {
		c := jr.cow
		row.CowBytes = &c
	}
	if jr.memBefore > 0 {
		b, p := jr.memBefore, jr.memPeak
		row.RSSBeforeBytes, row.RSSPeakBytes = &b, &p
	}
	if m == nil {
		return
	}
	f := figuresOf(m, jr.spans)
	row.P99BeforeUs, row.P99DuringUs, row.P99AfterUs = pos(f.p99Before), pos(f.p99During), pos(f.p99After)
	row.QPSBefore, row.QPSDuring, row.QPSAfter = pos(f.qpsBefore), pos(f.qpsDuring), pos(f.qpsAfter)
	if f.recovered {
		r := math.Round(f.recoveryS*1e3) / 1e3
		row.P99RecoveryS = &r
	}
}
