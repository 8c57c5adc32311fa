package kvstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Memory accounting, for INFO memory's used_memory and the maxmemory
// limit. Redis's allocator knows its used memory exactly; a Go program
// knows its heap only by asking the runtime, which is too slow to ask per
// command. So used memory is the sum of
//
//   - the Go heap's objects (live or not yet swept), read every tenth of
//     a second by the cron (refresh);
//   - the large Go allocations made since (records over 64 KB and the
//     memory read into for them: noteHeap), so that a burst of large
//     values counts before the next reading;
//   - the memory mapped outside the heap (arena chunks, node chunks and
//     index arrays: offHeapBytes), counted where it is mapped and given
//     back;
//   - the memory promised to large requests still arriving (admit).
//
// A write command checks it against the limit (Server.oom): a few atomic
// loads. The limit is maxmemory, or, with none set, what the machine
// has: the used memory plus what the kernel says is available (the lesser
// of /proc/meminfo's MemAvailable and the cgroup's room), less a reserve.

var (
	// offHeapBytes is the memory mapped outside the Go heap, in every
	// server of the process: chunks count while populated (mapped, or
	// taken back from the kernel's free pages), index arrays while mapped.
	offHeapBytes atomic.Int64
	// heapRecent is the large Go allocations since the last refresh.
	heapRecent atomic.Int64
)

// noteHeap counts a large Go allocation of n bytes.
func noteHeap(n int) { heapRecent.Add(int64(n)) }

// Maxmemory policies: only Redis's noeviction, whose refusal a client
// sees at once.
const (
	// PolicyNoEviction refuses writes past maxmemory; reads go on.
	PolicyNoEviction = "noeviction"
)

// errOOM is Redis's reply to a write refused under noeviction.
const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// errOOMRequest is a request refused before it is read: its declared size
// would pass the limit.
var errOOMRequest = errors.New("request refused: it would take more memory than the limit allows")

// memReserve is the part of the machine's memory that writes never take
// when no maxmemory is set: what the rest of the system and the
// process's own growth (a reply, a rewrite's buffers) need to go on.
func memReserve(total int64) int64 { return max(64<<20, min(total/16, 1<<30)) }

// mem is a server's memory accounting.
type mem struct {
	heap     atomic.Int64 // Go heap objects at the last refresh
	reserved atomic.Int64 // promised to large requests arriving (admit)
	max      atomic.Int64 // maxmemory, 0 for none
	// limit is what used is checked against: max, or what the machine
	// has (machine); 0 when neither is known.
	limit   atomic.Int64
	machine atomic.Int64

	mu   sync.Mutex // guards what follows, and update
	read time.Time  // when machine was last read
	soft bool       // the collector has a soft limit (update)
}

// used is the memory the server accounts for (see the top).
func (m *mem) used() int64 {
	return m.heap.Load() + heapRecent.Load() + offHeapBytes.Load() + m.reserved.Load()
}

// over reports whether extra more bytes would pass the limit.
func (m *mem) over(extra int64) bool {
	lim := m.limit.Load()
	return lim > 0 && m.used()+extra > lim
}

// setMax sets maxmemory (0: none) and has the Go collector work to keep
// the heap within what the mapped memory leaves of it.
func (m *mem) setMax(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.max.Store(n)
	m.update()
}

// update recomputes the limit the writes are checked against. The caller
// holds mu.
func (m *mem) update() {
	lim := m.max.Load()
	if lim == 0 {
		lim = m.machine.Load()
	}
	m.limit.Store(lim)
	// The collector's soft limit is what maxmemory leaves the heap, so
	// that garbage is collected before it counts against the limit.
	switch maxm := m.max.Load(); {
	case maxm > 0:
		debug.SetMemoryLimit(max(maxm-offHeapBytes.Load(), 32<<20))
		m.soft = true
	case m.soft:
		debug.SetMemoryLimit(math.MaxInt64)
		m.soft = false
	}
}

// refresh reads the Go heap and, once a second, the machine's available
// memory. The cron calls it every tick; INFO too.
func (m *mem) refresh(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heap.Store(int64(readMemMetrics().heapObjects))
	heapRecent.Store(0)
	if now.Sub(m.read) >= time.Second {
		m.read = now
		if avail, total, ok := machineMemory(); ok {
			m.machine.Store(max(m.used()+avail-memReserve(total), 1))
		}
	}
	m.update()
}

// machineMemory is what the kernel says the process may still take, and
// the machine's (or the cgroup's) total: /proc/meminfo's MemAvailable and
// MemTotal, bounded by the cgroup v2 limit when there is one.
func machineMemory() (avail, total int64, ok bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemAvailable:":
			avail = kb << 10
		case "MemTotal:":
			total = kb << 10
		}
	}
	if total == 0 {
		return 0, 0, false
	}
	if lim, cur, ok := cgroupMemory(); ok {
		avail, total = min(avail, lim-cur), min(total, lim)
	}
	return max(avail, 0), total, true
}

// cgroupMemory reads the cgroup v2 limit of the process's cgroup and its
// current use; ok is false without a limit.
func cgroupMemory() (limit, current int64, ok bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, 0, false
	}
	path, found := strings.CutPrefix(strings.TrimSpace(string(b)), "0::")
	if !found {
		return 0, 0, false
	}
	dir := "/sys/fs/cgroup" + path
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	limit, ok1 := read("memory.max") // "max" when unlimited: not a number
	current, ok2 := read("memory.current")
	return limit, current, ok1 && ok2
}

// oom reports whether a write must be refused (Redis's noeviction).
func (s *Server) oom() bool { return s.mem.over(0) }

// admit is the request reader's question before it holds n more bytes of
// a large request arriving (resp.Reader.Admit): refused if they would
// pass the limit. What it admits is promised to the request until it is
// complete (syncReserved).
func (c *conn) admit(n int64) error {
	if c.s.mem.over(n) {
		return errOOMRequest
	}
	return nil
}

// syncReserved makes the memory promised to c's pending request what the
// reader has admitted for it: none once it is complete.
func (c *conn) syncReserved() {
	if d := c.rd.Admitted() - c.reserved; d != 0 {
		c.s.mem.reserved.Add(d)
		c.reserved += d
	}
}

// releaseReserved gives back what c was promised: it is closed.
func (c *conn) releaseReserved() {
	if c.reserved != 0 {
		c.s.mem.reserved.Add(-c.reserved)
		c.reserved = 0
	}
}

// ParseMemory parses a memory size as Redis's configuration does: bytes,
// or a number with k, kb, m, mb, g or gb (k = 1000, kb = 1024, ...), case
// insensitive: "100mb", "1gb", "500000".
func ParseMemory(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}}
	ls := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(ls, u.suffix); ok {
			ls, mult = num, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(ls, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a memory size (bytes, or a number with k, kb, m, mb, g or gb)", s)
	}
	return n * mult, nil
}
