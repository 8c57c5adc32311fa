package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
	"golang.org/x/sys/unix"
)

// ErrServerClosed is the error of a connection the server closed.
var ErrServerClosed = errors.New("server closed the connection")

// maxPoll bounds a Pipe's ppoll(2), so that ctx is looked at this often.
const maxPoll = 100 * time.Millisecond

// Pipe is a Link driven by one goroutine, blocking: the prefill writes a
// batch of requests ahead of the replies it reads through it. Its system
// calls are raw, as the workers' are; the caller lends a P (LendProcs)
// for the blocking one, ppoll(2): through the scheduler the prefill of
// the kvstore's RSET took 0.22-0.26 CPU seconds per million keys, raw
// 0.13-0.16.
type Pipe struct {
	ctx     context.Context
	l       Link
	timeout time.Duration
	rbuf    []byte // received, unparsed: rbuf[r:]
	r       int
	last    time.Time // the last reply completed, or bytes written
}

// NewPipe returns the pipe over l: it fails when the server completes no
// reply and takes nothing for timeout (bytes of a reply that never ends,
// trickled in, do not count), or when ctx ends.
func NewPipe(ctx context.Context, l Link, timeout time.Duration) *Pipe {
	return &Pipe{ctx: ctx, l: l, timeout: timeout, rbuf: make([]byte, 0, 64<<10), last: time.Now()}
}

// Write writes b whole, reading what the server sends meanwhile.
func (f *Pipe) Write(b []byte) error {
	for len(b) > 0 {
		n, err := f.l.Write(Raw, b)
		switch {
		case n > 0:
			b = b[n:]
			f.last = time.Now()
		case errors.Is(err, unix.EAGAIN):
			// The server may be waiting for its replies to be read
			// before it reads more.
			if err := f.wait(unix.POLLOUT | unix.POLLIN); err != nil {
				return err
			}
			if _, err := f.read(); err != nil {
				return err
			}
		case errors.Is(err, unix.EINTR):
		case err != nil:
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// read reads what has arrived into rbuf, without waiting, and reports
// how many bytes that was.
func (f *Pipe) read() (int, error) {
	if f.r > 0 && f.r == len(f.rbuf) {
		f.rbuf, f.r = f.rbuf[:0], 0
	}
	if cap(f.rbuf)-len(f.rbuf) < 4<<10 {
		if f.r > 0 {
			f.rbuf = f.rbuf[:copy(f.rbuf, f.rbuf[f.r:])]
			f.r = 0
		} else {
			f.rbuf = slices.Grow(f.rbuf, cap(f.rbuf))
		}
	}
	for {
		n, err := f.l.Read(Raw, f.rbuf[len(f.rbuf):cap(f.rbuf)])
		switch {
		case n > 0:
			// Not f.last: a reply trickling in byte by byte is no
			// reply until it is whole (Reply).
			f.rbuf = f.rbuf[:len(f.rbuf)+n]
			return n, nil
		case n == 0 && err == nil:
			return 0, ErrServerClosed
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case !errors.Is(err, unix.EINTR):
			return 0, fmt.Errorf("read: %w", err)
		}
	}
}

// wait waits until the socket is ready for events, ctx is done, or the
// server has completed no reply and taken nothing for the configured
// Timeout.
func (f *Pipe) wait(events int16) error {
	deadline := f.last.Add(f.timeout)
	for {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("no reply for %v", f.timeout)
		}
		if f.l.Pending() {
			events |= unix.POLLOUT // TLS ciphertext to write (see link)
		}
		n, err := PollFd(Raw, f.l.FD, events, min(left, maxPoll))
		switch {
		case errors.Is(err, unix.EINTR):
			// Most likely a preemption signal: yield, since a raw
			// system call is no preemption point.
			runtime.Gosched()
		case err != nil:
			return fmt.Errorf("poll: %w", err)
		case n > 0:
			return nil
		}
	}
}

// Reply returns the next complete reply, waiting for it.
func (f *Pipe) Reply() (resp.Reply, []byte, error) {
	for {
		b := f.rbuf[f.r:]
		if len(b) >= 5 && string(b[:5]) == "+OK\r\n" {
			f.r += 5
			f.last = time.Now()
			return resp.Reply{Type: resp.TypeSimple, Data: b[1:3]}, b[:5], nil
		}
		r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if err != nil {
			return r, nil, err
		}
		if n > 0 && (r.Elements() > 0 || r.Type == resp.TypeAttribute) {
			n, err = resp.SkipReply(b, resp.DefaultMaxBulkLen)
			if err != nil {
				return r, nil, err
			}
		}
		if n > 0 && r.Type == resp.TypePush {
			f.r += n // out of band, not a reply
			continue
		}
		if n > 0 {
			f.r += n
			f.last = time.Now()
			return r, b[:n], nil
		}
		for {
			m, err := f.read()
			if err != nil {
				return r, nil, err
			}
			if m > 0 {
				break
			}
			if err := f.wait(unix.POLLIN); err != nil {
				return r, nil, err
			}
		}
	}
}

// DBSize sends DBSIZE and returns the key count; ok is false when the
// server does not know the command (Redis's "ERR unknown command").
func (f *Pipe) DBSize() (n int64, ok bool, err error) {
	f.last = time.Now()
	if err := f.Write([]byte("*1\r\n$6\r\nDBSIZE\r\n")); err != nil {
		return 0, false, err
	}
	r, raw, err := f.Reply()
	switch {
	case err != nil:
		return 0, false, err
	case r.IsError() && bytes.HasPrefix(r.Data, []byte("ERR unknown command")):
		return 0, false, nil
	case r.IsError():
		return 0, false, fmt.Errorf("server replied %q", r.Data)
	case r.Type != resp.TypeInt:
		return 0, false, fmt.Errorf("unexpected reply %s", fmt.Sprintf("%q", raw))
	}
	return r.Int, true, nil
}
