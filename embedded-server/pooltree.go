package kvstore

import (
	"unsafe"

	"github.com/tidwall/btree"
)

// poolTree is the pool allocator's ordered engine: a B-tree of small items
// whose records (key and value) live in an arena. An item's key aliases
// its record's key bytes, so comparisons read the arena directly and the
// collector sees pointers it does not follow (they point outside its heap).
type poolTree struct {
	ar *arena
	t  *btree.BTreeG[titem]
}

type titem struct {
	key string // aliases the record's key in the arena
	r   ref
}

func titemLess(a, b titem) bool { return a.key < b.key }

func newPoolTree() *poolTree {
	return &poolTree{ar: newArena(), t: btree.NewBTreeGOptions(titemLess, btree.Options{NoLocks: true})}
}

func tprobe(key []byte) titem {
	return titem{key: unsafe.String(unsafe.SliceData(key), len(key))}
}

// item returns the tree item for record r.
func (t *poolTree) item(r ref) titem {
	k := t.ar.key(r)
	return titem{key: unsafe.String(unsafe.SliceData(k), len(k)), r: r}
}

func (t *poolTree) newRecord(key, val []byte) ref { return t.ar.newRecord(key, val) }

func (t *poolTree) get(key []byte) ([]byte, bool) {
	it, ok := t.t.Get(tprobe(key))
	if !ok {
		return nil, false
	}
	return t.ar.val(it.r), true
}

func (t *poolTree) put(key, val []byte, mode putMode) bool {
	if mode == putExisting {
		it, found := t.t.Get(tprobe(key))
		if !found {
			return false
		}
		if t.ar.fits(it.r, len(key), len(val)) {
			t.ar.setVal(it.r, val)
			return true
		}
	}
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
	it, found := t.t.Get(tprobe(key))
	if !found {
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
	it, ok := t.t.Delete(tprobe(key))
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
	return &poolTree{ar: t.ar.clone(), t: t.t.Copy()}
}
