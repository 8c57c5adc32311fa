package kvstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"
)

// poolTree is the pool allocator's ordered engine: records in an arena,
// found by a hashIndex over them (as poolHash: a point lookup, RGET or
// REXIST or a refused RSET, costs two cache misses, and a batch's are
// prefetched), and kept in key order by a B-tree beside it, as Redis pairs
// a skiplist with a dict for its sorted sets. The tree's nodes live
// outside the Go heap too and hold plain integers (key fingerprints,
// record refs, child numbers), so the collector never scans them; an
// insert waits in a buffer with others (pend), which go into the tree
// together, their cache misses overlapping (see flush); RSET's check that
// the key is new goes through the index. A leaf's items are in no order,
// so that an insert appends to it: it writes two cache lines, where
// inserting in order reads and moves about six. The profile of a million
// RSETs put half the time in the B-tree of Go objects this replaced
// (BENCHMARKS.md).
//
// Comparing two keys through their records costs a cache miss each, and a
// descent makes a score of comparisons. So every item carries a
// fingerprint: the eight key bytes that follow the prefix all keys of the
// tree share, big-endian. Keys compare as their fingerprints do whenever
// those differ; only on a tie are the records read. With keys such as
// "bench:key:123456" the prefix is "bench:key:" and an insert reads no
// record at all. The prefix only ever shrinks, when a key without it
// arrives; fingerprints order keys as the keys themselves do, so the tree
// keeps its shape and only the fingerprints are recomputed, once.
type poolTree struct {
	poolHash // the records and their index: get and len come from it
	nodes    nodePools
	root     nodeID // 0 when the tree is empty
	height   int    // levels: every leaf is at depth height-1
	n        int
	prefix   []byte // shared by every key in the tree; never modified in place

	// Inserts wait here, in no order, to be put into the tree together
	// (see flush); everything else that reads or changes the tree puts
	// them in first, or (scan) merges them in.
	pend []item
}

// pendMax is the inserts that wait for a flush.
const pendMax = 1024

// A node is a slot of a node pool: innerSize bytes for an inner node,
// leafSize for a leaf. An inner node holds up to innerMax items
// (fingerprints, then refs, kept apart so that a binary search reads few
// cache lines) and one child more, the children's numbers after the refs.
// A leaf holds up to leafMax refs alone, in no order: nothing searches a
// leaf by key (an insert appends, a delete looks for the ref), so the keys
// in the records are read only to split it (see splitLeaf) or walk it.
const (
	innerSize = 512
	leafSize  = 4096
	leafMax   = (leafSize - 8) / 8
	innerMax  = (innerSize - 8 - 4) / 20
	leafMin   = leafMax / 2
	innerMin  = innerMax / 2
	nodeWords = (leafSize - 8) / 8
)

// nodeID numbers a node: leaves have leafBit set.
type nodeID = uint32

const leafBit = 1 << 31

// node is either kind of node; an inner node's slot is the first
// innerSize bytes of it.
type node struct {
	n    uint32
	leaf uint32 // nonzero for a leaf: 1 + the times it split (see flush)
	w    [nodeWords]uint64
}

func (nd *node) max() int {
	if nd.leaf != 0 {
		return leafMax
	}
	return innerMax
}

// fps are an inner node's fingerprints; a leaf has none (see leaf).
func (nd *node) fps() []uint64 { return nd.w[:innerMax:innerMax] }

func (nd *node) refs() []uint64 {
	if nd.leaf != 0 {
		return nd.w[:leafMax:leafMax]
	}
	return nd.w[innerMax : 2*innerMax : 2*innerMax]
}

// kids are an inner node's children, innerMax+1 of them.
func (nd *node) kids() []nodeID {
	return unsafe.Slice((*nodeID)(unsafe.Pointer(&nd.w[2*innerMax])), innerMax+1)
}

// nodePools are the leaves' pool, whose chunks are mapped outside the heap
// (the arena's chunks, prepared ahead by takeChunk), and the inner nodes',
// whose chunks are leaf slots: a tree of a million keys has a few hundred
// inner nodes, and a chunk of their own would hold 4 MiB for 200 KiB.
type nodePools struct{ inner, leaves nodePool }

const innerPerLeaf = leafSize / innerSize

func (p *nodePools) at(id nodeID) *node {
	if id&leafBit != 0 {
		return p.leaves.at(id&^leafBit, leafSize, chunkSize/leafSize)
	}
	return p.inner.at(id, innerSize, innerPerLeaf)
}

func (p *nodePools) alloc(leaf bool) nodeID {
	var id nodeID
	if leaf {
		id = p.leaves.alloc(chunkSize/leafSize, takeChunk) | leafBit
	} else {
		id = p.inner.alloc(innerPerLeaf, func() []byte {
			nd := p.leaves.at(p.leaves.alloc(chunkSize/leafSize, takeChunk), leafSize, chunkSize/leafSize)
			return unsafe.Slice((*byte)(unsafe.Pointer(nd)), leafSize)
		})
	}
	nd := p.at(id)
	nd.n, nd.leaf = 0, 0
	if leaf {
		nd.leaf = 1
	}
	return id
}

func (p *nodePools) release(id nodeID) {
	if id&leafBit != 0 {
		p.leaves.free = append(p.leaves.free, id&^leafBit)
	} else {
		p.inner.free = append(p.inner.free, id)
	}
}

func (p *nodePools) reset() {
	for _, c := range p.leaves.chunks {
		unmapChunk(c)
	}
	*p = nodePools{}
}

// trimTail gives back the pages of the last leaf chunk past the slots
// handed out (see giveBackIdle).
func (p *nodePools) trimTail() {
	const per = chunkSize / leafSize
	if n := len(p.leaves.chunks); n > 0 {
		trimFrom(p.leaves.chunks[n-1], int(p.leaves.next-uint32(n-1)*per)*leafSize)
	}
}

func (p *nodePools) bytes() int64 { return int64(len(p.leaves.chunks)) * chunkSize }

// nodePool hands out slots of one size, per a chunk, from chunks that
// more provides. Slot numbers start at 1.
type nodePool struct {
	chunks [][]byte
	free   []nodeID
	next   uint32 // slots handed out so far
}

func (p *nodePool) at(id nodeID, size, per uint32) *node {
	i := id - 1
	return (*node)(unsafe.Pointer(&p.chunks[i/per][(i%per)*size]))
}

func (p *nodePool) alloc(per uint32, more func() []byte) nodeID {
	if k := len(p.free); k > 0 {
		id := p.free[k-1]
		p.free = p.free[:k-1]
		return id
	}
	if p.next%per == 0 {
		p.chunks = append(p.chunks, more())
	}
	p.next++
	return p.next
}

func newPoolTree() *poolTree { return &poolTree{poolHash: *newPoolHash()} }

func (t *poolTree) fingerprint(key []byte) uint64 {
	var b [8]byte
	copy(b[:], key[len(t.prefix):])
	return binary.BigEndian.Uint64(b[:])
}

// recordFingerprint is the fingerprint of record r's key, read as one
// eight-byte word when the record's slot holds eight bytes past the
// prefix (a short key's bytes after it are masked off), as fingerprint
// reads it otherwise.
func (t *poolTree) recordFingerprint(r ref) uint64 {
	b := t.ar.record(r)
	klen := int(binary.LittleEndian.Uint32(b))
	at := recordHeader + len(t.prefix)
	if at+8 > len(b) {
		return t.fingerprint(b[recordHeader : recordHeader+klen])
	}
	fp := binary.BigEndian.Uint64(b[at : at+8])
	if k := klen - len(t.prefix); k < 8 {
		fp &^= 1<<(8*(8-k)) - 1
	}
	return fp
}

// splitAhead is how many records a split has prefetched ahead of the one
// it reads.
const splitAhead = 16

// has reports whether key may be in the tree: it has the prefix.
func (t *poolTree) has(key []byte) bool {
	return t.root != 0 && bytes.HasPrefix(key, t.prefix)
}

// search finds key (with fingerprint fp) in the inner node nd: the index
// of its item, or of the first greater one.
func (t *poolTree) search(nd *node, key []byte, fp uint64) (int, bool) {
	fps := nd.fps()[:nd.n]
	lo := lowerBound(fps, fp)
	if lo == len(fps) || fps[lo] != fp {
		return lo, false
	}
	// A tie: the items with this fingerprint are ordered by key.
	refs := nd.refs()
	hi := lo
	for hi < len(fps) && fps[hi] == fp {
		hi++
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(t.ar.key(refs[m]), key); {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// less orders items (fp a, ref ra) and (fp b, ref rb) as their keys.
func (t *poolTree) less(a uint64, ra ref, b uint64, rb ref) bool {
	if a != b {
		return a < b
	}
	return bytes.Compare(t.ar.key(ra), t.ar.key(rb)) < 0
}

// sortItems sorts fps and refs together by key.
func (t *poolTree) sortItems(fps, refs []uint64) {
	var buf [leafMax + 1]item
	items := buf[:0]
	if len(fps) > len(buf) {
		items = make([]item, 0, len(fps))
	}
	for i := range fps {
		items = append(items, item{fps[i], refs[i]})
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.fp != b.fp {
			return cmp.Compare(a.fp, b.fp)
		}
		return bytes.Compare(t.ar.key(a.r), t.ar.key(b.r))
	})
	for i, it := range items {
		fps[i], refs[i] = it.fp, it.r
	}
}

// selectItem puts at index k of fps and refs (moved together) the item
// that sorting them would put there, the lesser ones before it and the
// greater after, in no order: a split needs no more than that (a
// quickselect; a sort took 10% of an RSET load).
func (t *poolTree) selectItem(fps, refs []uint64, k int) {
	lo, hi := 0, len(fps)-1
	swap := func(i, j int) {
		fps[i], fps[j] = fps[j], fps[i]
		refs[i], refs[j] = refs[j], refs[i]
	}
	for lo < hi {
		// The median of three as the pivot, moved to hi.
		m := int(uint(lo+hi) >> 1)
		if t.less(fps[m], refs[m], fps[lo], refs[lo]) {
			swap(m, lo)
		}
		if t.less(fps[hi], refs[hi], fps[lo], refs[lo]) {
			swap(hi, lo)
		}
		if t.less(fps[m], refs[m], fps[hi], refs[hi]) {
			swap(m, hi)
		}
		pf, pr := fps[hi], refs[hi]
		j := lo
		for i := lo; i < hi; i++ {
			if t.less(fps[i], refs[i], pf, pr) {
				swap(i, j)
				j++
			}
		}
		swap(j, hi)
		switch {
		case j == k:
			return
		case j < k:
			lo = j + 1
		default:
			hi = j - 1
		}
	}
}

type item struct {
	fp uint64
	r  ref
}

// extreme returns the index of the greatest item of the leaf nd, or of its
// least if !max.
func (t *poolTree) extreme(nd *node, max bool) int {
	refs := nd.refs()[:nd.n]
	best := 0
	for i := 1; i < len(refs); i++ {
		if (bytes.Compare(t.ar.key(refs[best]), t.ar.key(refs[i])) < 0) == max {
			best = i
		}
	}
	return best
}

// lift returns a leaf's item r as a separator: with its fingerprint.
func (t *poolTree) lift(r ref) (uint64, ref) { return t.fingerprint(t.ar.key(r)), r }

// leafRemove removes item i of the leaf nd, the last one taking its place.
func leafRemove(nd *node, i int) {
	n := int(nd.n) - 1
	nd.refs()[i] = nd.refs()[n]
	nd.n--
}

// lowerBound returns the index of the first of fps not below fp: the
// count of those below, an inner node's at most innerMax (25) counted
// without a branch (a borrow each). A binary search made five loads that
// each waited for the one before; the count reads four cache lines in a
// row with nothing to wait for, and a descent (route) took half the time.
func lowerBound(fps []uint64, fp uint64) int {
	n := uint64(0)
	for _, f := range fps {
		_, lt := bits.Sub64(f, fp, 0) // 1 if below
		n += lt
	}
	return int(n)
}

// maxDepth bounds the tree's height: 13 children an inner node at the
// least, so a height of 16 would take 13^15 keys.
const maxDepth = 16

// descent is the path of a search: the node and index at each level, root first.
type descent struct {
	ids [maxDepth]nodeID
	idx [maxDepth]int
	n   int
}

// find descends to key, whose record is r unless absent. If found, the
// last level of p is its item; otherwise it is the leaf position where key
// would go. A leaf is searched for r, not for key: its items' keys are in
// their records.
func (t *poolTree) find(key []byte, r ref, p *descent, absent bool) bool {
	fp := t.fingerprint(key)
	id := t.root
	p.n = 0
	for {
		nd := t.nodes.at(id)
		if nd.leaf != 0 {
			i := int(nd.n)
			if !absent {
				if j := slices.Index(nd.refs()[:nd.n], r); j >= 0 {
					i = j
				}
			}
			p.ids[p.n], p.idx[p.n] = id, i
			p.n++
			return i < int(nd.n)
		}
		i, found := t.search(nd, key, fp)
		p.ids[p.n], p.idx[p.n] = id, i
		p.n++
		if found {
			return true
		}
		id = nd.kids()[i]
	}
}

// prefetchLines prefetches the cache lines of bytes [from, to) of nd.
func prefetchLines(nd *node, from, to int) {
	for off := from &^ 63; off < to; off += 64 {
		prefetch(uintptr(unsafe.Pointer(nd)) + uintptr(off))
	}
}

func (t *poolTree) put(key, val []byte, mode putMode) bool {
	s, h, found := t.idx.slot(t.ar, key)
	switch {
	case found && mode == putNew, !found && mode == putExisting:
		return false
	case found && t.ar.rewritable(s.ref(), len(key), len(val)):
		t.ar.setVal(s.ref(), val)
	case found:
		old := s.ref()
		s.setRef(t.ar.newRecord(key, val))
		t.setRef(key, old, s.ref())
		t.ar.free(old)
	default:
		r := t.ar.newRecord(key, val)
		t.idx.claim(s, h, r)
		t.add(key, r)
	}
	return true
}

func (t *poolTree) appendVal(key, suffix []byte) int {
	s, h, found := t.idx.slot(t.ar, key)
	if !found {
		r := t.ar.newRecord(key, suffix)
		t.idx.claim(s, h, r)
		t.add(key, r)
		return len(suffix)
	}
	r, n := t.ar.appendVal(s.ref(), suffix)
	if old := s.ref(); r != old {
		s.setRef(r)
		t.setRef(key, old, r)
		t.ar.free(old)
	}
	return n
}

// setRef points key's item, which must be in the tree with record old, at
// record r; old is still readable, for the comparisons on the way.
func (t *poolTree) setRef(key []byte, old, r ref) {
	t.flush()
	var p descent
	if !t.find(key, old, &p, false) {
		panic("kvstore: ordered engine: indexed key missing from the tree")
	}
	t.nodes.at(p.ids[p.n-1]).refs()[p.idx[p.n-1]] = r
}

// add inserts key's new record r into the tree: into the pending inserts
// if it has the tree's prefix, so that its fingerprint is known.
func (t *poolTree) add(key []byte, r ref) {
	if t.has(key) {
		t.pend = append(t.pend, item{t.fingerprint(key), r})
		if len(t.pend) == pendMax {
			t.flush()
		}
		return
	}
	t.flush()
	t.insert(key, r, &descent{})
}

// flush puts the pending inserts into the tree, in three passes over them
// as conn.prefetch makes over a batch: each pass loads what the next one
// will read, so that their cache misses overlap. The first finds each
// key's leaf, the second reads the leaf's header, the third appends to the
// leaf, unless it has split since or is full, or a separator has the key's
// fingerprint: then the insert descends again, with the key.
func (t *poolTree) flush() {
	items := t.pend
	if len(items) == 0 {
		return
	}
	var leaves [pendMax]nodeID
	var vers [pendMax]uint32
	for i, it := range items {
		if id := t.route(it.fp); id != 0 {
			leaves[i] = id
			prefetch(uintptr(unsafe.Pointer(t.nodes.at(id))))
		}
	}
	for i := range items {
		if id := leaves[i]; id != 0 {
			nd := t.nodes.at(id)
			vers[i] = nd.leaf
			n := int(nd.n)
			prefetchLines(nd, 8+8*n, 8+8*n+1) // where the append writes
		}
	}
	for i, it := range items {
		if id := leaves[i]; id != 0 {
			if nd := t.nodes.at(id); nd.leaf == vers[i] && nd.n < leafMax {
				nd.refs()[nd.n] = it.r
				nd.n++
				t.n++
				continue
			}
		}
		key := t.ar.key(it.r)
		var p descent
		t.find(key, 0, &p, true)
		t.insert(key, it.r, &p)
	}
	t.pend = items[:0]
}

// route returns the leaf where fingerprint fp goes, or 0 if a separator
// has it.
func (t *poolTree) route(fp uint64) nodeID {
	id := t.root
	for id&leafBit == 0 { // not the leaf's header: the caller prefetches it
		nd := t.nodes.at(id)
		fps := nd.fps()[:nd.n]
		i := lowerBound(fps, fp)
		if i < len(fps) && fps[i] == fp {
			return 0
		}
		id = nd.kids()[i]
	}
	return id
}

// insert adds record r for key, which is not in the tree; p is the failed
// descent to it, unless key lacked the prefix or the tree was empty.
func (t *poolTree) insert(key []byte, r ref, p *descent) {
	t.n++
	if t.root == 0 {
		t.prefix = bytes.Clone(key)
		t.root, t.height = t.nodes.alloc(true), 1
		nd := t.nodes.at(t.root)
		nd.refs()[0], nd.n = r, 1
		return
	}
	if !bytes.HasPrefix(key, t.prefix) {
		t.shrinkPrefix(key)
		t.find(key, 0, p, true)
	}
	fp, kid := t.fingerprint(key), nodeID(0)
	for level := p.n - 1; level >= 0; level-- {
		var split bool
		fp, r, kid, split = t.insertAt(p.ids[level], p.idx[level], fp, r, kid)
		if !split {
			return
		}
	}
	// The root split: a new root above the two halves.
	old := t.root
	t.root = t.nodes.alloc(false)
	t.height++
	nd := t.nodes.at(t.root)
	nd.fps()[0], nd.refs()[0], nd.n = fp, r, 1
	nd.kids()[0], nd.kids()[1] = old, kid
}

// insertAt inserts item (fp, r) at index i of node id, with right as the
// child after it in an inner node. A full node splits around its median:
// insertAt returns the median and the new right half, for the parent.
func (t *poolTree) insertAt(id nodeID, i int, fp uint64, r ref, right nodeID) (uint64, ref, nodeID, bool) {
	nd := t.nodes.at(id)
	n := int(nd.n)
	if nd.leaf != 0 {
		if n < leafMax {
			nd.refs()[n] = r
			nd.n++
			return 0, 0, 0, false
		}
		return t.splitLeaf(nd, fp, r)
	}
	if n < nd.max() {
		fps, refs := nd.fps(), nd.refs()
		copy(fps[i+1:n+1], fps[i:n])
		copy(refs[i+1:n+1], refs[i:n])
		fps[i], refs[i] = fp, r
		if nd.leaf == 0 {
			kids := nd.kids()
			copy(kids[i+2:n+2], kids[i+1:n+1])
			kids[i+1] = right
		}
		nd.n++
		return 0, 0, 0, false
	}
	// Gather the n+1 items and n+2 children in order, then deal them out.
	var fps [innerMax + 1]uint64
	var refs [innerMax + 1]uint64
	var kids [innerMax + 2]nodeID
	copy(fps[:i], nd.fps()[:i])
	copy(refs[:i], nd.refs()[:i])
	fps[i], refs[i] = fp, r
	copy(fps[i+1:n+1], nd.fps()[i:n])
	copy(refs[i+1:n+1], nd.refs()[i:n])
	copy(kids[:i+1], nd.kids()[:i+1])
	kids[i+1] = right
	copy(kids[i+2:n+2], nd.kids()[i+1:n+1])
	h := (n + 1) / 2
	sib := t.nodes.alloc(false)
	sd := t.nodes.at(sib)
	copy(nd.fps(), fps[:h])
	copy(nd.refs(), refs[:h])
	nd.n = uint32(h)
	copy(sd.fps(), fps[h+1:n+1])
	copy(sd.refs(), refs[h+1:n+1])
	sd.n = uint32(n - h)
	copy(nd.kids(), kids[:h+1])
	copy(sd.kids(), kids[h+1:n+2])
	return fps[h], refs[h], sib, true
}

// splitLeaf splits the full leaf nd, with item (fp, r) added, around the
// median of its keys, read from the records (prefetched together first),
// and returns the median and the new leaf on its right, for the parent.
// A split comes once every leafMax/2 inserts into a leaf, so a leaf
// spends two record reads an insert on them, against the eight bytes of
// memory per key that a fingerprint beside each item would take.
func (t *poolTree) splitLeaf(nd *node, fp uint64, r ref) (uint64, ref, nodeID, bool) {
	n := int(nd.n)
	var fps, refs [leafMax + 1]uint64
	copy(refs[:n], nd.refs()[:n])
	// The records' reads, splitAhead of them in flight: prefetches issued
	// all at once, beyond what the processor can have outstanding, were
	// dropped, and the reads then waited for one miss after another.
	for _, x := range refs[:min(n, splitAhead)] {
		prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(t.ar.record(x)))))
	}
	for i, x := range refs[:n] {
		if i+splitAhead < n {
			prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(t.ar.record(refs[i+splitAhead])))))
		}
		fps[i] = t.recordFingerprint(x)
	}
	fps[n], refs[n] = fp, r
	h := (n + 1) / 2
	t.selectItem(fps[:n+1], refs[:n+1], h)
	if nd.leaf++; nd.leaf == 0 { // see flush
		nd.leaf = 1
	}
	sib := t.nodes.alloc(true)
	sd := t.nodes.at(sib)
	copy(nd.refs(), refs[:h])
	nd.n = uint32(h)
	copy(sd.refs(), refs[h+1:n+1])
	sd.n = uint32(n - h)
	return fps[h], refs[h], sib, true
}

func (t *poolTree) del(key []byte) bool {
	r, ok := t.idx.remove(t.ar, key)
	if !ok {
		return false
	}
	t.flush()
	var p descent
	if !t.find(key, r, &p, false) {
		panic("kvstore: ordered engine: indexed key missing from the tree")
	}
	t.remove(&p)
	t.ar.free(r)
	return true
}

// remove deletes the item that p found.
func (t *poolTree) remove(p *descent) {
	level := p.n - 1
	nd := t.nodes.at(p.ids[level])
	i := p.idx[level]
	if nd.leaf == 0 {
		// An inner item is replaced by its predecessor, the greatest item
		// of the rightmost leaf of the subtree on its left, which is then
		// removed from that leaf instead.
		id := nd.kids()[i]
		for {
			p.n++
			c := t.nodes.at(id)
			p.ids[p.n-1] = id
			if c.leaf != 0 {
				j := t.extreme(c, true)
				p.idx[p.n-1] = j
				nd.fps()[i], nd.refs()[i] = t.lift(c.refs()[j])
				break
			}
			p.idx[p.n-1] = int(c.n)
			id = c.kids()[c.n]
		}
		level, nd, i = p.n-1, t.nodes.at(p.ids[p.n-1]), p.idx[p.n-1]
	}
	leafRemove(nd, i)
	t.n--
	t.rebalance(p, level)
}

// rebalance restores the minimum fill of the node at level of p and of its
// ancestors, borrowing from a sibling or merging with one.
func (t *poolTree) rebalance(p *descent, level int) {
	for ; level > 0; level-- {
		id := p.ids[level]
		nd := t.nodes.at(id)
		min := leafMin
		if nd.leaf == 0 {
			min = innerMin
		}
		if int(nd.n) >= min {
			return
		}
		parent := t.nodes.at(p.ids[level-1])
		ci := p.idx[level-1] // nd is the parent's child ci
		pk := parent.kids()
		if ci > 0 {
			if l := t.nodes.at(pk[ci-1]); int(l.n) > min {
				t.rotateRight(parent, ci-1, l, nd)
				return
			}
		}
		if ci < int(parent.n) {
			if r := t.nodes.at(pk[ci+1]); int(r.n) > min {
				t.rotateLeft(parent, ci, nd, r)
				return
			}
		}
		if ci > 0 {
			t.merge(parent, ci-1)
		} else {
			t.merge(parent, ci)
		}
	}
	if root := t.nodes.at(t.root); root.n == 0 {
		old := t.root
		if root.leaf != 0 {
			t.root = 0
			t.prefix = nil
		} else {
			t.root = root.kids()[0]
		}
		t.height--
		t.nodes.release(old)
	}
}

// rotateRight moves the parent's item k down to the front of r and l's last
// item up in its place (l and r are children k and k+1).
func (t *poolTree) rotateRight(parent *node, k int, l, r *node) {
	if r.leaf != 0 {
		j := t.extreme(l, true)
		r.refs()[r.n] = parent.refs()[k]
		parent.fps()[k], parent.refs()[k] = t.lift(l.refs()[j])
		leafRemove(l, j)
		r.n++
		return
	}
	n := int(r.n)
	copy(r.fps()[1:n+1], r.fps()[:n])
	copy(r.refs()[1:n+1], r.refs()[:n])
	r.fps()[0], r.refs()[0] = parent.fps()[k], parent.refs()[k]
	ln := int(l.n)
	parent.fps()[k], parent.refs()[k] = l.fps()[ln-1], l.refs()[ln-1]
	if r.leaf == 0 {
		copy(r.kids()[1:n+2], r.kids()[:n+1])
		r.kids()[0] = l.kids()[ln]
	}
	r.n++
	l.n--
}

// rotateLeft moves the parent's item k down to the end of l and r's first
// item up in its place.
func (t *poolTree) rotateLeft(parent *node, k int, l, r *node) {
	if l.leaf != 0 {
		j := t.extreme(r, false)
		l.refs()[l.n] = parent.refs()[k]
		parent.fps()[k], parent.refs()[k] = t.lift(r.refs()[j])
		leafRemove(r, j)
		l.n++
		return
	}
	ln := int(l.n)
	l.fps()[ln], l.refs()[ln] = parent.fps()[k], parent.refs()[k]
	parent.fps()[k], parent.refs()[k] = r.fps()[0], r.refs()[0]
	n := int(r.n)
	if l.leaf == 0 {
		l.kids()[ln+1] = r.kids()[0]
		copy(r.kids()[:n], r.kids()[1:n+1])
	}
	copy(r.fps()[:n-1], r.fps()[1:n])
	copy(r.refs()[:n-1], r.refs()[1:n])
	l.n++
	r.n--
}

// merge joins the parent's children k and k+1 around its item k, which
// leaves the parent.
func (t *poolTree) merge(parent *node, k int) {
	pk := parent.kids()
	lid, rid := pk[k], pk[k+1]
	l, r := t.nodes.at(lid), t.nodes.at(rid)
	ln, rn := int(l.n), int(r.n)
	l.refs()[ln] = parent.refs()[k]
	copy(l.refs()[ln+1:], r.refs()[:rn])
	if l.leaf == 0 {
		l.fps()[ln] = parent.fps()[k]
		copy(l.fps()[ln+1:], r.fps()[:rn])
		copy(l.kids()[ln+1:], r.kids()[:rn+1])
	}
	l.n = uint32(ln + 1 + rn)
	n := int(parent.n)
	copy(parent.fps()[k:n-1], parent.fps()[k+1:n])
	copy(parent.refs()[k:n-1], parent.refs()[k+1:n])
	copy(pk[k+1:n], pk[k+2:n+1])
	parent.n--
	t.nodes.release(rid)
}

// shrinkPrefix shrinks the shared prefix to what key has in common with it
// and recomputes the inner nodes' fingerprints.
func (t *poolTree) shrinkPrefix(key []byte) {
	n := 0
	for n < len(key) && n < len(t.prefix) && key[n] == t.prefix[n] {
		n++
	}
	t.prefix = t.prefix[:n:n]
	t.walk(t.root, func(nd *node) {
		if nd.leaf != 0 {
			return
		}
		fps, refs := nd.fps(), nd.refs()
		for i := range int(nd.n) {
			fps[i] = t.fingerprint(t.ar.key(refs[i]))
		}
	})
}

// walk calls fn for every node below and including id.
func (t *poolTree) walk(id nodeID, fn func(*node)) {
	nd := t.nodes.at(id)
	fn(nd)
	if nd.leaf == 0 {
		for _, k := range nd.kids()[:nd.n+1] {
			t.walk(k, fn)
		}
	}
}

func (t *poolTree) clear() {
	t.nodes.reset()
	t.poolHash.clear()
	t.root, t.height, t.n, t.prefix = 0, 0, 0, nil
	t.pend = t.pend[:0]
}

func (t *poolTree) scan(fn func(key, val []byte) bool) {
	// The pending inserts, sorted, are merged into the tree's order.
	fps, refs := make([]uint64, len(t.pend)), make([]uint64, len(t.pend))
	for i, it := range t.pend {
		fps[i], refs[i] = it.fp, it.r
	}
	t.sortItems(fps, refs)
	j := 0
	emit := func(fp uint64, r ref) bool {
		for ; j < len(fps) && t.less(fps[j], refs[j], fp, r); j++ {
			if !fn(t.ar.key(refs[j]), t.ar.val(refs[j])) {
				return false
			}
		}
		return fn(t.ar.key(r), t.ar.val(r))
	}
	if t.root != 0 && !t.scanNode(t.root, emit) {
		return
	}
	for ; j < len(fps); j++ {
		if !fn(t.ar.key(refs[j]), t.ar.val(refs[j])) {
			return
		}
	}
}

// scanNode calls fn with the items below and including id in order, until
// fn returns false.
func (t *poolTree) scanNode(id nodeID, fn func(fp uint64, r ref) bool) bool {
	nd := t.nodes.at(id)
	var fps, refs []uint64
	if nd.leaf != 0 {
		var fs, rs [leafMax]uint64
		copy(rs[:], nd.refs()[:nd.n])
		for i, r := range rs[:nd.n] {
			fs[i] = t.fingerprint(t.ar.key(r))
		}
		t.sortItems(fs[:nd.n], rs[:nd.n])
		fps, refs = fs[:], rs[:]
	} else {
		fps, refs = nd.fps(), nd.refs()
	}
	for i := range int(nd.n) {
		if nd.leaf == 0 && !t.scanNode(nd.kids()[i], fn) {
			return false
		}
		if !fn(fps[i], refs[i]) {
			return false
		}
	}
	if nd.leaf == 0 {
		return t.scanNode(nd.kids()[nd.n], fn)
	}
	return true
}

// snapshot is the records' snapshot (see poolHash): a base file need not
// be in key order, and reading the records in address order is ten times
// faster than in the tree's.
func (t *poolTree) snapshot() snapshot { return t.poolHash.snapshot() }
