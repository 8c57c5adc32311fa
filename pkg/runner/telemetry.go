package runner

import (
	"context"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// MinServerCPU is the least server CPU time an attempt must have used for
// server_cpu_s (and qps_per_server_cpu_s) to be recorded: below it, the
// figure is mostly the server's idle housekeeping and the readings'
// own cost, and the cells stay empty.
const MinServerCPU = time.Millisecond

// minCPUSteps is how many of its readings' resolution the server CPU
// time must span to be recorded (a tenth of a step of error at most):
// with /proc's clock ticks where schedstat is missing, a tenth of a
// second.
const minCPUSteps = 10

// serverCPU is the server's CPU time over the measurement, false when it
// is not known or too little to measure (MinServerCPU, minCPUSteps).
func serverCPU(before, after target.Sample) (time.Duration, bool) {
	used, step, ok := target.CPUUsed(before, after)
	if !ok || used < MinServerCPU || used < minCPUSteps*step {
		return 0, false
	}
	return used, true
}

// phaseTelemetry is what the server said about a measured phase: INFO
// before and after it, and the peak resident set size of the processes
// kvbench started, sampled during it.
type phaseTelemetry struct {
	before, after target.Telemetry
	ok            bool // the readings so far were taken
	done          bool // the phase measured and finish called: figures to fill
	rss           *target.RSSSampler
	peakRSS       int64
}

// startTelemetry reads INFO before the phase and starts the RSS
// sampler. A failed reading leaves the INFO figures empty; it is no
// reason to fail the attempt.
func startTelemetry(ctx context.Context, info target.Info, password string) *phaseTelemetry {
	p := &phaseTelemetry{}
	var err error
	p.before, err = target.ReadTelemetry(ctx, info, password)
	p.ok = err == nil
	p.rss = target.StartRSS(info, target.RSSInterval)
	return p
}

// stopRSS stops the sampler, if it still runs: the phase is over.
func (p *phaseTelemetry) stopRSS() {
	if p.rss != nil {
		p.peakRSS = p.rss.Stop()
		p.rss = nil
	}
}

// finish stops the sampler if it runs and reads INFO after the phase: it
// returns p, whose figures are now known.
func (p *phaseTelemetry) finish(ctx context.Context, info target.Info, password string) *phaseTelemetry {
	p.stopRSS()
	p.done = true
	if !p.ok {
		return p
	}
	var err error
	p.after, err = target.ReadTelemetry(ctx, info, password)
	p.ok = err == nil
	return p
}

// memory is the attempt's peak resident set size and the server's
// used_memory after the phase; empty when not known. An attempt that
// failed before finish has neither.
func (p *phaseTelemetry) memory() (rss, used results.OptInt) {
	if p == nil || !p.done {
		return 0, 0
	}
	if p.ok {
		if u, ok := p.after.UsedMemory(); ok {
			used = results.OptInt(u)
		}
	}
	return results.OptInt(p.peakRSS), used
}

// commands is the server's time per call and calls of the commands names
// (lower case), from the commandstats delta; empty when not known or none
// called, and before finish.
func (p *phaseTelemetry) commands(names []string) (usecPerCall results.Opt, calls results.OptInt) {
	if p == nil || !p.done || !p.ok || len(names) == 0 {
		return 0, 0
	}
	d, ok := target.CommandDelta(p.before, p.after, names...)
	if !ok || d.Calls == 0 {
		return 0, 0
	}
	return results.Opt(float64(d.Usec) / float64(d.Calls)), results.OptInt(d.Calls)
}

// measuredCommands are the commands cfg sends, as commandstats names
// them: a mode's, or every command of a workload's mix.
func measuredCommands(cfg loadgen.Config) []string {
	if len(cfg.Commands) > 0 {
		_, all := workloadCommands(cfg)
		return all
	}
	set, get := strings.ToLower(cfg.SetCmd), strings.ToLower(cfg.GetCmd)
	switch cfg.Mode {
	case loadgen.ModeSet:
		return []string{set}
	case loadgen.ModeGet:
		return []string{get}
	case loadgen.ModeMixed:
		if set == get {
			return []string{set}
		}
		return []string{set, get}
	}
	return nil
}

// workloadCommands are the commandstats names of each command of a
// workload (its command and, for a read-modify-write, the dependent
// one), and of the whole mix. A command the server also runs for another
// command of the mix cannot be told apart: that command's names are
// nil, its figures left empty.
func workloadCommands(cfg loadgen.Config) (each [][]string, all []string) {
	uses := make(map[string]int)
	for _, c := range cfg.Commands {
		for _, n := range commandNames(c.Args, c.Then) {
			uses[n]++
			if uses[n] == 1 {
				all = append(all, n)
			}
		}
	}
	for _, c := range cfg.Commands {
		names := commandNames(c.Args, c.Then)
		for _, n := range names {
			if uses[n] > 1 {
				names = nil
				break
			}
		}
		each = append(each, names)
	}
	return each, all
}

// commandNames are the distinct lower-case names of the commands of args
// and then (either may be empty).
func commandNames(args, then []string) []string {
	var out []string
	for _, a := range [][]string{args, then} {
		if len(a) == 0 {
			continue
		}
		if n := strings.ToLower(a[0]); len(out) == 0 || out[0] != n {
			out = append(out, n)
		}
	}
	return out
}
