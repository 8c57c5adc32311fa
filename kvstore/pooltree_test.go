package kvstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// checkTree checks the B-tree's invariants: every leaf at one depth, every
// node but the root at least half full (once the pending inserts are in), items in strictly increasing key
// order (a leaf's once sorted), each fingerprint that of its key, and the count.
func checkTree(t *testing.T, what string, pt *poolTree) {
	t.Helper()
	pt.flush()
	if pt.root == 0 {
		if pt.n != 0 {
			t.Fatalf("%s: empty tree counts %d keys", what, pt.n)
		}
		return
	}
	var prev []byte
	count, leafDepth := 0, -1
	var visit func(id nodeID, depth int)
	visit = func(id nodeID, depth int) {
		nd := pt.nodes.at(id)
		min := leafMin
		if nd.leaf == 0 {
			min = innerMin
		}
		if id != pt.root && int(nd.n) < min || nd.n == 0 || int(nd.n) > nd.max() {
			t.Fatalf("%s: node %d holds %d items (min %d, max %d)", what, id, nd.n, min, nd.max())
		}
		if nd.leaf != 0 {
			if leafDepth >= 0 && depth != leafDepth {
				t.Fatalf("%s: leaves at depths %d and %d", what, leafDepth, depth)
			}
			leafDepth = depth
		}
		var fps, refs []uint64
		if nd.leaf != 0 { // a leaf's items are in no order, their fingerprints in their keys
			refs = slices.Clone(nd.refs()[:nd.n])
			for _, r := range refs {
				fps = append(fps, pt.fingerprint(pt.ar.key(r)))
			}
			pt.sortItems(fps, refs)
		} else {
			fps, refs = nd.fps()[:nd.n], nd.refs()[:nd.n]
		}
		for i := range int(nd.n) {
			if nd.leaf == 0 {
				visit(nd.kids()[i], depth+1)
			}
			k := pt.ar.key(refs[i])
			if !bytes.HasPrefix(k, pt.prefix) || fps[i] != pt.fingerprint(k) {
				t.Fatalf("%s: key %q: prefix %q, fingerprint %x", what, k, pt.prefix, fps[i])
			}
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				t.Fatalf("%s: key %q after %q", what, k, prev)
			}
			prev = k
			count++
		}
		if nd.leaf == 0 {
			visit(nd.kids()[nd.n], depth+1)
		}
	}
	visit(pt.root, 0)
	if leafDepth != pt.height-1 {
		t.Fatalf("%s: leaves at depth %d, height %d", what, leafDepth, pt.height)
	}
	if count != pt.n || count != pt.idx.n {
		t.Fatalf("%s: %d items in the tree, %d counted, %d in the index", what, count, pt.n, pt.idx.n)
	}
}

// BenchmarkBatchInsert is a million-key load as the server runs it, without
// the network: batches of 128 inserts (putNew, RSET's and HSET's mode) of
// keys bench:key:000000… in random order with 32-byte values, each batch
// prefetched as conn.prefetch does. One op is the whole load into a fresh
// table; ns/key is the figure. Compare poolHash (the string and hash
// engines) with poolTree (the ordered engine) in one run, alternating.
// cpu-ns/key is the thread's processor time, which a busy machine's other
// processes disturb less than the wall clock.
func BenchmarkBatchInsert(b *testing.B) {
	const n, batch = 1_000_000, 128
	keys := make([][]byte, n)
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		keys[i] = fmt.Appendf(nil, "bench:key:%06d", j)
	}
	val := bytes.Repeat([]byte("x"), 32)
	for _, name := range []string{"poolHash", "poolTree"} {
		b.Run(name, func(b *testing.B) {
			perKey(b, n, func(cur []uint64) (sink uint64) {
				tab := tableKinds[name]()
				for lo := 0; lo < n; lo += batch {
					ks := keys[lo:min(lo+batch, n)]
					sink += touchBatch(tab, ks, cur, true)
					for _, k := range ks {
						if !tab.put(k, val, putNew) {
							b.Fatalf("%s refused", k)
						}
					}
				}
				tab.clear()
				return sink
			})
		})
	}
}

// threadCPU is the calling thread's processor time in nanoseconds.
func threadCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestTreeOrder inserts, replaces (with values of other sizes, which moves
// records) and deletes random keys, many of which share their fingerprint
// (they differ only past the eight bytes after the prefix), and checks
// the tree's order (with inserts pending) and then its invariants (with
// none) against a sorted model along the way. Deletes dominate the last
// quarter, so that the tree shrinks.
func TestTreeOrder(t *testing.T) {
	const ops = 200000
	rng := rand.New(rand.NewPCG(3, 4))
	pt, model := newPoolTree(), map[string]string{}
	for op := range ops {
		var k string
		switch rng.IntN(3) {
		case 0:
			k = fmt.Sprintf("user:%08d", rng.IntN(50000))
		case 1:
			k = fmt.Sprintf("user:00000001:%d", rng.IntN(30000)) // one fingerprint
		default:
			k = fmt.Sprintf("user:%d:x", rng.IntN(30000))
		}
		if op == ops/2 {
			k = "a" // the prefix shrinks to nothing
		}
		if rng.IntN(3) == 0 || op > ops*3/4 && rng.IntN(3) > 0 {
			_, in := model[k]
			if pt.del([]byte(k)) != in {
				t.Fatalf("op %d: del %q, present %v", op, k, in)
			}
			delete(model, k)
		} else {
			v := strings.Repeat("v", rng.IntN(100))
			pt.put([]byte(k), []byte(v), putAny)
			model[k] = v
		}
		if op%20000 == 19999 {
			checkOrder(t, pt, model) // with inserts pending
			checkTree(t, fmt.Sprintf("op %d", op), pt)
			if op == ops/2-1 && pt.height < 3 {
				t.Fatalf("op %d: %d keys make a tree of height %d only", op, pt.n, pt.height)
			}
		}
	}
}

// TestTreePendingDelete deletes keys whose inserts are still pending,
// beside keys already in the tree.
// TestRecordFingerprint: the fingerprint a split reads from a record as
// one word is the one computed from the key, for keys shorter than the
// prefix and eight bytes, as long, and longer, with values of every
// length from none (the slot then ends near the key) up.
func TestRecordFingerprint(t *testing.T) {
	pt := newPoolTree()
	pt.prefix = []byte("bench:key:")
	for _, suffix := range []string{"", "1", "1234567", "12345678", "123456789", "\xff\x00\xfe", "zzzzzzzzzzzzzzzz"} {
		for _, vlen := range []int{0, 1, 7, 8, 32, 100} {
			key := append([]byte("bench:key:"), suffix...)
			r := pt.ar.newRecord(key, bytes.Repeat([]byte{0xee}, vlen))
			if got, want := pt.recordFingerprint(r), pt.fingerprint(key); got != want {
				t.Errorf("key %q, value of %d bytes: record fingerprint %#x, want %#x", key, vlen, got, want)
			}
		}
	}
}

func TestTreePendingDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (make test)")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	pt, model := newPoolTree(), map[string]string{}
	key := func(i int) []byte { return fmt.Appendf(nil, "k:%06d", i) }
	for i := 0; i < 20000; i += 2 {
		pt.put(key(i), []byte("v"), putNew)
		model[string(key(i))] = "v"
	}
	for trial := range 300 {
		for range rng.IntN(2 * pendMax) {
			i := rng.IntN(20000)
			if pt.put(key(i), []byte("w"), putNew) {
				model[string(key(i))] = "w"
			}
		}
		if trial%30 == 29 {
			checkOrder(t, pt, model)
		}
		lo := rng.IntN(20000)
		for i := lo; i < lo+600 && i < 20000; i++ {
			_, in := model[string(key(i))]
			if pt.del(key(i)) != in {
				t.Fatalf("trial %d: del %q, present %v", trial, key(i), in)
			}
			delete(model, string(key(i)))
		}
		if trial%30 == 29 {
			checkOrder(t, pt, model)
			checkTree(t, fmt.Sprint("trial ", trial), pt)
		}
	}
}

// checkOrder walks tab in order and compares it with model's sorted keys.
func checkOrder(t *testing.T, tab table, model map[string]string) {
	t.Helper()
	want := slices.Sorted(func(yield func(string) bool) {
		for k := range model {
			if !yield(k) {
				return
			}
		}
	})
	i := 0
	tab.scan(func(k, v []byte) bool {
		if i >= len(want) || string(k) != want[i] || string(v) != model[want[i]] {
			t.Fatalf("scan item %d: %q=%q, want %q of %d", i, k, v, want[min(i, len(want)-1)], len(want))
		}
		i++
		return true
	})
	if i != len(want) {
		t.Fatalf("scan gave %d keys, want %d", i, len(want))
	}
}

// orderedLoad sends random RSET, RMOD and RDEL over keys of several shapes
// in pipelines, keeping model up to date.
func orderedLoad(t *testing.T, rdb *redis.Client, rng *rand.Rand, model map[string]string, rounds int) {
	t.Helper()
	c := ctx(t)
	for range rounds {
		pipe := rdb.Pipeline()
		for range 500 {
			k := fmt.Sprintf("r:%06d", rng.IntN(4000))
			if rng.IntN(4) == 0 {
				k = fmt.Sprintf("r:000001:%d", rng.IntN(500))
			}
			v := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(60))
			_, in := model[k]
			switch {
			case in && rng.IntN(3) == 0:
				pipe.Do(c, "RDEL", k)
				delete(model, k)
			case in:
				pipe.Do(c, "RMOD", k, v)
				model[k] = v
			default:
				pipe.Do(c, "RSET", k, v)
				model[k] = v
			}
		}
		if _, err := pipe.Exec(c); err != nil {
			t.Fatal(err)
		}
	}
}

// checkServerOrder walks srv's ordered engine in order against model.
func checkServerOrder(t *testing.T, srv *Server, model map[string]string) {
	t.Helper()
	srv.db.mu.RLock()
	defer srv.db.mu.RUnlock()
	if pt, ok := srv.db.tree.(*poolTree); ok {
		checkTree(t, "after restart", pt)
	}
	checkOrder(t, srv.db.tree, model)
}

// TestOrderedReplay checks that the ordered engine is rebuilt in order by
// the replay of its log, under every policy.
func TestOrderedReplay(t *testing.T) {
	for _, policy := range []string{PersistNo, PersistEverysec, PersistAlways} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			srv := startPersistent(t, dir, policy)
			model := map[string]string{}
			orderedLoad(t, newClient(t, srv), rand.New(rand.NewPCG(5, 6)), model, 12)
			checkServerOrder(t, srv, model)
			srv.Close()
			srv = startPersistent(t, dir, policy)
			checkServerOrder(t, srv, model)
		})
	}
}

// TestOrderedRewriteRace rewrites the log again and again while another
// connection sends RSET, RMOD and RDEL; after a restart the engine holds
// what the writer wrote, in order.
func TestOrderedRewriteRace(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistEverysec)
	model := map[string]string{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rdb := newClient(t, srv)
		c := ctx(t)
		for rewrites := 0; ; rewrites++ {
			select {
			case <-done:
				if rewrites < 2 {
					t.Errorf("only %d rewrites raced the writes", rewrites)
				}
				return
			default:
			}
			if err := rdb.Do(c, "BGREWRITEAOF").Err(); err != nil && !strings.Contains(err.Error(), "already in progress") {
				t.Error(err)
				return
			}
		}
	}()
	orderedLoad(t, newClient(t, srv), rand.New(rand.NewPCG(7, 8)), model, 30)
	close(done)
	wg.Wait()
	srv.Close()
	srv = startPersistent(t, dir, PersistEverysec)
	checkServerOrder(t, srv, model)
}

// TestGCBounded checks that a million inserts into the pool allocator's
// engines leave the collector next to nothing to do: at most one cycle
// (the heap holds no per-key object), where the B-tree of Go objects the
// ordered engine had took eight.
func TestGCBounded(t *testing.T) {
	val := bytes.Repeat([]byte("x"), 32)
	for _, name := range []string{"poolHash", "poolTree"} {
		t.Run(name, func(t *testing.T) {
			tab := tableKinds[name]()
			defer tab.clear()
			key := make([]byte, 0, 32)
			before := gcCycles()
			for i := range 1_000_000 {
				// strconv, not fmt: fmt would allocate for the argument.
				key = strconv.AppendInt(append(key[:0], "bench:key:"...), int64(1_000_000+i*7919%1_000_000), 10)
				if !tab.put(key, val, putNew) {
					t.Fatalf("%s refused", key)
				}
			}
			if n := gcCycles() - before; n > 1 {
				t.Errorf("%d collections during a million inserts, want at most 1", n)
			}
		})
	}
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// perKey runs op, which handles keys keys, on one thread for the
// benchmark's loops and reports its time per key: ns/key by the clock and
// cpu-ns/key, the thread's processor time, which a busy machine's other
// processes disturb less. op is given room for a batch's lookup places.
func perKey(b *testing.B, keys int, op func(cur []uint64) uint64) {
	var sink uint64
	cur := make([]uint64, 1024)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	for b.Loop() {
		sink += op(cur)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*keys), "cpu-ns/key")
	if sink == 1 {
		b.Log(sink)
	}
}

// touchBatch runs the prefetch passes over a batch of keys, as
// conn.prefetch does.
func touchBatch(tab table, ks [][]byte, cur []uint64, write bool) (sink uint64) {
	cur = cur[:len(ks)]
	clear(cur)
	for pass, more := 0, true; more; pass++ {
		more = false
		for i, k := range ks {
			if pass > 0 && cur[i] == doneTouching {
				continue
			}
			s, m := tab.touch(k, pass, &cur[i], write)
			sink += s
			if m {
				more = true
			} else {
				cur[i] = doneTouching
			}
		}
	}
	return sink
}

// BenchmarkBatchGet reads random keys of 1,000,000 (32-byte values) in
// batches of 128, as the server runs redis-benchmark -P 128 GETs: with the
// batch prefetched first, and without. cpu-ns/key is the figure.
func BenchmarkBatchGet(b *testing.B) {
	const n, batch, reads = 1_000_000, 128, 1 << 20
	tab := newPoolHash()
	keys := make([][]byte, n)
	val := bytes.Repeat([]byte("x"), 32)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
		tab.put(keys[i], val, putAny)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([][]byte, reads)
	for i := range order {
		order[i] = keys[rng.IntN(n)]
	}
	for _, prefetched := range []bool{true, false} {
		b.Run(map[bool]string{true: "prefetched", false: "plain"}[prefetched], func(b *testing.B) {
			perKey(b, reads, func(cur []uint64) (sink uint64) {
				for lo := 0; lo < reads; lo += batch {
					ks := order[lo : lo+batch]
					if prefetched {
						sink += touchBatch(tab, ks, cur, false)
					}
					for _, k := range ks {
						v, ok := tab.get(k)
						if !ok {
							b.Fatalf("%s missing", k)
						}
						sink += uint64(v[0])
					}
				}
				return sink
			})
		})
	}
}
