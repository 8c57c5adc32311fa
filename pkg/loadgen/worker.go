package loadgen

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
	"github.com/kvbench/kvbench/pkg/loadgen/series"
	"github.com/kvbench/kvbench/pkg/resp"
	"golang.org/x/sys/unix"
)

// errStopped ends a worker whose run was aborted elsewhere.
var errStopped = errors.New("stopped")

const (
	readBufSize = 64 << 10               // initial read buffer per connection
	maxWait     = 100 * time.Millisecond // longest epoll_wait: timeouts are checked at least this often
)

// sock is a conn with its socket and buffers.
type sock struct {
	*conn
	lnk link.Link // its socket, and TLS over it (package link)
	w   *worker
	idx int32 // index in w.socks, the epoll user data

	wbuf    []byte // being written, from woff (counted over wbuf and wsegs)
	woff    int
	wsegs   []wseg // the windows written between wbuf's bytes
	nbuf    []byte // the next batch, built while wbuf's replies are awaited
	nsegs   []wseg // its windows
	iov     []unix.Iovec
	wantOut bool // EPOLLOUT is registered: wbuf could not be written whole
	muted   bool // no event is registered: the connection is done

	rbuf []byte // received, unparsed: rbuf[r:n]
	r, n int
	st   link.Stamped // the reads of a worker that stamps receives

	quota   int64 // requests this phase may still build; < 0: unbounded
	seq     int64 // open loop: requests scheduled in this phase
	offset  float64
	last    int64 // last reply, or last send with nothing in flight
	done    bool
	replies int64 // this phase
	batches int64 // open loop: the writes of new requests this phase
	// revived says the connection was lost and redialled (reconnect.go):
	// the worker's loop pumps it again.
	revived bool
}

// worker is one OS thread's epoll loop over its share of the connections.
type worker struct {
	epfd, evfd int
	socks      []*sock
	hist       *hdrhistogram.Histogram
	lag        *hdrhistogram.Histogram // open loop: intended to actual send, ns
	epoch      time.Time               // the runner's clock
	events     []unix.EpollEvent
	raw        bool         // make raw system calls (see sys.go)
	done       atomic.Int64 // replies this phase, for progress
	last       int64        // time of the last reply this phase
	_          [64]byte     // keep workers' counters off each other's cache lines

	cmdHist  []*hdrhistogram.Histogram   // per command of a mix (mixconn.go)
	opHist   *[3]*hdrhistogram.Histogram // a mixed run's, per op (opSet, opGet); nil otherwise
	nodeHist []*hdrhistogram.Histogram   // a cluster run's, per master (clusterconn.go)
	// iv is the interval it counts (a series is recorded), ser the run's
	// points it adds to; nil without a series.
	iv  *series.Acc
	ser *series.Series
	// repump says a cluster socket of this worker may take elements again
	// (stalledWake), or a socket was redialled (sock.revived); it is
	// pumped at the end of the loop's turn.
	repump bool
	// redial redials lost connections (Config.Reconnect); nil: a lost
	// connection fails the run.
	redial *redialer
	// An open loop's rounds (schedule.NextRound): round is the time of
	// the last, which sent every request due by then; next the one
	// planned; poll keeps the polling between them within its budget.
	round, next int64
	poll        schedule.Poller
	// stamped says the worker's open loop sleeps between rounds without
	// waking for replies: the kernel stamps when each arrived
	// (link.StampReceives), and a round reads them with those times
	// (plaintext sockets only; crypto/tls reads for itself). tfd is the
	// epoll instance it sleeps in, which holds only the wake-up eventfd;
	// realOff converts the kernel's times to the run's clock.
	stamped bool
	tfd     int
	realOff int64
	// blocked says a connection has every pipeline slot taken and a
	// request due by the next round: only a reply frees its slot, so the
	// stamping worker wakes for replies until the round (at pipeline 1,
	// every request waits for the reply before it).
	blocked bool
}

// stalledWake tells the worker that a stalled cluster socket of its own
// may go on: at once when called from its own loop, else by waking its
// epoll_wait.
func (w *worker) stalledWake(other bool) {
	if other {
		w.wake()
		return
	}
	w.repump = true
}

func newWorker() (*worker, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	w := &worker{epfd: epfd, evfd: evfd, tfd: -1, hist: newHistogram(), lag: newHistogram()}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		w.close()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return w, nil
}

// stampReceives makes the worker's open loop read its replies' times
// from the kernel instead of waking for them (worker.stamped); its
// sockets are added after.
func (w *worker) stampReceives() error {
	tfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(tfd, unix.EPOLL_CTL_ADD, w.evfd, &ev); err != nil {
		unix.Close(tfd)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	w.tfd, w.stamped = tfd, true
	return nil
}

func (w *worker) add(c *conn, l link.Link) error {
	fd := l.FD
	s := &sock{conn: c, lnk: l, w: w, idx: int32(len(w.socks)), rbuf: make([]byte, readBufSize)}
	if n := c.p.batchBytes(); n > 0 {
		s.wbuf, s.nbuf = presized(n), presized(n)
	}
	c.cmdHist, c.opHist = w.cmdHist, w.opHist
	if w.stamped {
		if err := link.StampReceives(fd); err != nil {
			return err
		}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: s.idx}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	w.socks = append(w.socks, s)
	w.events = make([]unix.EpollEvent, len(w.socks)+1)
	return nil
}

func (w *worker) now() int64 { return int64(time.Since(w.epoch)) }

// wake interrupts the worker's epoll_wait.
func (w *worker) wake() {
	var one = [8]byte{1}
	_, _ = unix.Write(w.evfd, one[:])
}

func (w *worker) close() {
	for _, s := range w.socks {
		unix.Close(s.lnk.FD)
	}
	unix.Close(w.evfd)
	unix.Close(w.epfd)
	if w.tfd >= 0 {
		unix.Close(w.tfd)
	}
}

// run drives the worker's connections through one phase. It returns when
// they are all done, on the first connection error, or with errStopped
// once r.stop is set.
func (w *worker) run(r *runner, ph *schedule.Phase) error {
	// The loop blocks only in epoll_wait; locking it to its thread keeps
	// the scheduler from moving it and its buffers between threads.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var drain [8]byte
	_, _ = unix.Read(w.evfd, drain[:])
	if ph.Open() {
		defer link.FineTimerSlack()()
	}
	w.hist.Reset()
	w.lag.Reset()
	for _, h := range w.cmdHist {
		h.Reset()
	}
	if w.opHist != nil {
		w.opHist[opSet].Reset()
		w.opHist[opGet].Reset()
	}
	for _, h := range w.nodeHist {
		h.Reset()
	}
	w.done.Store(0)
	w.last = ph.Start
	active := 0
	now := r.now()
	w.round, w.next, w.poll = now, now, schedule.Poller{}
	if w.iv != nil {
		start, end := w.ser.Bounds(now)
		w.iv.Reset(start, end)
	}
	for _, s := range w.socks {
		s.begin(now)
		if err := s.watch(true); err != nil {
			return err
		}
		if err := s.pump(ph, now); err != nil {
			return err
		}
		if !s.done {
			active++
		}
	}
	lastCheck := now
	for active > 0 {
		if r.stop.Load() {
			return errStopped
		}
		var n int
		var err error
		if ph.Open() {
			wait := w.openWait(ph, now)
			if w.stamped && wait > 0 && !w.blocked {
				// Asleep until the round, whatever arrives; then what
				// has arrived is read, with the kernel's times.
				if _, err = link.EpollWaitNs(w.raw, w.tfd, w.events[:1], wait); err == nil {
					n, err = link.EpollWaitNs(w.raw, w.epfd, w.events, 0)
				}
			} else {
				n, err = link.EpollWaitNs(w.raw, w.epfd, w.events, wait)
			}
			if wait == 0 && n <= 0 {
				if t := r.now(); t < w.next {
					w.poll.Polled(now, t) // nothing came, nothing due
				}
			}
			if w.stamped {
				t := time.Now()
				w.realOff = t.UnixNano() - int64(t.Sub(w.epoch))
			}
		} else {
			n, err = link.EpollWait(w.raw, w.epfd, w.events, int(maxWait/time.Millisecond))
		}
		if err != nil {
			if !errors.Is(err, unix.EINTR) {
				return fmt.Errorf("epoll_wait: %w", err)
			}
			// Most likely a preemption signal: yield, since a raw
			// system call is no preemption point.
			runtime.Gosched()
		}
		for _, ev := range w.events[:max(n, 0)] {
			if ev.Fd < 0 {
				// The stop signal, checked at the top, or a sibling of a
				// stalled cluster socket having moved on.
				var drain [8]byte
				_, _ = unix.Read(w.evfd, drain[:])
				w.repump = true
				continue
			}
			s := w.socks[ev.Fd]
			if s.done {
				// A finished connection that the server closes or
				// writes to would wake every epoll_wait of the phase:
				// stop watching it until the next phase.
				if err := s.watch(false); err != nil {
					return err
				}
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				if err := s.flush(); err != nil {
					return err
				}
			}
			if ev.Events&^unix.EPOLLOUT != 0 {
				if err := s.receive(r, ph); err != nil {
					return err
				}
			}
			if s.done {
				active--
			}
		}
		now = r.now()
		if w.repump {
			w.repump = false
			for _, s := range w.socks {
				if !s.done && (s.revived || s.route != nil && s.route.stalled.Swap(false)) {
					s.revived = false
					if err := s.pump(ph, now); err != nil {
						return err
					}
					if s.done {
						active--
					}
				}
			}
		}
		if ph.Open() && now >= w.next {
			w.round = now
			for _, s := range w.socks {
				if !s.done {
					if err := s.pump(ph, now); err != nil {
						return err
					}
					if s.done {
						active--
					}
				}
			}
		}
		if now-lastCheck >= int64(maxWait) {
			lastCheck = now
			for _, s := range w.socks {
				if s.inflight > 0 && now-s.last > int64(r.cfg.Timeout) {
					return fmt.Errorf("connection %d: no reply for %v (%d requests in flight)", s.id, r.cfg.Timeout, s.inflight)
				}
			}
		}
	}
	return nil
}

// openWait plans an open-loop worker's next round (w.next) and returns
// how long it may block in epoll_pwait2 before it (schedule.Sleep): 0
// while it polls for replies.
func (w *worker) openWait(ph *schedule.Phase, now int64) int64 {
	next := now + int64(maxWait)
	awaited := false // a reply is expected soon
	inflight := false
	for _, s := range w.socks {
		if s.done {
			continue
		}
		inflight = inflight || s.inflight > 0
		if s.inflight > 0 && schedule.Polls(now, s.last) && !w.stamped {
			awaited = true
		}
		// A worker that stamps receives plans its rounds by every
		// connection's next request, its pipeline full or not: the round
		// reads the replies that free it.
		if t, ok := s.nextDue(ph, w.stamped); ok && t < next {
			next = t
		}
	}
	if w.stamped && inflight && next == now+int64(maxWait) {
		next = now // nothing left to send: read the replies each round
	}
	w.next = schedule.NextRound(w.round, next)
	w.blocked = false
	if w.stamped {
		for _, s := range w.socks {
			if s.inflight >= s.p.cfg.Pipeline {
				if t, ok := s.nextDue(ph, true); ok && t <= w.next {
					w.blocked = true
					break
				}
			}
		}
	}
	poll := w.poll.Allow(now)
	if awaited && poll {
		return 0
	}
	return schedule.Sleep(now, w.next, maxWait, poll)
}

// begin resets the connection for a phase.
func (s *sock) begin(now int64) {
	s.counts = counts{}
	s.replies = 0
	s.batches = 0
	s.seq = 0
	s.done = false
	s.last = now
	s.pre = 0
}

// nextDue returns the intended send time of the connection's next request
// in an open-loop phase, if it may send one: with full, also when every
// pipeline slot is taken.
func (s *sock) nextDue(ph *schedule.Phase, full bool) (int64, bool) {
	if s.done || s.quota == 0 || s.inflight >= s.p.cfg.Pipeline && !full {
		return 0, false
	}
	if cr := s.route; cr != nil { // its next element's time in the group's schedule
		if !cr.peeked && !s.scan() {
			return 0, false
		}
		return ph.Due(s.offset, cr.peek.pos-cr.grp.base), true
	}
	if s.rp != nil {
		return s.replayDue(ph), true
	}
	return ph.Due(s.offset, uint64(s.seq)), true
}

// pump sends what the connection may send now, and marks it done when it
// has nothing left to send or await.
func (s *sock) pump(ph *schedule.Phase, now int64) error {
	if ph.Deadline > 0 && now >= ph.Deadline {
		s.quota = 0
		s.pre = 0 // a batch built before the deadline is dropped
	}
	if ph.Open() {
		return s.pumpOpen(ph, now)
	}
	if s.inflight > 0 {
		return nil
	}
	if s.pre == 0 && s.quota != 0 {
		s.buildNext()
	} else if s.route != nil && s.rp == nil && s.quota < 0 && s.pre < s.p.cfg.Pipeline {
		s.topUp()
	}
	if s.pre == 0 && !s.depsQueued() {
		if cr := s.route; cr != nil && !cr.exhausted && s.quota != 0 {
			// Held at the group's window: published, then looked at
			// again, so that a sibling moving on meanwhile is not missed.
			cr.stalled.Store(true)
			if s.buildNext(); s.pre == 0 {
				return nil
			}
			cr.stalled.Store(false)
		} else {
			s.finish()
			return nil
		}
	}
	s.wbuf, s.nbuf = s.nbuf, s.wbuf
	s.wsegs, s.nsegs = s.nsegs, s.wsegs
	if s.pre == 0 {
		s.wbuf, s.wsegs = s.wbuf[:0], s.wsegs[:0] // no batch (or one dropped): dependents only
	}
	s.woff = 0
	s.stamp(s.pre, now)
	s.wbuf, _ = s.sendDeps(s.wbuf)
	s.last = now
	if err := s.flush(); err != nil {
		return err
	}
	// Build the next batch now, while the server works on this one: in a
	// closed loop this takes the encoding off the critical path.
	if s.quota != 0 {
		s.buildNext()
	}
	return nil
}

// buildNext builds the next batch into nbuf and nsegs.
func (s *sock) buildNext() {
	s.nsegs = s.nsegs[:0]
	s.segs = &s.nsegs
	s.nbuf = s.build(s.nbuf[:0], s.batch(), 0)
	s.segs = nil
	if s.route != nil && s.pre > 0 {
		s.advanced()
	}
}

// topUp fills a cluster socket's next batch, built short while its
// group's window held it back, with what the window lets it take now: a
// batch is sent as full as the group's pace allows when it is sent, not
// when it was built. Topped up so, a 3-master run at pipeline 128 makes
// 1.09 times the writes full batches would, against 1.18.
func (s *sock) topUp() {
	s.segs = &s.nsegs
	pre := s.pre
	s.nbuf = s.build(s.nbuf, s.p.cfg.Pipeline-s.pre, 0)
	s.segs = nil
	if s.pre > pre {
		s.advanced()
	}
}

// finish marks the connection done for the phase; a cluster socket no
// longer holds its group's frontier back.
func (s *sock) finish() {
	s.done = true
	if s.route != nil {
		s.route.front.Store(math.MaxUint64)
		s.wakeSiblings()
	}
}

// batch takes the size of the next batch from the quota.
func (s *sock) batch() int {
	n := int64(s.p.cfg.Pipeline)
	if s.quota >= 0 {
		n = min(n, s.quota)
		s.quota -= n
	}
	return int(n)
}

// pumpOpen sends the requests due by its worker's last round, each
// stamped with its intended send time, as far as the pipeline allows.
func (s *sock) pumpOpen(ph *schedule.Phase, now int64) error {
	due := s.w.round
	if s.woff == s.wlen() {
		s.wbuf, s.wsegs, s.woff = s.wbuf[:0], s.wsegs[:0], 0
	}
	var deps int
	s.wbuf, deps = s.sendDeps(s.wbuf)
	sent := 0
	for {
		t, ok := s.nextDue(ph, false)
		if !ok || t > due {
			break
		}
		if s.inflight == 0 {
			s.last = now
		}
		s.segs = &s.wsegs
		pre := s.pre
		s.wbuf = s.build(s.wbuf, 1, 0)
		s.segs = nil
		if s.pre == pre {
			break // a cluster socket's element is gone past the phase's end
		}
		s.stamp(1, t)
		s.seq++
		if s.quota > 0 {
			s.quota--
		}
		sent++
	}
	if (s.quota == 0 || s.route != nil && s.route.exhausted) && s.inflight == 0 {
		s.finish()
		return nil
	}
	if sent == 0 {
		if deps > 0 {
			return s.flush()
		}
		return nil
	}
	// The send lag of each request, up to the write about to be made.
	s.batches++
	at := s.w.now()
	mask := len(s.ring) - 1
	for i := s.head + s.inflight - sent; i < s.head+s.inflight; i++ {
		_ = s.w.lag.RecordValue(at - s.ring[i&mask].t)
	}
	return s.flush()
}

// presized returns an empty buffer of capacity n whose pages are already
// in memory: written once now, before the measurement, so that the first
// batches do not take the page faults (a batch of large values is
// megabytes).
func presized(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	return b[:0]
}

// flush writes what is left of wbuf, and asks for EPOLLOUT when the socket
// takes only part of it.
func (s *sock) flush() error {
	if s.lnk.IsTLS() {
		return s.flushTLS()
	}
	for s.woff < s.wlen() {
		var n int
		var err error
		if len(s.wsegs) == 0 {
			n, err = link.SysWrite(s.w.raw, s.lnk.FD, s.wbuf[s.woff:])
		} else {
			n, err = s.writeSegs()
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return s.setOut(true)
			}
			return s.ioError(err)
		}
		s.woff += n
	}
	if s.wantOut {
		return s.setOut(false)
	}
	return nil
}

// wlen is the length of what wbuf and wsegs hold together.
func (s *sock) wlen() int {
	n := len(s.wbuf)
	for _, g := range s.wsegs {
		n += len(g.data)
	}
	return n
}

// writeSegs writes wbuf with its windows in place, from woff on, with one
// writev of at most maxIovecs pieces.
func (s *sock) writeSegs() (int, error) {
	iov := s.iov[:0]
	pos, prev := 0, 0 // where the next piece starts; wbuf's bytes taken
	add := func(b []byte) {
		n := len(b)
		if pos+n > s.woff && len(iov) < maxIovecs {
			b = b[max(s.woff-pos, 0):]
			v := unix.Iovec{Base: unsafe.SliceData(b)}
			v.SetLen(len(b))
			iov = append(iov, v)
		}
		pos += n
	}
	for _, g := range s.wsegs {
		add(s.wbuf[prev:g.at])
		add(g.data)
		prev = g.at
	}
	add(s.wbuf[prev:])
	s.iov = iov
	return link.SysWritev(s.w.raw, s.lnk.FD, iov)
}

// maxIovecs is Linux's IOV_MAX.
const maxIovecs = 1024

// flushTLS is flush over TLS: wbuf is encrypted whole, and EPOLLOUT
// asked for while ciphertext waits for the socket.
func (s *sock) flushTLS() error {
	l := s.lnk
	if s.woff < len(s.wbuf) {
		n, err := l.Write(s.w.raw, s.wbuf[s.woff:])
		if err != nil && !errors.Is(err, unix.EAGAIN) {
			return s.ioError(err)
		}
		s.woff += n
	}
	if err := s.lnk.Flush(); err != nil {
		return s.ioError(err)
	}
	return s.setOut(s.woff < len(s.wbuf) || l.Pending())
}

func (s *sock) setOut(on bool) error {
	if s.wantOut == on {
		return nil
	}
	s.wantOut = on
	return s.epollMod()
}

// watch turns all events of the connection on or off.
func (s *sock) watch(on bool) error {
	if s.muted == !on {
		return nil
	}
	s.muted = !on
	return s.epollMod()
}

func (s *sock) epollMod() error {
	ev := unix.EpollEvent{Fd: s.idx}
	if !s.muted {
		ev.Events = unix.EPOLLIN | unix.EPOLLRDHUP
		if s.wantOut {
			ev.Events |= unix.EPOLLOUT
		}
	}
	if err := unix.EpollCtl(s.w.epfd, unix.EPOLL_CTL_MOD, s.lnk.FD, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// receive reads one chunk, parses the replies in it and sends what can be
// sent next. Over TLS it reads until the socket is empty, since records
// crypto/tls has buffered would not wake epoll_wait.
func (s *sock) receive(r *runner, ph *schedule.Phase) error {
	if s.lnk.IsTLS() {
		return s.receiveTLS(r, ph)
	}
	s.makeRoom()
	var n int
	var err error
	at := int64(0) // when it arrived, on the run's clock; 0: now
	if s.w.stamped {
		var real int64
		if n, real, err = s.st.Read(s.w.raw, s.lnk.FD, s.rbuf[s.n:]); real > 0 {
			at = real - s.w.realOff
		}
	} else {
		n, err = link.SysRead(s.w.raw, s.lnk.FD, s.rbuf[s.n:])
	}
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return nil
		}
		return s.ioError(err)
	}
	if n == 0 {
		return s.ioError(link.ErrServerClosed)
	}
	return s.received(r, ph, n, at)
}

func (s *sock) receiveTLS(r *runner, ph *schedule.Phase) error {
	l := s.lnk
	for !s.done {
		s.makeRoom()
		n, err := l.Read(s.w.raw, s.rbuf[s.n:])
		switch {
		case errors.Is(err, unix.EAGAIN):
			return nil
		case err != nil:
			return s.ioError(err)
		case n == 0:
			return s.ioError(link.ErrServerClosed)
		}
		if err := s.received(r, ph, n, 0); err != nil {
			return err
		}
	}
	return nil
}

// makeRoom makes room in rbuf for a read.
func (s *sock) makeRoom() {
	if s.n == len(s.rbuf) {
		if s.r > 0 {
			s.n = copy(s.rbuf, s.rbuf[s.r:s.n])
			s.r = 0
		} else {
			s.rbuf = append(s.rbuf, make([]byte, len(s.rbuf))...)
		}
	}
}

// received parses the replies in rbuf after n bytes were read into it,
// which arrived at at (0: now), and sends what can be sent next.
func (s *sock) received(r *runner, ph *schedule.Phase, n int, at int64) error {
	now := r.now()
	if at <= 0 || at > now {
		at = now
	} else if s.inflight > 0 {
		// No reply comes before its request's time: a clock stepped
		// between the kernel's time and the run's does not make one.
		at = max(at, s.ring[s.head&(len(s.ring)-1)].t)
	}
	if iv := s.w.iv; iv != nil && now >= iv.End {
		s.w.ser.Rotate(s.w.iv, now)
	}
	s.n += n
	if s.inflight == 0 {
		// Only RESP3 pushes may come while no request is in flight.
		m, err := s.skipPushes(s.rbuf[s.r:s.n])
		s.r += m
		if s.r == s.n {
			s.r, s.n = 0, 0
		}
		if err != nil || s.r < s.n && s.rbuf[s.r] != resp.TypePush {
			return fmt.Errorf("connection %d: unexpected data from the server: %s", s.id, quote(s.rbuf[s.r:s.n]))
		}
		return nil
	}
	before := s.inflight
	m, err := s.consume(s.rbuf[s.r:s.n], at)
	s.r += m
	if s.r == s.n {
		s.r, s.n = 0, 0
	} else if len(s.rbuf)-s.n < 4<<10 {
		s.n = copy(s.rbuf, s.rbuf[s.r:s.n])
		s.r = 0
	}
	if got := int64(before - s.inflight); got > 0 {
		s.replies += got
		if iv := s.w.iv; iv != nil {
			iv.Requests += got
			if s.ivNode >= 0 && s.ivNode < len(iv.Node) {
				iv.Node[s.ivNode].Requests += got
			}
		}
		s.w.done.Add(got)
		s.w.last = max(s.w.last, at)
		s.last = now
	}
	if err != nil {
		return err
	}
	return s.pump(ph, now)
}

// ioError is the error of the connection's socket: it names the
// connection, and a cluster's lost master or a redialled connection
// goes on.
func (s *sock) ioError(err error) error {
	err = fmt.Errorf("connection %d: %w (%d replies received in this phase, %d requests in flight)",
		s.id, err, s.replies, s.inflight)
	if s.route != nil {
		return s.nodeLost(err) // cluster.go
	}
	if s.w.redial != nil {
		return s.redial(err) // reconnect.go
	}
	return err
}
