package iouring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	pbufRingInc = 2 // IOU_PBUF_RING_INC
)

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// ringBuf is struct io_uring_buf, one entry of a buffer ring.
type ringBuf struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16 // entry 0's resv is the ring's tail
}

// BufRing is a ring of provided buffers, all of one size, registered with a
// Ring as group Group: receives with SQEBufferSelect take their buffer from
// it, and the completion names the buffer. The buffers and the ring live
// outside the Go heap.
type BufRing struct {
	Group       uint16
	size        int
	mask        uint16
	ring        []byte
	entries     []ringBuf
	data        []byte
	tail        uint16
	bid0        uint16 // the bid last written to entry 0 (see publish)
	used        []int  // bytes of each buffer already received into
	incremental bool
}

// RegisterBufRing maps n buffers of size bytes (n a power of two, at most
// 32768) and registers them as group bgid. It asks for incremental
// consumption (IOU_PBUF_RING_INC, Linux 6.12): a receive then takes only
// the bytes it needs from a buffer and the next one goes on in the same
// buffer, so that large buffers cost nothing to small receives; on older
// kernels every receive takes a whole buffer.
func (r *Ring) RegisterBufRing(bgid uint16, n, size int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("io_uring: %d buffers: want a power of two up to 32768", n)
	}
	ringBytes := n * int(unsafe.Sizeof(ringBuf{}))
	ring, err := unix.Mmap(-1, 0, ringBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("io_uring: mmap of the buffer ring: %w", err)
	}
	data, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		unix.Munmap(ring)
		return nil, fmt.Errorf("io_uring: mmap of the receive buffers: %w", err)
	}
	b := &BufRing{
		Group:   bgid,
		size:    size,
		mask:    uint16(n - 1),
		ring:    ring,
		entries: unsafe.Slice((*ringBuf)(unsafe.Pointer(&ring[0])), n),
		data:    data,
		used:    make([]int, n),
	}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&ring[0]))), ringEntries: uint32(n), bgid: bgid, flags: pbufRingInc}
	err = r.register(registerPbufRing, unsafe.Pointer(&reg), 1)
	if err == unix.EINVAL {
		reg.flags = 0
		err = r.register(registerPbufRing, unsafe.Pointer(&reg), 1)
	}
	if err != nil {
		b.Unmap()
		return nil, fmt.Errorf("io_uring: registering the buffer ring: %w", err)
	}
	b.incremental = reg.flags&pbufRingInc != 0
	for i := range n {
		b.add(uint16(i))
	}
	b.publish()
	return b, nil
}

// Incremental reports whether receives consume the buffers incrementally.
func (b *BufRing) Incremental() bool { return b.incremental }

// Unregister takes the buffers back from r and unmaps them. No receive
// that selects from them may be in flight.
func (b *BufRing) Unregister(r *Ring) error {
	reg := bufReg{bgid: b.Group}
	err := r.register(unregisterPbufRing, unsafe.Pointer(&reg), 1)
	b.Unmap()
	return err
}

// Unmap unmaps the buffers without unregistering them, as after the ring's
// end.
func (b *BufRing) Unmap() {
	unix.Munmap(b.ring)
	unix.Munmap(b.data)
	b.ring, b.data, b.entries = nil, nil, nil
}

// Received returns the bytes a completion with CQEFBuffer delivered, valid
// until Release.
func (b *BufRing) Received(c *CQE) []byte {
	bid := uint16(c.Flags >> CQEBufferShift)
	off := int(bid)*b.size + b.used[bid]
	return b.data[off : off+int(c.Res) : off+int(c.Res)]
}

// Release gives a completion's buffer back to the kernel once its bytes
// are no longer needed, or, when the kernel goes on receiving into the
// same buffer (CQEFBufMore), notes how far it got. Buffers given back are
// published at the next Publish.
func (b *BufRing) Release(c *CQE) {
	bid := uint16(c.Flags >> CQEBufferShift)
	if c.Flags&CQEFBufMore != 0 {
		b.used[bid] += int(c.Res)
		return
	}
	b.used[bid] = 0
	b.add(bid)
}

// Discard gives the buffers' pages back to the kernel (MADV_DONTNEED):
// they read as zeros until received into again. No receive may be running
// meanwhile and no received bytes be still unread: under
// SetupDeferTaskrun, between two calls of Enter once every completion is
// handled.
func (b *BufRing) Discard() { unix.Madvise(b.data, unix.MADV_DONTNEED) }

// Publish makes the buffers released since the last Publish available to
// the kernel.
func (b *BufRing) Publish() { b.publish() }

func (b *BufRing) add(bid uint16) {
	i := b.tail & b.mask
	e := &b.entries[i]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.data[int(bid)*b.size])))
	e.len = uint32(b.size)
	e.bid = bid
	if i == 0 {
		b.bid0 = bid
	}
	b.tail++
}

// publish stores the tail, the 16 bits that overlap entry 0's resv. Go has
// no 16-bit atomic store, so it stores the aligned 32-bit word of entry
// 0's bid and the tail, with the bid this side last wrote there (the
// kernel never writes a bid), which orders every entry written before it.
func (b *BufRing) publish() {
	word := (*uint32)(unsafe.Pointer(&b.ring[12]))
	atomic.StoreUint32(word, uint32(b.bid0)|uint32(b.tail)<<16)
}
