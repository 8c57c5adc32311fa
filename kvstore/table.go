package kvstore

import (
	"bytes"
	"maps"
	"unsafe"

	"github.com/tidwall/btree"
)

// putMode says which of an upsert, an insert or an update a put is.
type putMode int

const (
	putAny      putMode = iota // SET: store whether or not the key exists
	putNew                     // *SET of the kvstore: only if the key is missing
	putExisting                // *MOD: only if the key exists
)

// table is one engine's map from key to value. The caller holds the DB
// lock. Values returned alias the table's storage: they are read before the
// lock is released and never modified. A table never modifies the bytes of
// a value it has returned, so a snapshot (see snapshot) can be read while
// the table goes on changing.
type table interface {
	get(key []byte) ([]byte, bool)
	// put stores a copy of val under a copy of key, as mode allows, and
	// reports whether it did.
	put(key, val []byte, mode putMode) bool
	// appendVal appends suffix to key's value (creating it) and returns the
	// new length.
	appendVal(key, suffix []byte) int
	del(key []byte) bool
	len() int
	clear()
	// scan calls fn for each entry until fn returns false.
	scan(fn func(key, val []byte) bool)
	// snapshot returns the table at this instant, to be scanned without
	// the lock while the table goes on changing, and released (with the
	// lock held) when done.
	snapshot() snapshot
	// touch prefetches what a lookup of key will read (see poolHash; the
	// ordered engine's inserts prefetch the tree themselves, see
	// poolTree.flush), in passes over a batch, each of which loads one more
	// step of every lookup, so that the batch's cache misses overlap. cur
	// is the lookup's place between passes, zero before the first; more
	// says whether it needs another pass. write says the command changes
	// the table (it may insert or delete). Tables that cannot do better do
	// nothing.
	touch(key []byte, pass int, cur *uint64, write bool) (sink uint64, more bool)
}

// snapshot is a table at one instant.
type snapshot interface {
	scan(fn func(key, val []byte) bool)
	// release gives back what the snapshot holds; the caller holds the DB
	// lock.
	release()
	// cow is the memory the snapshot holds beyond the live dataset so
	// far (its copy-on-write cost); false when it is not known. The
	// caller holds the DB lock.
	cow() (int64, bool)
}

// heapSnapshot is a copy on the Go heap: the collector frees it.
type heapSnapshot struct{ table }

func (heapSnapshot) release() {}

// cow of a copy on the Go heap is not known: its maps are cloned, its
// B-tree's nodes copied as they change, all of it left to the collector.
func (heapSnapshot) cow() (int64, bool) { return 0, false }

// mapTable is a hash table: Go's map, keys as strings, values as their own
// allocations.
type mapTable struct {
	m map[string][]byte
}

func newMapTable() *mapTable { return &mapTable{m: make(map[string][]byte)} }

func (t *mapTable) get(key []byte) ([]byte, bool) {
	v, ok := t.m[string(key)]
	return v, ok
}

func (t *mapTable) put(key, val []byte, mode putMode) bool {
	if mode != putAny {
		_, ok := t.m[string(key)]
		if ok != (mode == putExisting) {
			return false
		}
	}
	t.m[string(key)] = bytes.Clone(nonNil(val))
	return true
}

func (t *mapTable) appendVal(key, suffix []byte) int {
	old := t.m[string(key)]
	// Appending in place within the old value's capacity is safe for
	// snapshots: bytes below a value's length never change.
	v := append(old, suffix...)
	t.m[string(key)] = nonNil(v)
	return len(v)
}

func (t *mapTable) del(key []byte) bool {
	if _, ok := t.m[string(key)]; !ok {
		return false
	}
	delete(t.m, string(key))
	return true
}

// snapshot is a shallow copy: values are never modified below their
// length, so sharing them is safe.
func (t *mapTable) snapshot() snapshot { return heapSnapshot{&mapTable{m: maps.Clone(t.m)}} }

func (t *mapTable) touch([]byte, int, *uint64, bool) (uint64, bool) { return 0, false }
func (t *mapTable) len() int                                        { return len(t.m) }
func (t *mapTable) clear()                                          { clear(t.m) }

func (t *mapTable) scan(fn func(key, val []byte) bool) {
	for k, v := range t.m {
		if !fn(unsafe.Slice(unsafe.StringData(k), len(k)), v) {
			return
		}
	}
}

// nonNil keeps an empty value distinct from a missing one.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// treeTable is the ordered engine, a B-tree (the C kvstore used a red-black
// tree; a B-tree keeps keys in order with far fewer cache misses).
type treeTable struct {
	t *btree.BTreeG[entry]
}

type entry struct {
	key string
	val []byte
}

func entryLess(a, b entry) bool { return a.key < b.key }

func newTreeTable() *treeTable {
	return &treeTable{t: btree.NewBTreeGOptions(entryLess, btree.Options{NoLocks: true})}
}

// probe returns an entry to look key up with. Its key aliases the caller's
// bytes without copying: the tree compares with it and never keeps it.
func probe(key []byte) entry {
	return entry{key: unsafe.String(unsafe.SliceData(key), len(key))}
}

func (t *treeTable) get(key []byte) ([]byte, bool) {
	e, ok := t.t.Get(probe(key))
	return e.val, ok
}

func (t *treeTable) put(key, val []byte, mode putMode) bool {
	if mode == putExisting {
		if _, ok := t.t.Get(probe(key)); !ok {
			return false
		}
	}
	prev, replaced := t.t.Set(entry{key: string(key), val: bytes.Clone(nonNil(val))})
	if replaced && mode == putNew {
		// An insert that finds the key is rare (a conflict); one descent
		// for the common case is worth a second one to undo it.
		t.t.Set(prev)
		return false
	}
	return true
}

func (t *treeTable) appendVal(key, suffix []byte) int {
	e, ok := t.t.Get(probe(key))
	if !ok {
		e.key = string(key)
	}
	e.val = nonNil(append(e.val, suffix...))
	t.t.Set(e)
	return len(e.val)
}

func (t *treeTable) del(key []byte) bool {
	_, ok := t.t.Delete(probe(key))
	return ok
}

// snapshot is the B-tree's copy-on-write copy: O(1) now, nodes are copied
// as either side changes them.
func (t *treeTable) snapshot() snapshot { return heapSnapshot{&treeTable{t: t.t.Copy()}} }

func (t *treeTable) touch([]byte, int, *uint64, bool) (uint64, bool) { return 0, false }
func (t *treeTable) len() int                                        { return t.t.Len() }
func (t *treeTable) clear()                                          { t.t.Clear() }

func (t *treeTable) scan(fn func(key, val []byte) bool) {
	t.t.Scan(func(e entry) bool {
		return fn(unsafe.Slice(unsafe.StringData(e.key), len(e.key)), e.val)
	})
}
