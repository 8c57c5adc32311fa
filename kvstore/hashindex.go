package kvstore

import (
	"bytes"
	"hash/maphash"
	"sync"
	"unsafe"
)

// hashIndex maps keys to records of an arena by open addressing (linear
// probing, backward-shift deletion) over slots that hold part of the key's
// hash and the record's ref (hslot): no pointers for the collector, and a
// probe reads a record only when the hashes match. It is split into shards
// that grow independently, so a growth rehashes 1/256 of the keys: a pause
// of microseconds, not a stall of the whole table. Written by hand because
// Go's map would hold a Go string per key (a pointer for the collector to
// trace, and an extra cache miss per lookup).
type hashIndex struct {
	seed   maphash.Seed
	shards [hashShards]hashShard
	n      int
	// frozen counts the snapshots out (freeze, thaw). While any is, the
	// shards' slots are copy-on-write, as a forked child's pages: a shard
	// whose slots a snapshot holds is shared, and its first change copies
	// them (own); the arrays left to the snapshots are detached, and
	// retired once the last snapshot is released.
	frozen   int
	detached []hashShard
}

const (
	hashShards     = 256
	hashShardShift = 56 // shard = top 8 bits of the hash
	minShardSlots  = 8
)

type hashShard struct {
	slots  []hslot // len is a power of two, at most 1<<31; h == 0 marks an empty slot
	n      int
	mapped bool // slots are outside the heap (see offHeap)
	shared bool // a snapshot holds slots: a change copies them first (own)
}

// dropSlots lets go of a shard's slots: a grown shard's old array is
// retired (see retired), a reset's are unmapped at once, as FLUSHALL gives
// the arena's pages back at once.
func dropSlots(sh *hashShard, now bool) {
	switch {
	case !sh.mapped:
	case now:
		freeOffHeap(sh.slots)
	default:
		retireSlots(sh.slots)
	}
	sh.slots, sh.mapped = nil, false
}

// Unmapping is slow in a virtual machine: every munmap makes the kernel
// flush the TLB of each processor the process runs on, an interrupt and a
// wait each. A million-key load grows the index's shards about a thousand
// times, and unmapping the outgrown arrays on the spot took 14-16% of the
// server's time; from another thread while the event loop ran, 8%. So they
// are retired here and unmapped by the server's cron when it is idle, as
// jemalloc purges freed pages in the background. What waits is bounded by
// the index's own size (the arrays a shard outgrew add up to less than the
// one it has): about 24 MB for a million keys, until the first idle tenth
// of a second.
var retired struct {
	sync.Mutex
	slots [][]hslot
}

func retireSlots(s []hslot) {
	retired.Lock()
	retired.slots = append(retired.slots, s)
	retired.Unlock()
}

// purgeRetired unmaps the retired arrays.
func purgeRetired() {
	retired.Lock()
	slots := retired.slots
	retired.slots = nil
	retired.Unlock()
	for _, s := range slots {
		freeOffHeap(s)
	}
}

// hslot is a slot of 12 bytes: the low 32 bits of its key's hash and its
// record's ref, in halves so that the slots pack at 4-byte alignment. With
// a 64-bit hash beside the ref a slot took 16, and a million keys' index
// (shards of 8,192 slots, half full just after they grew) 33.5 bytes a
// key, a quarter of what a key costs; now 25. The shard is the hash's top
// 8 bits, so a slot tells keys apart by 39 bits of hash: a probe reads a
// record whose key is not the one sought once in 2^31 hash compares.
type hslot struct {
	h        uint32 // tag of the key's hash; 0 marks an empty slot
	rlo, rhi uint32 // the ref
}

func (s *hslot) ref() ref            { return ref(s.rhi)<<32 | ref(s.rlo) }
func (s *hslot) setRef(r ref)        { s.rlo, s.rhi = uint32(r), uint32(r>>32) }
func (s *hslot) home() uint64        { return uint64(s.h) }
func (s *hslot) empty() bool         { return s.h == 0 }
func (s *hslot) holds(h uint64) bool { return s.h == tag(h) }

// tag is what a slot keeps of hash h: its low 32 bits, the slot number's
// (a shard has at most 1<<31 slots), with bit 31 set, so never 0.
func tag(h uint64) uint32 { return uint32(h) | 1<<31 }

func newHashIndex() hashIndex { return hashIndex{seed: maphash.MakeSeed()} }

func (x *hashIndex) hash(key []byte) uint64 {
	// The slot keeps a tag with a bit set that the slot number is not taken
	// from (see tag): setting bit 0 of the hash made every home slot odd,
	// and linear probing over half the slots made runs long enough to
	// double the cost of a lookup.
	return maphash.Bytes(x.seed, key)
}

// locate finds key: its shard, and the index of its slot or of the empty
// slot where it would go. A shard not yet allocated has no slots.
func (x *hashIndex) locate(ar *arena, key []byte) (sh *hashShard, i, h uint64, found bool) {
	h = x.hash(key)
	sh = &x.shards[h>>hashShardShift]
	if sh.slots == nil {
		return sh, 0, h, false
	}
	mask := uint64(len(sh.slots) - 1)
	for i = h & mask; ; i = (i + 1) & mask {
		s := &sh.slots[i]
		if s.empty() {
			return sh, i, h, false
		}
		if s.holds(h) && bytes.Equal(ar.key(s.ref()), key) {
			return sh, i, h, true
		}
	}
}

// slot returns where key's record is, or where it would go if it is not
// there (found false). An empty slot returned is not claimed until claim.
func (x *hashIndex) slot(ar *arena, key []byte) (s *hslot, h uint64, found bool) {
	sh, i, h, found := x.locate(ar, key)
	if sh.slots == nil {
		sh.slots = make([]hslot, minShardSlots)
		i = h & (minShardSlots - 1)
	}
	x.own(sh)
	return &sh.slots[i], h, found
}

// claim fills the empty slot s, returned by slot for hash h, with r. It may
// grow the shard: s is not valid after it.
func (x *hashIndex) claim(s *hslot, h uint64, r ref) {
	s.h = tag(h)
	s.setRef(r)
	sh := &x.shards[h>>hashShardShift]
	sh.n++
	x.n++
	if sh.n*4 > len(sh.slots)*3 {
		x.resize(sh, 2*len(sh.slots), true)
	}
}

// lookup returns key's record.
func (x *hashIndex) lookup(ar *arena, key []byte) (ref, bool) {
	sh, i, _, found := x.locate(ar, key)
	if !found {
		return 0, false
	}
	return sh.slots[i].ref(), true
}

// touch prefetches the memory a lookup of key will read: in pass 0 its
// home slot's line and the next (a key is often a few slots past its home
// slot: linear probing at a load of up to 3/4), keeping the hash in *cur;
// in pass 1 the record of the first slot with the key's hash. Touching
// every key of a pipelined batch before executing it lets the processor
// wait for many cache misses at once instead of one after another.
// Prefetch instructions, not loads: a load that misses holds its place in
// the reorder buffer until the data comes, so the hashing of the following
// keys soon fills the buffer and only three or four misses overlap; a
// prefetch retires at once.
func (x *hashIndex) touch(ar *arena, key []byte, pass int, cur *uint64) {
	h := *cur
	if pass == 0 {
		h = x.hash(key)
		*cur = h
	}
	sh := &x.shards[h>>hashShardShift]
	if sh.slots == nil {
		return
	}
	mask := uint64(len(sh.slots) - 1)
	i := h & mask
	if pass == 0 {
		at := uintptr(unsafe.Pointer(&sh.slots[i]))
		prefetch(at)
		prefetch(at + 64)
		return
	}
	for n := 0; n < touchProbes; n, i = n+1, (i+1)&mask {
		s := &sh.slots[i]
		if s.empty() {
			return
		}
		if !s.holds(h) {
			continue
		}
		// The record's first line and its last (most records of small
		// values straddle two: a slot of 56 bytes for a 16-byte key and
		// a 32-byte value); a longer value streams from memory anyway.
		rec := ar.record(s.ref())
		first := uintptr(unsafe.Pointer(unsafe.SliceData(rec)))
		prefetch(first)
		if last := first + uintptr(min(len(rec), 128)) - 1; last/64 != first/64 {
			prefetch(last)
		}
		return
	}
}

// touchProbes is how far along a probe run touch looks: the two lines it
// prefetched hold at least four slots past the home one.
const touchProbes = 5

// remove deletes key and returns its record.
func (x *hashIndex) remove(ar *arena, key []byte) (ref, bool) {
	sh, i, _, found := x.locate(ar, key)
	if !found {
		return 0, false
	}
	x.own(sh)
	r := sh.slots[i].ref()
	sh.n--
	x.n--
	// Backward-shift deletion: pull later entries of the probe run into
	// the hole when their home slot allows it, so no tombstones are left.
	mask := uint64(len(sh.slots) - 1)
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := sh.slots[j]
		if s.empty() {
			break
		}
		home := s.home() & mask
		if (j-home)&mask >= (j-i)&mask {
			sh.slots[i] = s
			i = j
		}
	}
	sh.slots[i] = hslot{}
	return r, true
}

// reserve makes room for n keys in all, spread evenly over the shards, so
// that inserting them grows no shard: a replay of a log that creates a
// million keys would otherwise grow each shard ten times, moving every
// slot each time and faulting in arrays that are dropped at once. Slots
// are mapped outside the heap: a page of them no key lands on costs
// address space, not memory.
func (x *hashIndex) reserve(n int) {
	per := (n + hashShards - 1) / hashShards
	want := minShardSlots
	for want*3 < per*4 { // the load at which claim grows a shard
		want *= 2
	}
	for i := range x.shards {
		if sh := &x.shards[i]; len(sh.slots) < want {
			x.resize(sh, want, false)
		}
	}
}

// resize moves the shard's slots into an array of size slots, a power of
// two holding them all; populate: its pages are faulted in at once (see
// offHeap), as a growth fills them all.
func (x *hashIndex) resize(sh *hashShard, size int, populate bool) {
	old := *sh
	sh.slots, sh.mapped, sh.shared = nil, false, false
	sh.slots, sh.mapped = offHeap[hslot](size, populate)
	mask := uint64(len(sh.slots) - 1)
	for _, s := range old.slots {
		if s.empty() {
			continue
		}
		i := s.home() & mask
		for !sh.slots[i].empty() {
			i = (i + 1) & mask
		}
		sh.slots[i] = s
	}
	x.drop(&old)
}

// drop lets go of a shard's old slots: retired (dropSlots), or detached
// when a snapshot holds them.
func (x *hashIndex) drop(old *hashShard) {
	if old.shared {
		x.detached = append(x.detached, *old)
		return
	}
	dropSlots(old, false)
}

// own makes sh's slots its own before a change: a copy, when a snapshot
// holds them, the old array detached. The copy is of one shard, 1/256 of
// the index, at the first change of each shard after a snapshot.
func (x *hashIndex) own(sh *hashShard) {
	if !sh.shared {
		return
	}
	old := *sh
	sh.slots, sh.mapped = offHeap[hslot](len(old.slots), true)
	copy(sh.slots, old.slots)
	sh.shared = false
	x.detached = append(x.detached, old)
}

// freeze returns every shard's slots as they are now, readable without
// the lock until thaw: no change touches them meanwhile (own). The caller
// holds the write lock.
func (x *hashIndex) freeze() [][]hslot {
	x.frozen++
	out := make([][]hslot, hashShards)
	for i := range x.shards {
		sh := &x.shards[i]
		out[i], sh.shared = sh.slots, sh.slots != nil
	}
	return out
}

// thaw ends a freeze: once no snapshot is out, the detached arrays are
// retired and the shards are their own again.
func (x *hashIndex) thaw() {
	if x.frozen--; x.frozen > 0 {
		return
	}
	for i := range x.detached {
		dropSlots(&x.detached[i], false)
	}
	x.detached = nil
	for i := range x.shards {
		x.shards[i].shared = false
	}
}

// detachedBytes is the bytes of the arrays the snapshots out hold alone:
// the index's copy-on-write.
func (x *hashIndex) detachedBytes() int64 {
	var n int64
	for _, d := range x.detached {
		n += int64(len(d.slots)) * int64(unsafe.Sizeof(hslot{}))
	}
	return n
}

// refs calls fn with every record until fn returns false.
func (x *hashIndex) refs(fn func(ref) bool) {
	for i := range x.shards {
		for _, s := range x.shards[i].slots {
			if !s.empty() && !fn(s.ref()) {
				return
			}
		}
	}
}

func (x *hashIndex) reset() {
	for i := range x.shards {
		if sh := &x.shards[i]; sh.shared {
			x.detached = append(x.detached, *sh)
		} else {
			dropSlots(sh, true)
		}
	}
	x.shards = [hashShards]hashShard{}
	x.n = 0
}
