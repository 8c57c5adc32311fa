package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
)

// TelemetrySections are the INFO sections a Telemetry reads, each with
// its own INFO call (servers before Redis 7 take one section a call); a
// section the server lacks (latencystats before Redis 7) reads as no
// fields.
var TelemetrySections = []string{"stats", "memory", "persistence", "commandstats", "latencystats"}

// Telemetry is what a server says about its work at one moment, read
// before and after a measured phase: INFO's TelemetrySections of each
// master.
type Telemetry struct {
	// At is when the reading began.
	At time.Time
	// Nodes holds each master's INFO fields, in Info.Masters' order.
	Nodes []map[string]string
}

// ReadTelemetry reads the TelemetrySections of every master of the
// server of info through the control client.
func ReadTelemetry(ctx context.Context, info Info, password string) (Telemetry, error) {
	t := Telemetry{At: time.Now()}
	cr := creds{Options: info.Control(password)}
	for _, addr := range info.Masters() {
		fields, err := readSections(ctx, addr, cr)
		if err != nil {
			return t, fmt.Errorf("%s: %w", addr, err)
		}
		t.Nodes = append(t.Nodes, fields)
	}
	return t, nil
}

// readSections reads the TelemetrySections of the server at addr into one
// map. An error reply to a section (a server that does not know it) is
// an empty section.
func readSections(ctx context.Context, addr string, cr creds) (map[string]string, error) {
	c, err := dialControl(ctx, addr, cr, sampleTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	all := make(map[string]string)
	for _, sec := range TelemetrySections {
		fields, err := c.Info(ctx, sec)
		var re *control.ReplyError
		switch {
		case errors.As(err, &re):
			continue
		case err != nil:
			return nil, fmt.Errorf("INFO %s: %w", sec, err)
		}
		for k, v := range fields {
			all[k] = v
		}
	}
	return all, nil
}

// UsedMemory is INFO memory's used_memory, summed over the masters;
// false when a master does not report it.
func (t Telemetry) UsedMemory() (int64, bool) {
	var sum int64
	for _, n := range t.Nodes {
		v, err := strconv.ParseInt(n["used_memory"], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += v
	}
	return sum, len(t.Nodes) > 0
}

// CommandStat is one command's INFO commandstats counters.
type CommandStat struct {
	// Calls is the number of calls executed.
	Calls int64
	// Usec is the server's time in them, in microseconds.
	Usec int64
}

// Command is the commandstats of the command name (lower case, as
// cmdstat_NAME spells it), summed over the masters; false when no master
// reports commandstats at all. A command not called reads as zero.
func (t Telemetry) Command(name string) (CommandStat, bool) {
	var sum CommandStat
	known := false
	for _, n := range t.Nodes {
		for k := range n {
			if strings.HasPrefix(k, "cmdstat_") {
				known = true
				break
			}
		}
		s, ok := parseCmdstat(n["cmdstat_"+name])
		if ok {
			sum.Calls += s.Calls
			sum.Usec += s.Usec
		}
	}
	return sum, known
}

// parseCmdstat parses a cmdstat_NAME value:
// "calls=N,usec=N,usec_per_call=N.NN,...".
func parseCmdstat(v string) (CommandStat, bool) {
	var s CommandStat
	var haveCalls, haveUsec bool
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(val, 10, 64)
		switch {
		case err != nil:
		case k == "calls":
			s.Calls, haveCalls = n, true
		case k == "usec":
			s.Usec, haveUsec = n, true
		}
	}
	return s, haveCalls && haveUsec
}

// CommandDelta is what the commands names (a mode's, or one workload
// command's) did between before and after: their calls and time summed.
// False when either reading lacks commandstats, or the counters went
// back (a CONFIG RESETSTAT or a restart between them).
func CommandDelta(before, after Telemetry, names ...string) (CommandStat, bool) {
	var d CommandStat
	for _, name := range names {
		b, ok1 := before.Command(name)
		a, ok2 := after.Command(name)
		if !ok1 || !ok2 || a.Calls < b.Calls || a.Usec < b.Usec {
			return CommandStat{}, false
		}
		d.Calls += a.Calls - b.Calls
		d.Usec += a.Usec - b.Usec
	}
	return d, len(names) > 0
}

// RSSInterval is how often an RSSSampler reads the servers' resident set
// size.
const RSSInterval = 100 * time.Millisecond

// RSSSampler follows the peak resident set size of the processes kvbench
// started for a server (a cluster's: the sum over its nodes' at each
// sample), from /proc/PID/statm, until Stop.
type RSSSampler struct {
	pids []int
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak int64
}

// StartRSS starts sampling the resident set size of the server processes
// of info every interval (RSSInterval when not positive), a first sample
// at once. It returns nil for a server kvbench did not start (no
// process to read).
func StartRSS(info Info, interval time.Duration) *RSSSampler {
	pids := PIDs(info)
	if len(pids) == 0 {
		return nil
	}
	if interval <= 0 {
		interval = RSSInterval
	}
	s := &RSSSampler{pids: pids, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.sample()
			}
		}
	}()
	return s
}

// PIDs are the processes kvbench started for info's server: its
// PID, or a cluster's NodePIDs; none when one of them is not known.
func PIDs(info Info) []int {
	if len(info.Nodes) == 0 {
		if info.PID > 0 {
			return []int{info.PID}
		}
		return nil
	}
	if len(info.NodePIDs) != len(info.Nodes) {
		return nil
	}
	for _, p := range info.NodePIDs {
		if p <= 0 {
			return nil
		}
	}
	return info.NodePIDs
}

// sample reads the processes' resident set sizes once and keeps their
// sum if it is the peak; a sample where one cannot be read is dropped.
func (s *RSSSampler) sample() {
	var sum int64
	for _, pid := range s.pids {
		rss, err := processRSS(pid)
		if err != nil {
			return
		}
		sum += rss
	}
	s.mu.Lock()
	s.peak = max(s.peak, sum)
	s.mu.Unlock()
}

// Stop ends the sampling, takes a last sample, and returns the peak in
// bytes; 0 when no sample could be read. Stop on a nil sampler returns 0.
func (s *RSSSampler) Stop() int64 {
	if s == nil {
		return 0
	}
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// pageSize is the unit of /proc/PID/statm.
var pageSize = int64(os.Getpagesize())

// processRSS is the resident set size of process pid in bytes: the
// second field of /proc/PID/statm, in pages.
func processRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %d fields", pid, len(f))
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: resident %q", pid, f[1])
	}
	return pages * pageSize, nil
}

// threadsCPU is the time on CPU of process pid's live threads: the first
// field of each /proc/PID/task/TID/schedstat, in nanoseconds.
func threadsCPU(pid int) (time.Duration, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("/proc/%d/task: no schedstat", pid)
	}
	var ns int64
	read := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that exited meanwhile
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		n, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a number", f, first)
		}
		ns += n
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("/proc/%d/task: no schedstat readable", pid)
	}
	return time.Duration(ns), nil
}

// ServerMemory is the resident memory of the processes kvbench started
// for the server of info and of their children (a redis-server's fork for
// BGSAVE), each page counted once: a server process's resident set, from
// the kernel's counters (/proc/PID/statm), and the pages each of its
// descendants holds alone (Private_Clean and Private_Dirty of
// /proc/PID/smaps_rollup). A page a fork shares with its parent is in the
// parent's resident set; one the parent has since written is copied, the
// copy the parent's, the original the fork's alone. The serving process's
// own page tables are not walked: smaps_rollup of a server holding 400 MB
// takes about 1 ms, under its memory map's lock, and sampled every 100 ms
// during a phase it raised p99 of every interval it fell in by 1.3-1.8x.
// False for a server kvbench did not start, or when a process cannot be
// read.
func ServerMemory(info Info) (int64, bool) {
	pids := PIDs(info)
	if len(pids) == 0 {
		return 0, false
	}
	var sum int64
	for _, pid := range pids {
		n, err := processRSS(pid)
		if err != nil {
			return 0, false
		}
		sum += n + descendantsPrivate(pid, 1)
	}
	return sum, true
}

// maxTreeDepth bounds the descent through a process's children.
const maxTreeDepth = 4

// descendantsPrivate is the memory the descendants of process pid hold
// alone, in bytes; depth is theirs. A child that exits meanwhile is left
// out.
func descendantsPrivate(pid, depth int) int64 {
	if depth > maxTreeDepth {
		return 0
	}
	var n int64
	for _, child := range children(pid) {
		if m, err := processPrivate(child); err == nil {
			n += m + descendantsPrivate(child, depth+1)
		}
	}
	return n
}

// children are the processes that process pid's threads started and
// that still run (/proc/PID/task/*/children).
func children(pid int) []int {
	var pids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that exited meanwhile
		}
		for _, c := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(c); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}

// processPrivate is the memory process pid holds alone, in bytes: the
// Private_Clean and Private_Dirty lines of /proc/PID/smaps_rollup.
func processPrivate(pid int) (int64, error) {
	name := "/proc/" + strconv.Itoa(pid) + "/smaps_rollup"
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	var sum int64
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != "Private_Clean" && k != "Private_Dirty" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s %q", name, k, v)
		}
		sum += kb << 10
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("%s: no Private_Clean and Private_Dirty lines", name)
	}
	return sum, nil
}
