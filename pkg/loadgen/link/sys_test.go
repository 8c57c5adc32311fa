package link

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStampedRead: with StampReceives on, a read returns the bytes and
// when the kernel received them, which is before the read, however late
// the read comes: the bytes wait in the socket while the test sleeps.
func TestStampedRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	port := ln.Addr().(*net.TCPAddr).Port
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := StampReceives(fd); err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	defer peer.Close()
	// The kernel turns its receive timestamps on for the first socket that
	// asks a moment later (a deferred static key): segments that arrive
	// before then carry none, and Read says 0. Exchange until one does.
	var warm Stamped
	for i := 0; ; i++ {
		if _, err := peer.Write([]byte("+OK\r\n")); err != nil {
			t.Fatal(err)
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 10_000); err != nil || pfd[0].Revents&unix.POLLIN == 0 {
			t.Fatalf("poll: %v, revents %#x", err, pfd[0].Revents)
		}
		b := make([]byte, 64)
		if _, at, err := warm.Read(true, fd, b); err != nil {
			t.Fatal(err)
		} else if at != 0 {
			break
		}
		if i == 1000 {
			t.Fatal("no receive timestamp after 1,000 segments")
		}
		time.Sleep(time.Millisecond)
	}
	for _, raw := range []bool{true, false} {
		sent := time.Now()
		if _, err := peer.Write([]byte("+OK\r\n")); err != nil {
			t.Fatal(err)
		}
		// The kernel has the bytes once they can be read; then the read
		// comes well after.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 10_000); err != nil || pfd[0].Revents&unix.POLLIN == 0 {
			t.Fatalf("poll: %v, revents %#x", err, pfd[0].Revents)
		}
		time.Sleep(20 * time.Millisecond)
		var st Stamped
		b := make([]byte, 64)
		n, at, err := st.Read(raw, fd, b)
		read := time.Now()
		if err != nil || string(b[:n]) != "+OK\r\n" {
			t.Fatalf("raw %v: read %q, %v", raw, b[:n], err)
		}
		got := time.Unix(0, at)
		if at == 0 || got.Before(sent.Add(-time.Millisecond)) || !got.Before(read.Add(-10*time.Millisecond)) {
			t.Errorf("raw %v: stamped %v, sent %v, read %v: want between the send and well before the read", raw, got, sent, read)
		}
	}
}
