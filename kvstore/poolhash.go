package kvstore

import "math/bits"

// poolHash is the pool allocator's hash table: records in an arena, found
// through a hashIndex.
type poolHash struct {
	ar  *arena
	idx hashIndex
}

func newPoolHash() *poolHash {
	return &poolHash{ar: newArena(), idx: newHashIndex()}
}

func (t *poolHash) touch(key []byte, pass int, cur *uint64, _ bool) (uint64, bool) {
	t.idx.touch(t.ar, key, pass, cur)
	return 0, pass == 0
}

// reserve makes room in the index for n keys in all (see
// hashIndex.reserve).
func (t *poolHash) reserve(n int) { t.idx.reserve(n) }

func (t *poolHash) get(key []byte) ([]byte, bool) {
	r, ok := t.idx.lookup(t.ar, key)
	if !ok {
		return nil, false
	}
	return t.ar.val(r), true
}

func (t *poolHash) put(key, val []byte, mode putMode) bool {
	s, h, found := t.idx.slot(t.ar, key)
	switch {
	case found && mode == putNew, !found && mode == putExisting:
		return false
	case found && t.ar.rewritable(s.ref(), len(key), len(val)):
		t.ar.setVal(s.ref(), val)
	case found:
		old := s.ref()
		s.setRef(t.ar.newRecord(key, val))
		t.ar.free(old)
	default:
		t.idx.claim(s, h, t.ar.newRecord(key, val))
	}
	return true
}

func (t *poolHash) appendVal(key, suffix []byte) int {
	s, h, found := t.idx.slot(t.ar, key)
	if !found {
		t.idx.claim(s, h, t.ar.newRecord(key, suffix))
		return len(suffix)
	}
	r, n := t.ar.appendVal(s.ref(), suffix)
	if old := s.ref(); r != old {
		t.ar.free(old)
		s.setRef(r)
	}
	return n
}

func (t *poolHash) del(key []byte) bool {
	r, ok := t.idx.remove(t.ar, key)
	if ok {
		t.ar.free(r)
	}
	return ok
}

func (t *poolHash) len() int { return t.idx.n }

func (t *poolHash) clear() {
	t.ar.reset()
	t.idx.reset()
}

func (t *poolHash) scan(fn func(key, val []byte) bool) {
	t.idx.refs(func(r ref) bool { return fn(t.ar.key(r), t.ar.val(r)) })
}

// snapshot freezes the arena and the index, both under the lock and
// neither copied: the arena's records and the index's slots are
// copy-on-write until release (see arena.freeze, hashIndex.freeze), so
// the clients are stopped for the time of flipping a few hundred flags,
// where marking each record in a bitmap there took a random access per
// key, tens of milliseconds per million keys (BenchmarkSnapshot). The
// bitmap, by address, one bit per 8 bytes of arena (1/64 of it, outside
// the Go heap), is built from the frozen slots by the scan, without the
// lock; the scan then reads the arena in address order, a fraction of
// the time of reading the records in the index's order, a cache miss
// each.
func (t *poolHash) snapshot() snapshot {
	recs, progress := t.ar.freeze()
	return &poolSnapshot{recs: recs, progress: progress, ar: t.ar, keptAt: t.ar.kept, idx: &t.idx, shards: t.idx.freeze()}
}

// liveWords is the bitmap words of one chunk.
const liveWords = chunkSize / 8 / 64

// poolSnapshot is a poolHash at one instant: its records, read through the
// frozen arena.
type poolSnapshot struct {
	recs     records
	progress *scanProgress // what scan has read (see arena.own)
	// shards are the index's slots when it froze (hashIndex.freeze);
	// live, class and large are built from them by mark.
	shards [][]hslot
	live   []uint64 // bit i of word w: record at offset 8(64w+i) of the arena
	mapped bool
	class  []uint8 // each chunk's size class
	large  []ref
	marked bool
	ar     *arena
	idx    *hashIndex
	keptAt int64 // the arena's kept bytes when it froze
}

// cow is what the snapshots out cost beyond the dataset so far: the
// records freed since this one froze, which it keeps alive, the index's
// arrays the snapshots hold alone, and its bitmap (built by the scan, of
// a size known at the freeze). The caller holds the DB lock (read or
// write).
func (s *poolSnapshot) cow() (int64, bool) {
	return s.ar.keptPeak - s.keptAt + s.idx.detachedBytes() + int64(len(s.recs.chunks))*liveWords*8, true
}

// mark builds the bitmap of the records the frozen slots name.
func (s *poolSnapshot) mark() {
	if s.marked {
		return
	}
	s.marked = true
	n := len(s.recs.chunks)
	s.live, s.mapped = offHeap[uint64](n*liveWords, false)
	s.class = make([]uint8, n)
	for _, slots := range s.shards {
		for _, sl := range slots {
			if sl.empty() {
				continue
			}
			r := sl.ref()
			if r&refLarge != 0 {
				s.large = append(s.large, r)
				continue
			}
			c, slot := r>>chunkShift&chunkMask, r&offsetMask/8
			s.class[c] = uint8(r >> classShift & 0x7f) // one class per chunk
			s.live[c*liveWords+slot/64] |= 1 << (slot % 64)
		}
	}
}

func (s *poolSnapshot) scan(fn func(key, val []byte) bool) {
	s.mark()
	for w, word := range s.live {
		c, base := w/liveWords, w%liveWords*64
		if base == 0 {
			s.progress.passed.Store(int64(c)) // every record before chunk c is read
		}
		for word != 0 {
			off := uint64(base+bits.TrailingZeros64(word)) * 8
			word &= word - 1
			r := uint64(s.class[c])<<classShift | uint64(c)<<chunkShift | off
			if !fn(s.recs.key(r), s.recs.val(r)) {
				return
			}
		}
	}
	s.progress.passed.Store(int64(len(s.recs.chunks)))
	for _, r := range s.large {
		if !fn(s.recs.key(r), s.recs.val(r)) {
			return
		}
	}
}

func (s *poolSnapshot) release() {
	s.ar.thaw()
	if s.mapped {
		freeOffHeap(s.live)
	}
	s.idx.thaw()
	s.live, s.shards = nil, nil
}
