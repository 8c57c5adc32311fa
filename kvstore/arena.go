package kvstore

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The pool allocator ("--alloc pool", the C kvstore's "mypool") keeps
// records out of the garbage collector's way: key and value are packed into
// one record in 4 MiB chunks mapped outside the Go heap, carved into size
// classes with a free list each. The collector never scans or moves them;
// the index that points at them holds plain integers. Written by hand
// because no library offers an off-heap slab allocator for Go, and because
// this is the memory every benchmark measures.

const (
	chunkShift = 22
	chunkSize  = 1 << chunkShift // two huge pages

	// recordHeader is a record's klen and vlen, both uint32.
	recordHeader = 8

	// maxClassSize is the largest pooled record; larger ones are Go heap
	// allocations (rare, and large enough that the collector's cost per
	// byte is small).
	maxClassSize = 64 << 10

	refLarge   = 1 << 63
	classShift = 56
	offsetMask = 1<<chunkShift - 1
	chunkMask  = 1<<(classShift-chunkShift) - 1
)

// ref locates a record: bit 63 large, bits 56-62 size class, bits 22-55
// chunk, bits 0-21 offset in the chunk. A large record's ref is refLarge
// plus an id.
type ref = uint64

// classSizes are the record sizes: every multiple of 8 up to 128 bytes,
// then steps of about 12.5%, so a record wastes at most an eighth of itself.
var classSizes = func() []uint32 {
	var s []uint32
	for n := uint32(16); n <= 128; n += 8 {
		s = append(s, n)
	}
	for n := uint32(128); n < maxClassSize; {
		n = (n + n/8 + 7) &^ 7
		s = append(s, min(n, maxClassSize))
	}
	return s
}()

// classFor returns the smallest class holding n bytes.
func classFor(n int) int {
	if n <= 128 {
		return max(0, (n+7)/8-2)
	}
	i, _ := slices.BinarySearch(classSizes, uint32(n))
	return i
}

type sizeClass struct {
	size  uint32
	free  []ref  // freed records, reused first
	chunk int    // chunk being carved, -1 if none
	next  uint32 // next free offset in it
}

// records finds records by ref: the part of an arena a snapshot keeps.
type records struct {
	chunks [][]byte
	large  map[uint64][]byte
}

// arena holds records. It is not safe for concurrent mutation; the DB lock
// serializes writers.
//
// A frozen arena (see freeze) can be read through a snapshot's records
// while it goes on changing, as a forked child reads its parent's memory:
// while any snapshot is out, no record it may still read is modified in
// place (fits says no, so a write makes a new record) and no freed record
// it may still read is reused (frees wait in deferred). That costs a
// snapshot nothing but a copy of the chunk list, where copying the arena
// stopped the server for a quarter of a second per million keys.
//
// Which records a snapshot may still read, its scan tells (see
// scanProgress): it reads the chunks in order, so with one snapshot out,
// the records of the chunks it has passed, and of the chunks mapped since
// it froze, are the arena's own again, and so are those freed ahead of the
// scan once it has passed them (waiting, by chunk). Without that, every
// write of a compaction's seconds took fresh memory, and the pages the
// kernel zeroed for it were a quarter of the server's time (BENCHMARKS.md,
// "Persistence jobs under load").
type arena struct {
	records
	used    []uint32 // bytes carved from each chunk
	spare   [][]byte // chunks emptied by reset, reused before mapping more
	classes []sizeClass
	nextBig uint64
	inUse   int64 // bytes of live records, by class size

	frozen   int           // snapshots out
	progress *scanProgress // the scan of the one snapshot out, if one is
	deferred []ref         // records freed while frozen, until thaw
	waiting  [][]ref       // ... or, by chunk, until progress passes it
	given    int           // chunks whose waiting records went back
	orphans  [][]byte      // chunks dropped by a reset while frozen
	// kept is the bytes of records freed while frozen, small and large:
	// what the snapshots out keep alive, as a forked child's pages are
	// copied when its parent writes them (their copy-on-write cost).
	kept int64
	// keptPeak is the most kept has been since the arena was last thawed:
	// what was freed ahead of a scan goes back (giveBack) as the scan
	// passes it, so the cost of a snapshot is its peak.
	keptPeak int64

	born    map[uint64]uint64 // large record id: valuesLent when it was made
	bigFree map[int][][]byte  // freed large records by capacity (see newLarge)
	bigKept int64             // bytes in bigFree
	offered []byte            // a large record to adopt (see DB.offer)
}

// Large records are Go heap slices, and a SET of a large value used to
// leave its predecessor to the collector and take fresh memory for itself:
// the kernel zero-filled that memory page by page as the value was copied
// in (43,000 page faults per 6,000 SETs of 256 KB, where redis-server,
// whose allocator hands the freed block to the next value of its size,
// took 136), and the copy was half the server's time (BENCHMARKS.md,
// "Large values"). So a freed large record is kept, up to bigKeep bytes,
// for the next large record of its size class, unless something may still
// read it: a snapshot (the arena is frozen), or a reply written without
// copying (see reply.go), which holds the value without the lock. Replies
// are not tracked one by one: valuesLent counts the values ever lent to a
// reply, and a record made before the latest loan is left to the
// collector. A workload that reads large values while it overwrites them
// gains nothing; one that only writes them, or only reads, loses nothing.
var valuesLent atomic.Uint64

// bigKeep is the most bytes of freed large records an arena keeps.
const bigKeep = 64 << 20

// bigClass is the size class of a large record's capacity: 16 classes
// between powers of two.
func bigClass(n int) (class, step int) {
	step = 1 << max(0, bits.Len(uint(n))-5)
	return n &^ (step - 1), step
}

// newLarge returns a new large record holding key and val, of room for a
// value of vlen bytes (val is its start), its header written: a kept one
// that is large enough, or new memory.
func (a *arena) newLarge(key, val []byte, vlen int) (ref, []byte) {
	n := recordHeader + len(key) + vlen
	var b []byte
	if o := a.offered; len(o) == n && len(val) == vlen && vlen > 0 && &o[recordHeader+len(key)] == &val[0] {
		// The value was read into place.
		b, a.offered = o, nil
		copy(b[recordHeader:], key)
	} else if b = a.takeKept(n); b != nil {
		copy(b[recordHeader:], key)
		copy(b[recordHeader+len(key):], val)
	} else {
		// Made by append, which leaves uncleared what it is about to
		// overwrite (make clears it: a third of a 256 KB SET's time).
		noteHeap(n)
		h := make([]byte, recordHeader, recordHeader+len(key))
		b = append(append(h, key...), val...)
		if len(b) < n {
			b = append(b, make([]byte, n-len(b))...)
		}
	}
	putHeader(b, len(key), vlen)
	a.nextBig++
	a.large[a.nextBig] = b
	if a.born == nil {
		a.born = make(map[uint64]uint64)
	}
	a.born[a.nextBig] = valuesLent.Load()
	a.inUse += int64(n)
	return refLarge | a.nextBig, b
}

// takeKept returns a kept large record of n bytes, or nil.
func (a *arena) takeKept(n int) []byte {
	c, step := bigClass(n)
	for _, k := range [2]int{c, c + step} {
		if free := a.bigFree[k]; len(free) > 0 && cap(free[len(free)-1]) >= n {
			b := free[len(free)-1][:n]
			a.bigFree[k] = free[:len(free)-1]
			a.bigKept -= int64(cap(b))
			return b
		}
	}
	return nil
}

// keep keeps b, a large record nothing refers to, for a later one, if
// there is room.
func (a *arena) keep(b []byte) {
	if a.bigKept+int64(cap(b)) > bigKeep {
		return
	}
	if a.bigFree == nil {
		a.bigFree = make(map[int][][]byte)
	}
	c, _ := bigClass(cap(b))
	a.bigFree[c] = append(a.bigFree[c], b[:0])
	a.bigKept += int64(cap(b))
}

// freeLarge drops a large record, keeping its memory when nothing can read
// it any more.
func (a *arena) freeLarge(id uint64) {
	b := a.large[id]
	born := a.born[id]
	delete(a.large, id)
	delete(a.born, id)
	a.inUse -= int64(len(b))
	if a.frozen > 0 {
		a.hold(int64(len(b))) // the snapshot's map of large records holds it
	}
	if a.frozen == 0 && born == valuesLent.Load() {
		a.keep(b)
	}
}

func newArena() *arena {
	a := &arena{records: records{large: make(map[uint64][]byte)}}
	a.classes = make([]sizeClass, len(classSizes))
	for i, sz := range classSizes {
		a.classes[i] = sizeClass{size: sz, chunk: -1}
	}
	return a
}

// mapChunk maps a chunk outside the Go heap and asks for huge pages: random
// access over a large dataset is bound by TLB misses otherwise.
func mapChunk() []byte {
	b, err := unix.Mmap(-1, 0, chunkSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		// Out of address space or memory: the Go allocator would have
		// failed the same way, and it panics too.
		panic(fmt.Sprintf("kvstore: mapping a %d-byte chunk: %v", chunkSize, err))
	}
	unix.Madvise(b, unix.MADV_HUGEPAGE) // advisory; ignored where unsupported
	populate(b)
	return b
}

// unmapChunk gives back a chunk that mapChunk mapped, populated.
func unmapChunk(c []byte) {
	offHeapBytes.Add(-chunkSize)
	unix.Munmap(c)
}

// dropPages gives a chunk's pages back to the kernel; the chunk stays
// mapped, and populate takes them again.
func dropPages(c []byte) {
	offHeapBytes.Add(-chunkSize)
	unix.Madvise(c, unix.MADV_DONTNEED)
}

// populate faults a chunk's pages in now, inside a system call. Left to
// the first write, each fault (zeroing, or compacting memory for a huge
// page) would run in the middle of Go code, and a stop-the-world for the
// collector would wait for it: milliseconds of pause.
func populate(b []byte) {
	offHeapBytes.Add(int64(len(b)))           // what the memory accounting counts
	unix.Madvise(b, unix.MADV_POPULATE_WRITE) // Linux 5.14+; ignored before
}

func (a *arena) newChunk() []byte {
	if n := len(a.spare); n > 0 {
		c := a.spare[n-1]
		a.spare = a.spare[:n-1]
		populate(c) // reset gave its pages back
		return c
	}
	return takeChunk()
}

// readyChunk holds a chunk mapped and populated ahead of need, for every
// arena of the process. Populating 4 MiB in the event loop stopped it for
// milliseconds where a page fault costs a hypervisor exit. A goroutine
// prepares the next chunk after each take, so a server holds at most one
// chunk ahead, and none before its first.
var (
	readyChunk = make(chan []byte, 1)
	preparing  atomic.Bool
)

// readyChunkBytes is the memory of the chunk prepared ahead, if any: the
// process's, shared by every server in it.
func readyChunkBytes() int64 { return int64(len(readyChunk)) * chunkSize }

// Memory held ahead of need is given back once the server is idle (the
// cron calls giveBackIdle when a tick finds no command executed since the
// last): the index arrays the tables outgrew (purgeRetired), the chunk
// prepared ahead, and the pages of the chunks being carved that no record
// or node has reached yet, populated when the chunk was mapped. After a
// million-key load those are 24 MB, 4 MB and up to 8 MB (a chunk of
// records and one of tree nodes) beside 100 MB of data; a later
// allocation faults in what it reaches, a page at a time.
func giveBackIdle(db *DB) {
	purgeRetired()
	select {
	case c := <-readyChunk:
		unmapChunk(c)
	default:
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, a := range db.arenas() {
		a.trimTails()
	}
	if t, ok := db.tree.(*poolTree); ok {
		t.nodes.trimTail()
	}
}

// trimTails gives back the pages of the chunks being carved past their
// last record.
func (a *arena) trimTails() {
	for i := range a.classes {
		if c := &a.classes[i]; c.chunk >= 0 {
			trimFrom(a.chunks[c.chunk], int(c.next))
		}
	}
}

// trimFrom gives back the whole pages of chunk from byte off on.
func trimFrom(chunk []byte, off int) {
	if off = (off + pageSize - 1) &^ (pageSize - 1); off < len(chunk) {
		unix.Madvise(chunk[off:], unix.MADV_DONTNEED)
	}
}

// takeChunk returns the prepared chunk, or maps one if none is ready, and
// has the next one prepared.
func takeChunk() []byte {
	var c []byte
	select {
	case c = <-readyChunk:
	default:
		c = mapChunk()
	}
	if preparing.CompareAndSwap(false, true) {
		go func() {
			defer preparing.Store(false)
			next := mapChunk()
			select {
			case readyChunk <- next:
			default: // another was put back meanwhile
				unmapChunk(next)
			}
		}()
	}
	return c
}

// alloc returns a record of klen+vlen bytes with its header written.
func (a *arena) alloc(klen, vlen int) (ref, []byte) {
	n := recordHeader + klen + vlen
	if n > maxClassSize {
		return a.newLarge(make([]byte, klen), nil, vlen)
	}
	ci := classFor(n)
	c := &a.classes[ci]
	if len(c.free) == 0 && a.progress != nil {
		a.giveBack()
	}
	var r ref
	if k := len(c.free); k > 0 {
		r = c.free[k-1]
		c.free = c.free[:k-1]
	} else {
		if c.chunk < 0 || c.next+c.size > chunkSize {
			c.chunk = len(a.chunks)
			c.next = 0
			a.chunks = append(a.chunks, a.newChunk())
			a.used = append(a.used, 0)
		}
		r = uint64(ci)<<classShift | uint64(c.chunk)<<chunkShift | uint64(c.next)
		c.next += c.size
		a.used[c.chunk] = c.next
	}
	a.inUse += int64(c.size)
	b := a.record(r)
	putHeader(b, klen, vlen)
	return r, b
}

// record returns the whole slot of r (header, key, value, spare).
func (a *records) record(r ref) []byte {
	if r&refLarge != 0 {
		return a.large[r&^refLarge]
	}
	size := classSizes[r>>classShift&0x7f]
	chunk := a.chunks[r>>chunkShift&chunkMask]
	off := r & offsetMask
	return chunk[off : off+uint64(size) : off+uint64(size)]
}

func (a *arena) free(r ref) {
	if r&refLarge != 0 {
		// A snapshot's records hold their own map of large records.
		a.freeLarge(r &^ refLarge)
		return
	}
	c := &a.classes[r>>classShift&0x7f]
	a.inUse -= int64(c.size)
	if a.frozen > 0 && !a.own(r) {
		if a.progress != nil {
			i := int(r >> chunkShift & chunkMask)
			a.waiting[i] = append(a.waiting[i], r)
		} else {
			a.deferred = append(a.deferred, r)
		}
		a.hold(int64(c.size))
		return
	}
	c.free = append(c.free, r)
}

// hold counts n bytes more kept alive for a snapshot.
func (a *arena) hold(n int64) {
	a.kept += n
	a.keptPeak = max(a.keptPeak, a.kept)
}

// giveBack returns to their free lists the records freed ahead of the scan
// of the one snapshot out, in the chunks it has passed since.
func (a *arena) giveBack() {
	passed := int(a.progress.passed.Load())
	for ; a.given < passed; a.given++ {
		for _, r := range a.waiting[a.given] {
			c := &a.classes[r>>classShift&0x7f]
			c.free = append(c.free, r)
			a.kept -= int64(c.size)
		}
		a.waiting[a.given] = nil
	}
}

// fits reports whether r's slot holds a record of klen+vlen bytes and may
// be rewritten in place: not while a snapshot may still read it.
func (a *arena) fits(r ref, klen, vlen int) bool {
	return (a.frozen == 0 || a.own(r)) && recordHeader+klen+vlen <= len(a.record(r))
}

// scanProgress is how far the scan of a snapshot has read its chunks.
type scanProgress struct {
	chunks int          // the arena's chunks when it froze
	passed atomic.Int64 // chunks read to the end, set by the scan
}

// own reports whether r, a small record of a frozen arena, is out of the
// reach of the one snapshot out: in a chunk its scan has passed or one
// mapped since it froze. With more than one snapshot out, or after a reset
// (which renumbers the chunks), none is.
func (a *arena) own(r ref) bool {
	p := a.progress
	if p == nil || r&refLarge != 0 {
		return false
	}
	c := int(r >> chunkShift & chunkMask)
	return c >= p.chunks || int64(c) < p.passed.Load()
}

// freeze returns the records as they are now, readable without the lock
// until thaw: every record live now stays as it is until then, or until
// the returned scan progress, the only one while no other snapshot is out,
// says it has been read.
func (a *arena) freeze() (records, *scanProgress) {
	a.frozen++
	a.progress = nil
	var p *scanProgress
	if a.frozen == 1 {
		p = &scanProgress{chunks: len(a.chunks)}
		a.progress, a.waiting, a.given = p, make([][]ref, len(a.chunks)), 0
	} else {
		p = new(scanProgress) // the arena heeds no snapshot's progress now
	}
	return records{chunks: slices.Clone(a.chunks), large: maps.Clone(a.large)}, p
}

// thaw ends a freeze: once no snapshot is out, the records freed meanwhile
// are reused and the chunks a reset dropped are given back.
func (a *arena) thaw() {
	if a.frozen--; a.frozen > 0 {
		return
	}
	a.progress = nil
	for _, rs := range append(a.waiting, a.deferred) {
		for _, r := range rs {
			c := &a.classes[r>>classShift&0x7f]
			c.free = append(c.free, r)
		}
	}
	a.deferred, a.waiting, a.kept, a.keptPeak = nil, nil, 0, 0
	for _, c := range a.orphans {
		dropPages(c)
	}
	a.spare = append(a.spare, a.orphans...)
	a.orphans = nil
}

// key and val return a record's key and value. They alias the arena: valid
// until the record is freed or rewritten.
func (a *records) key(r ref) []byte {
	b := a.record(r)
	klen := binary.LittleEndian.Uint32(b)
	return b[recordHeader : recordHeader+klen : recordHeader+klen]
}

func (a *records) val(r ref) []byte {
	b := a.record(r)
	klen := binary.LittleEndian.Uint32(b)
	vlen := binary.LittleEndian.Uint32(b[4:])
	end := recordHeader + klen + vlen
	return b[recordHeader+klen : end : end]
}

// rewritable reports whether r's value may be replaced in place by one of
// vlen bytes. A large record's never is: its value may be on its way to a
// client without a copy (see reply.go), and its bytes must not change.
// Appending in place stays allowed: it changes no byte of the old value.
func (a *arena) rewritable(r ref, klen, vlen int) bool {
	return r&refLarge == 0 && a.fits(r, klen, vlen)
}

// setVal rewrites a record's value in place; the caller checked rewritable.
func (a *arena) setVal(r ref, val []byte) {
	b := a.record(r)
	klen := binary.LittleEndian.Uint32(b)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(val)))
	copy(b[recordHeader+klen:], val)
}

// newRecord stores key and val in a new record.
func (a *arena) newRecord(key, val []byte) ref {
	if recordHeader+len(key)+len(val) > maxClassSize {
		r, _ := a.newLarge(key, val, len(val))
		return r
	}
	r, b := a.alloc(len(key), len(val))
	copy(b[recordHeader:], key)
	copy(b[recordHeader+len(key):], val)
	return r
}

// appendVal appends suffix to r's value, in place when its slot has room,
// else in a new record half again as large (as append() grows a slice), and
// returns the record's ref and the new value length. The caller frees r if
// the ref changed, once nothing refers to it.
func (a *arena) appendVal(r ref, suffix []byte) (ref, int) {
	key, old := a.key(r), a.val(r)
	n := len(old) + len(suffix)
	if a.fits(r, len(key), n) {
		b := a.record(r)
		copy(b[recordHeader+len(key)+len(old):], suffix)
		putHeader(b, len(key), n)
		return r, n
	}
	nr, b := a.alloc(len(key), n+n/2)
	copy(b[recordHeader:], key)
	copy(b[recordHeader+len(key):], old)
	copy(b[recordHeader+len(key)+len(old):], suffix)
	putHeader(b, len(key), n)
	return nr, n
}

func putHeader(b []byte, klen, vlen int) {
	binary.LittleEndian.PutUint32(b, uint32(klen))
	binary.LittleEndian.PutUint32(b[4:], uint32(vlen))
}

// reset frees every record. Chunks stay mapped (a stale reference can never
// fault) but their pages are returned to the kernel, or, while frozen, once
// the snapshots are done with them.
func (a *arena) reset() {
	frozen, orphans, spare := a.frozen, a.orphans, a.spare
	if frozen > 0 {
		orphans = append(orphans, a.chunks...)
	} else {
		for _, c := range a.chunks {
			dropPages(c)
		}
		spare = append(spare, a.chunks...)
	}
	// Deferred frees go with their chunks.
	*a = *newArena()
	a.frozen, a.orphans, a.spare = frozen, orphans, spare
}

// bytes is the memory the arena holds: mapped chunks and large records.
func (a *arena) bytes() int64 {
	n := int64(len(a.chunks)+len(a.spare)+len(a.orphans)) * chunkSize
	for _, rec := range a.large {
		n += int64(len(rec))
	}
	return n + a.bigKept
}
