// Package iouring is the least of Linux's io_uring that an event loop over
// sockets needs, on raw system calls (golang.org/x/sys/unix, no cgo): a
// ring set up and mapped (Setup), submission entries filled in place
// (Ring.SQE and the Prep* methods), completions read in place (Ring.Ready,
// Completion, Consume), one io_uring_enter that submits, runs deferred
// completions and waits (Ring.Enter), the probe of supported opcodes
// (Ring.Probe) and a ring of provided receive buffers (BufRing).
//
// It is written by hand rather than taken from a library: the Go io_uring
// libraries allocate per request or keep the ring behind goroutines and
// callbacks of their own, where an event loop must fill its entries in
// place, own its thread and know every system call it makes. The layouts
// and constants are those of the kernel's include/uapi/linux/io_uring.h.
//
// A Ring is not safe for concurrent use: one goroutine, locked to its
// thread when the ring is set up with SetupSingleIssuer, owns it.
package iouring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Setup flags (io_uring_setup(2)).
const (
	SetupCQSize       = 1 << 3
	SetupRDisabled    = 1 << 6
	SetupSubmitAll    = 1 << 7
	SetupCoopTaskrun  = 1 << 8
	SetupTaskrunFlag  = 1 << 9
	SetupSingleIssuer = 1 << 12
	SetupDeferTaskrun = 1 << 13
)

// Features the kernel reports at setup.
const (
	FeatSingleMmap = 1 << 0
	FeatNoDrop     = 1 << 1
	FeatFastPoll   = 1 << 5
	FeatCQESkip    = 1 << 11
)

// Opcodes.
const (
	OpNop         = 0
	OpSendmsg     = 9
	OpAsyncCancel = 14
	OpRead        = 22
	OpSend        = 26
	OpRecv        = 27
)

// SQE flags.
const (
	SQEBufferSelect   = 1 << 5
	SQECQESkipSuccess = 1 << 6
)

// Send and receive flags, in the SQE's ioprio field.
const RecvMultishot = 1 << 1

// Cancel flags.
const (
	CancelAll = 1 << 0
	CancelFD  = 1 << 1
)

// CQE flags.
const (
	CQEFBuffer     = 1 << 0 // a provided buffer was used: its id is Flags >> CQEBufferShift
	CQEFMore       = 1 << 1 // a multishot request goes on posting
	CQEFBufMore    = 1 << 4 // the provided buffer is only partly used: it stays the kernel's
	CQEBufferShift = 16
)

// EnterGetEvents is the enter flag that runs and waits for completions.
const EnterGetEvents = 1 << 0

// SQ ring flags.
const (
	sqCQOverflow = 1 << 1
	sqTaskrun    = 1 << 2
)

const (
	offSQRing = 0
	offSQEs   = 0x10000000
)

// Register opcodes.
const (
	registerProbe       = 8
	registerEnableRings = 12
	registerPbufRing    = 22
	unregisterPbufRing  = 23
)

// params is struct io_uring_params.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// SQE is struct io_uring_sqe, 64 bytes.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	FD          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // msg_flags, cancel_flags, rw_flags, …
	UserData    uint64
	BufGroup    uint16
	Personality uint16
	SpliceFDIn  int32
	Addr3       uint64
	pad         uint64
}

// CQE is struct io_uring_cqe, 16 bytes.
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// Ring is one io_uring instance with its queues mapped.
type Ring struct {
	fd       int
	features uint32
	flags    uint32

	sqRing, cqRing, sqeMem []byte

	sqHead, sqTail *uint32
	sqFlags        *uint32
	sqMask         uint32
	sqes           []SQE
	tail           uint32 // entries filled, published at Enter

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []CQE
}

// Setup creates a ring of at least entries submission entries and cq
// completion entries (cq 0: the kernel's default, twice entries) with the
// given setup flags.
func Setup(entries, cq uint32, flags uint32) (*Ring, error) {
	p := params{flags: flags}
	if cq > 0 {
		p.flags |= SetupCQSize
		p.cqEntries = cq
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd), features: p.features, flags: p.flags}
	if err := r.mapQueues(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mapQueues(p *params) error {
	if p.features&FeatSingleMmap == 0 {
		return errors.New("io_uring: the kernel does not map both queues at once (IORING_FEAT_SINGLE_MMAP)")
	}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(CQE{}))
	size := max(sqSize, cqSize)
	ring, err := unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap of the queues: %w", err)
	}
	r.sqRing, r.cqRing = ring, ring
	sqes, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap of the submission entries: %w", err)
	}
	r.sqeMem = sqes
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&ring[off])) }
	r.sqHead, r.sqTail, r.sqFlags = u32(p.sqOff.head), u32(p.sqOff.tail), u32(p.sqOff.flags)
	r.sqMask = *u32(p.sqOff.ringMask)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	// The indirection array maps each slot to the entry of the same index,
	// once: entries are then filled in ring order.
	array := unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead, r.cqTail = u32(p.cqOff.head), u32(p.cqOff.tail)
	r.cqMask = *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&ring[p.cqOff.cqes])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

// Features reports the IORING_FEAT_* bits of the kernel.
func (r *Ring) Features() uint32 { return r.features }

// FD is the ring's file descriptor.
func (r *Ring) FD() int { return r.fd }

// Close unmaps the queues and closes the ring. Requests still in flight
// are cancelled by the kernel; memory they point to must outlive them.
func (r *Ring) Close() error {
	for _, m := range [][]byte{r.sqeMem, r.sqRing} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	r.sqeMem, r.sqRing, r.cqRing, r.sqes, r.cqes = nil, nil, nil, nil, nil
	return unix.Close(r.fd)
}

// Enable starts a ring set up with SetupRDisabled. Under
// SetupSingleIssuer the calling thread becomes the only one that may
// submit.
func (r *Ring) Enable() error {
	return r.register(registerEnableRings, nil, 0)
}

func (r *Ring) register(op uintptr, arg unsafe.Pointer, n uintptr) error {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), op, uintptr(arg), n, 0, 0)
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return errno
	}
}

// Probe reports which of ops the kernel supports; the error names the
// first that it does not.
func (r *Ring) Probe(ops ...uint8) error {
	const maxOps = 256
	// struct io_uring_probe: a 16-byte header, then 8 bytes per opcode.
	buf := make([]byte, 16+8*maxOps)
	if err := r.register(registerProbe, unsafe.Pointer(&buf[0]), maxOps); err != nil {
		return fmt.Errorf("io_uring: probe: %w", err)
	}
	n := int(buf[1]) // ops_len
	for _, op := range ops {
		i := 16 + 8*int(op)
		if int(op) >= n || buf[i+2]&1 == 0 { // flags & IO_URING_OP_SUPPORTED
			return fmt.Errorf("io_uring: opcode %d not supported by this kernel", op)
		}
	}
	return nil
}

// SQE returns the next free submission entry, zeroed, or nil when the
// queue is full of entries not yet submitted.
func (r *Ring) SQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.tail-head >= uint32(len(r.sqes)) {
		return nil
	}
	e := &r.sqes[r.tail&r.sqMask]
	*e = SQE{}
	r.tail++
	return e
}

// Pending is the number of entries filled and not yet taken by the kernel.
func (r *Ring) Pending() uint32 { return r.tail - atomic.LoadUint32(r.sqHead) }

// Enter submits the filled entries, runs the completions the kernel has
// deferred to this thread (SetupDeferTaskrun) and, with wait > 0, waits
// until that many completions are ready. It returns unix.EINTR when a
// signal cut the wait short; entries are never lost either way (what the
// kernel did not take stays queued for the next call).
func (r *Ring) Enter(wait uint32) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.Pending()), uintptr(wait), EnterGetEvents, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// WorkPending reports whether the kernel holds work that only Enter will
// do: completions deferred to this thread (the ring must be set up with
// SetupTaskrunFlag for the kernel to say so) or completions that did not
// fit in the queue.
func (r *Ring) WorkPending() bool {
	return atomic.LoadUint32(r.sqFlags)&(sqTaskrun|sqCQOverflow) != 0
}

// Ready is the number of completions ready to be read.
func (r *Ring) Ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// Completion returns the i-th ready completion (i < Ready()), valid until
// Consume gives it back.
func (r *Ring) Completion(i uint32) *CQE { return &r.cqes[(*r.cqHead+i)&r.cqMask] }

// Consume gives the first n ready completions back to the kernel.
func (r *Ring) Consume(n uint32) { atomic.StoreUint32(r.cqHead, *r.cqHead+n) }

// PrepRecvMultishot makes e a multishot receive on fd into buffers of group
// bgid.
func (e *SQE) PrepRecvMultishot(fd int, bgid uint16, userData uint64) {
	e.Opcode = OpRecv
	e.FD = int32(fd)
	e.Ioprio = RecvMultishot
	e.Flags = SQEBufferSelect
	e.BufGroup = bgid
	e.UserData = userData
}

// PrepRecv makes e a receive on fd into b (up to len(b) bytes, as many as
// have arrived). The caller keeps b alive until its completion.
func (e *SQE) PrepRecv(fd int, b []byte, userData uint64) {
	e.Opcode = OpRecv
	e.FD = int32(fd)
	e.Addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	e.Len = uint32(len(b))
	e.UserData = userData
}

// PrepSend makes e a send of b on fd. The caller keeps b alive and
// unchanged until its completion.
func (e *SQE) PrepSend(fd int, b []byte, flags uint32, userData uint64) {
	e.Opcode = OpSend
	e.FD = int32(fd)
	e.Addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	e.Len = uint32(len(b))
	e.OpFlags = flags
	e.UserData = userData
}

// PrepSendmsg makes e a sendmsg of msg on fd. The caller keeps msg and
// everything it points to alive until its completion.
func (e *SQE) PrepSendmsg(fd int, msg *unix.Msghdr, flags uint32, userData uint64) {
	e.Opcode = OpSendmsg
	e.FD = int32(fd)
	e.Addr = uint64(uintptr(unsafe.Pointer(msg)))
	e.Len = 1
	e.OpFlags = flags
	e.UserData = userData
}

// PrepRead makes e a read of len(b) bytes of fd into b at the file's
// position. The caller keeps b alive until its completion.
func (e *SQE) PrepRead(fd int, b []byte, userData uint64) {
	e.Opcode = OpRead
	e.FD = int32(fd)
	e.Addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	e.Len = uint32(len(b))
	e.Off = ^uint64(0) // the current position
	e.UserData = userData
}

// PrepCancelFD makes e cancel every request in flight on fd.
func (e *SQE) PrepCancelFD(fd int, userData uint64) {
	e.Opcode = OpAsyncCancel
	e.FD = int32(fd)
	e.OpFlags = CancelFD | CancelAll
	e.UserData = userData
}

// Err is the error of a completion's negative result.
func (c *CQE) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return syscall.Errno(-c.Res)
}
