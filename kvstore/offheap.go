package kvstore

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Large arrays of plain integers (index slots, a snapshot's bitmap of
// live records) live outside the Go heap: a growing index would otherwise leave
// its old arrays behind as garbage, tens of megabytes of it while a million
// keys are inserted, and the collections that follow (a dozen, back to
// back) are what stopped the server for a millisecond at a time. Arrays
// smaller than a page stay on the heap.
const offHeapMin = pageSize

// pageSize is the kernel's page on the machines the server runs on.
const pageSize = 4 << 10

// offHeap returns n zeroed Ts, mapped outside the heap when they fill a
// page or more (mapped true; give them back with freeOffHeap). T must hold
// no pointers: the collector does not scan the mapping. With populate the
// pages are faulted in by the mmap itself, for an array that is about to
// be filled: a page fault apiece, in a virtual machine, made the growth
// of a hash index's shards a tenth of a million-key load.
func offHeap[T any](n int, populate bool) (s []T, mapped bool) {
	size := n * int(unsafe.Sizeof(*new(T)))
	if size < offHeapMin {
		return make([]T, n), false
	}
	flags := unix.MAP_PRIVATE | unix.MAP_ANON
	if populate {
		flags |= unix.MAP_POPULATE
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return make([]T, n), false // the heap will do
	}
	offHeapBytes.Add(mappedSize(size))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// freeOffHeap unmaps s, which offHeap returned with mapped true.
func freeOffHeap[T any](s []T) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), cap(s)*int(unsafe.Sizeof(*new(T))))
	offHeapBytes.Add(-mappedSize(len(b)))
	unix.Munmap(b)
}

// mappedSize is what a mapping of size bytes takes: whole pages (an index
// array of 512 slots is a page and a half).
func mappedSize(size int) int64 { return int64(size+pageSize-1) &^ (pageSize - 1) }

// prefault faults in the whole pages of b, memory about to be written, in
// one system call. A large value is received straight into its record,
// fresh memory the kernel then faults in a page at a time inside the
// copy: on this virtual machine the faults' entries and exits were a
// third of the server's time for SETs of 1 MB values (BENCHMARKS.md,
// "The two event loops and Redis"). Memory already in (a span the Go heap reused) costs a
// walk of its page tables. What a large request may take before it has
// arrived is bounded by its admission (see conn.admit). Ignored before
// Linux 5.14.
func prefault(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((p+pageSize-1)&^(pageSize-1) - p)
	hi := int((p+uintptr(len(b)))&^(pageSize-1) - p)
	if hi-lo >= prefaultMin {
		unix.Madvise(b[lo:hi], unix.MADV_POPULATE_WRITE)
	}
}

// largeMem returns n bytes of fresh memory for a large value to be
// received into, prefaulted.
func largeMem(n int) []byte {
	b := make([]byte, n)
	prefault(b)
	return b
}

// prefaultMin is the least memory prefault asks for: below it the faults
// cost less than the call.
const prefaultMin = 64 << 10
