package kvstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkTree checks the B-tree's invariants: every leaf at one depth, every
// node but the root at least half full, items in strictly increasing key
// order, each fingerprint that of its key, and the count.
func checkTree(t *testing.T, what string, pt *poolTree) {
	t.Helper()
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
		for i := range int(nd.n) {
			if nd.leaf == 0 {
				visit(nd.kids()[i], depth+1)
			}
			k := pt.ar.key(nd.refs()[i])
			if !bytes.HasPrefix(k, pt.prefix) || nd.fps()[i] != pt.fingerprint(k) {
				t.Fatalf("%s: key %q: prefix %q, fingerprint %x", what, k, pt.prefix, nd.fps()[i])
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
func BenchmarkBatchInsert(b *testing.B) {
	const n, batch = 1_000_000, 128
	keys := make([][]byte, n)
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		keys[i] = fmt.Appendf(nil, "bench:key:%06d", j)
	}
	val := bytes.Repeat([]byte("x"), 32)
	for _, name := range []string{"poolHash", "poolTree"} {
		b.Run(name, func(b *testing.B) {
			var sink uint64
			cur := make([]uint64, batch)
			for b.Loop() {
				tab := tableKinds[name]()
				for lo := 0; lo < n; lo += batch {
					ks := keys[lo:min(lo+batch, n)]
					clear(cur)
					for pass, more := 0, true; more; pass++ {
						more = false
						for i, k := range ks {
							if pass > 0 && cur[i] == doneTouching {
								continue
							}
							s, m := tab.touch(k, pass, &cur[i], true)
							sink += s
							if m {
								more = true
							} else {
								cur[i] = doneTouching
							}
						}
					}
					for _, k := range ks {
						if !tab.put(k, val, putNew) {
							b.Fatalf("%s refused", k)
						}
					}
				}
				tab.clear()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
			if sink == 1 {
				b.Log(sink)
			}
		})
	}
}
