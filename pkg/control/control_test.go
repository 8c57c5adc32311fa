package control

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

func TestDoAndInfo(t *testing.T) {
	r := testutil.StartRedis(t)
	ctx := context.Background()
	c, err := Dial(ctx, r.Addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Do(ctx, "SET", "k", "v"); err != nil || v != "OK" {
		t.Fatalf("SET: %v %v", v, err)
	}
	if v, err := c.Do(ctx, "MGET", "k", "nope"); err != nil || len(v.([]any)) != 2 || v.([]any)[0] != "v" || v.([]any)[1] != nil {
		t.Fatalf("MGET: %#v %v", v, err)
	}
	if v, err := c.Do(ctx, "INCR", "n"); err != nil || v != int64(1) {
		t.Fatalf("INCR: %#v %v", v, err)
	}
	var re *ReplyError
	if _, err := c.Do(ctx, "INCR", "k"); !errors.As(err, &re) || re.Code() != "ERR" {
		t.Fatalf("INCR of a string: %v, want an ERR reply", err)
	}
	info, err := c.Info(ctx, "server")
	if err != nil || info["redis_version"] == "" {
		t.Fatalf("INFO: %v %v", info, err)
	}
	got, ok, err := c.ConfigGet(ctx, []string{"appendonly", "no-such-parameter"})
	if err != nil || !ok || got["appendonly"] != "no" || len(got) != 1 {
		t.Fatalf("CONFIG GET: %v %v %v", got, ok, err)
	}
	replies, err := c.Raw(ctx, []byte("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	if err != nil || len(replies) != 2 || string(replies[0]) != "+PONG\r\n" || string(replies[1]) != "$1\r\nv\r\n" {
		t.Fatalf("pipelined: %q %v", replies, err)
	}
}

// TestAuth: a password and an ACL user get in; a wrong one, a missing one
// and an unknown user fail at once, wrapping ErrAuth and saying what was
// refused; a database is selected.
func TestAuth(t *testing.T) {
	r := testutil.StartRedis(t, "--requirepass", "sekret")
	ctx := context.Background()
	admin, err := Dial(ctx, r.Addr, Options{Password: "sekret"})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Do(ctx, "ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string // "" for success
	}{
		{"password", Options{Password: "sekret"}, ""},
		{"user", Options{User: "bench", Password: "pw"}, ""},
		{"db", Options{Password: "sekret", DB: 3}, ""},
		{"wrong password", Options{Password: "nope"}, "refused the password"},
		{"wrong user", Options{User: "who", Password: "pw"}, `refused user "who"`},
		{"no password", Options{}, "NOAUTH"},
		{"no database", Options{Password: "sekret", DB: 99}, "database 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c, err := Dial(ctx, r.Addr, tc.o)
			if err == nil {
				defer c.Close()
				err = c.Ping(ctx)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			case strings.Contains(tc.want, "database"):
			case !errors.Is(err, ErrAuth):
				t.Fatalf("%v does not wrap ErrAuth", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	c, err := Dial(ctx, r.Addr, Options{Password: "sekret", DB: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "in3", "x"); err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(ctx, "keyspace"); err != nil || !strings.HasPrefix(info["db3"], "keys=1,") {
		t.Fatalf("keyspace %v %v: want the key in db3", info, err)
	}
}

// TestNotRESP: a port that answers in something other than RESP fails at
// once with ErrNotRESP, whatever it sends.
func TestNotRESP(t *testing.T) {
	for _, reply := range []string{"\x00\x01\x02garbage\r\n", "$9999999999999\r\n", "HTTP/1.1 400 Bad Request\r\n\r\n"} {
		addr := testutil.ServeBytes(t, reply)
		start := time.Now()
		_, err := Query(context.Background(), addr, Options{}, "PING")
		if !errors.Is(err, ErrNotRESP) || time.Since(start) > 500*time.Millisecond {
			t.Errorf("reply %q: %v after %v, want ErrNotRESP at once", reply, err, time.Since(start))
		}
	}
}

// TestCancel: a call blocked on a server that does not answer ends as
// soon as its context is cancelled.
func TestCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := Dial(context.Background(), ln.Addr().String(), Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-accepted
	defer peer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Do(ctx, "BLPOP", "q", "0"); done <- err }()
	// The request reaching the server is the event to wait for.
	buf := make([]byte, 64)
	if _, err := peer.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end when its context was cancelled")
	}
}

// FuzzDecode: no reply, however malformed, makes Decode panic; a
// decoded reply's length is within its input.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "*-1\r\n", "*3\r\n-E\r\n+a\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, err := Decode(b)
		if err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("Decode(%q) consumed %d of %d bytes", b, n, len(b))
		}
	})
}
