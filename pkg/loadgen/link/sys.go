package link

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The load generator's workers' three system calls (and its prefill's
// read, write and ppoll) are normally made with RawSyscall, without telling the scheduler: the
// worker's thread then blocks in epoll_wait like a C program's. Through the usual Syscall path each
// blocking epoll_wait lets sysmon retake the P and hand it off, and sysmon
// itself polls every 20 µs while it does: more than the load generator's
// own CPU per request, pipelined or not (BENCHMARKS.md, "kvbench bench").
//
// A raw blocking call holds its P. Run therefore raises GOMAXPROCS by the
// number of workers while they run (LendProcs; the prefill by one), so that the rest of the
// process, which may be an embedded server under test, keeps the Ps it had;
// were every P held, other goroutines would run only when sysmon preempts a
// worker (every 10 ms, interrupting epoll_wait with EINTR: see worker.run),
// and an in-process kvstore measured that way showed sysmon's period in
// its latencies.
// Runtime preemption and stop-the-world still work: their signal ends
// epoll_wait with EINTR and the worker yields.

// Raw selects the raw path for the calls whose raw argument the caller
// takes from it; tests turn it off to cover the other.
var Raw = true

// SysRead is read(2), raw or not.
func SysRead(raw bool, fd int, b []byte) (int, error) {
	if !raw {
		return unix.Read(fd, b)
	}
	return rawIO(unix.SYS_READ, fd, b)
}

// SysWrite is write(2), raw or not.
func SysWrite(raw bool, fd int, b []byte) (int, error) {
	if !raw {
		return unix.Write(fd, b)
	}
	return rawIO(unix.SYS_WRITE, fd, b)
}

// SysWritev is writev(2) of iov, whose pieces must stay as they are until
// it returns.
func SysWritev(raw bool, fd int, iov []unix.Iovec) (int, error) {
	if len(iov) == 0 {
		return 0, nil
	}
	call := unix.Syscall
	if raw {
		call = unix.RawSyscall
	}
	r, _, e := call(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(iov))), uintptr(len(iov)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// rawIO is read(2) or write(2) as a raw system call.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// EpollWait is epoll_wait(2) with a timeout in milliseconds.
func EpollWait(raw bool, epfd int, events []unix.EpollEvent, msec int) (int, error) {
	if !raw {
		return unix.EpollWait(epfd, events, msec)
	}
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// NoPwait2 is set once epoll_pwait2 (Linux 5.11) has failed with ENOSYS;
// tests set it to cover the fallback.
var NoPwait2 atomic.Bool

// EpollWaitNs is EpollWait with a timeout in nanoseconds (ns >= 0), for the
// open loop's send times. It uses epoll_pwait2; without it, the timeout is
// rounded up to whole milliseconds and requests leave late (the send lag
// reports it).
func EpollWaitNs(raw bool, epfd int, events []unix.EpollEvent, ns int64) (int, error) {
	if !NoPwait2.Load() {
		ts := unix.NsecToTimespec(ns)
		var r uintptr
		var e unix.Errno
		if raw {
			r, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		} else {
			r, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		if e == 0 {
			return int(r), nil
		}
		if !errors.Is(e, unix.ENOSYS) {
			return 0, e
		}
		NoPwait2.Store(true)
	}
	return EpollWait(raw, epfd, events, int((ns+999_999)/1_000_000))
}

// FineTimerSlack sets the calling thread's timer slack to 1 ns, so that a
// timed epoll_pwait2 ends on time rather than up to 50 µs (the default
// slack) late, and returns the function restoring the previous slack.
// The thread must be locked (runtime.LockOSThread).
func FineTimerSlack() (restore func()) {
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return func() {}
	}
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }
}

// PollFd waits up to d for events on fd with ppoll(2).
func PollFd(raw bool, fd int, events int16, d time.Duration) (int, error) {
	pfd := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
	ts := unix.NsecToTimespec(int64(d))
	if !raw {
		return unix.Ppoll(pfd[:], &ts, nil)
	}
	r, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// lentProcs counts the Ps lent to running workers on top of the
// GOMAXPROCS found when the first run started (base).
var lentProcs struct {
	sync.Mutex
	n, base int
}

// LendProcs raises GOMAXPROCS by n while a run's n workers last, and
// returns the function that gives them back. A worker blocks in raw system
// calls that hold its P (see above); the extra Ps leave the rest of the
// process, perhaps an embedded server under test, the parallelism it had.
// The workers' Ps are mostly idle in epoll_wait, so this does not
// oversubscribe the CPUs.
func LendProcs(n int) (release func()) {
	lentProcs.Lock()
	defer lentProcs.Unlock()
	if lentProcs.n == 0 {
		lentProcs.base = runtime.GOMAXPROCS(0)
	}
	lentProcs.n += n
	runtime.GOMAXPROCS(lentProcs.base + lentProcs.n)
	return func() {
		lentProcs.Lock()
		defer lentProcs.Unlock()
		lentProcs.n -= n
		runtime.GOMAXPROCS(lentProcs.base + lentProcs.n)
	}
}

// StampReceives asks the kernel to stamp what fd receives
// (SO_TIMESTAMPNS), for Stamped.Read.
func StampReceives(fd int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("setsockopt SO_TIMESTAMPNS: %w", err)
	}
	return nil
}

// Stamped reads a socket with StampReceives on: recvmsg(2) with room for
// the timestamp. Its buffers are reused from read to read, so it must not
// be copied once used.
type Stamped struct {
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// Read is read(2) of fd into b that also returns when the kernel received
// the last of the bytes read, in ns since the Unix epoch (CLOCK_REALTIME;
// for TCP, the last segment's), or 0 when it gave no time.
func (st *Stamped) Read(raw bool, fd int, b []byte) (n int, at int64, err error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	st.iov.Base = unsafe.SliceData(b)
	st.iov.SetLen(len(b))
	st.msg = unix.Msghdr{Iov: &st.iov, Control: &st.oob[0]}
	st.msg.SetIovlen(1)
	st.msg.SetControllen(len(st.oob))
	call := unix.Syscall
	if raw {
		call = unix.RawSyscall
	}
	r, _, e := call(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&st.msg)), 0)
	if e != 0 {
		return 0, 0, e
	}
	// One control message at most: the timestamp.
	const tsLen = unix.SizeofCmsghdr + int(unsafe.Sizeof(unix.Timespec{}))
	if int(st.msg.Controllen) >= tsLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&st.oob[0]))
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS {
			ts := (*unix.Timespec)(unsafe.Pointer(&st.oob[unix.SizeofCmsghdr]))
			at = ts.Nano()
		}
	}
	return int(r), at, nil
}
