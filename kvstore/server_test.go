package kvstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
)

// TestMain runs the package's tests against the event loop that
// KVBENCH_TEST_IO names (auto, epoll or uring; auto when unset): it
// becomes every server's default, so that `make test` runs the whole
// suite once with each loop. uring-shared is the io_uring loop with a
// lone connection kept in the ring (uringOptions.shared), where most
// tests' one connection would take the direct path.
func TestMain(m *testing.M) {
	if io := os.Getenv("KVBENCH_TEST_IO"); io != "" {
		if io == IOUring+"-shared" {
			io, defaultShared = IOUring, true
		}
		if io != IOAuto && io != IOEpoll && io != IOUring {
			fmt.Fprintf(os.Stderr, "KVBENCH_TEST_IO=%q: want auto, epoll, uring or uring-shared\n", io)
			os.Exit(2)
		}
		defaultIO = io
	}
	os.Exit(m.Run())
}

// startServer starts a server on a free loopback port for the test.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// newClient returns a go-redis client of srv; go-redis's handshake (HELLO 3,
// refused, then RESP2) is part of what is tested.
func newClient(t testing.TB, srv *Server, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: srv.Addr(), DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	for _, f := range opts {
		f(o)
	}
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// rawConn is a client speaking raw bytes, for what go-redis cannot send.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, srv *Server) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(b []byte) {
	r.t.Helper()
	r.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// do sends a command and returns its reply re-encoded as RESP text.
func (r *rawConn) do(args ...string) string {
	r.t.Helper()
	r.send(resp.AppendCommandString(nil, args...))
	return r.reply()
}

// reply reads one complete reply and returns its raw bytes.
func (r *rawConn) reply() string {
	r.t.Helper()
	// Only a guard against a server that never answers: a million-argument
	// request took 5 s under -race on a busy machine.
	r.nc.SetReadDeadline(time.Now().Add(time.Minute))
	var buf []byte
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			r.t.Fatalf("read reply (have %q): %v", buf, err)
		}
		buf = append(buf, b)
		if b != '\n' {
			continue
		}
		n, err := resp.SkipReply(buf, 0)
		if err != nil {
			r.t.Fatalf("bad reply %q: %v", buf, err)
		}
		if n > 0 {
			return string(buf)
		}
	}
}

// closed reports whether the server closed the connection (reading EOF or
// a reset within a second).
func (r *rawConn) closed() bool {
	r.nc.SetReadDeadline(time.Now().Add(time.Second))
	for {
		if _, err := r.br.ReadByte(); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// waitFor polls cond until it holds, failing the test after 10 seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exchange is one command and the exact reply expected.
type exchange struct {
	args []string
	want string
}

func runExchanges(t *testing.T, rc *rawConn, xs []exchange) {
	t.Helper()
	for _, x := range xs {
		got := rc.do(x.args...)
		if strings.HasSuffix(x.want, "*") {
			if !strings.HasPrefix(got, strings.TrimSuffix(x.want, "*")) {
				t.Errorf("%q: got %q, want prefix %q", x.args, got, strings.TrimSuffix(x.want, "*"))
			}
		} else if got != x.want {
			t.Errorf("%q: got %q, want %q", x.args, got, x.want)
		}
	}
}

func appendCmd(dst []byte, args ...string) []byte { return resp.AppendCommandString(dst, args...) }

// TestIdlePurge checks that the cron unmaps retired index arrays once the
// server has been idle for a tick.
func TestIdlePurge(t *testing.T) {
	srv := startServer(t, Config{})
	rdb := newClient(t, srv)
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := range 200_000 {
		pipe.Set(ctx, "key:"+strconv.Itoa(i), "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retired arrays to be unmapped", func() bool {
		retired.Lock()
		defer retired.Unlock()
		return len(retired.slots) == 0
	})
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 200_000 {
		t.Fatalf("DBSIZE %d, %v", n, err)
	}
}

// TestInfoCommandstats: INFO commandstats counts each command's calls and
// time in Redis's format, a pipeline's commands each counted, and CONFIG
// RESETSTAT zeroes them.
func TestInfoCommandstats(t *testing.T) {
	srv := startServer(t, Config{})
	c := dialRaw(t, srv)
	var req []byte
	for i := range 100 {
		req = resp.AppendCommandString(req, "SET", fmt.Sprintf("k%d", i), "v")
	}
	req = resp.AppendCommandString(req, "GET", "k1")
	c.send(req)
	for range 100 {
		if got := c.reply(); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	if got := c.reply(); got != "$1\r\nv\r\n" {
		t.Fatalf("GET: %q", got)
	}
	stats := commandstats(t, c)
	for name, calls := range map[string]int{"set": 100, "get": 1} {
		line := stats["cmdstat_"+name]
		var n, usec int
		var per float64
		if _, err := fmt.Sscanf(line, "calls=%d,usec=%d,usec_per_call=%f,", &n, &usec, &per); err != nil {
			t.Fatalf("cmdstat_%s:%s: %v", name, line, err)
		}
		if n != calls || usec < 0 || per < 0 {
			t.Errorf("cmdstat_%s:%s: want calls=%d", name, line, calls)
		}
	}
	if got := c.do("CONFIG", "RESETSTAT"); got != "+OK\r\n" {
		t.Fatalf("CONFIG RESETSTAT: %q", got)
	}
	if stats := commandstats(t, c); stats["cmdstat_set"] != "" {
		t.Errorf("after CONFIG RESETSTAT: cmdstat_set:%s", stats["cmdstat_set"])
	}
}

// commandstats reads INFO commandstats over c.
func commandstats(t *testing.T, c *rawConn) map[string]string {
	t.Helper()
	_, body, ok := strings.Cut(c.do("INFO", "commandstats"), "\r\n")
	if !ok {
		t.Fatal("INFO commandstats: no reply")
	}
	return control.ParseInfo(body)
}
