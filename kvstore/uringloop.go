package kvstore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/kvstore/internal/iouring"
)

// Event loops (Config.IO).
const (
	// IOAuto serves with io_uring when the kernel offers what the loop
	// needs, and with epoll otherwise.
	IOAuto = "auto"
	// IOEpoll serves with epoll: a read and a write per batch of a
	// connection, an epoll_wait per round.
	IOEpoll = "epoll"
	// IOUring serves with io_uring: a few system calls per round for all
	// the connections' receives and sends.
	IOUring = "uring"
)

// The io_uring loop. At one request per round trip the epoll loop, like
// Redis, makes about 2.3 system calls per request (a read, a write and a
// share of an epoll_wait: BENCHMARKS.md), each costing more than the
// command itself. This loop makes four per round, whatever the number of
// connections served in it:
//
//   - every connection has a multishot receive armed, which takes its
//     buffers from a ring of provided buffers (iouring.BufRing, consumed
//     incrementally where the kernel can); the bytes are copied into the
//     connection's request reader and the buffer goes straight back; a
//     connection whose reader waits for a large value receives straight
//     into it instead (see inPlaceMin), and one that has sent a large
//     value receives into its reader for a while, as the epoll loop
//     reads (see singleRun);
//   - replies go out as a send (or a sendmsg of the reply queue's pieces)
//     per connection, queued in the submission ring and submitted together;
//   - the ring is set up for a single issuer with deferred task work
//     (IORING_SETUP_SINGLE_ISSUER, DEFER_TASKRUN): the kernel runs the
//     receives, and the sends that had to wait, only inside this loop's
//     io_uring_enter, on its thread, to which the goroutine is locked. A
//     round is an io_uring_enter that runs them, one that submits the
//     round's sends, one that finds nothing more to do, and an epoll_wait over
//     the connections (edge-triggered, for readable or writable) to sleep
//     in. Sleeping in io_uring_enter instead would save the last two, but the
//     ring wakes its sleeper as any task, where a socket wakes its epoll
//     waiter as a "sync" wakeup, which the scheduler takes as a hint to
//     run the woken task on the waker's processor: a client and a server
//     that take turns then share one, and on a virtual machine, where
//     waking an idle processor costs an exit to the hypervisor, that is
//     what pipelined traffic over one connection needs (BENCHMARKS.md,
//     "Event loops"). SQPOLL would spend a processor polling, which on two
//     is the client's;
//   - a loop's only connection has nothing to share those calls with, and
//     is served as the epoll loop serves it, by read(2) and write(2) (see
//     alone).
//
// The guarantees are the epoll loop's. A send takes the connection's
// queue of replies whole (ringConn.flight), so a reply's bytes never
// change while the kernel sends them, and the connection goes on
// executing what arrives into an empty queue, sent once the send before
// it is out: a pipeline of large writes is not held up by the small
// replies of the pipeline before it. What arrives while the queue holds
// more than roundOutMax bytes of replies is kept aside (the stash) and,
// past stashMax, the receive is cancelled, so a client that does not
// read its replies cannot make the server hold its requests, or their
// replies, without end: a connection holds at most the send under way,
// a queue of about roundOutMax and the stash. The stash is executed once
// the queue has gone to a send, and receiving resumes when it is empty.
// Sends wait for the log's commit of the round like writes do
// (commitRound). A connection is closed only once none of its requests is
// in flight (the kernel holds its memory until then): close cancels them.
type uringState struct {
	ring   *iouring.Ring
	bufs   *iouring.BufRing
	epfd   int // where the loop sleeps (see above)
	events []unix.EpollEvent
	wakefd int
	wake   [8]byte // the eventfd's counter, read through the ring

	slots  []*conn  // the connections, by ringConn.slot
	free   []uint32 // free slots
	live   int      // slots in use: connections not yet released
	resume []*conn  // connections whose replies are out: to go on with
	// direct is the connection served without the ring, if any: the
	// loop's only one (see alone).
	direct *conn

	// reaped counts the completions of the round other than sends': only
	// a round that had none may end in sleep. A send's completion leaves
	// nothing in the kernel that no socket event or queued entry answers
	// for (what it starts is queued, or in resume), so a round of
	// receives, whose replies' sends complete as they are submitted,
	// sleeps after that enter: three system calls a round, not four.
	reaped uint32

	// bufsUsed: receives have written to the buffers since they were last
	// given back (see idleBufs).
	bufsUsed bool

	// maxStash is the most bytes any connection has kept aside (see
	// ringConn.stash), and maxHeld the most memory any connection has
	// held for its replies and its stash (see held): what tests check the
	// bounds of.
	maxStash, maxHeld atomic.Int64
	// inPlaceBytes counts the bytes received in place (see inPlaceMin).
	inPlaceBytes atomic.Int64
	// wentDirect and leftDirect count the times a connection left the
	// ring for the direct path, and came back (see alone).
	wentDirect, leftDirect atomic.Int64

	// broken is a failure of io_uring_enter that leaves the loop unable
	// to go on; scratch is what sqe hands out meanwhile.
	broken  error
	scratch iouring.SQE
}

// ringConn is a connection's state under the io_uring loop.
type ringConn struct {
	slot    uint32
	recvOn  bool // a receive is armed: until its last completion
	inPlace bool // ... a receive into inBuf, not a multishot one
	leaving bool // the multishot receive is cancelled for one in place
	// singles is how many more receives go in place, however small
	// (see singleRun).
	singles uint8
	stopped bool // receiving is stopped until the stash is executed
	sending bool // a send of flight is in the kernel's hands
	direct  bool // served as the epoll loop serves it (see alone)
	closing bool // closed: waits for its requests in flight to end
	resume  bool // in uringState.resume

	// flight is the replies being sent, taken whole from the connection's
	// queue; once written it is emptied, and becomes the next queue.
	flight replyQueue

	// stash[stashOff:] is what was received while the queue was full.
	stash    []byte
	stashOff int

	inBuf []byte // what the receive in place fills

	msg unix.Msghdr
	iov []unix.Iovec
}

// Ring sizes. A round submits at most a receive, a send and a cancel per
// connection; with more connections than that the queue is submitted as
// it fills.
const (
	ringEntries = 1024
	cqEntries   = 8192 // multishot receives post many completions per entry
	bufGroup    = 0
	// recvBufs buffers of recvBufSize bytes, consumed incrementally: small
	// receives share a buffer, and a large value arrives in pieces this
	// large. Without incremental consumption (before Linux 6.12) every
	// receive takes a buffer of its own, which the loop gives back before
	// its next round.
	recvBufs    = 64
	recvBufSize = 64 << 10
	// stashMax is how many bytes a connection may send while its replies
	// wait before its receive is cancelled.
	stashMax = 64 << 10
	// idleBufs is how long, in milliseconds, a loop sleeps before it
	// gives back the receive buffers' pages (recvBufs × recvBufSize,
	// 4 MiB, all touched once a client has streamed that much): a loop
	// that sleeps that long is idle, and the first receive after it takes
	// a page fault or two.
	idleBufs = 100
	// stashKeep is the largest stash buffer kept once empty.
	stashKeep = 2 * stashMax
	// roundOutMax is how many bytes of replies may wait in a connection's
	// queue before what it sends is kept aside: a receive buffer's worth,
	// as the stash.
	roundOutMax = 64 << 10
)

// sendFlags: the kernel finishes a send the socket had no room for itself
// (MSG_WAITALL; a short send that still happens is sent on), and a peer
// gone raises no SIGPIPE.
const sendFlags = unix.MSG_WAITALL | unix.MSG_NOSIGNAL

// user_data: what a completion is for, and the connection's slot.
const (
	udWake = iota + 1
	udRecv
	udSend
	udCancel
	udRecvIn
)

func userData(kind int, slot uint32) uint64 { return uint64(kind) | uint64(slot)<<8 }

// defaultIO is Config.IO's default; the package's tests set it (see
// TestMain) to run every test against each loop. defaultShared is
// uringOptions.shared's, which they set to run every test through the
// ring however few its connections.
var (
	defaultIO     = IOAuto
	defaultShared = false
)

// ioUringDisabled is where the kernel says whether io_uring may be used.
const ioUringDisabled = "/proc/sys/kernel/io_uring_disabled"

// uringOptions are the io_uring loop's settings that tests change.
type uringOptions struct {
	disabledFile string  // ioUringDisabled by default
	extraFlags   uint32  // setup flags added: an unknown one fails setup
	extraOps     []uint8 // opcodes required besides the loop's own
	bufs         int     // recvBufs by default
	bufSize      int     // recvBufSize by default
	// shared keeps a lone connection in the ring (see alone): for tests
	// of the ring's own paths.
	shared bool
}

// newUringState sets up one loop's ring, or says why it cannot.
func newUringState(cfg Config, wakefd int) (*uringState, error) {
	o := cfg.uring
	if err := checkUringEnabled(o.disabledFile); err != nil {
		return nil, err
	}
	// Disabled until the loop's own thread enables it: under a single
	// issuer, the thread that enables the ring is the one that submits.
	ring, err := iouring.Setup(ringEntries, cqEntries, iouring.SetupSingleIssuer|iouring.SetupDeferTaskrun|iouring.SetupTaskrunFlag|iouring.SetupRDisabled|iouring.SetupSubmitAll|o.extraFlags)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			err = fmt.Errorf("%w (the kernel lacks single-issuer or deferred task work rings: Linux 6.1 or later)", err)
		}
		return nil, err
	}
	if f := ring.Features(); f&iouring.FeatNoDrop == 0 || f&iouring.FeatFastPoll == 0 {
		ring.Close()
		return nil, errors.New("io_uring: the kernel lacks IORING_FEAT_NODROP or IORING_FEAT_FAST_POLL")
	}
	ops := append([]uint8{iouring.OpRecv, iouring.OpSend, iouring.OpSendmsg, iouring.OpRead, iouring.OpAsyncCancel}, o.extraOps...)
	if err := ring.Probe(ops...); err != nil {
		ring.Close()
		return nil, err
	}
	n, size := recvBufs, recvBufSize
	if o.bufs > 0 {
		n = o.bufs
	}
	if o.bufSize > 0 {
		size = o.bufSize
	}
	bufs, err := ring.RegisterBufRing(bufGroup, n, size)
	if err != nil {
		ring.Close()
		return nil, err
	}
	u := &uringState{ring: ring, bufs: bufs, epfd: -1, wakefd: wakefd, events: make([]unix.EpollEvent, 64)}
	if u.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		u.close()
		return nil, fmt.Errorf("epoll_create: %w", err)
	}
	if err := u.watch(wakefd); err != nil {
		u.close()
		return nil, err
	}
	return u, nil
}

// ringWatch is what the loop sleeps on for a descriptor whose requests
// are in the ring: any change, readable or writable (see uringState).
const ringWatch = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLET

// watch adds fd to the descriptors the loop sleeps on.
func (u *uringState) watch(fd int) error {
	ev := unix.EpollEvent{Events: ringWatch, Fd: int32(fd)}
	if err := unix.EpollCtl(u.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// checkUringEnabled reads kernel.io_uring_disabled: 2 disables io_uring
// for everyone, 1 for processes outside kernel.io_uring_group (setup then
// fails with EPERM, which says so).
func checkUringEnabled(file string) error {
	if file == "" {
		file = ioUringDisabled
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a kernel before the switch: setup tells
	}
	if err != nil {
		return fmt.Errorf("io_uring: %w", err)
	}
	if v := strings.TrimSpace(string(b)); v == "2" {
		return fmt.Errorf("io_uring disabled by the kernel (%s is 2)", file)
	}
	return nil
}

func (u *uringState) close() {
	if u.ring == nil {
		return
	}
	// Closing the ring cancels anything left. The receive buffers are
	// unmapped only when no receive was left: one the kernel is still
	// tearing down could write to them.
	u.ring.Close()
	if u.live == 0 {
		u.bufs.Unmap()
	}
	u.ring = nil
	if u.epfd >= 0 {
		unix.Close(u.epfd)
	}
}

// runUring is the io_uring loop: run the completions and submit, handle
// them, queue the round's sends; sleep when nothing is left.
func (l *loop) runUring() {
	u := l.u
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := u.ring.Enable(); err != nil {
		l.s.log.Error("cannot start the io_uring loop; closing its clients", "err", err)
		l.closeIncoming()
		return
	}
	l.armWake()
	yielded := time.Now()
	ring := true // the ring has something to run: enter
	for i := 0; ; i++ {
		if i%yieldCheck == 0 && time.Since(yielded) > yieldEvery {
			runtime.Gosched() // see yieldEvery
			yielded = time.Now()
		}
		u.reaped = 0
		if ring {
			if !l.enter(0) {
				break
			}
			stop := l.reap()
			l.resumeAll()
			if stop {
				l.flushReady()
				l.enter(0) // the last replies, sent as far as the sockets take them
				l.reap()
				break
			}
		}
		l.flushReady()
		l.alone()
		// Sleep only after an enter that found nothing to do. Work left in
		// the kernel (a cancelled receive's end, a receive that stopped
		// after its share of a long stream, more deferred completions
		// than one enter runs) raises no socket event: only another enter
		// does it.
		if u.reaped > 0 || u.ring.Pending() > 0 || len(u.resume) > 0 || u.ring.WorkPending() {
			ring = true
			continue
		}
		timeout := -1
		if u.bufsUsed {
			timeout = idleBufs
		}
		n, err := unix.EpollWait(u.epfd, u.events, timeout)
		if err != nil && err != unix.EINTR {
			u.broken = err
			l.s.log.Error("epoll_wait failed; closing this loop's clients", "err", err)
			break
		}
		if n == 0 && err == nil && timeout >= 0 {
			// Idle: every completion is handled and nothing runs until the
			// next enter, so the buffers' pages can go.
			u.bufs.Discard()
			u.bufsUsed = false
		}
		// The direct connection's events are served here; any other is
		// the ring's (a socket with a request armed, the eventfd).
		ring = err != nil
		for _, ev := range u.events[:max(n, 0)] {
			if c := u.direct; c != nil && ev.Fd == int32(c.fd) {
				l.serveDirect(c)
			} else {
				ring = true
			}
		}
	}
	l.drain()
}

// enter publishes the buffers given back, submits what is queued, runs the
// completions deferred to this thread and waits for wait of them. It
// reports false when the loop cannot go on.
func (l *loop) enter(wait uint32) bool {
	u := l.u
	if u.broken != nil {
		return false
	}
	u.bufs.Publish()
	switch err := u.ring.Enter(wait); err {
	case nil, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		// EAGAIN and EBUSY: no memory for the request, or completions
		// to reap first; the queue is submitted next time.
		return true
	default:
		u.broken = err
		l.s.log.Error("io_uring_enter failed; closing this loop's clients", "err", err)
		return false
	}
}

// sqe returns a submission entry, submitting the queue first when it is
// full.
func (l *loop) sqe() *iouring.SQE {
	u := l.u
	for tries := 0; u.broken == nil; tries++ {
		if e := u.ring.SQE(); e != nil {
			return e
		}
		if tries == 1000 {
			u.broken = errors.New("io_uring: the kernel takes no more submissions")
			l.s.log.Error("io_uring submission queue stuck; closing this loop's clients")
			break
		}
		l.enter(0)
	}
	u.scratch = iouring.SQE{}
	return &u.scratch
}

// armWake reads the eventfd through the ring: new connections, stop.
func (l *loop) armWake() {
	l.sqe().PrepRead(l.u.wakefd, l.u.wake[:], userData(udWake, 0))
}

// reap handles every completion ready. It reports true when the loop is
// to stop.
func (l *loop) reap() (stop bool) {
	r := l.u.ring
	for {
		n := r.Ready()
		if n == 0 {
			return stop
		}
		for i := range n {
			e := r.Completion(i)
			slot, kind := uint32(e.UserData>>8), e.UserData&0xff
			if kind != udSend {
				l.u.reaped++ // see reaped
			}
			switch kind {
			case udWake:
				if !l.adoptRing() {
					stop = true
				} else {
					l.armWake()
				}
				if l.sweepDue.Swap(false) {
					l.sweep() // stale clients (clients.go)
				}
			case udRecv:
				l.received(l.u.slots[slot], e)
			case udRecvIn:
				l.receivedInPlace(l.u.slots[slot], e)
			case udSend:
				l.sent(l.u.slots[slot], e)
			case udCancel:
				// The cancelled requests complete on their own.
			}
		}
		r.Consume(n)
	}
}

// adoptRing takes in the connections handed over since the last wake and
// arms their receives. It reports false when the loop is to stop.
func (l *loop) adoptRing() bool {
	u := l.u
	l.mu.Lock()
	incoming, stopping := l.incoming, l.stopping
	l.incoming = nil
	l.mu.Unlock()
	adopted := incoming[:0]
	for _, c := range incoming {
		if err := u.watch(c.fd); err != nil {
			l.s.log.Error("cannot watch client", "client", c.addr, "err", err)
			unix.Close(c.fd)
			l.s.forget(c)
			continue
		}
		if n := len(u.free); n > 0 {
			c.ring.slot = u.free[n-1]
			u.free = u.free[:n-1]
		} else {
			c.ring.slot = uint32(len(u.slots))
			u.slots = append(u.slots, nil)
		}
		u.slots[c.ring.slot] = c
		u.live++
		c.src.ring = true
		adopted = append(adopted, c)
	}
	// Armed once all are counted: a lone one is served directly (alone).
	for _, c := range adopted {
		l.rearm(c)
	}
	return !stopping
}

func (l *loop) armRecv(c *conn) {
	c.ring.recvOn = true
	l.sqe().PrepRecvMultishot(c.fd, bufGroup, userData(udRecv, c.ring.slot))
}

// A loop's only connection is served as the epoll loop serves one: a
// read(2) when epoll says it is readable, a write(2) of its replies, no
// request of its own in the ring. The ring pays where it takes many
// connections' receives and sends in a few system calls; with one
// connection a round is an epoll_wait and two io_uring_enters, each
// dearer than the read and the write it stands for, and its bytes are
// copied out of the receive buffers again: SET of 32 B at pipeline 1
// over one connection ran at 0.95× Redis and 0.95× the epoll loop
// (BENCHMARKS.md, "The two event loops and Redis"). The connection goes
// back to the ring when another comes, and the last one left goes
// direct once nothing of it is in the ring (its receive is cancelled).
//
// alone moves the loop's only connection towards the direct path, and a
// direct one back to the ring once it is not alone.
func (l *loop) alone() {
	u := l.u
	if c := u.direct; c != nil {
		if u.live > 1 {
			l.leaveDirect(c)
		}
		return
	}
	if u.live != 1 || l.s.cfg.uring.shared {
		return
	}
	var c *conn
	for _, c = range u.slots {
		if c != nil {
			break
		}
	}
	if c == nil {
		return
	}
	r := &c.ring
	if !r.recvOn || r.leaving || !l.mayGoDirect(c) {
		return // rearm takes it direct once its receive has ended
	}
	r.leaving = true
	l.cancelRecv(c)
}

// cancelRecv cancels c's armed receive, by its user_data: the receive's
// own completion says when it has ended.
func (l *loop) cancelRecv(c *conn) {
	kind := udRecv
	if c.ring.inPlace {
		kind = udRecvIn
	}
	e := l.sqe()
	e.Opcode = iouring.OpAsyncCancel
	e.Addr = userData(kind, c.ring.slot)
	e.UserData = userData(udCancel, c.ring.slot)
}

// mayGoDirect reports whether c can leave the ring: it is the loop's only
// connection, and nothing of it waits in the ring but its receive.
func (l *loop) mayGoDirect(c *conn) bool {
	r := &c.ring
	return l.u.live == 1 && l.u.direct == nil && !l.s.cfg.uring.shared &&
		!r.closing && !r.sending && r.flight.left() == 0 && c.stashed() == 0 && !r.stopped &&
		!c.quit && !c.shutdown && !c.discard
}

// goDirect serves c directly if it may be (mayGoDirect), its receive
// having ended; rearm calls it.
func (l *loop) goDirect(c *conn) bool {
	u, r := l.u, &c.ring
	if !l.mayGoDirect(c) {
		return false
	}
	// Level-triggered, as the epoll loop watches: a read takes what one
	// call takes, and epoll says so again while more is there.
	if err := unix.EpollCtl(u.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
		return false
	}
	r.direct, r.singles = true, 0
	u.direct = c
	c.src = connSource{fd: c.fd}
	u.wentDirect.Add(1)
	return true
}

// leaveDirect takes c back to the ring: the replies it has left go out
// as a send, and its receive is armed.
func (l *loop) leaveDirect(c *conn) {
	u, r := l.u, &c.ring
	unix.EpollCtl(u.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ringWatch, Fd: int32(c.fd)})
	r.direct, u.direct = false, nil
	c.src.ring, c.blocked = true, false
	u.leftDirect.Add(1)
	if c.left() > 0 {
		l.send(c)
	}
	l.rearm(c)
}

// serveDirect handles an epoll event of the direct connection, as the
// epoll loop does.
func (l *loop) serveDirect(c *conn) {
	switch {
	case c.ring.closing:
	case c.blocked:
		l.queue(c) // room to write, or an error that the write will report
	case c.quit, c.shutdown:
		// Answered for the last time; closes once written.
	default:
		if !c.readable() {
			l.closeRing(c)
		}
	}
}

// flushDirect writes the direct connection's replies.
func (l *loop) flushDirect(c *conn) {
	if !c.flushWatched(l.u.epfd) {
		if c.shutdown {
			go l.s.Close()
		}
		l.closeRing(c)
	}
}

// Under a multishot receive every byte is copied twice: by the kernel
// into a receive buffer, then by the loop into the request reader. Once
// the reader waits to fill inPlaceMin bytes or more (the rest of a large
// value, which it reads into the record that keeps it: conn.bigArg; or a
// request buffer grown for a pipeline of values), the loop cancels the
// multishot receive and receives straight into what the reader waits to
// fill, as the epoll loop's read(2) does, until the reader waits for
// less. SET of 16 KB values at pipeline 16 over one connection, server
// and client on one processor: 57,000 requests a second before, 88,000
// after, the epoll loop 103,000 (BENCHMARKS.md, "The two event loops").
const inPlaceMin = 64 << 10

// A client that sends a large value and waits for its reply (a SET of 1
// MB at pipeline 1) has sent the next one whole by the time the loop sees
// its first bytes: a multishot receive takes all of it into the receive
// buffers, and the loop copies it out again, where the epoll loop's
// read(2) takes a request's header and first 16 KB into the reader's
// buffer and the rest into the record. So a connection that has sent a
// large argument (conn.bigArg) receives in place, into whatever its
// reader waits for, as the epoll loop reads, for its next singleRun
// receives; one that sends none for that long goes back to the multishot
// receive, which takes a pipeline of small requests in one completion
// without a submission of its own.
//
// Only while the loop serves singleMax connections or fewer. With more,
// multishot receives take their values in rounds of many completions,
// and receiving in place cost more than it saved: SET 1 MB P1 over keys
// already written, fresh servers, receiving in place against not: c1
// 1.4× the requests a second, c4 1.3×, c8 even, c16 0.8×, c50 0.6× (the
// kernel's copy into the records from 22% of the server's samples to
// 38%); with four of the 50 connections receiving in place, still 0.6×.
const (
	singleRun = 16
	singleMax = 4
)

// receiveSingly starts c's run of singleRun receives in place, or ends
// it once the loop serves more than singleMax connections: a client's
// first connections, which send before its others have come, would
// otherwise go on receiving singly among many.
func (l *loop) receiveSingly(c *conn) {
	if l.u.live > singleMax {
		c.ring.singles = 0
		return
	}
	c.ring.singles = singleRun
}

// wantsInPlace reports whether c's next receive should go straight into
// what its reader waits for.
func (c *conn) wantsInPlace() bool {
	n := len(c.src.want)
	return (n >= inPlaceMin || c.ring.singles > 0 && n > 0) && c.stashed() == 0 && !c.ring.stopped
}

// rearm arms c's next receive, unless c is closed, stopped, or answered
// for the last time.
func (l *loop) rearm(c *conn) {
	r := &c.ring
	if r.closing || r.stopped || c.quit || c.shutdown || r.recvOn {
		return
	}
	if l.goDirect(c) {
		return
	}
	if !c.wantsInPlace() {
		l.armRecv(c)
		return
	}
	r.recvOn, r.inPlace, r.inBuf = true, true, c.src.want
	l.sqe().PrepRecv(c.fd, r.inBuf, userData(udRecvIn, r.slot))
}

// leaveMultishot cancels c's multishot receive for one in place, if its
// reader now waits for a large argument; rearm arms it once the multishot
// receive has ended.
func (l *loop) leaveMultishot(c *conn) {
	r := &c.ring
	if !r.recvOn || r.inPlace || r.leaving || r.closing || !c.wantsInPlace() {
		return
	}
	r.leaving = true
	l.cancelRecv(c)
}

// receivedInPlace handles the completion of a receive in place: its bytes
// are where the reader wanted them.
func (l *loop) receivedInPlace(c *conn, e *iouring.CQE) {
	r := &c.ring
	r.recvOn, r.inPlace, r.leaving = false, false, false
	buf := r.inBuf
	r.inBuf = nil
	switch {
	case r.closing:
		l.release(c)
		return
	case e.Res == 0:
		l.closeRing(c) // the client closed
		return
	case e.Res == -int32(unix.ECANCELED), e.Res == -int32(unix.EINTR), e.Res == -int32(unix.EAGAIN):
		l.rearm(c)
		return
	case e.Res < 0:
		l.closeRing(c) // reset, or another error
		return
	}
	l.u.bufsUsed = true // the loop's activity, for idleBufs
	l.u.inPlaceBytes.Add(int64(e.Res))
	if len(buf) < inPlaceMin && r.singles > 0 {
		r.singles-- // bigArg starts another run
	}
	data := buf[:e.Res]
	switch {
	case c.quit, c.shutdown, c.discard:
		// Answered for the last time.
	case r.stopped || c.stashed() > 0 || c.left() > roundOutMax:
		l.stash(c, data)
	default:
		c.src.data, c.src.want, c.src.placed = nil, buf, len(data)
		if !c.readable() {
			l.closeRing(c)
			return
		}
		if c.src.placed > 0 {
			// Not read (the reader had failed): answered for the last time.
			c.src.placed = 0
		}
		if len(c.src.data) > 0 {
			// The reader had moved its buffer: the rest from a copy, as a
			// multishot receive's bytes.
			if rest := l.feed(c, c.src.data); len(rest) > 0 && !r.closing {
				l.stash(c, rest)
			}
		}
		if r.closing {
			return
		}
		if c.stashed() == 0 {
			c.readable() // finds nothing, and notes what the reader waits for next
		}
	}
	l.rearm(c)
}

// received handles a receive's completion: bytes, or the end of the
// multishot receive.
func (l *loop) received(c *conn, e *iouring.CQE) {
	if e.Flags&iouring.CQEFBuffer != 0 {
		l.take(c, l.u.bufs.Received(e))
		l.u.bufs.Release(e)
		l.u.bufsUsed = true
		if r := &c.ring; r.singles > 0 && len(c.src.want) == 0 && c.stashed() == 0 &&
			!r.closing && !c.quit && !c.shutdown && !c.discard {
			// The bytes ended with a request (its large value, whose
			// reader's Read asked for no more): the reader notes what it
			// waits for next, which the next receive goes into.
			c.readable()
		}
	}
	if e.Flags&iouring.CQEFMore != 0 {
		l.leaveMultishot(c)
		return
	}
	c.ring.recvOn, c.ring.leaving = false, false
	switch {
	case c.ring.closing:
		l.release(c)
	case e.Res == 0:
		l.closeRing(c) // the client closed
	case e.Res == -int32(unix.ENOBUFS), e.Res == -int32(unix.ECANCELED), e.Res > 0:
		// Out of buffers (those given back this round are there for the
		// next), stopped on purpose, or ended after bytes: receive again
		// unless stopped.
		l.rearm(c)
	default:
		l.closeRing(c) // reset, or another error
	}
}

// take executes what a connection has sent, or keeps it aside past
// roundOutMax bytes of queued replies (see uringState).
func (l *loop) take(c *conn, data []byte) {
	switch {
	case c.ring.closing, c.quit, c.shutdown, c.discard:
		// Answered for the last time.
	case c.ring.stopped || c.stashed() > 0 || c.left() > roundOutMax:
		l.stash(c, data)
	default:
		if rest := l.feed(c, data); len(rest) > 0 {
			l.stash(c, rest)
		}
	}
}

// stashed is the bytes c keeps aside.
func (c *conn) stashed() int { return len(c.ring.stash) - c.ring.stashOff }

// stash keeps data aside for c; past stashMax it cancels c's receive.
// The stash is a buffer read from its front: moved down once half of it
// is read, rather than sliced forward and copied whole at every growth.
func (l *loop) stash(c *conn, data []byte) {
	r := &c.ring
	if r.stashOff > 0 && r.stashOff >= len(r.stash)/2 {
		n := copy(r.stash, r.stash[r.stashOff:])
		r.stash, r.stashOff = r.stash[:n], 0
	}
	r.stash = append(r.stash, data...)
	if n := int64(c.stashed()); n > l.u.maxStash.Load() {
		l.u.maxStash.Store(n)
	}
	l.noteHeld(c)
	if c.stashed() > stashMax && !r.stopped {
		r.stopped = true
		if r.recvOn {
			l.cancelRecv(c)
		}
	}
	if r.flight.left() == 0 && !r.sending {
		l.resumeLater(c) // no send to wait for: executed next round
	}
}

// feed executes the requests in data, as the epoll loop executes what one
// read brought (conn.readable), as many times as the request reader needs
// to take it all, or until more than roundOutMax bytes of replies are
// queued; it returns what is left.
func (l *loop) feed(c *conn, data []byte) []byte {
	c.src.data = data
	for stuck := 0; len(c.src.data) > 0 && !c.quit && !c.shutdown && !c.ring.closing; {
		before := len(c.src.data)
		if !c.readable() {
			l.closeRing(c)
			break
		}
		if c.left() > roundOutMax {
			break
		}
		if len(c.src.data) == before {
			// The reader took nothing: it has failed the request for its
			// size and answers so at the next call.
			if stuck++; stuck > 2 {
				l.closeRing(c)
				break
			}
		}
	}
	rest := c.src.data
	c.src.data = nil
	return rest
}

// sendReplies sends the round's replies: one send per connection, all
// submitted at the next enter.
func (l *loop) sendReplies() {
	for _, c := range l.ready {
		c.queued = false
		switch {
		case c.ring.closing:
		case c.ring.direct:
			l.flushDirect(c)
		case c.discard:
			c.reset()
			l.closeRing(c)
		case c.ring.sending || c.ring.flight.left() > 0:
			// The send under way goes on with the queue when it is out.
		case c.left() > 0:
			l.send(c)
		default:
			l.repliesOut(c)
		}
	}
	clear(l.ready)
	l.ready = l.ready[:0]
}

// send hands c's queue of replies to a send, and gives c the emptied
// queue of the send before it to fill.
func (l *loop) send(c *conn) {
	r := &c.ring
	c.replyQueue, r.flight = r.flight, c.replyQueue
	if len(r.flight.segs) > 0 {
		r.flight.seal()
	}
	l.noteHeld(c)
	if c.stashed() > 0 || r.stopped {
		l.resumeLater(c) // the queue has room again
	}
	l.transmit(c)
}

// transmit queues a send of what flight has left to write.
func (l *loop) transmit(c *conn) {
	r := &c.ring
	f := &r.flight
	ud := userData(udSend, r.slot)
	r.sending = true
	if len(f.segs) == 0 {
		l.sqe().PrepSend(c.fd, f.out[f.mark:], sendFlags, ud)
		return
	}
	iov := f.iovecs(r.iov[:0], math.MaxInt)
	r.iov = iov
	r.msg = unix.Msghdr{Iov: unsafe.SliceData(iov)}
	r.msg.SetIovlen(len(iov))
	l.sqe().PrepSendmsg(c.fd, &r.msg, sendFlags, ud)
}

// sent handles a send's completion: the rest of the send, or the queue
// filled meanwhile.
func (l *loop) sent(c *conn, e *iouring.CQE) {
	r := &c.ring
	r.sending = false
	clear(r.iov) // no reference to a value outlives the send
	if r.closing {
		l.release(c)
		return
	}
	if e.Res < 0 {
		l.closeRing(c) // the client is gone
		return
	}
	l.s.stats.netOut.Add(int64(e.Res))
	c.active = l.s.now.Load() // see Server.stale
	f := &r.flight
	if len(f.segs) == 0 {
		f.mark += int(e.Res)
	} else {
		f.advance(int(e.Res))
	}
	if f.left() > 0 {
		l.transmit(c) // cut short, or more pieces than one sendmsg takes
		return
	}
	f.reset(l)
	if cap(f.out) > keepOutSize {
		f.out = nil
	}
	if c.left() > 0 {
		l.queue(c) // sent after this round's commit, as the round's replies
		return
	}
	l.repliesOut(c)
}

// repliesOut goes on with a connection whose replies are all written:
// closes it after its last one, or goes on with it at the end of the
// round (resumeAll).
func (l *loop) repliesOut(c *conn) {
	if c.quit || c.shutdown {
		if c.shutdown {
			go l.s.Close()
		}
		l.closeRing(c)
		return
	}
	if c.ring.stopped || c.stashed() > 0 {
		l.resumeLater(c)
	}
}

// noteHeld records the memory c holds for its replies (the buffers of its
// send and its queue: values written from the table take none) and its
// stash, if it is the most yet.
func (l *loop) noteHeld(c *conn) {
	n := int64(c.ring.flight.held() + c.held() + cap(c.ring.stash))
	if n > l.u.maxHeld.Load() {
		l.u.maxHeld.Store(n)
	}
}

// resumeLater has resumeAll go on with c at the start of the next round.
func (l *loop) resumeLater(c *conn) {
	if !c.ring.resume {
		c.ring.resume = true
		l.u.resume = append(l.u.resume, c)
	}
}

// resumeAll goes on with the connections whose queue has room: executes
// their stash up to roundOutMax bytes of replies, and once it is empty
// receives again. It runs before the round's commit, so that what it
// executes is committed before it is answered, like what the round
// received.
func (l *loop) resumeAll() {
	u := l.u
	for _, c := range u.resume {
		r := &c.ring
		r.resume = false
		if r.closing || c.quit || c.shutdown || c.left() > roundOutMax {
			continue // resumed again once the queue goes to a send
		}
		if c.stashed() > 0 {
			rest := l.feed(c, r.stash[r.stashOff:])
			if r.closing {
				continue
			}
			r.stashOff = len(r.stash) - len(rest)
			if len(rest) > 0 {
				continue
			}
			r.stash, r.stashOff = r.stash[:0], 0
			if cap(r.stash) > stashKeep {
				r.stash = nil
			}
		}
		if r.stopped && !c.quit && !c.shutdown {
			r.stopped = false
			l.rearm(c)
		}
	}
	clear(u.resume)
	u.resume = u.resume[:0]
}

// closeRing closes c: its requests in flight are cancelled, and it is
// released once they have ended.
func (l *loop) closeRing(c *conn) {
	if c.ring.closing {
		return
	}
	c.ring.closing = true
	c.ring.stash, c.ring.stashOff = nil, 0
	if c.ring.recvOn || c.ring.sending {
		l.sqe().PrepCancelFD(c.fd, userData(udCancel, c.ring.slot))
	}
	l.release(c)
}

// release closes the socket of a closed connection once nothing of it is
// in flight, and frees its slot.
func (l *loop) release(c *conn) {
	if !c.ring.closing || c.ring.recvOn || c.ring.sending {
		return
	}
	u := l.u
	unix.Close(c.fd)
	c.ring.flight.reset(l) // nothing reads it any more
	u.slots[c.ring.slot] = nil
	u.free = append(u.free, c.ring.slot)
	u.live--
	if u.direct == c {
		u.direct = nil
	}
	l.s.forget(c)
}

// drain closes every connection and waits until none of their requests is
// in flight: cancelled requests complete at once.
func (l *loop) drain() {
	u := l.u
	for _, c := range u.slots {
		if c != nil {
			l.closeRing(c)
		}
	}
	for u.live > 0 && l.enter(1) {
		l.reap()
	}
	if u.live > 0 {
		// The ring failed: closing it cancels what is left.
		for _, c := range u.slots {
			if c != nil {
				unix.Close(c.fd)
				l.s.forget(c)
			}
		}
	}
	l.closeIncoming()
}
