package kvstore

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/tidwall/btree"
)

// poolTree is the pool allocator's ordered engine: records in an arena,
// kept in key order by a B-tree of small items, and found by a hashIndex
// over the same records, as Redis pairs a skiplist with a dict for its
// sorted sets: a point lookup (RGET, REXIST, RMOD, a refused RSET) costs two
// cache misses instead of a descent, and batches of them are prefetched;
// the tree is descended only to insert or delete a key.
//
// Comparing two keys through their records costs a cache miss each, and a
// descent makes a score of comparisons. So every item also carries a
// fingerprint: the eight key bytes that follow the prefix all keys of the
// tree share, big-endian. Keys that share a prefix compare as their
// fingerprints do whenever those differ; only on a tie are the records
// read. With keys such as "bench:key:123456" the prefix is "bench:key:" and
// a descent reads no record at all. The prefix only ever shrinks, when a
// key without it arrives (then every fingerprint is recomputed, once).
type poolTree struct {
	poolHash // the records and their index: get, touch and len come from it
	t        *btree.BTreeG[titem]
	prefix   []byte // shared by every key in the tree; never modified in place
}

type titem struct {
	fp  uint64 // the 8 key bytes after the prefix, zero-padded
	key string // aliases the record's key in the arena
	r   ref
}

func titemLess(a, b titem) bool {
	if a.fp != b.fp {
		return a.fp < b.fp
	}
	return a.key < b.key
}

func newPoolTree() *poolTree {
	return &poolTree{poolHash: *newPoolHash(), t: btree.NewBTreeGOptions(titemLess, btree.Options{NoLocks: true})}
}

func (t *poolTree) fingerprint(key []byte) uint64 {
	var b [8]byte
	copy(b[:], key[len(t.prefix):])
	return binary.BigEndian.Uint64(b[:])
}

// probe returns an item to find key's place in the tree with, or false if
// key lacks the prefix and so is not in the tree. Its key aliases the caller's bytes: the
// tree compares with it and never keeps it.
func (t *poolTree) probe(key []byte) (titem, bool) {
	if t.t.Len() == 0 || !bytes.HasPrefix(key, t.prefix) {
		return titem{}, false
	}
	return titem{fp: t.fingerprint(key), key: unsafe.String(unsafe.SliceData(key), len(key))}, true
}

// item returns the tree item for record r.
func (t *poolTree) item(r ref) titem {
	k := t.ar.key(r)
	return titem{fp: t.fingerprint(k), key: unsafe.String(unsafe.SliceData(k), len(k)), r: r}
}

// admit makes room for key in the tree: it shrinks the shared prefix to
// what key has in common with it, recomputing every fingerprint.
func (t *poolTree) admit(key []byte) {
	if t.t.Len() == 0 {
		t.prefix = bytes.Clone(key)
		return
	}
	if bytes.HasPrefix(key, t.prefix) {
		return
	}
	n := 0
	for n < len(key) && key[n] == t.prefix[n] {
		n++
	}
	t.prefix = t.prefix[:n:n]
	items := make([]titem, 0, t.t.Len())
	t.t.Scan(func(it titem) bool {
		items = append(items, t.item(it.r))
		return true
	})
	t.t.Clear()
	for _, it := range items {
		t.t.Load(it) // in order: Load appends without a search
	}
}

func (t *poolTree) put(key, val []byte, mode putMode) bool {
	s, h, found := t.idx.slot(t.ar, key)
	switch {
	case found && mode == putNew, !found && mode == putExisting:
		return false
	case found && t.ar.fits(s.r, len(key), len(val)):
		t.ar.setVal(s.r, val)
	case found:
		// A new record for the key: the item keeps its place but must
		// alias the new record's key.
		old := s.r
		s.r = t.ar.newRecord(key, val)
		t.t.Set(t.item(s.r))
		t.ar.free(old)
	default:
		t.admit(key)
		r := t.ar.newRecord(key, val)
		t.idx.claim(s, h, r)
		t.t.Set(t.item(r))
	}
	return true
}

func (t *poolTree) appendVal(key, suffix []byte) int {
	s, h, found := t.idx.slot(t.ar, key)
	if !found {
		t.admit(key)
		r := t.ar.newRecord(key, suffix)
		t.idx.claim(s, h, r)
		t.t.Set(t.item(r))
		return len(suffix)
	}
	r, n := t.ar.appendVal(s.r, suffix)
	if r != s.r {
		old := s.r
		s.r = r
		t.t.Set(t.item(r))
		t.ar.free(old)
	}
	return n
}

func (t *poolTree) del(key []byte) bool {
	r, ok := t.idx.remove(t.ar, key)
	if !ok {
		return false
	}
	p, _ := t.probe(key) // the key is in the tree, so it has the prefix
	t.t.Delete(p)
	t.ar.free(r)
	return true
}

func (t *poolTree) clear() {
	t.t.Clear()
	t.idx.reset()
	t.ar.reset()
	t.prefix = nil
}

func (t *poolTree) scan(fn func(key, val []byte) bool) {
	t.t.Scan(func(it titem) bool {
		return fn(t.ar.key(it.r), t.ar.val(it.r))
	})
}

// snapshot is the records' snapshot (see poolHash): a base file need not
// be in key order, and reading the records in address order is ten times
// faster than in the tree's.
func (t *poolTree) snapshot() snapshot { return t.poolHash.snapshot() }
