package kvstore

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// poolHash is the pool allocator's hash table: records in an arena, indexed
// by open addressing (linear probing, backward-shift deletion) over slots
// that hold the key's full 64-bit hash and the record's ref: no pointers
// for the collector, and a probe touches the record only when the hashes
// match. The index is split into shards that grow independently, so a
// growth rehashes 1/256 of the keys: a pause of microseconds, not a stall
// of the whole table. Written by hand because Go's map would hold a Go
// string per key (a pointer for the collector to trace, and an extra cache
// miss per lookup).
type poolHash struct {
	ar     *arena
	seed   maphash.Seed
	shards [hashShards]hashShard
	n      int
}

const (
	hashShards     = 256
	hashShardShift = 56 // shard = top 8 bits of the hash
	minShardSlots  = 8
)

type hashShard struct {
	slots []hslot // len is a power of two; h == 0 marks an empty slot
	n     int
}

type hslot struct {
	h uint64
	r ref
}

func newPoolHash() *poolHash {
	return &poolHash{ar: newArena(), seed: maphash.MakeSeed()}
}

func (t *poolHash) hash(key []byte) uint64 {
	return maphash.Bytes(t.seed, key) | 1 // never 0, the empty mark
}

// find returns the shard, the slot index where key is or would go, and
// whether it is there.
func (t *poolHash) find(key []byte) (*hashShard, uint64, bool) {
	h := t.hash(key)
	sh := &t.shards[h>>hashShardShift]
	if sh.slots == nil {
		sh.slots = make([]hslot, minShardSlots)
	}
	mask := uint64(len(sh.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &sh.slots[i]
		if s.h == 0 {
			s.h = h // tentatively, for put; callers that do not insert undo it
			return sh, i, false
		}
		if s.h == h && bytes.Equal(t.ar.key(s.r), key) {
			return sh, i, true
		}
	}
}

// lookup finds key without claiming an empty slot.
func (t *poolHash) lookup(key []byte) (ref, bool) {
	h := t.hash(key)
	sh := &t.shards[h>>hashShardShift]
	if sh.slots == nil {
		return 0, false
	}
	mask := uint64(len(sh.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &sh.slots[i]
		if s.h == 0 {
			return 0, false
		}
		if s.h == h && bytes.Equal(t.ar.key(s.r), key) {
			return s.r, true
		}
	}
}

// touch loads the memory a lookup of key will read: its slot in pass 0,
// the record the slot points at in pass 1. Touching every key of a
// pipelined batch before executing it lets the processor wait for many
// cache misses at once instead of one after another. The result only keeps
// the loads from being optimized away.
func (t *poolHash) touch(key []byte, pass int) uint64 {
	h := t.hash(key)
	sh := &t.shards[h>>hashShardShift]
	if sh.slots == nil {
		return 0
	}
	s := sh.slots[h&uint64(len(sh.slots)-1)]
	if pass == 0 || s.h != h {
		return s.h
	}
	return uint64(t.ar.record(s.r)[0])
}

func (t *poolHash) get(key []byte) ([]byte, bool) {
	r, ok := t.lookup(key)
	if !ok {
		return nil, false
	}
	return t.ar.val(r), true
}

func (t *poolHash) put(key, val []byte, mode putMode) bool {
	sh, i, found := t.find(key)
	s := &sh.slots[i]
	switch {
	case found && mode == putNew:
		return false
	case !found && mode == putExisting:
		s.h = 0
		return false
	case found:
		if t.ar.fits(s.r, len(key), len(val)) {
			t.ar.setVal(s.r, val)
			return true
		}
		t.ar.free(s.r)
		s.r = t.newRecord(key, val)
		return true
	}
	s.r = t.newRecord(key, val)
	sh.n++
	t.n++
	if sh.n*4 > len(sh.slots)*3 {
		sh.grow()
	}
	return true
}

func (t *poolHash) newRecord(key, val []byte) ref { return t.ar.newRecord(key, val) }

func (t *poolHash) appendVal(key, suffix []byte) int {
	sh, i, found := t.find(key)
	s := &sh.slots[i]
	if !found {
		s.r = t.newRecord(key, suffix)
		sh.n++
		t.n++
		if sh.n*4 > len(sh.slots)*3 {
			sh.grow()
		}
		return len(suffix)
	}
	r, n := t.ar.appendVal(s.r, suffix)
	if r != s.r {
		t.ar.free(s.r)
		s.r = r
	}
	return n
}

func (t *poolHash) del(key []byte) bool {
	h := t.hash(key)
	sh := &t.shards[h>>hashShardShift]
	if sh.slots == nil {
		return false
	}
	mask := uint64(len(sh.slots) - 1)
	i := h & mask
	for {
		s := &sh.slots[i]
		if s.h == 0 {
			return false
		}
		if s.h == h && bytes.Equal(t.ar.key(s.r), key) {
			break
		}
		i = (i + 1) & mask
	}
	t.ar.free(sh.slots[i].r)
	sh.n--
	t.n--
	// Backward-shift deletion: pull later entries of the probe run into
	// the hole when their home slot allows it, so no tombstones are left.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := sh.slots[j]
		if s.h == 0 {
			break
		}
		home := s.h & mask
		if (j-home)&mask >= (j-i)&mask {
			sh.slots[i] = s
			i = j
		}
	}
	sh.slots[i] = hslot{}
	return true
}

func (sh *hashShard) grow() {
	old := sh.slots
	sh.slots = make([]hslot, 2*len(old))
	mask := uint64(len(sh.slots) - 1)
	for _, s := range old {
		if s.h == 0 {
			continue
		}
		i := s.h & mask
		for sh.slots[i].h != 0 {
			i = (i + 1) & mask
		}
		sh.slots[i] = s
	}
}

func (t *poolHash) len() int { return t.n }

func (t *poolHash) clear() {
	t.ar.reset()
	t.shards = [hashShards]hashShard{}
	t.n = 0
}

func (t *poolHash) scan(fn func(key, val []byte) bool) {
	for i := range t.shards {
		for _, s := range t.shards[i].slots {
			if s.h != 0 && !fn(t.ar.key(s.r), t.ar.val(s.r)) {
				return
			}
		}
	}
}

// snapshot returns a copy that can be scanned while t goes on changing.
func (t *poolHash) snapshot() table {
	c := &poolHash{ar: t.ar.clone(), seed: t.seed, n: t.n}
	for i := range t.shards {
		c.shards[i] = hashShard{slots: slices.Clone(t.shards[i].slots), n: t.shards[i].n}
	}
	return c
}
