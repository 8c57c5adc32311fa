package kvstore

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A loop serves its share of the connections, either with epoll, as Redis
// does (wait for readable sockets, read and execute each one's batch, then
// write every reply: a read and a write per batch, and an epoll_wait per
// round), or with io_uring (uringloop.go: a few system calls per round for
// every receive and send). Go's netpoller would park and wake a goroutine
// per request (an extra read that finds nothing, a scheduler round trip);
// at one request per round trip that costs a fifth of the throughput.
// Connections are spread over Config.Loops loops.
type loop struct {
	s      *Server
	wakefd int     // eventfd: new connections, shutdown
	ready  []*conn // connections with replies to write this round

	// The epoll loop's.
	epfd   int
	conns  map[int]*conn
	events []unix.EpollEvent
	// The io_uring loop's; nil under epoll.
	u *uringState

	blocks [][]byte     // free reply blocks (see reply.go)
	iov    []unix.Iovec // the iovecs of one writev

	mu       sync.Mutex // guards incoming and stopping
	incoming []*conn
	stopping bool
	// sweepDue asks the loop to close its stale clients (sweep).
	sweepDue atomic.Bool
}

// newLoop returns a loop of the kind io names: IOEpoll or IOUring.
func newLoop(s *Server, io string) (*loop, error) {
	// The io_uring loop reads its eventfd through the ring, which waits
	// for a blocking descriptor and fails at once on a non-blocking one.
	flags := unix.EFD_CLOEXEC
	if io != IOUring {
		flags |= unix.EFD_NONBLOCK
	}
	wakefd, err := unix.Eventfd(0, flags)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &loop{s: s, wakefd: wakefd, epfd: -1}
	if io == IOUring {
		if l.u, err = newUringState(s.cfg, wakefd); err != nil {
			unix.Close(wakefd)
			return nil, err
		}
		return l, nil
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		unix.Close(wakefd)
		return nil, fmt.Errorf("epoll_create: %w", err)
	}
	l.conns, l.events = make(map[int]*conn), make([]unix.EpollEvent, 256)
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, wakefd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd)}); err != nil {
		l.closeFds()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return l, nil
}

// closeFds releases what newLoop made.
func (l *loop) closeFds() {
	unix.Close(l.wakefd)
	if l.epfd >= 0 {
		unix.Close(l.epfd)
	}
	if l.u != nil {
		l.u.close()
	}
}

func (l *loop) wake() {
	var one = [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// add hands a new connection to the loop.
func (l *loop) add(c *conn) {
	c.l = l
	l.mu.Lock()
	l.incoming = append(l.incoming, c)
	l.mu.Unlock()
	l.wake()
}

// stop makes the loop close its connections and return, after answering
// what it has read.
func (l *loop) stop() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.wake()
}

func (l *loop) run() {
	defer l.closeFds()
	if l.u != nil {
		l.runUring()
		return
	}
	yielded := time.Now()
	for i := 0; ; i++ {
		if i%yieldCheck == 0 && time.Since(yielded) > yieldEvery {
			// Let the scheduler see this goroutine reschedule: see
			// yieldEvery.
			runtime.Gosched()
			yielded = time.Now()
		}
		n, err := unix.EpollWait(l.epfd, l.events, -1)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			l.s.log.Error("epoll_wait failed; closing this loop's clients", "err", err)
			l.closeAll()
			return
		}
		for _, ev := range l.events[:n] {
			fd := int(ev.Fd)
			if fd == l.wakefd {
				if !l.adopt() {
					l.flushReady()
					l.closeAll()
					return
				}
				if l.sweepDue.Swap(false) {
					l.sweep()
				}
				continue
			}
			c := l.conns[fd]
			if c == nil {
				continue
			}
			switch {
			case c.blocked:
				// Room to write, or an error that the write will report.
				l.queue(c)
			case c.quit:
				// Answered for the last time; closes once written.
			default:
				if !c.readable() {
					l.close(c)
				}
			}
		}
		l.flushReady()
	}
}

// A loop under load never blocks for long, so to Go's scheduler it is one
// goroutine running without end. Every 10 ms its monitor thread (sysmon)
// preempts it, with a signal, or by taking its processor away in the
// middle of an epoll_wait; and each time it does, it goes back to checking
// every 20 µs, a wakeup and two context switches each, for the next
// millisecond or so: on two cores, a tenth of the throughput at pipeline 1
// with 50 connections (BENCHMARKS.md, "kvbench serve against
// redis-server"). Yielding now and then, which finds nothing else to run
// and returns at once, shows the monitor a goroutine that is not stuck,
// and it sleeps up to 10 ms at a time, a fifteenth of the wakeups. A yield
// wakes an idle thread to look for work, so not more often than needed.
const (
	yieldEvery = 5 * time.Millisecond // under sysmon's 10 ms
	yieldCheck = 16                   // rounds between looks at the clock
)

// adopt registers the connections handed over since the last wake. It
// reports false when the loop is to stop.
func (l *loop) adopt() bool {
	var buf [8]byte
	unix.Read(l.wakefd, buf[:])
	l.mu.Lock()
	incoming, stopping := l.incoming, l.stopping
	l.incoming = nil
	l.mu.Unlock()
	for _, c := range incoming {
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
			l.s.log.Error("cannot watch client", "client", c.addr, "err", err)
			l.s.forget(c)
			unix.Close(c.fd)
			continue
		}
		l.conns[c.fd] = c
	}
	return !stopping
}

// queue marks c as having replies to write at the end of this round.
func (l *loop) queue(c *conn) {
	if !c.queued {
		c.queued = true
		l.ready = append(l.ready, c)
	}
}

// flushReady writes the replies of every connection served this round,
// after the log has taken their writes: one commit for the whole round.
func (l *loop) flushReady() {
	l.commitRound()
	if l.u != nil {
		l.sendReplies()
		return
	}
	for _, c := range l.ready {
		c.queued = false
		if !c.flushWatched(l.epfd) {
			if c.shutdown {
				go l.s.Close()
			}
			l.close(c)
		}
	}
	clear(l.ready)
	l.ready = l.ready[:0]
}

// flushWatched writes c's replies (flush) and, when the socket fills or
// has room again, has epfd watch it for room to write instead of for
// requests, or back: a client that does not read cannot make the server
// buffer without end. It reports false when the connection is finished.
func (c *conn) flushWatched(epfd int) bool {
	wasBlocked := c.blocked
	if !c.flush() {
		return false
	}
	if c.blocked != wasBlocked {
		ev := uint32(unix.EPOLLIN)
		if c.blocked {
			ev = unix.EPOLLOUT
		}
		unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
	}
	return true
}

// commitRound commits the log once for every connection with replies this
// round, and turns the replies to writes it could not take into errors.
func (l *loop) commitRound() {
	if a := l.s.aof; a != nil {
		var end int64
		for _, c := range l.ready {
			end = max(end, c.logEnd)
		}
		if err := a.commit(end); err != nil {
			acked := a.ackedPos()
			for _, c := range l.ready {
				if c.logEnd > acked && len(c.acks) > 0 {
					c.failWrites(err)
				}
			}
		}
		for _, c := range l.ready {
			c.acks = c.acks[:0]
		}
	}
}

func (l *loop) close(c *conn) {
	if _, ok := l.conns[c.fd]; !ok {
		return
	}
	delete(l.conns, c.fd)
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	l.s.forget(c)
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		l.close(c)
	}
	l.closeIncoming()
}

// closeIncoming closes the connections handed over and not adopted.
func (l *loop) closeIncoming() {
	l.mu.Lock()
	incoming := l.incoming
	l.incoming = nil
	l.mu.Unlock()
	for _, c := range incoming {
		unix.Close(c.fd)
		l.s.forget(c)
	}
}

// socketFD takes the file descriptor of an accepted connection away from
// Go's netpoller: it duplicates the descriptor (non-blocking, as the
// original: the flag belongs to the shared file description) and closes nc.
func socketFD(nc net.Conn) (int, error) {
	defer nc.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T has no file descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	return fd, derr
}
