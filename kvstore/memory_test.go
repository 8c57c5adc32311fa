package kvstore

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

func infoInt(t *testing.T, rc *rawConn, section, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoField(t, rc, section, name), 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %v", name, err)
	}
	return n
}

// Past maxmemory, set at run time, writes are refused with Redis's -OOM
// and reads, deletions and INFO go on; INFO memory reports the figure the
// limit is checked against. A pipeline that crosses the limit has its
// first writes accepted and the rest refused. Lifting the limit lets
// writes in again.
func TestMaxMemory(t *testing.T) {
	for _, alloc := range []string{AllocPool, AllocGo} {
		t.Run(alloc, func(t *testing.T) {
			srv := startServer(t, Config{Alloc: alloc})
			rc := dialRaw(t, srv)
			// used_memory counts the process's heap, garbage the tests
			// before left included: collected now, it cannot fall later
			// and leave the limit out of reach.
			runtime.GC()
			used := infoInt(t, rc, "memory", "used_memory")
			limit := used + 24<<20
			if got := rc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(limit>>20, 10)+"mb"); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET maxmemory = %q", got)
			}
			if got := infoInt(t, rc, "memory", "maxmemory"); got != limit>>20<<20 {
				t.Fatalf("INFO maxmemory = %d, want %d", got, limit>>20<<20)
			}
			if got := infoField(t, rc, "memory", "maxmemory_policy"); got != "noeviction" {
				t.Fatalf("maxmemory_policy = %q", got)
			}
			val := strings.Repeat("v", 1000)
			var refusedAt int
			for batch := 0; refusedAt == 0 && batch < 1000; batch++ {
				var req []byte
				for i := range 100 {
					req = resp.AppendCommandString(req, "SET", fmt.Sprint("k", batch*100+i), val)
				}
				rc.send(req)
				for i := range 100 {
					switch got := rc.reply(); {
					case got == "+OK\r\n":
					case got == "-"+errOOM+"\r\n":
						if refusedAt == 0 {
							refusedAt = batch*100 + i
						}
					default:
						t.Fatalf("SET: %q", got)
					}
				}
			}
			if refusedAt == 0 {
				t.Fatalf("100,000 SETs of 1 KB accepted under a limit of %d bytes", limit)
			}
			if used := infoInt(t, rc, "memory", "used_memory"); used <= limit>>20<<20-(4<<20) {
				t.Fatalf("refused at used_memory %d, under the limit %d", used, limit)
			}
			if got := rc.do("GET", "k0"); got != "$1000\r\n"+val+"\r\n" {
				t.Fatalf("GET past the limit = %.40q", got)
			}
			// The collector may free the requests' garbage at any moment
			// and bring used_memory back under a limit just passed: the
			// writes below meet a limit well under the values held.
			if got := rc.do("CONFIG", "SET", "maxmemory", "1mb"); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET maxmemory 1mb = %q", got)
			}
			for _, cmd := range [][]string{{"SET", "x", "y"}, {"HSET", "e", "v"}, {"RSET", "r", "v"}, {"APPEND", "k0", "more"}, {"INCR", "n"}, {"MSET", "a", "b"}} {
				if got := rc.do(cmd...); got != "-"+errOOM+"\r\n" {
					t.Errorf("%v past the limit = %q", cmd, got)
				}
			}
			if got := rc.do("DEL", "k1"); got != ":1\r\n" {
				t.Fatalf("DEL past the limit = %q", got)
			}
			if got := rc.do("CONFIG", "SET", "maxmemory", "0"); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET maxmemory 0 = %q", got)
			}
			if got := rc.do("SET", "x", "y"); got != "+OK\r\n" {
				t.Fatalf("SET after lifting the limit = %q", got)
			}
			if got := rc.do("CONFIG", "SET", "maxmemory", "lots"); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory')") {
				t.Fatalf("CONFIG SET maxmemory lots = %q", got)
			}
		})
	}
}

// A request declared larger than the limit allows is refused with -OOM
// before its bytes are read or anything is reserved for it, and the
// connection closed (its bytes cannot be skipped); the server goes on.
// With no maxmemory the limit is what the machine has: a 64 GiB SET on a
// machine without that much memory is refused too, where the server would
// have taken memory until the kernel or the runtime killed it.
func TestOOMRequest(t *testing.T) {
	huge := Config{Limits: resp.Limits{MaxBulkLen: 1 << 40, MaxQueryBuffer: 1 << 41}}
	for name, tt := range map[string]struct {
		maxmemory bool
		size      int64
	}{
		"maxmemory":    {true, 100 << 20},
		"no maxmemory": {false, 64 << 30},
	} {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t, huge)
			other := dialRaw(t, srv)
			before := infoInt(t, other, "memory", "used_memory")
			if tt.maxmemory {
				// The process's other servers count too: the limit leaves
				// 32 MiB beyond what it holds now.
				if got := other.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(before+32<<20, 10)); got != "+OK\r\n" {
					t.Fatalf("CONFIG SET maxmemory = %q", got)
				}
			}
			rc := dialRaw(t, srv)
			rc.send([]byte(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\nsome bytes", tt.size)))
			if got := rc.reply(); got != "-"+errOOM+"\r\n" {
				t.Fatalf("a SET of %d bytes: %q", tt.size, got)
			}
			waitClosed(t, rc, "the client refused")
			if got := other.do("SET", "small", "v"); got != "+OK\r\n" {
				t.Fatalf("another client's SET = %q", got)
			}
			if after := infoInt(t, other, "memory", "used_memory"); after-before > 16<<20 {
				t.Fatalf("used_memory went from %d to %d for a request of %d bytes refused", before, after, tt.size)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "100": 100, "1k": 1000, "1kb": 1024, "100mb": 100 << 20, "2GB": 2 << 30, "3g": 3e9, "7m": 7e6, "10b": 10} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "lots", "1tb", "1.5gb", "99999999999gb"} {
		if _, err := ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) accepted", in)
		}
	}
}

// The memory promised to a large request arriving is given back once it
// is complete: a client that streams large requests, always with part of
// the next one sent, holds the promise of one request, not of all.
func TestAdmittedReleased(t *testing.T) {
	srv := startServer(t, Config{})
	rc := dialRaw(t, srv)
	val := strings.Repeat("v", 100<<10)
	var req []byte
	for i := range 10 {
		req = resp.AppendCommandString(req, "SET", fmt.Sprint("k", i), val)
	}
	next := resp.AppendCommandString(nil, "SET", "k10", val)
	rc.send(append(req, next[:len(next)/2]...))
	for i := range 10 {
		if got := rc.reply(); got != "+OK\r\n" {
			t.Fatalf("SET %d: %q", i, got)
		}
	}
	waitFor(t, "the promise of the pending request alone", func() bool {
		r := srv.mem.reserved.Load()
		return r > 0 && r <= int64(len(next))
	})
	rc.send(next[len(next)/2:])
	if got := rc.reply(); got != "+OK\r\n" {
		t.Fatalf("SET k10: %q", got)
	}
	waitFor(t, "no promise once every request is complete", func() bool { return srv.mem.reserved.Load() == 0 })
}
