package loadgen

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"golang.org/x/sys/unix"
)

// ErrorReconnect is the kind (Result.Errors) of the requests a connection
// had in flight when it was lost and redialled (Config.Reconnect): they
// got no reply, so they count neither as replies nor in the latencies.
const ErrorReconnect = "reconnect"

// redialer redials the lost connections of a worker (Config.Reconnect).
// A redial blocks the worker's loop, so its other connections wait too:
// when the server is gone they are all lost anyway.
type redialer struct {
	ctx  context.Context // the run's
	stop *atomic.Bool    // the runner's: another worker ended the run
	cfg  *Config
}

// redial replaces the lost socket of a plain run's connection (cause,
// its I/O error) with a new one to the server, trying
// Config.ReconnectAttempts times, waiting Config.ReconnectBackoff after
// the first failure and twice as long after each next one, up to
// MaxReconnectBackoff. The requests in flight are dropped and counted as
// ErrorReconnect errors; the batch built and not yet written is sent on
// the new socket. When every attempt fails the run fails, naming the
// server and the attempts.
func (s *sock) redial(cause error) error {
	rd := s.w.redial
	if n := s.inflight; n > 0 {
		if s.errors == nil {
			s.errors = map[string]int64{}
		}
		s.errors[ErrorReconnect] += int64(n)
		if s.iv != nil {
			s.iv.Errors += int64(n)
		}
		s.head = (s.head + n) & (len(s.ring) - 1)
		s.inflight = 0
	}
	wait := rd.cfg.ReconnectBackoff
	var err error
	for attempt := 1; attempt <= rd.cfg.ReconnectAttempts; attempt++ {
		var l link.Link
		if l, err = rd.dial(); err == nil {
			if err := s.replace(l); err != nil {
				return err
			}
			s.Reconnects++
			// The worker's loop pumps it again (its wake sets repump):
			// nothing in flight would wake it otherwise.
			s.revived = true
			s.w.wake()
			return nil
		}
		if attempt == rd.cfg.ReconnectAttempts || !rd.sleep(wait) {
			break
		}
		wait = min(2*wait, MaxReconnectBackoff)
	}
	if cerr := rd.ctx.Err(); cerr != nil {
		return cerr
	}
	if rd.stop.Load() {
		return errStopped
	}
	return fmt.Errorf("%w; %s did not take the connection back in %d attempts (--reconnect-attempts): %w",
		cause, rd.cfg.Addr, rd.cfg.ReconnectAttempts, err)
}

// dial connects to the server and makes sure it answers: a server
// dying still accepts connections into its listener's backlog, and one
// starting may answer LOADING. Over TLS, dial has made a round trip
// already.
func (rd *redialer) dial() (link.Link, error) {
	l, err := link.Dial(rd.ctx, rd.cfg.Addr, rd.cfg.Control(), false)
	if err != nil {
		return l, err
	}
	if err := link.Ping(rd.ctx, l, rd.cfg.ConnectTimeout); err != nil {
		l.Close()
		return link.Link{}, err
	}
	return l, nil
}

// sleep waits for d, or less when the run ends first: then it returns
// false.
func (rd *redialer) sleep(d time.Duration) bool {
	const poll = 20 * time.Millisecond // how often the stop flag is looked at
	deadline := time.Now().Add(d)
	for {
		if rd.stop.Load() || rd.ctx.Err() != nil {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		timer := time.NewTimer(min(left, poll))
		select {
		case <-rd.ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
}

// replace puts l in place of the connection's socket, in the worker's
// epoll set, with nothing received or left to write.
func (s *sock) replace(l link.Link) error {
	_ = unix.EpollCtl(s.w.epfd, unix.EPOLL_CTL_DEL, s.lnk.FD, nil)
	unix.Close(s.lnk.FD)
	s.lnk = l
	if s.w.stamped {
		if err := link.StampReceives(l.FD); err != nil {
			return err
		}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: s.idx}
	if err := unix.EpollCtl(s.w.epfd, unix.EPOLL_CTL_ADD, l.FD, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	s.wantOut, s.muted = false, false
	s.r, s.n = 0, 0
	s.wbuf, s.wsegs, s.woff = s.wbuf[:0], s.wsegs[:0], 0
	return nil
}
