package machine

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Snapshot is the machine's counters at one moment: taken before and
// after a measurement, two snapshots give its Signals.
type Snapshot struct {
	at     time.Time
	cpu    procfs.CPUStat
	owned  float64 // CPU seconds of the measured processes
	load1  float64
	mhz    float64
	failed error
}

// Take reads the machine's counters and the CPU time of the processes
// being measured (the load generator, the servers): their time is theirs,
// everything else busy on the machine is someone else's. A process that
// cannot be read counts as none of theirs; a machine without /proc gives a
// Snapshot whose Signals say so.
func Take(pids ...int) Snapshot {
	s := Snapshot{at: time.Now()}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		s.failed = err
		return s
	}
	st, err := fs.Stat()
	if err != nil {
		s.failed = err
		return s
	}
	s.cpu = st.CPUTotal
	for _, pid := range pids {
		if p, err := fs.Proc(pid); err == nil {
			if ps, err := p.Stat(); err == nil {
				s.owned += ps.CPUTime()
			}
		}
	}
	if l, err := fs.LoadAvg(); err == nil {
		s.load1 = l.Load1
	}
	s.mhz = meanMHz()
	return s
}

// meanMHz is the mean current frequency of the CPUs in MHz from cpufreq,
// 0 where the machine does not say (most VMs).
func meanMHz() float64 {
	var sum float64
	n := 0
	for c := 0; ; c++ {
		b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c))
		if err != nil {
			break
		}
		khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			break
		}
		sum += khz / 1000
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Signals is what the machine did over one measurement besides the
// measurement itself.
type Signals struct {
	// Seconds is the measurement's wall time.
	Seconds float64
	// Steal is the CPU time the hypervisor gave to other guests, in CPUs
	// (0.5: half of one CPU, on average over the measurement).
	Steal float64
	// Other is the user and system time of every process not measured,
	// in CPUs: another program, a backup, a build.
	Other float64
	// Load1 is the one-minute load average at the end.
	Load1 float64
	// MHz is the CPUs' mean frequency at the end; 0 where unknown.
	MHz float64
	// Err is why the signals could not be read; the other fields are
	// then zero.
	Err error
}

// Between is the signals of the interval from a to b.
func Between(a, b Snapshot) Signals {
	if a.failed != nil || b.failed != nil {
		err := a.failed
		if err == nil {
			err = b.failed
		}
		return Signals{Err: fmt.Errorf("machine signals: %w", err)}
	}
	sec := b.at.Sub(a.at).Seconds()
	if sec <= 0 {
		return Signals{Err: fmt.Errorf("machine signals: no time between the snapshots")}
	}
	busy := func(c procfs.CPUStat) float64 { return c.User + c.Nice + c.System }
	other := busy(b.cpu) - busy(a.cpu) - (b.owned - a.owned)
	return Signals{
		Seconds: sec,
		Steal:   max(0, b.cpu.Steal-a.cpu.Steal) / sec,
		Other:   max(0, other) / sec,
		Load1:   b.load1,
		MHz:     b.mhz,
	}
}

// Rule says when a measurement was disturbed: the machine gave more than
// MaxSteal CPUs to other guests, or other processes used more than
// MaxOther CPUs, on average over the measurement.
type Rule struct {
	MaxSteal, MaxOther float64
}

// DefaultRule is the rule kvbench applies: a tenth of a CPU stolen, or a
// fifth of a CPU used by other processes. On an idle machine both stay
// below a hundredth (kernel threads, the fsync of a log); a CPU hog
// beside the measurement takes most of a CPU.
var DefaultRule = Rule{MaxSteal: 0.10, MaxOther: 0.20}

// DisturbedAgainst says whether s breaks the rule over typical, the
// signals of the measurements it is compared with (their Median): a
// disturbance that hit s and not them. A machine busy alike throughout
// disturbs no one measurement more than the others.
func (r Rule) DisturbedAgainst(s, typical Signals) (bool, string) {
	if s.Err != nil || typical.Err != nil {
		return false, ""
	}
	var why []string
	if d := s.Steal - typical.Steal; d > r.MaxSteal {
		why = append(why, fmt.Sprintf("steal %.2f CPUs, %.2f above its block's", s.Steal, d))
	}
	if d := s.Other - typical.Other; d > r.MaxOther {
		why = append(why, fmt.Sprintf("other processes %.2f CPUs, %.2f above its block's", s.Other, d))
	}
	return len(why) > 0, strings.Join(why, ", ")
}

// Median is the field-by-field median of the signals that were read; the
// zero Signals (with an Err) when there are none.
func Median(ss []Signals) Signals {
	if len(ss) == 0 {
		return Signals{Err: fmt.Errorf("machine signals: none read")}
	}
	med := func(get func(Signals) float64) float64 {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = get(s)
		}
		slices.Sort(xs)
		if n := len(xs); n%2 == 0 {
			return (xs[n/2-1] + xs[n/2]) / 2
		}
		return xs[len(xs)/2]
	}
	return Signals{
		Seconds: med(func(s Signals) float64 { return s.Seconds }),
		Steal:   med(func(s Signals) float64 { return s.Steal }),
		Other:   med(func(s Signals) float64 { return s.Other }),
		Load1:   med(func(s Signals) float64 { return s.Load1 }),
		MHz:     med(func(s Signals) float64 { return s.MHz }),
	}
}

// Disturbed says whether s breaks the rule, and why ("" when not).
func (r Rule) Disturbed(s Signals) (bool, string) {
	if s.Err != nil {
		return false, ""
	}
	var why []string
	if s.Steal > r.MaxSteal {
		why = append(why, fmt.Sprintf("steal %.2f CPUs > %.2f", s.Steal, r.MaxSteal))
	}
	if s.Other > r.MaxOther {
		why = append(why, fmt.Sprintf("other processes %.2f CPUs > %.2f", s.Other, r.MaxOther))
	}
	return len(why) > 0, strings.Join(why, ", ")
}
