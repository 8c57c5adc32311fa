package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/persistjob"
	"github.com/kvbench/kvbench/pkg/target"
)

// A persistence job (Options.PersistJob) is set off during every
// attempt's measured phase and measured by package persistjob; what is
// here checks the options, keeps the strategies that have the job, and
// starts the job step beside an attempt's load.

// Defaults of a run with a persistence job.
const (
	// DefaultPersistJobDuration is the measured phase's length when
	// Options.PersistJob is set and Duration is not: long enough to see
	// the latency before the job, during it and after it.
	DefaultPersistJobDuration = persistjob.DefaultDuration
	// DefaultPersistJobInterval is the series' interval "kvbench run"
	// uses with --persist-job when --interval is not given: the
	// resolution of the job's figures (the recovery time above all).
	DefaultPersistJobInterval = persistjob.DefaultInterval
	// PersistJobPoll is how often INFO persistence is read while a job
	// runs: the resolution of its end.
	PersistJobPoll = persistjob.Poll
	// PersistJobWait bounds the wait, after the phase, for a job still
	// running: past it the job's end is not known.
	PersistJobWait = QuietLimit
	// RecoveredWithin is how close to its level before the job the p99 of
	// an interval must be for the latency to have recovered: 10%.
	RecoveredWithin = persistjob.RecoveredWithin
)

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

// startPersistJob starts the job step of attempt e on its server, and
// makes cfg's load tell it when the measured phase starts.
func (r *run) startPersistJob(ctx context.Context, e Event, srv *server, cfg *loadgen.Config) (*persistjob.Step, error) {
	sc := e.Scenario
	cmd, err := sc.Desc.PersistJob(sc.Strategy, r.o.PersistJob)
	if err != nil {
		return nil, err
	}
	return persistjob.Start(ctx, persistjob.Config{Job: r.o.PersistJob, Cmd: cmd,
		Offsets: persistjob.Offsets(r.o.PersistJobAt, r.o.PersistJobEvery, r.o.Duration),
		Info:    srv.info, Control: srv.info.Control(sc.Desc.Password), Wait: PersistJobWait}, cfg), nil
}
