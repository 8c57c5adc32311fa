package kvstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var tableKinds = map[string]func() table{
	"map":      func() table { return newMapTable() },
	"tree":     func() table { return newTreeTable() },
	"poolHash": func() table { return newPoolHash() },
	"poolTree": func() table { return newPoolTree() },
}

// TestTables drives every table with random operations against a Go map
// as the model, with snapshots taken along the way that must not change
// (several out at once, and a clear while they are), released before the
// last stretch of operations reuses what was freed meanwhile.
func TestTables(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (make test)")
	}
	for name, mk := range tableKinds {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			tab, model := mk(), map[string]string{}
			type snap struct {
				s     snapshot
				model map[string]string
			}
			var snaps []snap
			val := func() []byte {
				// Sizes across classes, some large records.
				n := rng.IntN(100)
				if rng.IntN(50) == 0 {
					n = rng.IntN(200 << 10)
				}
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				return b
			}
			for op := range 40000 {
				k := []byte(fmt.Sprintf("key:%d", rng.IntN(2000)))
				switch {
				case rng.IntN(10) == 0:
					k = append(k, bytes.Repeat([]byte{'x'}, rng.IntN(300))...)
				case op > 3000 && rng.IntN(200) == 0:
					// Keys without the common prefix, later on: the
					// ordered engine's shared prefix shrinks.
					k = []byte(fmt.Sprintf("%d", rng.IntN(50)))
				case op > 6000 && rng.IntN(500) == 0:
					k = []byte{}
				}
				_, inModel := model[string(k)]
				switch rng.IntN(7) {
				case 0, 1:
					v := val()
					if !tab.put(k, v, putAny) {
						t.Fatalf("op %d: put any refused", op)
					}
					model[string(k)] = string(v)
				case 2:
					v := val()
					if got := tab.put(k, v, putNew); got != !inModel {
						t.Fatalf("op %d: put new = %v, key present %v", op, got, inModel)
					}
					if !inModel {
						model[string(k)] = string(v)
					}
				case 3:
					v := val()
					if got := tab.put(k, v, putExisting); got != inModel {
						t.Fatalf("op %d: put existing = %v, key present %v", op, got, inModel)
					}
					if inModel {
						model[string(k)] = string(v)
					}
				case 4:
					if got := tab.del(k); got != inModel {
						t.Fatalf("op %d: del = %v, key present %v", op, got, inModel)
					}
					delete(model, string(k))
				case 5:
					s := val()
					s = s[:min(len(s), rng.IntN(20))]
					n := tab.appendVal(k, s)
					model[string(k)] += string(s)
					if n != len(model[string(k)]) {
						t.Fatalf("op %d: append length %d, want %d", op, n, len(model[string(k)]))
					}
				case 6:
					v, ok := tab.get(k)
					if ok != inModel || string(v) != model[string(k)] {
						t.Fatalf("op %d: get %q = %d bytes %v, want %d bytes %v", op, k, len(v), ok, len(model[string(k)]), inModel)
					}
				}
				if op%5000 == 0 && op <= 25000 {
					snaps = append(snaps, snap{tab.snapshot(), maps.Clone(model)})
				}
				if op == 20000 {
					tab.clear()
					clear(model)
				}
				if op == 30000 {
					for i, s := range snaps {
						checkScan(t, false, fmt.Sprintf("snapshot %d", i), s.s, s.model)
						s.s.release()
					}
					checkTable(t, name, "table at the release", tab, model)
				}
			}
			checkTable(t, name, "table", tab, model)
		})
	}
}

func checkTable(t *testing.T, name, what string, tab table, model map[string]string) {
	t.Helper()
	if tab.len() != len(model) {
		t.Fatalf("%s: len %d, want %d", what, tab.len(), len(model))
	}
	if pt, ok := tab.(*poolTree); ok {
		checkTree(t, what, pt)
	}
	checkScan(t, name == "tree" || name == "poolTree", what, tab, model)
}

// checkScan checks that tab scans as model, in key order if ordered (the
// ordered engines' tables; their snapshots need not be).
func checkScan(t *testing.T, ordered bool, what string, tab interface {
	scan(func(k, v []byte) bool)
}, model map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	var order []string
	tab.scan(func(k, v []byte) bool {
		if model[string(k)] != string(v) || seen[string(k)] {
			t.Fatalf("%s: scan gave %q (%d bytes), seen before %v", what, k, len(v), seen[string(k)])
		}
		seen[string(k)] = true
		order = append(order, string(k))
		return true
	})
	if len(seen) != len(model) {
		t.Fatalf("%s: scan saw %d keys, want %d", what, len(seen), len(model))
	}
	if ordered && !slices.IsSorted(order) {
		t.Fatalf("%s: ordered engine scanned out of order", what)
	}
}

// BenchmarkTablePut stores random keys of a 1 Mi keyspace, as
// redis-benchmark -r 1000000 does. The key is formatted in place so the
// benchmark's own memory traffic stays out of the figure.
func BenchmarkTablePut(b *testing.B) {
	for _, name := range []string{"map", "poolHash", "tree", "poolTree"} {
		b.Run(name, func(b *testing.B) {
			const keys = 1 << 20
			val := bytes.Repeat([]byte("v"), 32)
			tab := tableKinds[name]()
			rng := rand.New(rand.NewPCG(1, 2))
			key := make([]byte, 0, 32)
			b.ReportAllocs()
			for b.Loop() {
				key = strconv.AppendInt(append(key[:0], "key:"...), int64(rng.IntN(keys)), 10)
				tab.put(key, val, putAny)
			}
		})
	}
}

// BenchmarkSnapshot takes a snapshot of a million keys, as a compaction
// does under the lock, then scans it as the base file writer does.
func BenchmarkSnapshot(b *testing.B) {
	for _, name := range []string{"poolHash", "poolTree"} {
		b.Run(name, func(b *testing.B) {
			tab := tableKinds[name]()
			val := bytes.Repeat([]byte("v"), 32)
			rng := rand.New(rand.NewPCG(1, 2))
			var key []byte
			for range 1 << 20 {
				key = strconv.AppendInt(append(key[:0], "key:"...), int64(rng.IntN(1<<30)), 10)
				tab.put(key, val, putAny)
			}
			var taken, scanned time.Duration
			for b.Loop() {
				t0 := time.Now()
				s := tab.snapshot()
				t1 := time.Now()
				n := 0
				s.scan(func(k, v []byte) bool { n += len(k) + len(v); return true })
				taken, scanned = taken+t1.Sub(t0), scanned+time.Since(t1)
				s.release()
				if n == 0 {
					b.Fatal("empty scan")
				}
			}
			b.ReportMetric(float64(taken.Microseconds())/float64(b.N), "µs-snapshot/op")
			b.ReportMetric(float64(scanned.Microseconds())/float64(b.N), "µs-scan/op")
		})
	}
}

// BenchmarkWriteBase writes the base file of a million keys, as a
// compaction does after its snapshot, to io.Discard: the CPU it takes from
// the server's other work.
func BenchmarkWriteBase(b *testing.B) {
	db := newDB(AllocPool)
	val := bytes.Repeat([]byte("v"), 32)
	var key []byte
	for i := range 1 << 20 {
		key = strconv.AppendInt(append(key[:0], "key:"...), int64(i)*7919%(1<<30), 10)
		db.strs.put(key, val, putAny)
	}
	w := bufio.NewWriterSize(io.Discard, 1<<20)
	for b.Loop() {
		s := db.snapshot()
		if err := s.writeTo(w); err != nil {
			b.Fatal(err)
		}
		s.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*db.size()), "ns/key")
}

// BenchmarkTableFill stores keys in order, as a prefill does.
func BenchmarkTableFill(b *testing.B) {
	for _, name := range []string{"poolHash", "poolTree"} {
		b.Run(name, func(b *testing.B) {
			val := bytes.Repeat([]byte("v"), 32)
			tab := tableKinds[name]()
			key := make([]byte, 0, 32)
			i := 0
			for b.Loop() {
				key = fmt.Appendf(key[:0], "key:%012d", i)
				i++
				tab.put(key, val, putNew)
			}
		})
	}
}

// TestSnapshotGivesBackPassedChunks checks that while a snapshot's scan
// is under way, a write to a record in a chunk the scan has passed
// rewrites it in place, one ahead of the scan makes a new record (in a
// chunk mapped since the freeze, which the next write rewrites in place),
// that the scan reads every record as it was at the freeze, that what was
// freed ahead of the scan is reused once it has passed (its copy-on-write
// figure keeping the peak), and that with a second snapshot out nothing is
// rewritten.
func TestSnapshotGivesBackPassedChunks(t *testing.T) {
	tab := newPoolHash()
	old, next := bytes.Repeat([]byte("o"), 200), bytes.Repeat([]byte("n"), 200)
	key := func(i int) []byte { return fmt.Appendf(nil, "key:%08d", i) }
	n := 3 * chunkSize / 200
	for i := range n {
		tab.put(key(i), old, putNew)
	}
	frozen := len(tab.ar.chunks)
	if frozen < 3 {
		t.Fatalf("%d keys fill %d chunks, want 3 or more", n, frozen)
	}
	refOf := func(i int) ref {
		r, ok := tab.idx.lookup(tab.ar, key(i))
		if !ok {
			t.Fatalf("%s is gone", key(i))
		}
		return r
	}
	chunk := func(r ref) int { return int(r >> chunkShift & chunkMask) }

	s := tab.snapshot()
	read := 0
	s.scan(func(k, v []byte) bool {
		if !bytes.Equal(v, old) {
			t.Fatalf("the scan read %s = %.10q..., want the value at the freeze", k, v)
		}
		if read++; read != n/2 {
			return true
		}
		// Half way: the scan is past chunk 0, not past the last.
		var inPlace, ahead int
		for i := range n {
			r := refOf(i)
			tab.put(key(i), next, putAny)
			switch got := refOf(i); {
			case chunk(r) == 0 && got != r:
				t.Fatalf("%s, in a chunk the scan has passed, moved to chunk %d", key(i), chunk(got))
			case chunk(r) == 0:
				inPlace++
			case chunk(r) == frozen-1 && got == r:
				t.Fatalf("%s, in a chunk ahead of the scan, was rewritten in place", key(i))
			case chunk(r) == frozen-1:
				if chunk(got) < frozen {
					t.Fatalf("%s moved to chunk %d, one the snapshot reads", key(i), chunk(got))
				}
				tab.put(key(i), old, putAny)
				if again := refOf(i); again != got {
					t.Fatalf("%s, in a chunk mapped since the freeze, was not rewritten in place", key(i))
				}
				ahead++
			}
		}
		if inPlace == 0 || ahead == 0 {
			t.Fatalf("%d records rewritten behind the scan, %d ahead: want some of each", inPlace, ahead)
		}
		return true
	})
	if read != n {
		t.Fatalf("the scan read %d records, want %d", read, n)
	}
	// The scan is over: a record freed ahead of it is reused.
	tab.put(key(n+1), old, putNew) // of the others' size class
	if r := refOf(n + 1); chunk(r) >= frozen {
		t.Fatalf("a record made after the scan took chunk %d, not a record freed ahead of the scan", chunk(r))
	}
	if cow, _ := s.cow(); cow < int64(n/3*200) {
		t.Fatalf("copy-on-write %d bytes: want the peak of what the snapshot kept, at least a third of the records", cow)
	}

	second := tab.snapshot()
	r := refOf(0)
	tab.put(key(0), old, putAny)
	if refOf(0) == r {
		t.Fatal("a record was rewritten in place with two snapshots out")
	}
	second.release()
	s.release()
	if v, _ := tab.get(key(0)); !bytes.Equal(v, old) {
		t.Fatalf("after the snapshots, %s = %.10q..., want the last write", key(0), v)
	}
}

// TestRetiredSlots checks that a growing index retires the arrays it
// outgrows instead of unmapping them, that a purge unmaps them, and that
// a reset unmaps its arrays at once.
func TestRetiredSlots(t *testing.T) {
	purgeRetired()
	tab := newPoolHash()
	val := []byte("v")
	var key []byte
	for i := range 100_000 {
		key = strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10)
		tab.put(key, val, putAny)
	}
	count := func() int {
		retired.Lock()
		defer retired.Unlock()
		return len(retired.slots)
	}
	if count() == 0 {
		t.Fatal("100,000 keys retired no slot array")
	}
	purgeRetired()
	if n := count(); n != 0 {
		t.Fatalf("%d arrays left after a purge", n)
	}
	tab.clear()
	if n := count(); n != 0 {
		t.Fatalf("a reset retired %d arrays instead of unmapping them", n)
	}
	if tab.len() != 0 {
		t.Fatalf("len %d after clear", tab.len())
	}
}

// After a chunk is taken, the next one is prepared in the background: its
// pages are in memory before anyone touches them, and the next take gets
// it.
func TestChunkPrepared(t *testing.T) {
	first := takeChunk()
	defer unix.Munmap(first)
	first[0] = 1 // a chunk is writable
	waitFor(t, "a prepared chunk", func() bool { return len(readyChunk) == 1 })
	var ready []byte
	select {
	case ready = <-readyChunk:
	default:
		t.Fatal("another taker got the prepared chunk") // no other test takes chunks concurrently
	}
	if n, of := absentPages(t, ready); n > 0 {
		t.Fatalf("%d of the prepared chunk's %d pages are not in memory", n, of)
	}
	readyChunk <- ready
	got := takeChunk()
	defer unix.Munmap(got)
	if unsafe.SliceData(got) != unsafe.SliceData(ready) || len(got) != chunkSize {
		t.Fatal("take mapped a new chunk while one was prepared")
	}
}

// Giving back the chunk prepared ahead takes it off the memory accounting:
// used_memory stayed 4 MiB up after each idle moment that followed a load,
// and maxmemory counted it against the data.
func TestIdleForgetsPreparedChunk(t *testing.T) {
	first := takeChunk()
	defer unmapChunk(first)
	waitFor(t, "a prepared chunk", func() bool { return len(readyChunk) == 1 && !preparing.Load() })
	purgeRetired() // what earlier tests left, so that only the chunk moves the count
	before := offHeapBytes.Load()
	giveBackIdle(newDB(AllocPool))
	if len(readyChunk) != 0 {
		t.Fatal("the prepared chunk is still there after an idle moment")
	}
	if got := before - offHeapBytes.Load(); got != chunkSize {
		t.Fatalf("giving back the prepared chunk took %d bytes off the accounting, want %d", got, chunkSize)
	}
}

// absentPages counts the whole pages of b that are not in memory, of how
// many.
func absentPages(t *testing.T, b []byte) (absent, of int) {
	t.Helper()
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((p+page-1)&^(page-1) - p)
	hi := int((p+uintptr(len(b)))&^(page-1) - p)
	resident := make([]byte, (hi-lo)/int(page))
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[lo])),
		uintptr(hi-lo), uintptr(unsafe.Pointer(unsafe.SliceData(resident)))); errno != 0 {
		t.Fatal(errno)
	}
	return bytes.Count(resident, []byte{0}), len(resident)
}

// The memory a large value is received into is in before the value
// arrives: faulted in a page at a time inside the receive's copy, it was a
// third of the server's time for SETs of 1 MB values.
func TestLargeValueMemoryPrefaulted(t *testing.T) {
	db := newDB(AllocPool)
	// More than any earlier test freed at once, so the heap maps it afresh.
	b := db.takeLarge(24<<20 + 12345)
	if n, of := absentPages(t, b); n > 0 {
		t.Fatalf("%d of the %d pages a large value is to be received into are not in memory", n, of)
	}
	m, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	prefault(m[100:]) // only whole pages: the first is partly outside
	if n, of := absentPages(t, m); n != 1 || of != 256 {
		t.Fatalf("prefault of all but 100 bytes of 256 pages left %d of %d out, want the first alone", n, of)
	}
}
