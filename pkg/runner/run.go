package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/agents"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/placement"
	"github.com/kvbench/kvbench/pkg/runner/record"
	"github.com/kvbench/kvbench/pkg/runner/resultfiles"
	"github.com/kvbench/kvbench/pkg/runner/status"
	"github.com/kvbench/kvbench/pkg/runner/telemetry"
	"github.com/kvbench/kvbench/pkg/runner/tmpdir"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Sentinel errors of Run.
var (
	// ErrInterrupted: the run was interrupted (its context cancelled);
	// the partial results were written and the report printed.
	ErrInterrupted = errors.New("interrupted")
	// ErrScenariosFailed: at least one scenario ran out of retries; the
	// others were measured and reported.
	ErrScenariosFailed = errors.New("scenarios failed")
)

// Timing is where an attempt's (or a run's) time went.
type Timing struct {
	// Start is from spawning the server to its PING reply and verified
	// configuration.
	Start time.Duration
	// Prefill is the prefill of the keyspace (get and mixed).
	Prefill time.Duration
	// Measure is the measured load, connections included.
	Measure time.Duration
	// Stop is from the stop signal to the server reaped and its
	// directory removed.
	Stop time.Duration
	// Profile is a run's profile rounds (Options.Profile), whole: their
	// attempts, perf's recording and the flame graphs drawn. It measures
	// nothing: the parts above leave it out.
	Profile time.Duration
}

// Total is the sum of the parts.
func (t Timing) Total() time.Duration { return t.Start + t.Prefill + t.Measure + t.Stop + t.Profile }

// Overhead is the orchestration's share: starting, prefilling, stopping,
// profiling.
func (t Timing) Overhead() time.Duration { return t.Start + t.Prefill + t.Stop + t.Profile }

func (t *Timing) add(u Timing) {
	t.Start += u.Start
	t.Prefill += u.Prefill
	t.Measure += u.Measure
	t.Stop += u.Stop
	t.Profile += u.Profile
}

// Result is what a run did.
type Result struct {
	// RunID identifies the run (the run_id column): its start time.
	RunID string
	// Plan is the plan it followed.
	Plan *Plan
	// Files are the files it wrote.
	Files Files
	// Rows are the detail rows, as written to Files.Detail.
	Rows []results.Row
	// Nodes are the node rows of cluster targets, as written to
	// Files.Nodes.
	Nodes []results.NodeRow
	// Report is the end-of-run report (nil when no row was written).
	Report *report.Report
	// Failed names the scenarios that ran out of retries.
	Failed []string
	// Interrupted is set when the context was cancelled.
	Interrupted bool
	// Timing sums the attempts' timings; Wall is the run's wall time.
	Timing Timing
	Wall   time.Duration
}

// Run runs the experiment opts describes: every step of the plan on a
// fresh server, its detail row appended to the detail CSV as it ends,
// then the report written to the result files and printed on stdout.
// Progress and log lines go to stderr. With opts.DryRun it prints the plan
// on stdout and runs nothing.
//
// When ctx is cancelled the measurement stops, the server is stopped and
// reaped, the temporary directories removed, the files closed and the
// partial report printed; the error then wraps ErrInterrupted. When a
// scenario runs out of retries the run goes on and the error wraps
// ErrScenariosFailed.
func Run(ctx context.Context, opts Options, stdout, stderr io.Writer) (*Result, error) {
	plan, err := NewPlan(opts)
	if err != nil {
		return nil, err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	plan.Calibrate(ctx, stderr)
	if plan.Options.DryRun {
		return &Result{Plan: plan}, plan.Write(stdout)
	}
	return newRun(plan, stderr).run(ctx, stdout)
}

// run is one execution of a plan.
type run struct {
	plan   *Plan
	o      Options
	stderr io.Writer
	res    *Result
	disp   *display
	detail *results.Writer
	nodes  *results.NodeWriter   // created with the first cluster attempt
	series *results.SeriesWriter // created with the first attempt's series
	// unsupported holds, by (target, workload), why the target was
	// refused the workload.
	unsupported map[[2]string]string
	tmp         string
	failed      map[*Scenario]bool
	started     time.Time
	// busyWarned: an adaptive run said the machine is busy.
	busyWarned bool
	machine    machine.Description // the load generator's machine, read once
	rec        record.Recording    // Options.Recorder
	// profiling is the profile of the attempt running (Options.Profile);
	// quiet keeps a profile round's events from Observe and the display.
	profiling *profiling
	quiet     bool
	power     powerCheck // powerloss.go
	// noted are the targets' notes logged (logNotes), by target and note.
	noted map[[2]string]bool
}

func newRun(plan *Plan, stderr io.Writer) *run {
	return &run{plan: plan, o: plan.Options, stderr: stderr, failed: make(map[*Scenario]bool), unsupported: make(map[[2]string]string),
		noted: make(map[[2]string]bool)}
}

func (r *run) run(ctx context.Context, stdout io.Writer) (*Result, error) {
	r.started = time.Now()
	r.machine = machine.Describe()
	r.res = &Result{Plan: r.plan}
	if err := os.MkdirAll(r.o.OutDir, 0o755); err != nil {
		return r.res, fmt.Errorf("create the output directory: %w", err)
	}
	r.rec.Start(ctx, r.o.Recorder, r.log)
	if err := r.claimRunID(); err != nil {
		return r.res, err
	}
	tmpParent := r.o.TempDir
	if tmpParent == "" {
		tmpParent = r.o.OutDir
	}
	tmpdir.RemoveStale(tmpParent, r.stderr)
	tmp, err := tmpdir.New(tmpParent)
	if err != nil {
		r.detail.Close()
		return r.res, fmt.Errorf("create the temporary directory: %w", err)
	}
	if err := tmp.Watch(); err != nil {
		fmt.Fprintf(r.stderr, "warning: %v: a kill -9 of this run leaves %s to the next run into %s\n", err, tmp.Path, tmpParent)
	}
	r.tmp = tmp.Path
	r.o.Tracker.AddDir(tmp.Path)

	r.disp = newDisplay(r.stderr, r.o.Live, r.plan)
	r.log("kvbench run %s: %s", r.res.RunID, r.plan.Summary())
	r.log("detail CSV: %s", r.res.Files.Detail)
	r.preflight(ctx)
	var runErr error
	if undo, err := placement.PinClient(r.o.placement); err != nil {
		runErr = err
	} else {
		if r.o.Precision > 0 {
			runErr = r.adaptive(ctx)
		} else {
			runErr = r.steps(ctx)
		}
		if runErr == nil && r.o.Profile {
			t0 := time.Now()
			r.profileRounds(ctx)
			r.res.Timing.Profile = time.Since(t0)
		}
		undo()
	}
	r.rec.Finish(r.res.Interrupted)
	r.disp.close()
	r.res.Wall = time.Since(r.started)

	errs := []error{runErr}
	errs = append(errs, r.detail.Close())
	if r.nodes != nil {
		errs = append(errs, r.nodes.Close())
	}
	if r.series != nil {
		errs = append(errs, r.series.Close())
	}
	if err := tmp.Remove(); err != nil {
		errs = append(errs, fmt.Errorf("remove the temporary directory: %w", err))
	}
	if len(r.res.Rows) > 0 {
		opts, err := r.reportOptions()
		var rep *report.Report
		if err == nil {
			rep, err = r.res.Files.WriteReport(r.res.Rows, opts, r.o.Chart, stdout)
		}
		r.res.Report = rep
		errs = append(errs, err)
		fmt.Fprintf(r.stderr, "wrote %s\n", strings.Join(r.writtenFiles(), ", "))
	} else {
		fmt.Fprintln(r.stderr, "no attempt finished: no report")
	}
	t := r.res.Timing
	if r.res.Wall > 0 {
		profile := ""
		if t.Profile > 0 {
			profile = ", profile rounds " + status.Duration(t.Profile)
		}
		fmt.Fprintf(r.stderr, "time: %s wall; servers starting %s, prefilling %s, measured %s, stopping %s%s (orchestration %.1f%%)\n",
			status.Duration(r.res.Wall), status.Duration(t.Start), status.Duration(t.Prefill), status.Duration(t.Measure),
			status.Duration(t.Stop), profile, 100*float64(t.Overhead())/float64(r.res.Wall))
	}
	if len(r.res.Failed) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrScenariosFailed, strings.Join(r.res.Failed, ", ")))
	}
	if r.res.Interrupted {
		errs = append(errs, ErrInterrupted)
	}
	if err := r.rec.Failed(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v; the detail CSV has every row: record it with %s",
			ErrNotRecorded, err, r.rec.ImportCommand(r.res.Files.Detail)))
	}
	return r.res, errors.Join(errs...)
}

// claimRunID names the run and its files after its start time, made
// unique: in the output directory (the detail CSV is created, never
// overwritten) and in the history (a run of that id recorded by this host
// already, by a run started in the same second elsewhere); the second
// run gets the suffix _2, and so on.
func (r *run) claimRunID() error {
	base := r.started.Format("20060102_150405")
	for i := 1; i <= 100; i++ {
		id := base
		if i > 1 {
			id += "_" + strconv.Itoa(i)
		}
		files := resultfiles.New(r.o.OutDir, r.o.Prefix, id, r.o.Chart)
		detail, err := results.Create(files.Detail)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := r.rec.Begin(id, r.started); errors.Is(err, results.ErrRunExists) {
			detail.Close()
			os.Remove(files.Detail)
			continue
		}
		r.res.RunID, r.res.Files, r.detail = id, files, detail
		return nil
	}
	return fmt.Errorf("no free run id for %s in %s: 100 runs started in that second", base, r.o.OutDir)
}

// writtenFiles lists the files that exist.
func (r *run) writtenFiles() []string {
	f := r.res.Files
	var out []string
	for _, p := range []string{f.Detail, f.Nodes, f.Series, f.Summary, f.Trimmed, f.Report, f.HTML, f.Chart} {
		if _, err := os.Stat(p); p != "" && err == nil {
			out = append(out, p)
		}
	}
	return out
}

// writeNodes appends an attempt's node rows to the nodes CSV, creating
// it with the first.
func (r *run) writeNodes(rows []results.NodeRow) error {
	if len(rows) == 0 {
		return nil
	}
	if r.nodes == nil {
		w, err := results.CreateNodes(r.res.Files.Nodes)
		if err != nil {
			return err
		}
		r.nodes = w
		r.log("nodes CSV: %s", r.res.Files.Nodes)
	}
	return r.nodes.Write(rows)
}

// writeSeries appends an attempt's series rows to the series CSV,
// creating it with the first.
func (r *run) writeSeries(rows []results.SeriesRow) error {
	if len(rows) == 0 {
		return nil
	}
	if r.series == nil {
		w, err := results.CreateSeries(r.res.Files.Series)
		if err != nil {
			return err
		}
		r.series = w
		r.log("series CSV: %s", r.res.Files.Series)
	}
	return r.series.Write(rows)
}

// log writes a line through the display.
func (r *run) log(format string, args ...any) {
	if r.disp == nil { // before the first attempt's display: a plain line
		fmt.Fprintf(r.stderr, format+"\n", args...)
		return
	}
	r.event(Event{Kind: EventLog, Msg: fmt.Sprintf(format, args...)})
}

// event reports e to Observe and the display.
func (r *run) event(e Event) {
	if r.quiet && e.Kind != EventLog {
		return
	}
	if r.o.Observe != nil {
		r.o.Observe(e)
	}
	r.disp.send(e)
}

// steps runs every step: each scenario's round, retried on a fresh
// server until it succeeds or runs out of retries.
func (r *run) steps(ctx context.Context) error {
	n := len(r.plan.Steps)
	for i, st := range r.plan.Steps {
		if ctx.Err() != nil {
			r.res.Interrupted = true
			return nil
		}
		base := Event{Step: i + 1, Steps: n, Scenario: st.Scenario, Round: st.Round}
		if r.failed[st.Scenario] {
			e := base
			e.Kind = EventSkip
			r.event(e)
			continue
		}
		if sc := st.Scenario; sc.Workload != nil {
			if why, ok := r.unsupported[[2]string{sc.Desc.Name, sc.Workload.Name}]; ok {
				// The target lacks the workload's commands whatever the
				// strategy: its rows say so without a server started.
				e := base
				e.Attempt = 1
				out := r.resultOf(e, &attemptSteps{at: time.Now(), load: workloadConfig(r.o, sc.Workload)}, results.StatusUnsupported, why)
				if err := r.writeRows(out.rows); err != nil {
					return err
				}
				r.rec.Attempt(out.rows, nil)
				e = base
				e.Kind, e.Row = EventSkip, out.row
				r.event(e)
				continue
			}
		}
		for attempt := 1; ; attempt++ {
			e := base
			e.Attempt = attempt
			out, err := r.attempt(ctx, e)
			row, timing, rows := out.row, out.timing, out.rows
			r.res.Timing.add(timing)
			if werr := r.writeRows(rows); werr != nil {
				return werr // without a detail CSV there is no point going on
			}
			if werr := r.writeNodes(out.nodes); werr != nil {
				return werr
			}
			r.res.Nodes = append(r.res.Nodes, out.nodes...)
			if werr := r.writeSeries(out.series); werr != nil {
				return werr
			}
			r.rec.Attempt(rows, out.series)
			interrupted := row.Status == results.StatusInterrupted
			unsupported := row.Status == results.StatusUnsupported
			if unsupported {
				r.unsupported[[2]string{st.Scenario.Desc.Name, st.Scenario.Workload.Name}] = row.Error
			}
			// An attached server that holds others' keys, refuses the
			// credentials or does not speak RESP is the target's, whatever
			// the scenario: none of them is tried.
			refused := errors.Is(err, target.ErrNotEmpty) || errors.Is(err, target.ErrRefused)
			outOfRetries := err != nil && !interrupted && !unsupported && (attempt > r.o.Retries || refused || errors.Is(err, target.ErrConfigMismatch))
			e.Kind, e.Row, e.Err, e.Timing = EventEnd, row, err, timing
			e.Final = err == nil || interrupted || unsupported || outOfRetries
			r.event(e)
			if interrupted {
				r.res.Interrupted = true
				return nil
			}
			if outOfRetries {
				r.failed[st.Scenario] = true
				r.res.Failed = append(r.res.Failed, fmt.Sprintf("%s (round %d)", st.Scenario.Name(), st.Round))
			}
			if refused { // the server is the target's, whatever the scenario
				for _, sc := range r.plan.Scenarios {
					if sc.Target == st.Scenario.Target && !r.failed[sc] {
						r.failed[sc] = true
						r.res.Failed = append(r.res.Failed, sc.Name()+" (not run)")
					}
				}
			}
			if e.Final {
				break
			}
		}
	}
	return nil
}

// writeRows appends an attempt's rows to the detail CSV and the result.
func (r *run) writeRows(rows []results.Row) error {
	for i := range rows {
		if err := r.detail.Write(&rows[i]); err != nil {
			return err
		}
	}
	r.res.Rows = append(r.res.Rows, rows...)
	return nil
}

// prefill writes the keyspace before a mode that reads.
func (r *run) prefill(ctx context.Context, cfg loadgen.Config, sc *Scenario, round int) error {
	pre, err := prefill.Prefill(ctx, cfg)
	if err != nil {
		return err
	}
	for _, w := range pre.Warnings {
		r.log("%s round %d: warning: %v", sc.Name(), round, w)
	}
	if pre.Conflicts > 0 {
		return fmt.Errorf("prefill: %d of %d keys already existed: the server was not empty", pre.Conflicts, pre.Sets)
	}
	return nil
}

// measure runs cfg in this process, or with Options.Agents > 1 through
// local agent processes (which read cfg.TLS from tlsFiles), and returns
// the result and the load generator's CPU time.
func (r *run) measure(ctx context.Context, cfg loadgen.Config, tlsFiles tlsconf.Options, scenario string, round int) (loadgen.Result, time.Duration, error) {
	o := r.o
	if o.Agents <= 1 {
		cpu0 := telemetry.ProcessCPU()
		res, err := loadgen.Run(ctx, cfg)
		return res, telemetry.ProcessCPU() - cpu0, err
	}
	bin := o.KvstoreBin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return loadgen.Result{Config: cfg}, 0, fmt.Errorf("agents: the kvbench binary: %w", err)
		}
	}
	l, err := agents.RunLocal(ctx, bin, cfg, tlsFiles, o.Agents)
	for _, w := range l.Result.Warnings {
		r.log("%s round %d: warning: %v", scenario, round, w)
	}
	if l.Result.Histogram == nil {
		l.Result.Config = cfg
	}
	return l.Result, l.CPU, err
}

// MinServerCPU is the least server CPU time an attempt must have used for
// server_cpu_s (and qps_per_server_cpu_s) to be recorded
// (telemetry.MinServerCPU).
const MinServerCPU = telemetry.MinServerCPU

// serverError adds the server's exit, if it exited, to a load generator
// error (target.WithExit): a wrong value is no lost connection.
func serverError(inst target.Instance, err error) error {
	return target.WithExit(inst, err, loadgen.ErrVerify)
}

// checkResult fails a measurement that completed with counts that cannot
// be trusted: error replies, misses or wrong values.
func checkResult(res loadgen.Result) error {
	var errs int64
	for _, n := range res.Errors {
		errs += n
	}
	switch {
	case errs > 0:
		return fmt.Errorf("%d error replies", errs)
	case res.Misses > 0 && res.Config.VerifyGet:
		return fmt.Errorf("%d misses in %d reads of a prefilled keyspace", res.Misses, res.Gets)
	case res.VerifyFailures > 0:
		return fmt.Errorf("%d wrong values in %d reads", res.VerifyFailures, res.Gets)
	}
	return nil
}

// safeName keeps letters, digits, - and _ for a directory name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
