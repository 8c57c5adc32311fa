package kvstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// dialFrom connects to srv from a local address of the loopback range
// other than 127.0.0.1: to protected mode, as to Redis, a client that is
// not the loopback interface's 127.0.0.1 or ::1.
func dialFrom(t *testing.T, srv *Server, local string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// waitClosed waits (up to 10 s) for the server to close rc.
func waitClosed(t *testing.T, rc *rawConn, what string) {
	t.Helper()
	rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, err := rc.br.ReadByte()
		var ne net.Error
		switch {
		case err == nil:
			continue
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatalf("%s: still open after 10 s", what)
		}
		return
	}
}

func TestProtectedMode(t *testing.T) {
	srv := startServer(t, Config{})
	other := dialFrom(t, srv, "127.0.0.2")
	if got := other.reply(); !strings.HasPrefix(got, "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.") ||
		!strings.Contains(got, "--protected-mode no") {
		t.Fatalf("a client of another address was told %q", got)
	}
	waitClosed(t, other, "the denied client")
	local := dialRaw(t, srv)
	if got := local.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("a loopback client: PING = %q", got)
	}
	if got := local.do("CONFIG", "GET", "protected-mode"); got != "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n" {
		t.Fatalf("CONFIG GET protected-mode = %q", got)
	}
	if got := local.do("INFO", "stats"); !strings.Contains(got, "protected_mode_denied_connections:1\r\n") {
		t.Fatalf("INFO stats does not count the denied client:\n%s", got)
	}
	// As the message says: CONFIG SET protected-mode no.
	if got := local.do("CONFIG", "SET", "protected-mode", "no"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET protected-mode no = %q", got)
	}
	if got := dialFrom(t, srv, "127.0.0.2").do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after protected-mode no, another address: PING = %q", got)
	}

	for name, cfg := range map[string]Config{
		"protected-mode off": {ProtectedModeOff: true},
		"a password":         {RequirePass: "secret"},
	} {
		srv := startServer(t, cfg)
		if got := dialFrom(t, srv, "127.0.0.2").do("PING"); got != "+PONG\r\n" && !strings.HasPrefix(got, "-NOAUTH") {
			t.Errorf("%s: a client of another address: PING = %q", name, got)
		}
	}
}

func TestIdleTimeout(t *testing.T) {
	srv := startServer(t, Config{Timeout: time.Second})
	idle := dialRaw(t, srv)
	if got := idle.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	busy := dialRaw(t, srv)
	if got := busy.do("CONFIG", "GET", "timeout"); got != "*2\r\n$7\r\ntimeout\r\n$1\r\n1\r\n" {
		t.Fatalf("CONFIG GET timeout = %q", got)
	}
	// A client that sends a request far more often than the timeout
	// stays, while the other is closed.
	stop, pinged := make(chan struct{}), make(chan string, 1)
	go func() {
		defer close(pinged)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			busy.nc.SetDeadline(time.Now().Add(5 * time.Second))
			busy.nc.Write(resp.AppendCommandString(nil, "PING"))
			if line, err := busy.br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
				pinged <- fmt.Sprintf("%q, %v", line, err)
				return
			}
		}
	}()
	waitClosed(t, idle, "the idle client")
	close(stop)
	if failed, ok := <-pinged; ok {
		t.Fatalf("the busy client's PING: %s", failed)
	}
	if got := busy.do("INFO", "stats"); !strings.Contains(got, "client_timeout_disconnections:") || strings.Contains(got, "client_timeout_disconnections:0\r\n") {
		t.Fatalf("INFO stats does not count the idle client:\n%s", got)
	}
	if got := busy.do("CONFIG", "SET", "timeout", "0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET timeout 0 = %q", got)
	}
	if got := busy.do("CONFIG", "SET", "timeout", "-1"); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'timeout')") {
		t.Fatalf("CONFIG SET timeout -1 = %q", got)
	}
	if got := dialRaw(t, srv).do("CONFIG", "GET", "timeout"); got != "*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n" {
		t.Fatalf("CONFIG GET timeout after setting 0 = %q", got)
	}
}

// Before AUTH a request may declare 10 arguments of 16 KiB at most: a
// larger declaration is a protocol error at once, before anything is
// reserved for it, and closes the connection, as Redis does. After AUTH,
// even in the same write, the limits are gone.
func TestUnauthenticatedLimits(t *testing.T) {
	srv := startServer(t, Config{RequirePass: "secret"})
	for _, tt := range []struct{ send, want string }{
		{"*1\r\n$400000000\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
		{"*2\r\n$3\r\nGET\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
		{"*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n"},
	} {
		rc := dialRaw(t, srv)
		rc.send([]byte(tt.send))
		if got := rc.reply(); got != tt.want {
			t.Errorf("%q before AUTH: %q, want %q", tt.send, got, tt.want)
		}
		waitClosed(t, rc, tt.send)
	}
	big := strings.Repeat("v", 100<<10)
	rc := dialRaw(t, srv)
	rc.send(resp.AppendCommandString(resp.AppendCommandString(nil, "AUTH", "secret"), "SET", "k", big))
	if got := rc.reply(); got != "+OK\r\n" {
		t.Fatalf("AUTH = %q", got)
	}
	if got := rc.reply(); got != "+OK\r\n" {
		t.Fatalf("a 100 KB SET in the same write as AUTH = %q", got)
	}
	if got := rc.do("STRLEN", "k"); got != ":102400\r\n" {
		t.Fatalf("STRLEN = %q", got)
	}
}

// An unauthenticated client that sends nothing complete is closed after
// the auth timeout: one that sends nothing, and one that sends half a
// request. A client that authenticated is not.
func TestUnauthenticatedTimeout(t *testing.T) {
	srv := startServer(t, Config{RequirePass: "secret", authTimeout: 100 * time.Millisecond})
	silent := dialRaw(t, srv)
	half := dialRaw(t, srv)
	half.send([]byte("*2\r\n$3\r\nGET\r\n$5\r\nab"))
	authed := dialRaw(t, srv)
	if got := authed.do("AUTH", "secret"); got != "+OK\r\n" {
		t.Fatalf("AUTH = %q", got)
	}
	waitClosed(t, silent, "a silent unauthenticated client")
	waitClosed(t, half, "an unauthenticated client that sent half a request")
	if got := authed.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("the authenticated client: PING = %q", got)
	}
	if _, err := io.ReadAll(silent.br); err != nil && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the silent client is open")
		}
	}
}
