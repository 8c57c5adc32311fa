package iouring

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// newRing sets up a ring as the kvstore's loop does, on the test's locked
// thread, or skips the test when the kernel offers none (a failure when
// KVBENCH_REQUIRE_IO_URING=1).
func newRing(t *testing.T) *Ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := Setup(16, 64, SetupSingleIssuer|SetupDeferTaskrun)
	if err != nil {
		if os.Getenv("KVBENCH_REQUIRE_IO_URING") == "1" {
			t.Fatalf("io_uring unavailable and KVBENCH_REQUIRE_IO_URING=1: %v", err)
		}
		t.Skipf("io_uring unavailable: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func socketPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// reap waits for at least one completion and returns copies of all ready.
func reap(t *testing.T, r *Ring) []CQE {
	t.Helper()
	for {
		if err := r.Enter(1); err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		if n := r.Ready(); n > 0 {
			out := make([]CQE, n)
			for i := range n {
				out[i] = *r.Completion(i)
			}
			r.Consume(n)
			return out
		}
	}
}

func TestRecvSendCancel(t *testing.T) {
	r := newRing(t)
	if err := r.Probe(OpRecv, OpSend, OpSendmsg, OpRead, OpAsyncCancel); err != nil {
		t.Fatal(err)
	}
	if err := r.Probe(OpRecv, 250); err == nil || !strings.Contains(err.Error(), "opcode 250") {
		t.Fatalf("probe of opcode 250: %v", err)
	}
	bufs, err := r.RegisterBufRing(1, 4, 64)
	if err != nil {
		t.Fatal(err)
	}
	a, b := socketPair(t)
	r.SQE().PrepRecvMultishot(a, 1, 7)

	var got []byte
	for _, msg := range []string{"hello", " multishot", " world"} {
		if _, err := unix.Write(b, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		for _, c := range reap(t, r) {
			if c.UserData != 7 || c.Res <= 0 || c.Flags&CQEFBuffer == 0 || c.Flags&CQEFMore == 0 {
				t.Fatalf("receive completion %+v", c)
			}
			got = append(got, bufs.Received(&c)...)
			bufs.Release(&c)
		}
		bufs.Publish()
	}
	if string(got) != "hello multishot world" {
		t.Fatalf("received %q", got)
	}

	reply := []byte("pong")
	r.SQE().PrepSend(a, reply, unix.MSG_NOSIGNAL|unix.MSG_WAITALL, 8)
	if c := reap(t, r); len(c) != 1 || c[0].UserData != 8 || c[0].Res != 4 {
		t.Fatalf("send completions %+v", c)
	}
	buf := make([]byte, 16)
	if n, err := unix.Read(b, buf); err != nil || string(buf[:n]) != "pong" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	r.SQE().PrepCancelFD(a, 9)
	var cancelled, ended bool
	for !cancelled || !ended {
		for _, c := range reap(t, r) {
			switch {
			case c.UserData == 9 && c.Res == 1:
				cancelled = true
			case c.UserData == 7 && c.Res == -int32(unix.ECANCELED) && c.Flags&CQEFMore == 0:
				ended = true
			default:
				t.Fatalf("completion %+v", c)
			}
		}
	}
}

// TestBufRingExhaustion: a multishot receive that runs out of buffers ends
// with ENOBUFS; no byte is lost, and one armed again once buffers are back
// receives the rest.
func TestBufRingExhaustion(t *testing.T) {
	r := newRing(t)
	bufs, err := r.RegisterBufRing(2, 2, 16)
	if err != nil {
		t.Fatal(err)
	}
	a, b := socketPair(t)
	want := bytes.Repeat([]byte("0123456789"), 10)
	if _, err := unix.Write(b, want); err != nil {
		t.Fatal(err)
	}
	var got []byte
	nobufs := 0
	for arms := 0; len(got) < len(want); arms++ {
		if arms > len(want) {
			t.Fatalf("received %d of %d bytes after %d receives", len(got), len(want), arms)
		}
		r.SQE().PrepRecvMultishot(a, 2, 1)
		for ended := false; !ended && len(got) < len(want); {
			for _, c := range reap(t, r) {
				if c.Flags&CQEFBuffer != 0 {
					got = append(got, bufs.Received(&c)...)
					bufs.Release(&c)
				}
				if c.Flags&CQEFMore == 0 {
					ended = true
					if c.Res == -int32(unix.ENOBUFS) {
						nobufs++
					} else if c.Res <= 0 {
						t.Fatalf("receive ended with %d", c.Res)
					}
				}
			}
		}
		bufs.Publish()
		if len(got) == len(want) {
			break
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("received %q", got)
	}
	if nobufs == 0 {
		t.Fatal("100 bytes into two 16-byte buffers never ran out of buffers")
	}
	unix.Shutdown(b, unix.SHUT_WR) // ends the last receive
	for ended := false; !ended; {
		for _, c := range reap(t, r) {
			ended = c.Flags&CQEFMore == 0
		}
	}
}
