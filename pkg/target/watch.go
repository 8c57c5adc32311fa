package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrRestarted is wrapped by Restarted's error: the server measured is not
// the process that was there when the measurement began.
var ErrRestarted = errors.New("the server restarted during the measurement")

// Sample is what a server says about itself at one moment: who it is (to
// tell a restart) and the CPU time it has used (to tell who was the
// bottleneck, and throughput per CPU-second).
type Sample struct {
	// At is when the sample was taken.
	At time.Time
	// Addr is the server's host:port; empty for a cluster's Sample.
	Addr string
	// RunID is INFO server's run_id; empty when the server has none.
	RunID string
	// PID is INFO server's process_id; 0 when it has none.
	PID int
	// Uptime is INFO server's uptime_in_seconds; -1 when it has none.
	Uptime int64
	// CPU is the server's CPU time (user + system) so far: for a process
	// kvbench started, of every thread of every process in its process
	// group, from /proc (so a wrapper script's children count); otherwise
	// INFO cpu's used_cpu_user + used_cpu_sys. Negative when neither is
	// known. A cluster's is its masters' sum (replicas are not counted).
	CPU time.Duration
	// CPUStep is CPU's resolution: a nanosecond from /proc's schedstat,
	// a microsecond from INFO cpu, a clock tick from /proc's stat where
	// schedstat is missing. A cluster's is its nodes' coarsest.
	CPUStep time.Duration
	// reaped is the part of CPU that /proc counts in clock ticks: the
	// children the server's processes have waited for (a fork that
	// saved a snapshot), summed over a cluster's nodes.
	reaped time.Duration
	// Nodes are a cluster's masters' samples, in Info.Nodes' order; the
	// cluster's own Sample then has no RunID, PID or Uptime.
	Nodes []Sample
}

// sampleTimeout bounds each INFO of a sample.
const sampleTimeout = 5 * time.Second

// SampleServer reads a Sample of the server of inst. For a cluster (Nodes
// not empty) it samples every master: the Sample's Nodes hold theirs and
// its CPU is their sum (-1 if one's is not known).
func SampleServer(ctx context.Context, info Info, password string) (Sample, error) {
	if len(info.Nodes) == 0 {
		return sampleOne(ctx, info.Addr, info.PID, creds{Options: info.Control(password)})
	}
	s := Sample{At: time.Now(), Uptime: -1}
	for i, addr := range info.Nodes {
		pid := 0
		if i < len(info.NodePIDs) {
			pid = info.NodePIDs[i]
		}
		ns, err := sampleOne(ctx, addr, pid, creds{Options: info.Control(password)})
		if err != nil {
			return s, fmt.Errorf("%s: %w", addr, err)
		}
		s.Nodes = append(s.Nodes, ns)
		s.CPUStep = max(s.CPUStep, ns.CPUStep)
		s.reaped += ns.reaped
		if ns.CPU < 0 || s.CPU < 0 {
			s.CPU = -1
		} else {
			s.CPU += ns.CPU
		}
	}
	return s, nil
}

// sampleOne reads a Sample of the server at addr, whose process group is
// pid's when pid is not 0.
func sampleOne(ctx context.Context, addr string, pid int, cr creds) (Sample, error) {
	s := Sample{At: time.Now(), Addr: addr, Uptime: -1, CPU: -1}
	c, err := dialControl(ctx, addr, cr, sampleTimeout)
	if err != nil {
		return s, err
	}
	defer c.Close()
	srv, err := c.Info(ctx, "server")
	switch {
	case Unsupported(err):
		// A server without INFO tells nothing of itself: a restart goes
		// unnoticed (NoteNoInfo says so in its rows), its CPU time is
		// still read from /proc where kvbench started it.
	case err != nil:
		return s, err
	}
	s.RunID = srv["run_id"]
	if v, err := strconv.Atoi(srv["process_id"]); err == nil {
		s.PID = v
	}
	if v, err := strconv.ParseInt(srv["uptime_in_seconds"], 10, 64); err == nil {
		s.Uptime = v
	}
	if pid > 0 {
		if g, err := groupCPU(pid); err == nil {
			s.CPU, s.CPUStep, s.reaped = g.cpu, g.step, g.reaped
			return s, nil
		}
	}
	cpu, err := c.Info(ctx, "cpu")
	if err != nil {
		return s, nil // a server without INFO cpu: no CPU time, still a sample
	}
	user, uerr := strconv.ParseFloat(cpu["used_cpu_user"], 64)
	sys, serr := strconv.ParseFloat(cpu["used_cpu_sys"], 64)
	if uerr == nil && serr == nil {
		s.CPU = time.Duration((user+sys)*1e6) * time.Microsecond
		s.CPUStep = time.Microsecond
	}
	return s, nil
}

// CPUUsed is the server's CPU time from before to after and its
// resolution: the coarser of theirs, or a clock tick when a process
// reaped a child between them. False when either does not know its CPU
// time or the time went back (a process or thread that exited).
func CPUUsed(before, after Sample) (used, step time.Duration, ok bool) {
	if before.CPU < 0 || after.CPU < before.CPU {
		return 0, 0, false
	}
	step = max(before.CPUStep, after.CPUStep)
	if before.reaped != after.reaped {
		step = max(step, time.Second/clockTicks)
	}
	return after.CPU - before.CPU, step, true
}

// Restarted returns an error wrapping ErrRestarted when after is not the
// server of before: its run_id or process id changed, or it has been up
// for less time than has passed since before (minus a second for the
// uptime's truncation). For a cluster, any master's restart counts, and
// the error names it.
func Restarted(before, after Sample) error {
	if len(before.Nodes) > 0 || len(after.Nodes) > 0 {
		if len(before.Nodes) != len(after.Nodes) {
			return fmt.Errorf("%w: it had %d masters, now %d", ErrRestarted, len(before.Nodes), len(after.Nodes))
		}
		for i := range before.Nodes {
			if why := restarted(before.Nodes[i], after.Nodes[i]); why != "" {
				return fmt.Errorf("%w: node %s: %s", ErrRestarted, before.Nodes[i].Addr, why)
			}
		}
		return nil
	}
	if why := restarted(before, after); why != "" {
		return fmt.Errorf("%w: %s", ErrRestarted, why)
	}
	return nil
}

// restarted says why after is not the server of before; "" if it is.
func restarted(before, after Sample) string {
	switch {
	case before.RunID != "" && before.RunID != after.RunID:
		return fmt.Sprintf("its run_id went from %s to %s", before.RunID, after.RunID)
	case before.PID != 0 && before.PID != after.PID:
		return fmt.Sprintf("its process id went from %d to %d", before.PID, after.PID)
	case before.Uptime >= 0 && after.Uptime >= 0:
		passed := int64(after.At.Sub(before.At).Seconds())
		if after.Uptime < before.Uptime+passed-1 {
			return fmt.Sprintf("it has been up %ds, but %ds were up %s ago", after.Uptime, before.Uptime, after.At.Sub(before.At).Round(time.Millisecond))
		}
	}
	return ""
}

// clockTicks is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture kvbench builds for.
const clockTicks = 100

// groupTime is a process group's CPU time as groupCPU reads it.
type groupTime struct {
	// cpu is the whole; reaped the part from waited-for children, in
	// clock ticks; step the resolution of the rest.
	cpu, reaped, step time.Duration
}

// groupCPU sums the CPU time of the process group pgid, whose leader is
// the process pgid: the leader and its descendants still in the group,
// found through /proc's children lists (cheaper than reading every
// process's stat). Each process counts its live threads' schedstat time
// and, in clock ticks, the children it has waited for; a process without
// schedstat counts its own ticks.
func groupCPU(pgid int) (groupTime, error) {
	g := groupTime{step: time.Nanosecond}
	queue := []int{pgid}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		group, t, err := procCPU(pid)
		if err != nil {
			if pid == pgid {
				return g, err
			}
			continue // a child that exited meanwhile
		}
		if group != pgid {
			continue // a descendant that left the group
		}
		if ns, err := threadsCPU(pid); err == nil {
			g.cpu += ns
		} else {
			g.cpu += ticks(t.own)
			g.step = time.Second / clockTicks
		}
		g.cpu += ticks(t.children)
		g.reaped += ticks(t.children)
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					queue = append(queue, n)
				}
			}
		}
	}
	return g, nil
}

// ticks converts /proc's clock ticks to a duration.
func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// cpuTicks are a process's CPU times from /proc/PID/stat, in clock ticks:
// its own (utime + stime) and its waited-for children's (cutime + cstime).
type cpuTicks struct{ own, children int64 }

// procCPU reads a process's group and its CPU ticks from /proc/PID/stat.
func procCPU(pid int) (pgrp int, t cpuTicks, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, t, err
	}
	// The command name, in parentheses, may hold spaces: the fields are
	// counted after its closing parenthesis, from field 3 (state): pgrp is
	// field 5, utime to cstime 14 to 17.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return 0, t, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	if pgrp, err = strconv.Atoi(f[2]); err != nil {
		return 0, t, fmt.Errorf("/proc/%d/stat: pgrp %q", pid, f[2])
	}
	n := make([]int64, 4)
	for i, v := range f[11:15] {
		n[i], _ = strconv.ParseInt(v, 10, 64)
	}
	return pgrp, cpuTicks{own: n[0] + n[1], children: n[2] + n[3]}, nil
}
