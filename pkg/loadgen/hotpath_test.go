package loadgen

import (
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

// hotPath is a connection with no socket and the replies a correct server
// sends to its first batch.
type hotPath struct {
	c       *conn
	replies []byte
	buf     []byte
	keys    keyspace.Gen // the key and op streams before the first batch
	ops     keyspace.Rand
}

func newHotPath(tb testing.TB, cfg Config) *hotPath {
	tb.Helper()
	cfg, err := cfg.Normalize()
	if err != nil {
		tb.Fatal(err)
	}
	c := newConn(newPlan(cfg), 0, 1, newHistogram())
	h := &hotPath{c: c, keys: *c.keys, ops: c.ops, buf: make([]byte, 0, 64<<10)}
	c.build(nil, cfg.Pipeline, 0)
	mask := len(c.ring) - 1
	for i := range cfg.Pipeline {
		s := c.ring[(c.head+i)&mask]
		if s.op == opSet {
			h.replies = append(h.replies, "+OK\r\n"...)
		} else {
			v := c.p.appendValue(nil, s.key)
			h.replies = fmt.Appendf(h.replies, "$%d\r\n%s\r\n", len(v), v)
		}
	}
	c.pre = 0
	return h
}

// batch is one closed-loop batch without the system calls: build the
// requests, put them in flight, parse the replies. With replay, the key
// and op streams restart first, so that the replies match the requests
// (needed to verify values or to mix commands).
func (h *hotPath) batch(tb testing.TB, replay bool, now int64) {
	c := h.c
	if replay {
		*c.keys, c.ops = h.keys, h.ops
	}
	n := c.p.cfg.Pipeline
	h.buf = c.build(h.buf[:0], n, 0)
	c.stamp(n, now)
	if m, err := c.consume(h.replies, now+1000); err != nil || m != len(h.replies) || c.inflight != 0 {
		tb.Fatalf("consume: %d of %d bytes, %d in flight, err %v", m, len(h.replies), c.inflight, err)
	}
}

var hotPathCases = []struct {
	name   string
	cfg    Config
	replay bool
}{
	{"set", fill(Config{Mode: ModeSet, Load: Load{Pipeline: 128, Keyspace: 1_000_000}}), false},
	{"get", fill(Config{Mode: ModeGet, Load: Load{Pipeline: 128, Keyspace: 1_000_000}}), false},
	{"get-verify", fill(Config{Mode: ModeGet, Load: Load{Pipeline: 128, Keyspace: 1_000_000, VerifyGet: true}}), true},
	{"mixed-verify", fill(Config{Mode: ModeMixed, Load: Load{Pipeline: 128, Keyspace: 1_000_000, VerifyGet: true}}), true},
	{"set-random", fill(Config{Mode: ModeSet, Load: Load{Pipeline: 128, Keyspace: 1_000_000, RandomData: true}}), false},
	{"get-verify-random", fill(Config{Mode: ModeGet, Load: Load{Pipeline: 128, Keyspace: 1_000_000, VerifyGet: true, RandomData: true}}), true},
	{"set-zipf", fill(Config{Mode: ModeSet, Load: Load{Pipeline: 128, Keyspace: 1_000_000, KeyPattern: keyspace.Zipf}}), false},
}

// BenchmarkHotPath measures the client's work per request, system calls
// excluded: encoding, reply parsing, verification, latency recording.
// ns/op and allocs/op are per request.
func BenchmarkHotPath(b *testing.B) {
	for _, tc := range hotPathCases {
		b.Run(tc.name, func(b *testing.B) {
			h := newHotPath(b, tc.cfg)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += tc.cfg.Pipeline {
				h.batch(b, tc.replay, int64(i))
			}
		})
	}
}

func TestHotPathAllocs(t *testing.T) {
	for _, tc := range hotPathCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHotPath(t, tc.cfg)
			allocs := testing.AllocsPerRun(50, func() { h.batch(t, tc.replay, 1) })
			if allocs != 0 {
				t.Errorf("%v allocations per batch, want 0", allocs)
			}
			c := h.c
			if c.VerifyFailures != 0 || c.Misses != 0 || len(c.errors) != 0 {
				t.Errorf("verify failures %d, misses %d, errors %v: want none (%v)", c.VerifyFailures, c.Misses, c.errors, c.warnings)
			}
		})
	}
}
