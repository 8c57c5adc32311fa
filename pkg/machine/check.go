package machine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Finding is one line of the pre-flight check: a property of the machine
// and whether it makes measurements noisy.
type Finding struct {
	// What is the property ("governor", "swap", ...).
	What string
	// Value is what the machine has.
	Value string
	// Noisy says the value is a known source of noise; Advice then says
	// what to do about it.
	Noisy  bool
	Advice string
}

// String is the finding as the pre-flight lines print it.
func (f Finding) String() string {
	s := f.What + ": " + f.Value
	if f.Noisy {
		s += " (noisy: " + f.Advice + ")"
	}
	return s
}

// busyWindow is how long Check watches the other processes' CPU time.
const busyWindow = 300 * time.Millisecond

// Check looks at what makes this machine noisy, as pyperf's "system show"
// does: the CPU frequency governor and turbo, steal time since boot, the
// load average and the busiest other processes over a short window, swap
// in use, transparent huge pages, and the CPUs kept free of the scheduler.
// exclude are processes to leave out of the busy list (kvbench's own).
// What cannot be read is reported as unknown, never as an error.
func Check(ctx context.Context, exclude ...int) []Finding {
	var fs []Finding
	fs = append(fs, Finding{What: "CPUs", Value: fmt.Sprintf("%d", runtime.NumCPU())})
	if g := readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); g != "" {
		f := Finding{What: "governor", Value: g}
		if g != "performance" {
			f.Noisy, f.Advice = true, "the frequency follows the load; 'cpupower frequency-set -g performance'"
		}
		fs = append(fs, f)
	} else {
		fs = append(fs, Finding{What: "governor", Value: "none (no cpufreq: a VM, or fixed frequency)"})
	}
	switch {
	case readTrim("/sys/devices/system/cpu/intel_pstate/no_turbo") == "0":
		fs = append(fs, Finding{What: "turbo", Value: "on", Noisy: true, Advice: "the frequency depends on temperature and the other cores; echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"})
	case readTrim("/sys/devices/system/cpu/cpufreq/boost") == "1":
		fs = append(fs, Finding{What: "turbo", Value: "on", Noisy: true, Advice: "the frequency depends on temperature and the other cores; echo 0 > /sys/devices/system/cpu/cpufreq/boost"})
	}
	proc, err := procfs.NewDefaultFS()
	if err != nil {
		return append(fs, Finding{What: "/proc", Value: "unreadable: " + err.Error()})
	}
	if st, err := proc.Stat(); err == nil {
		c := st.CPUTotal
		total := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
		if total > 0 {
			pct := c.Steal / total * 100
			f := Finding{What: "steal since boot", Value: fmt.Sprintf("%.1f%%", pct)}
			if pct >= 1 {
				f.Noisy, f.Advice = true, "other guests share these CPUs; measurements close in time agree best"
			}
			fs = append(fs, f)
		}
	}
	if l, err := proc.LoadAvg(); err == nil {
		f := Finding{What: "load average", Value: fmt.Sprintf("%.2f %.2f %.2f", l.Load1, l.Load5, l.Load15)}
		if l.Load1 > 0.5*float64(runtime.NumCPU()) {
			f.Noisy, f.Advice = true, "other work is running"
		}
		fs = append(fs, f)
	}
	fs = append(fs, busyOthers(ctx, proc, exclude))
	if m, err := proc.Meminfo(); err == nil && m.SwapTotal != nil && m.SwapFree != nil {
		used := (*m.SwapTotal - *m.SwapFree) * 1024
		f := Finding{What: "swap in use", Value: bytesText(used)}
		if used > 0 {
			f.Noisy, f.Advice = true, "pages of running programs are on disk; a server touching them stalls"
		}
		fs = append(fs, f)
	}
	if thp := readTrim("/sys/kernel/mm/transparent_hugepage/enabled"); thp != "" {
		mode := thp
		if i, j := strings.Index(thp, "["), strings.Index(thp, "]"); i >= 0 && j > i {
			mode = thp[i+1 : j]
		}
		f := Finding{What: "transparent huge pages", Value: mode}
		if mode == "always" {
			f.Noisy, f.Advice = true, "compaction and khugepaged stall allocating servers (Redis warns too); echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"
		}
		fs = append(fs, f)
	}
	if iso := readTrim("/sys/devices/system/cpu/isolated"); iso != "" {
		fs = append(fs, Finding{What: "isolated CPUs", Value: iso})
	}
	return fs
}

// busyOthers names the other processes that used more than a twentieth of
// a CPU over busyWindow, busiest first.
func busyOthers(ctx context.Context, proc procfs.FS, exclude []int) Finding {
	f := Finding{What: "busy processes"}
	before := cpuByPID(proc)
	select {
	case <-ctx.Done():
		f.Value = "not checked (interrupted)"
		return f
	case <-time.After(busyWindow):
	}
	after := cpuByPID(proc)
	type busy struct {
		name string
		cpus float64
	}
	var bs []busy
	for pid, a := range after {
		b, ok := before[pid]
		if !ok || slices.Contains(exclude, pid) || pid == os.Getpid() {
			continue
		}
		if cpus := (a.cpu - b.cpu) / busyWindow.Seconds(); cpus > 0.05 {
			bs = append(bs, busy{fmt.Sprintf("%s (pid %d)", a.name, pid), cpus})
		}
	}
	if len(bs) == 0 {
		f.Value = "none above 5% of a CPU"
		return f
	}
	slices.SortFunc(bs, func(x, y busy) int {
		switch {
		case x.cpus > y.cpus:
			return -1
		case x.cpus < y.cpus:
			return 1
		}
		return strings.Compare(x.name, y.name)
	})
	var parts []string
	for i, b := range bs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(bs)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", b.name, b.cpus*100))
	}
	f.Value = strings.Join(parts, ", ")
	f.Noisy, f.Advice = true, "they compete for the CPUs being measured"
	return f
}

type procCPU struct {
	name string
	cpu  float64
}

// cpuByPID is every process's CPU seconds so far.
func cpuByPID(proc procfs.FS) map[int]procCPU {
	ps, err := proc.AllProcs()
	if err != nil {
		return nil
	}
	m := make(map[int]procCPU, len(ps))
	for _, p := range ps {
		if st, err := p.Stat(); err == nil {
			m[p.PID] = procCPU{st.Comm, st.CPUTime()}
		}
	}
	return m
}

// readTrim is a small sysfs file's content, "" when unreadable.
func readTrim(path string) string {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// bytesText is n in the largest binary unit that keeps it above 1.
func bytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
