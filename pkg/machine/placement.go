// Package machine owns what kvbench knows of the machine it measures on:
// where the server's and the load generator's threads run (placement,
// the --cpus flag of run, bench and serve), the machine's own signals of
// disturbance over one measurement (steal time, other processes' CPU,
// load, frequency) with the rule that calls a measurement disturbed, and
// the pre-flight check that says once per run what makes this machine
// noisy, as pyperf's "system show" does.
//
// Placement matters more than anything else on a small machine: on two
// cores, a one-thread server and a one-thread client that the scheduler
// moves between CPUs spread by 20% from one slice to the next, and by 3%
// when both are pinned to one CPU (docs/run.md has the measurements).
package machine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUSet is a set of CPU numbers, sorted and without repeats; empty means
// "wherever the scheduler likes" (unpinned).
type CPUSet []int

// ParseCPUSet parses a CPU list as taskset -c and the kernel's cpulist
// files write it: "0", "0-3", "0,2-3". Every CPU must exist on this
// machine.
func ParseCPUSet(s string) (CPUSet, error) {
	var set CPUSet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: %q is not a range of CPUs", s, part)
			}
		}
		for c := a; c <= b; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	set = slices.Compact(set)
	if n := runtime.NumCPU(); set[len(set)-1] >= n {
		return nil, fmt.Errorf("CPU list %q: CPU %d does not exist (this machine has CPUs 0-%d)", s, set[len(set)-1], n-1)
	}
	return set, nil
}

// String writes the set as a CPU list ("0-1,3"); "" for an empty set.
func (c CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Placement says where a measurement's server and load generator run.
// An empty set leaves that side to the scheduler.
type Placement struct {
	Server, Client CPUSet
}

// Unpinned is the placement that leaves both sides to the scheduler.
const Unpinned = "off"

// ParsePlacement parses a --cpus value: "off" (both sides unpinned), a
// CPU list for both sides ("0": server and load generator share CPU 0),
// or one list per side, "server=0,client=1"; a side not named stays
// unpinned.
func ParsePlacement(s string) (Placement, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == Unpinned {
		return Placement{}, nil
	}
	if !strings.Contains(s, "=") {
		set, err := ParseCPUSet(s)
		if err != nil {
			return Placement{}, err
		}
		return Placement{Server: set, Client: set}, nil
	}
	// "server=0,2,client=1": a part without "=" continues the side before.
	var p Placement
	lists := map[string][]string{}
	side := ""
	for _, part := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(part, "="); ok {
			side = strings.TrimSpace(k)
			if side != "server" && side != "client" {
				return Placement{}, fmt.Errorf("placement %q: %q is not a side (server or client)", s, side)
			}
			if _, dup := lists[side]; dup {
				return Placement{}, fmt.Errorf("placement %q: %s named twice", s, side)
			}
			part = v
		} else if side == "" {
			return Placement{}, fmt.Errorf("placement %q: give server=CPUS,client=CPUS or one CPU list for both", s)
		}
		lists[side] = append(lists[side], part)
	}
	for side, parts := range lists {
		set, err := ParseCPUSet(strings.Join(parts, ","))
		if err != nil {
			return Placement{}, fmt.Errorf("placement %q: %s: %w", s, side, err)
		}
		if side == "server" {
			p.Server = set
		} else {
			p.Client = set
		}
	}
	return p, nil
}

// String writes the placement as ParsePlacement reads it, and as the
// detail CSV's placement column and the report's settings show it.
func (p Placement) String() string {
	switch {
	case len(p.Server) == 0 && len(p.Client) == 0:
		return Unpinned
	case slices.Equal(p.Server, p.Client):
		return p.Server.String()
	}
	var parts []string
	if len(p.Server) > 0 {
		parts = append(parts, "server="+p.Server.String())
	}
	if len(p.Client) > 0 {
		parts = append(parts, "client="+p.Client.String())
	}
	return strings.Join(parts, ",")
}

// Pin binds every thread of process pid to set, as taskset -a -p does;
// threads the process starts afterwards inherit the binding from the
// thread that starts them. An empty set does nothing. Threads that end
// while Pin runs are not an error.
func Pin(pid int, set CPUSet) error {
	if len(set) == 0 {
		return nil
	}
	var mask unix.CPUSet
	for _, c := range set {
		mask.Set(c)
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		return fmt.Errorf("pin process %d to CPUs %s: no such process", pid, set)
	}
	pinned := 0
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &mask); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue // the thread ended meanwhile
			}
			return fmt.Errorf("pin process %d to CPUs %s: %w", pid, set, err)
		}
		pinned++
	}
	if pinned == 0 {
		return fmt.Errorf("pin process %d to CPUs %s: no such process", pid, set)
	}
	return nil
}

// PinSelf binds every thread of this process to set (see Pin): the load
// generator's side of a placement, and the server's in kvbench serve.
func PinSelf(set CPUSet) error { return Pin(os.Getpid(), set) }

// Affinity is the set of CPUs process pid's main thread may run on.
func Affinity(pid int) (CPUSet, error) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &mask); err != nil {
		return nil, fmt.Errorf("CPU affinity of process %d: %w", pid, err)
	}
	var set CPUSet
	for c := range runtime.NumCPU() {
		if mask.IsSet(c) {
			set = append(set, c)
		}
	}
	return set, nil
}
