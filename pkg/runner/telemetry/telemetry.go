// Package telemetry is what the server and the machine said of a
// measured phase of "kvbench run": INFO before and after it (memory,
// commandstats), the peak resident set size of the processes kvbench
// started (Phase), who used the CPU (CPUOf: the load generator's time,
// the server's, QPS per server CPU-second), and whether a server that
// failed an attempt restarted meanwhile (RestartReason).
package telemetry

import (
	"context"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
	"golang.org/x/sys/unix"
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

// ServerCPU is the server's CPU time over the measurement, false when it
// is not known or too little to measure (MinServerCPU, minCPUSteps).
func ServerCPU(before, after target.Sample) (time.Duration, bool) {
	used, step, ok := target.CPUUsed(before, after)
	if !ok || used < MinServerCPU || used < minCPUSteps*step {
		return 0, false
	}
	return used, true
}

// Phase is what the server said about a measured phase: INFO
// before and after it, and the peak resident set size of the processes
// kvbench started, sampled during it.
type Phase struct {
	before, after target.Telemetry
	ok            bool // the readings so far were taken
	done          bool // the phase measured and Finish called: figures to fill
	rss           *target.RSSSampler
	peakRSS       int64
}

// Start reads INFO before the phase and starts the RSS
// sampler. A failed reading leaves the INFO figures empty; it is no
// reason to fail the attempt.
func Start(ctx context.Context, info target.Info, password string) *Phase {
	p := &Phase{}
	var err error
	p.before, err = target.ReadTelemetry(ctx, info, password)
	p.ok = err == nil
	p.rss = target.StartRSS(info, target.RSSInterval)
	return p
}

// StopRSS stops the sampler, if it still runs: the phase is over.
func (p *Phase) StopRSS() {
	if p.rss != nil {
		p.peakRSS = p.rss.Stop()
		p.rss = nil
	}
}

// Finish stops the sampler if it runs and reads INFO after the phase: it
// returns p, whose figures are now known.
func (p *Phase) Finish(ctx context.Context, info target.Info, password string) *Phase {
	p.StopRSS()
	p.done = true
	if !p.ok {
		return p
	}
	var err error
	p.after, err = target.ReadTelemetry(ctx, info, password)
	p.ok = err == nil
	return p
}

// Memory is the attempt's peak resident set size and the server's
// used_memory after the phase; empty when not known. An attempt that
// failed before Finish has neither.
func (p *Phase) Memory() (rss, used results.OptInt) {
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

// Commands is the server's time per call and calls of the commands names
// (lower case), from the commandstats delta; empty when not known or none
// called, and before Finish.
func (p *Phase) Commands(names []string) (usecPerCall results.Opt, calls results.OptInt) {
	if p == nil || !p.done || !p.ok || len(names) == 0 {
		return 0, 0
	}
	d, ok := target.CommandDelta(p.before, p.after, names...)
	if !ok || d.Calls == 0 {
		return 0, 0
	}
	return results.Opt(float64(d.Usec) / float64(d.Calls)), results.OptInt(d.Calls)
}

// MeasuredCommands are the commands cfg sends, as commandstats names
// them: a mode's, or every command of a workload's mix.
func MeasuredCommands(cfg loadgen.Config) []string {
	if len(cfg.Commands) > 0 {
		_, all := WorkloadCommands(cfg)
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

// WorkloadCommands are the commandstats names of each command of a
// workload (its command and, for a read-modify-write, the dependent
// one), and of the whole mix. A command the server also runs for another
// command of the mix cannot be told apart: that command's names are
// nil, its figures left empty.
func WorkloadCommands(cfg loadgen.Config) (each [][]string, all []string) {
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

// RestartReason tells, after a failed measurement, whether the server
// restarted meanwhile: a supervisor that restarts a crashed server makes
// the load generator see only a lost connection. The server gets a little
// time to come back (restartWait); nil when it did not restart, or is not
// back to say.
func RestartReason(ctx context.Context, info target.Info, password string, before target.Sample) error {
	deadline := time.Now().Add(restartWait)
	for {
		after, err := target.SampleServer(ctx, info, password)
		if err == nil {
			return target.Restarted(before, after)
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// restartWait bounds how long a failed attempt waits for its server to
// answer again, to tell a restart from a crash.
const restartWait = 2 * time.Second

// ProcessCPU is this process's CPU time so far (user + system): during a
// measurement, the load generator's.
func ProcessCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CPU is who used the CPU during a measurement: the client's time
// (ClientS), the server's (ServerS, when both samples know it and it is
// enough to measure: ServerCPU), QPS per server CPU-second (QPSPerCPU),
// and whether the generator was busy enough to have set the pace
// (ClientBound).
type CPU struct {
	ClientS            float64
	ClientBound        bool
	ServerS, QPSPerCPU results.Opt
}

// CPUOf is who used the CPU during the measurement res: the client's
// time client and the server's samples before and after it.
func CPUOf(res loadgen.Result, client time.Duration, before, after target.Sample) CPU {
	c := CPU{ClientS: client.Seconds()}
	if threads := res.Config.Threads; threads > 0 && res.Elapsed > 0 {
		c.ClientBound = client.Seconds() >= results.ClientBoundShare*res.Elapsed.Seconds()*float64(threads)
	}
	if used, ok := ServerCPU(before, after); ok {
		c.ServerS = results.Opt(used.Seconds())
		if elapsed := res.Elapsed.Seconds(); elapsed > 0 && res.QPS > 0 {
			c.QPSPerCPU = results.Opt(res.QPS / (used.Seconds() / elapsed))
		}
	}
	return c
}
