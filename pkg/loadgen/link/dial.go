package link

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"golang.org/x/sys/unix"
)

// Dial connects a non-blocking socket (TCP, or Unix for unix:PATH) to
// addr within o.Timeout, sets TCP_NODELAY, runs the TLS handshake when
// o.TLS is set, and sends HELLO, AUTH and SELECT as o asks
// (control.Handshake); with readonly it sends READONLY after them (a
// cluster replica's socket). The socket is raw (not a net.Conn) because
// the workers drive it with their own epoll loop; TLS runs over it in the
// same loop (see Link).
func Dial(ctx context.Context, addr string, o control.Options, readonly bool) (Link, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	fd, remote, err := connectAddr(ctx, addr)
	if err != nil {
		return Link{}, err
	}
	sc := &sockConn{fd: fd, raw: Raw, ctx: ctx, remote: remote}
	l := Link{FD: fd}
	var rw io.ReadWriter = sc
	if o.TLS != nil {
		tc, err := tlsconf.Handshake(ctx, sc, o.TLS, addr)
		if err != nil {
			unix.Close(fd)
			return Link{}, err
		}
		l.tls = &tlsLink{conn: tc, sock: sc}
		rw = tc
	}
	switch {
	case o.Password != "" || o.User != "" || o.DB > 0 || o.RESP3:
		err = control.Handshake(rw, o)
	case o.TLS != nil:
		// A TLS 1.3 server checks the client's certificate after the
		// client's handshake is over: one round trip makes a refusal an
		// error of the dial, not of the run.
		if _, err = roundTrip(rw, resp.AppendCommandString(nil, "PING")); err != nil {
			err = fmt.Errorf("PING: %w", err)
		}
	}
	if err != nil {
		unix.Close(fd)
		if o.TLS != nil {
			err = tlsconf.ExplainFirstReply(err, len(o.TLS.Certificates) > 0)
		}
		return Link{}, err
	}
	if readonly {
		r, err := roundTrip(rw, resp.AppendCommandString(nil, "READONLY"))
		if err == nil && r.IsError() {
			err = fmt.Errorf("server replied %q", r.Data)
		}
		if err != nil {
			unix.Close(fd)
			return Link{}, fmt.Errorf("READONLY: %w", err)
		}
	}
	sc.ctx = nil
	return l, nil
}

// connectAddr connects a non-blocking socket to addr: host:port, the
// first of the host's addresses that accepts, or unix:PATH.
func connectAddr(ctx context.Context, addr string) (int, net.Addr, error) {
	if path, ok := control.SocketPath(addr); ok {
		fd, err := connectUnix(ctx, path)
		if err != nil {
			return -1, nil, fmt.Errorf("Unix socket %s: %w", path, err)
		}
		return fd, &net.UnixAddr{Name: path, Net: "unix"}, nil
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return -1, nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return -1, nil, fmt.Errorf("port %q: %w", portStr, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return -1, nil, err
	}
	fd := -1
	var ip netip.Addr
	for _, ip = range ips {
		fd, err = connect(ctx, ip.Unmap(), int(port))
		if err == nil {
			break
		}
	}
	if err != nil {
		return -1, nil, err
	}
	return fd, net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip.Unmap(), uint16(port))), nil
}

// connectUnix connects a non-blocking Unix stream socket to path. A
// listener whose backlog is full refuses at once (EAGAIN): that is
// retried until ctx ends.
func connectUnix(ctx context.Context, path string) (int, error) {
	for {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("socket: %w", err)
		}
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err == nil {
			return fd, nil
		}
		unix.Close(fd)
		if !errors.Is(err, unix.EAGAIN) {
			return -1, err
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("%w (the listener's backlog stayed full)", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func connect(ctx context.Context, ip netip.Addr, port int) (int, error) {
	var sa unix.Sockaddr
	family := unix.AF_INET
	if ip.Is4() {
		sa = &unix.SockaddrInet4{Port: port, Addr: ip.As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: port, Addr: ip.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	err = unix.Connect(fd, sa)
	if errors.Is(err, unix.EINPROGRESS) {
		if err = waitFd(ctx, fd, unix.POLLOUT); err == nil {
			var soerr int
			if soerr, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && soerr != 0 {
				err = unix.Errno(soerr)
			}
		}
	}
	if err == nil {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// waitFd waits until fd is ready for events or ctx is done, polling ctx
// every 50 ms.
func waitFd(ctx context.Context, fd int, events int16) error {
	for {
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return errors.New("timed out")
			}
			return err
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(pfd, 50)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// roundTrip writes req, one request, and returns its reply, of at most
// 512 bytes.
func roundTrip(rw io.ReadWriter, req []byte) (resp.Reply, error) {
	if _, err := rw.Write(req); err != nil {
		return resp.Reply{}, err
	}
	buf := make([]byte, 0, 512)
	for {
		n, err := rw.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n == 0 {
			if err == nil {
				err = io.EOF
			}
			return resp.Reply{}, err
		}
		r, m, perr := resp.ParseReply(buf, 0)
		if perr != nil {
			return r, perr
		}
		if m > 0 {
			return r, nil
		}
		if len(buf) == cap(buf) {
			return r, errors.New("reply too long")
		}
	}
}

// Ping sends PING over l, a plaintext link (over TLS, Dial has made a
// round trip already), and waits up to d for its reply: a server that is
// dying still accepts connections into its listener's backlog, and one
// starting may answer LOADING.
func Ping(ctx context.Context, l Link, d time.Duration) error {
	if l.tls != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r, err := roundTrip(&sockConn{fd: l.FD, raw: Raw, ctx: ctx}, resp.AppendCommandString(nil, "PING"))
	if err == nil && r.IsError() {
		err = errors.New(string(r.Data))
	}
	if err != nil {
		return fmt.Errorf("PING: %w", err)
	}
	return nil
}

// Link is one server connection as the epoll loops drive it: a
// non-blocking socket, and when the run asks for TLS, crypto/tls running
// over that socket in the same loop, without a goroutine of its own.
type Link struct {
	// FD is the socket.
	FD  int
	tls *tlsLink // nil: plaintext
}

// Close closes the socket.
func (l Link) Close() { unix.Close(l.FD) }

// IsTLS reports whether the link runs TLS.
func (l Link) IsTLS() bool { return l.tls != nil }

// Read reads what has arrived into b without waiting: n > 0, or 0 and
// unix.EAGAIN when nothing has, or 0 and nil at the end of the stream.
// Over TLS it returns what the complete records read hold.
func (l Link) Read(raw bool, b []byte) (int, error) {
	if l.tls == nil {
		return SysRead(raw, l.FD, b)
	}
	return l.tls.read(b)
}

// Write writes a prefix of b without waiting, or returns unix.EAGAIN when
// the socket takes nothing. With TLS it takes the whole of b: the
// ciphertext the socket does not take waits in the link (Pending), and
// until it has gone, Write takes nothing more.
func (l Link) Write(raw bool, b []byte) (int, error) {
	if l.tls == nil {
		return SysWrite(raw, l.FD, b)
	}
	return l.tls.write(b)
}

// Pending says TLS ciphertext waits for the socket: the caller must
// wait for POLLOUT and call Read, Write or Flush again.
func (l Link) Pending() bool { return l.tls != nil && len(l.tls.sock.out) > 0 }

// Flush writes what it can of the TLS ciphertext waiting for the socket.
func (l Link) Flush() error {
	if l.tls == nil {
		return nil
	}
	_, err := l.tls.sock.flush()
	return err
}

// tlsLink is crypto/tls's client over a non-blocking socket. crypto/tls
// keeps a partial record it has read and tries again on the next Read
// when the connection's error is temporary (a net.Error timeout, as for a
// deadline): sockConn reports an empty socket that way (errWouldBlock),
// so a Read returns what complete records hold and never blocks. A
// failed write would be fatal to crypto/tls, so sockConn takes every
// byte, queuing what the socket does not take (sockConn.out) until
// EPOLLOUT.
type tlsLink struct {
	conn *tls.Conn
	sock *sockConn
}

func (t *tlsLink) read(b []byte) (int, error) {
	if _, err := t.sock.flush(); err != nil {
		return 0, err
	}
	n, err := t.conn.Read(b)
	switch {
	case n > 0:
		return n, nil // an error comes back on the next call
	case errors.Is(err, errWouldBlock):
		return 0, unix.EAGAIN
	case errors.Is(err, io.EOF):
		return 0, nil
	}
	return 0, tlsconf.Explain(err)
}

func (t *tlsLink) write(b []byte) (int, error) {
	if more, err := t.sock.flush(); err != nil || more {
		if err == nil {
			err = unix.EAGAIN
		}
		return 0, err
	}
	if _, err := t.conn.Write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// errWouldBlock is sockConn's empty socket: a temporary net.Error, which
// crypto/tls does not keep as the connection's error.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// sockConn is the net.Conn crypto/tls runs over: a non-blocking socket.
// With ctx set (the handshake and AUTH, before the run) it waits for the
// socket within ctx; without, Read returns errWouldBlock and Write queues
// in out what the socket does not take.
type sockConn struct {
	fd     int
	raw    bool
	ctx    context.Context
	remote net.Addr
	out    []byte
	// short says the last read in the run took less than it asked for:
	// the socket was empty then, and the next read reports it so without
	// a system call. The socket's readiness is level-triggered, so bytes
	// that come after wake the loop again; a TLS connection's reads until
	// EAGAIN (see the package doc) thus make one read(2) per burst of
	// replies, as plaintext does, instead of two.
	short bool
}

func (c *sockConn) Read(b []byte) (int, error) {
	if c.short && c.ctx == nil {
		c.short = false
		return 0, errWouldBlock
	}
	for {
		n, err := SysRead(c.raw, c.fd, b)
		switch {
		case n > 0:
			c.short = n < len(b)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case errors.Is(err, unix.EINTR):
		case !errors.Is(err, unix.EAGAIN):
			return 0, err
		case c.ctx == nil:
			return 0, errWouldBlock
		default:
			if err := waitFd(c.ctx, c.fd, unix.POLLIN); err != nil {
				return 0, err
			}
		}
	}
}

func (c *sockConn) Write(b []byte) (int, error) {
	if c.ctx != nil {
		for rest := b; len(rest) > 0; {
			n, err := SysWrite(c.raw, c.fd, rest)
			switch {
			case n > 0:
				rest = rest[n:]
			case errors.Is(err, unix.EAGAIN):
				if err := waitFd(c.ctx, c.fd, unix.POLLOUT); err != nil {
					return 0, err
				}
			case err != nil && !errors.Is(err, unix.EINTR):
				return 0, err
			}
		}
		return len(b), nil
	}
	rest := b
	for len(c.out) == 0 && len(rest) > 0 {
		n, err := SysWrite(c.raw, c.fd, rest)
		switch {
		case n > 0:
			rest = rest[n:]
		case errors.Is(err, unix.EAGAIN):
			c.out = append(c.out, rest...)
			return len(b), nil
		case err != nil && !errors.Is(err, unix.EINTR):
			return 0, err
		}
	}
	c.out = append(c.out, rest...) // behind what already waits
	return len(b), nil
}

// flush writes what it can of out, and says whether some is left.
func (c *sockConn) flush() (more bool, err error) {
	for len(c.out) > 0 {
		n, err := SysWrite(c.raw, c.fd, c.out)
		switch {
		case n > 0:
			c.out = c.out[:copy(c.out, c.out[n:])]
		case errors.Is(err, unix.EAGAIN):
			return true, nil
		case err != nil && !errors.Is(err, unix.EINTR):
			return false, err
		}
	}
	return false, nil
}

// Close does nothing: the link owns the socket and closes it.
func (c *sockConn) Close() error { return nil }

func (c *sockConn) LocalAddr() net.Addr                { return nil }
func (c *sockConn) RemoteAddr() net.Addr               { return c.remote }
func (c *sockConn) SetDeadline(_ time.Time) error      { return nil }
func (c *sockConn) SetReadDeadline(_ time.Time) error  { return nil }
func (c *sockConn) SetWriteDeadline(_ time.Time) error { return nil }
