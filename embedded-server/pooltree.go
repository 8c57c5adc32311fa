package kvstore

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/tidwall/btree"
)

// poolTree is the pool allocator's ordered engine: a B-tree of small items
// whose records (key and value) live in an arena.
//
// Comparing two keys through their records costs a cache miss each, and a
// descent makes a score of comparisons. So every item also carries a
// fingerprint: the eight key bytes that follow the prefix all keys of the
// tree share, big-endian. Keys that share a prefix compare as their
// fingerprints do whenever those differ; only on a tie are the records
// read. With keys such as "bench:key:123456" the prefix is "bench:key:" and
// a descent reads no record at all. The prefix only ever shrinks, when a
// key without it arrives (then every fingerprint is recomputed, once), and
// a probe without the prefix cannot be in the tree.
type poolTree struct {
	ar     *arena
	t      *btree.BTreeG[titem]
	prefix []byte // shared by every key in the tree; never modified in place
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
	return &poolTree{ar: newArena(), t: btree.NewBTreeGOptions(titemLess, btree.Options{NoLocks: true})}
}

func (t *poolTree) fingerprint(key []byte) uint64 {
	var b [8]byte
	copy(b[:], key[len(t.prefix):])
	return binary.BigEndian.Uint64(b[:])
}

// probe returns an item to look key up with, or false if key lacks the
// prefix and so is not in the tree. Its key aliases the caller's bytes: the
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

func (t *poolTree) newRecord(key, val []byte) ref { return t.ar.newRecord(key, val) }

func (t *poolTree) get(key []byte) ([]byte, bool) {
	p, ok := t.probe(key)
	if !ok {
		return nil, false
	}
	it, ok := t.t.Get(p)
	if !ok {
		return nil, false
	}
	return t.ar.val(it.r), true
}

func (t *poolTree) put(key, val []byte, mode putMode) bool {
	if mode == putExisting {
		p, ok := t.probe(key)
		if !ok {
			return false
		}
		it, found := t.t.Get(p)
		if !found {
			return false
		}
		if t.ar.fits(it.r, len(key), len(val)) {
			t.ar.setVal(it.r, val)
			return true
		}
	}
	t.admit(key)
	// One descent: write the record, then insert or replace its item.
	r := t.newRecord(key, val)
	prev, replaced := t.t.Set(t.item(r))
	switch {
	case replaced && mode == putNew:
		// A conflict is rare; undoing it costs a second descent.
		t.t.Set(prev)
		t.ar.free(r)
		return false
	case replaced:
		t.ar.free(prev.r)
	}
	return true
}

func (t *poolTree) appendVal(key, suffix []byte) int {
	p, ok := t.probe(key)
	var it titem
	if ok {
		it, ok = t.t.Get(p)
	}
	if !ok {
		t.admit(key)
		t.t.Set(t.item(t.newRecord(key, suffix)))
		return len(suffix)
	}
	r, n := t.ar.appendVal(it.r, suffix)
	if r != it.r {
		// Same key, new record: the item keeps its place.
		t.t.Set(t.item(r))
		t.ar.free(it.r)
	}
	return n
}

func (t *poolTree) del(key []byte) bool {
	p, ok := t.probe(key)
	if !ok {
		return false
	}
	it, ok := t.t.Delete(p)
	if ok {
		t.ar.free(it.r)
	}
	return ok
}

func (t *poolTree) touch([]byte, int) uint64 { return 0 }
func (t *poolTree) len() int                 { return t.t.Len() }

func (t *poolTree) clear() {
	t.t.Clear()
	t.ar.reset()
	t.prefix = nil
}

func (t *poolTree) scan(fn func(key, val []byte) bool) {
	t.t.Scan(func(it titem) bool {
		return fn(t.ar.key(it.r), t.ar.val(it.r))
	})
}

// snapshot returns a copy that can be scanned while t goes on changing. The
// copy's items still alias the live arena, so it reads keys and values
// through refs into its own copy of the arena, never through item keys.
func (t *poolTree) snapshot() table {
	return &poolTree{ar: t.ar.clone(), t: t.t.Copy(), prefix: t.prefix}
}
