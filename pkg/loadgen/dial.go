package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
	"golang.org/x/sys/unix"
)

// dial connects a non-blocking TCP socket to addr within timeout, sets
// TCP_NODELAY and authenticates with password if set. The socket is raw
// (not a net.Conn) because the workers drive it with their own epoll loop.
func dial(ctx context.Context, addr, password string, timeout time.Duration) (fd int, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return -1, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return -1, fmt.Errorf("port %q: %w", portStr, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return -1, err
	}
	for _, ip := range ips {
		fd, err = connect(ctx, ip.Unmap(), int(port))
		if err == nil {
			break
		}
	}
	if err != nil {
		return -1, err
	}
	if password != "" {
		if err := auth(ctx, fd, password); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
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

// auth sends AUTH and checks the reply, before the connection joins the
// run.
func auth(ctx context.Context, fd int, password string) error {
	req := resp.AppendCommandString(nil, "AUTH", password)
	for len(req) > 0 {
		if err := waitFd(ctx, fd, unix.POLLOUT); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
		n, err := unix.Write(fd, req)
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("auth: %w", err)
		}
		if n > 0 {
			req = req[n:]
		}
	}
	buf := make([]byte, 0, 512)
	for {
		if err := waitFd(ctx, fd, unix.POLLIN); err != nil {
			return fmt.Errorf("auth: waiting for the reply: %w", err)
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("auth: %w", err)
		}
		if n == 0 {
			return errors.New("auth: server closed the connection")
		}
		buf = buf[:len(buf)+n]
		r, m, err := resp.ParseReply(buf, 0)
		if err != nil {
			return fmt.Errorf("auth: %w", err)
		}
		if m == 0 {
			if len(buf) == cap(buf) {
				return errors.New("auth: reply too long")
			}
			continue
		}
		if r.Type == resp.TypeError {
			return fmt.Errorf("auth: server replied %q", r.Data)
		}
		return nil
	}
}
