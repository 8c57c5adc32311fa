package control

import (
	"context"
	"errors"
	"net"
	"reflect"
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
			// A refusal that waited for a timeout would fail as one, not
			// with the refusal: "at once" is told without a clock.
			tc.o.Timeout = time.Minute
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
		// The peer holds the connection open: a client that waited for
		// more would time out instead of failing with ErrNotRESP.
		_, err := Query(context.Background(), addr, Options{Timeout: time.Minute}, "PING")
		if !errors.Is(err, ErrNotRESP) {
			t.Errorf("reply %q: %v, want ErrNotRESP at once", reply, err)
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
	case <-time.After(time.Minute): // a bound on a failure, not a figure
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

// TestRESP3: a RESP3 connection (HELLO 3 after AUTH, with an ACL user)
// decodes what the commands answer in RESP3 as their RESP2 forms; the
// server sees resp=3. A server without HELLO, and a wrong password, are
// refused as such.
func TestRESP3(t *testing.T) {
	r := testutil.StartRedis(t, "--user", "bench", "on", ">pw", "~*", "&*", "+@all")
	ctx := context.Background()
	c, err := Dial(ctx, r.Addr, Options{User: "bench", Password: "pw", RESP3: true, DB: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Do(ctx, "CLIENT", "INFO"); err != nil || !strings.Contains(v.(string), " resp=3") || !strings.Contains(v.(string), " db=2 ") {
		t.Fatalf("CLIENT INFO: %v %v, want resp=3 and db=2", v, err)
	}
	if v, err := c.Do(ctx, "GET", "missing"); err != nil || v != nil {
		t.Fatalf("GET of a missing key: %#v %v, want nil", v, err)
	}
	if _, err := c.Do(ctx, "HSET", "h", "f", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Do(ctx, "HGETALL", "h"); err != nil || len(v.([]any)) != 2 || v.([]any)[0] != "f" || v.([]any)[1] != "v" {
		t.Fatalf("HGETALL (a map): %#v %v", v, err)
	}
	if v, err := c.Do(ctx, "HEXISTS", "h", "f"); err != nil || v != int64(1) {
		t.Fatalf("HEXISTS: %#v %v", v, err)
	}
	if _, err := c.Do(ctx, "ZADD", "z", "1.5", "m"); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Do(ctx, "ZSCORE", "z", "m"); err != nil || v != "1.5" {
		t.Fatalf("ZSCORE (a double): %#v %v", v, err)
	}
	info, err := c.Info(ctx, "server") // a verbatim string
	if err != nil || info["redis_version"] == "" {
		t.Fatalf("INFO: %v %v", info, err)
	}
	got, ok, err := c.ConfigGet(ctx, []string{"appendonly"}) // a map
	if err != nil || !ok || got["appendonly"] != "no" {
		t.Fatalf("CONFIG GET: %v %v %v", got, ok, err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	_, err = Dial(ctx, r.Addr, Options{User: "bench", Password: "wrong", RESP3: true})
	testutil.CheckError(t, err, `AUTH: authentication failed: the server refused user "bench" or its password (WRONGPASS invalid username-password pair or user is disabled.)`, ErrAuth)

	no := testutil.StartRedis(t, "--rename-command", "HELLO", "")
	_, err = Dial(ctx, no.Addr, Options{RESP3: true})
	var nr *NoRESP3Error
	if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), "server does not support RESP3: HELLO 3: ERR unknown command") {
		t.Errorf("server without HELLO: %v", err)
	}
	locked := testutil.StartRedis(t, "--requirepass", "s3cret")
	_, err = Dial(ctx, locked.Addr, Options{RESP3: true})
	testutil.CheckError(t, err, "HELLO 3: authentication failed: the server requires a password (NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time)", ErrAuth)
}

// TestDecodeRESP3 decodes each RESP3 type as its RESP2 form, and skips
// pushes between replies.
func TestDecodeRESP3(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want any
	}{
		{"_\r\n", nil},
		{"#t\r\n", int64(1)},
		{"#f\r\n", int64(0)},
		{",2.5\r\n", "2.5"},
		{"(12345678901234567890\r\n", "12345678901234567890"},
		{"=9\r\ntxt:hello\r\n", "hello"},
		{"%2\r\n+a\r\n:1\r\n+b\r\n_\r\n", []any{"a", int64(1), "b", nil}},
		{"~2\r\n+x\r\n#t\r\n", []any{"x", int64(1)}},
		{"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n", "v"},
		{"*2\r\n!3\r\nERR\r\n|0\r\n:7\r\n", []any{&ReplyError{Msg: "ERR"}, int64(7)}},
	} {
		v, n, err := Decode([]byte(tc.src + "+next\r\n"))
		if err != nil || n != len(tc.src) || !reflect.DeepEqual(v, tc.want) {
			t.Errorf("Decode(%q) = %#v, %d, %v; want %#v, %d", tc.src, v, n, err, tc.want, len(tc.src))
		}
	}
	var re *ReplyError
	if _, _, err := Decode([]byte("!21\r\nSYNTAX invalid syntax\r\n")); !errors.As(err, &re) || re.Code() != "SYNTAX" {
		t.Errorf("blob error: %v", err)
	}
	replies, rest, err := readReplies(strings.NewReader(">2\r\n+a\r\n+b\r\n+OK\r\n>1\r\n:1\r\n:5\r\n"), nil, 2)
	if err != nil || len(replies) != 2 || string(replies[0]) != "+OK\r\n" || string(replies[1]) != ":5\r\n" || len(rest) != 0 {
		t.Errorf("readReplies with pushes: %q, %q, %v", replies, rest, err)
	}
}
