package kvstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// requireUring skips the test when the kernel does not offer what the
// io_uring loop needs, unless KVBENCH_REQUIRE_IO_URING=1 (as in make
// test) makes that a failure.
func requireUring(t *testing.T) {
	t.Helper()
	l, err := newLoop(&Server{cfg: Config{}.withDefaults()}, IOUring)
	if err == nil {
		l.closeFds()
		return
	}
	if os.Getenv("KVBENCH_REQUIRE_IO_URING") == "1" {
		t.Fatalf("io_uring unavailable and KVBENCH_REQUIRE_IO_URING=1: %v", err)
	}
	t.Skipf("io_uring unavailable: %v", err)
}

// logBuffer collects a server's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// infoField returns one field of INFO's reply.
func infoField(t *testing.T, rc *rawConn, section, name string) string {
	t.Helper()
	reply := rc.do("INFO", section)
	for _, line := range strings.Split(reply, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s: %q", section, name, reply)
	return ""
}

// TestEventLoopChoice: --io auto serves with io_uring when the kernel
// offers it and falls back to epoll, saying why in one log line, when
// io_uring is disabled, its setup fails or an opcode is missing; --io
// uring fails to start instead; INFO reports the loop.
func TestEventLoopChoice(t *testing.T) {
	disabled := filepath.Join(t.TempDir(), "io_uring_disabled")
	if err := os.WriteFile(disabled, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		io      string
		opts    uringOptions
		uring   bool   // needs io_uring
		want    string // the loop, or "" when Start must fail
		wantLog string
	}{
		{"epoll asked for", IOEpoll, uringOptions{}, false, IOEpoll, `io=epoll why=configured`},
		{"uring asked for", IOUring, uringOptions{}, true, IOUring, `io=uring why=configured`},
		{"auto", IOAuto, uringOptions{}, true, IOUring, `io=uring why="the kernel offers io_uring"`},
		{"auto, disabled", IOAuto, uringOptions{disabledFile: disabled}, false, IOEpoll,
			`io=epoll why="io_uring unavailable: io_uring disabled by the kernel (` + disabled + ` is 2)"`},
		{"auto, setup fails", IOAuto, uringOptions{extraFlags: 1 << 30}, true, IOEpoll,
			`io=epoll why="io_uring unavailable: io_uring_setup: invalid argument`},
		{"auto, opcode missing", IOAuto, uringOptions{extraOps: []uint8{250}}, true, IOEpoll,
			`io=epoll why="io_uring unavailable: io_uring: opcode 250 not supported by this kernel"`},
		{"uring asked for, disabled", IOUring, uringOptions{disabledFile: disabled}, false, "", "io_uring disabled by the kernel"},
		{"uring asked for, opcode missing", IOUring, uringOptions{extraOps: []uint8{250}}, true, "", "opcode 250 not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.uring {
				requireUring(t)
			}
			var logs logBuffer
			cfg := Config{Addr: "127.0.0.1:0", IO: tt.io, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			cfg.uring = tt.opts
			srv, err := Start(cfg)
			if tt.want == "" {
				if err == nil {
					srv.Close()
					t.Fatal("started")
				}
				if !strings.Contains(err.Error(), tt.wantLog) {
					t.Fatalf("error %q, want it to say %q", err, tt.wantLog)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if got := srv.IO(); got != tt.want {
				t.Fatalf("IO() %q, want %q", got, tt.want)
			}
			lines := 0
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `msg="event loop"`) {
					lines++
					if !strings.Contains(line, tt.wantLog) {
						t.Errorf("log line %q, want it to say %q", line, tt.wantLog)
					}
				}
			}
			if lines != 1 {
				t.Errorf("%d event loop lines in the log, want 1:\n%s", lines, logs.String())
			}
			rc := dialRaw(t, srv)
			if got := infoField(t, rc, "server", "io_loop"); got != tt.want {
				t.Errorf("INFO io_loop %q, want %q", got, tt.want)
			}
			runExchanges(t, rc, []exchange{{[]string{"SET", "k", "v"}, "+OK\r\n"}, {[]string{"GET", "k"}, "$1\r\nv\r\n"}})
		})
	}
	t.Run("bad name", func(t *testing.T) {
		if _, err := New(Config{IO: "kqueue"}); err == nil || !strings.Contains(err.Error(), `"kqueue"`) {
			t.Fatalf("error %v, want one naming the loop", err)
		}
	})
}

// TestRingBufferExhaustion: with a ring of four 512-byte receive buffers,
// 200 connections sending pipelines at once, and values larger than all
// the buffers together, run the ring out of buffers again and again; each
// receive that ends for it is armed again, and every reply is right.
func TestRingBufferExhaustion(t *testing.T) {
	requireUring(t)
	cfg := Config{IO: IOUring, Loops: 1}
	cfg.uring = uringOptions{bufs: 4, bufSize: 512}
	srv := startServer(t, cfg)
	const conns, rounds, depth = 200, 5, 8
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pipelineClient(srv.Addr(), i, rounds, depth, 100+i*37)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rc := dialRaw(t, srv)
	big := string(randomValue(7, 100<<10))
	runExchanges(t, rc, []exchange{
		{[]string{"SET", "big", big}, "+OK\r\n"},
		{[]string{"GET", "big"}, fmt.Sprintf("$%d\r\n%s\r\n", len(big), big)},
	})
}

// pipelineClient writes rounds pipelines of depth SETs of size-byte values
// and GETs of them on one connection, and checks every reply.
func pipelineClient(addr string, id, rounds, depth, size int) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(nc)
	for r := range rounds {
		var batch []byte
		vals := make([]string, depth)
		for d := range depth {
			vals[d] = string(randomValue(uint64(id*1000+r*depth+d), size))
			batch = appendCmd(batch, "SET", fmt.Sprintf("c%d:%d", id, d), vals[d])
			batch = appendCmd(batch, "GET", fmt.Sprintf("c%d:%d", id, d))
		}
		if _, err := nc.Write(batch); err != nil {
			return err
		}
		for d := range depth {
			if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
				return fmt.Errorf("client %d: SET reply %q, %v", id, line, err)
			}
			want := fmt.Sprintf("$%d\r\n%s\r\n", size, vals[d])
			got := make([]byte, len(want))
			if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
				return fmt.Errorf("client %d: GET reply %.40q, %v", id, got, err)
			}
		}
	}
	return nil
}

// TestSlowReaderBackpressure: a client that writes requests without
// reading its replies is not read without end (the server stops reading
// it while its replies wait, and the client's writes stall), and once it
// reads, every reply arrives, in order and whole, including replies of
// more pieces than one sendmsg takes, sent over a socket with little
// room, so that sends finish short and wait for the reader.
func TestSlowReaderBackpressure(t *testing.T) {
	srv := startServer(t, Config{Loops: 1})
	rdb := newClient(t, srv)
	c := ctx(t)
	const keys, valueSize = 32, 64 << 10 // each value is a piece of its own
	vals := make([][]byte, keys)
	for i := range vals {
		vals[i] = randomValue(uint64(i), valueSize)
		if err := rdb.Set(c, fmt.Sprint("v", i), vals[i], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	// An MGET of 1,100 values: over 2,000 pieces, so more than one sendmsg.
	mget := []string{"MGET"}
	for i := range 1100 {
		mget = append(mget, fmt.Sprint("v", i%keys))
	}
	// Then GETs of a small value without end, until the server stops
	// taking them.
	if err := rdb.Set(c, "s", "small", 0).Err(); err != nil {
		t.Fatal(err)
	}
	get := appendCmd(nil, "GET", "s")
	written := make(chan int64, 1)
	go func() {
		var n int64
		defer func() { written <- n }()
		w, err := nc.Write(appendCmd(nil, mget...))
		n += int64(w)
		if err != nil {
			return
		}
		nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		for n < 1<<30 {
			w, err := nc.Write(get)
			n += int64(w)
			if err != nil {
				return // the deadline: the server stopped reading
			}
		}
	}()
	n := <-written
	// What the client wrote fits in the sockets' buffers (a few MB each
	// way at most) and what the server keeps aside.
	if n >= 32<<20 {
		t.Fatalf("the server read %d bytes of requests while their replies waited", n)
	}
	gets := (n - int64(len(appendCmd(nil, mget...)))) / int64(len(get))
	t.Logf("the client wrote %d bytes (about %d GETs) before the server stopped reading", n, gets)
	if err := rdb.Ping(c).Err(); err != nil {
		t.Fatalf("another client: %v", err)
	}

	// Now read everything: the MGET, then GETs, all intact and in order.
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReaderSize(nc, 1<<20)
	if line, err := br.ReadString('\n'); err != nil || line != "*1100\r\n" {
		t.Fatalf("MGET header %q, %v", line, err)
	}
	buf := make([]byte, valueSize+2)
	for i := range 1100 {
		want := "$" + strconv.Itoa(valueSize) + "\r\n"
		if line, err := br.ReadString('\n'); err != nil || line != want {
			t.Fatalf("MGET value %d: header %q, %v", i, line, err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatalf("MGET value %d: %v", i, err)
		}
		if !bytes.Equal(buf[:valueSize], vals[i%keys]) {
			t.Fatalf("MGET value %d is not v%d", i, i%keys)
		}
	}
	// The last GET may have been written in part: every whole one is
	// answered.
	for i := range gets {
		if line, err := br.ReadString('\n'); err != nil || line != "$5\r\n" {
			t.Fatalf("GET %d: header %q, %v", i, line, err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "small\r\n" {
			t.Fatalf("GET %d: %q, %v", i, line, err)
		}
	}
}

// TestDisconnectWithSendsInFlight: clients that close (with a reset, their
// replies unread) while large replies are being sent to them leave nothing
// behind: the server forgets them, keeps serving, and leaks no descriptor.
func TestDisconnectWithSendsInFlight(t *testing.T) {
	srv := startServer(t, Config{Loops: 1})
	rc := dialRaw(t, srv)
	big := string(randomValue(3, 256<<10))
	runExchanges(t, rc, []exchange{{[]string{"SET", "big", big}, "+OK\r\n"}})
	fds := openFDs(t)
	for range 20 {
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		var batch []byte
		for range 200 { // 50 MB of replies
			batch = appendCmd(batch, "GET", "big")
		}
		nc.Write(batch)
		nc.Read(make([]byte, 1024)) // the replies are under way
		nc.(*net.TCPConn).SetLinger(0)
		nc.Close()
	}
	waitFor(t, "the clients to be forgotten", func() bool {
		return infoField(t, rc, "clients", "connected_clients") == "1"
	})
	waitFor(t, "their descriptors to be closed", func() bool { return openFDs(t) <= fds })
	runExchanges(t, rc, []exchange{{[]string{"PING"}, "+PONG\r\n"}})
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestNoLeaks: a server closed with clients connected, some in the middle
// of a request and some with replies unread, leaves no goroutine and no
// descriptor behind (its ring included).
func TestNoLeaks(t *testing.T) {
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	srv, err := Start(Config{Addr: "127.0.0.1:0", Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	var clients []net.Conn
	for i := range 30 {
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, nc)
		switch i % 3 {
		case 0:
			nc.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc")) // half a request
		case 1:
			var batch []byte
			for range 5000 {
				batch = appendCmd(batch, "PING")
			}
			nc.Write(batch) // replies unread
		}
	}
	waitFor(t, "every client to be served", func() bool { return srv.nclients.Load() == 30 })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, nc := range clients {
		nc.Close()
	}
	waitFor(t, "the server's goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
	waitFor(t, "the server's descriptors to be closed", func() bool { return openFDs(t) <= fds })
}

// uringState returns srv's only io_uring loop's state.
func uringStateOf(t *testing.T, srv *Server) *uringState {
	t.Helper()
	if len(srv.loops) != 1 || srv.loops[0].u == nil {
		t.Fatalf("want one io_uring loop, have %d loops of %s", len(srv.loops), srv.io)
	}
	return srv.loops[0].u
}

// readBulk reads one bulk reply of want's length from br and reports
// whether it is want, byte for byte.
func readBulk(br *bufio.Reader, want []byte) error {
	head := "$" + strconv.Itoa(len(want)) + "\r\n"
	if line, err := br.ReadString('\n'); err != nil || line != head {
		return fmt.Errorf("header %q, want %q (%v)", line, head, err)
	}
	got := make([]byte, len(want)+2)
	if _, err := io.ReadFull(br, got); err != nil {
		return err
	}
	if !bytes.Equal(got[:len(want)], want) || string(got[len(want):]) != "\r\n" {
		return errors.New("value differs")
	}
	return nil
}

// TestUringPipelinedLargeGets: connections pipelining 16 GETs of 256 KB
// values, each pipeline followed by SETs that replace those values and
// GETs of the new ones, get every reply byte for byte: a value being sent
// is not changed by a SET executed while its send is under way, the
// replies of a pipeline go out after those of the one before, and the
// values the SETs carry, received in place (inPlaceMin), arrive whole.
func TestUringPipelinedLargeGets(t *testing.T) {
	requireUring(t)
	srv := startServer(t, Config{IO: IOUring, Loops: 1, uring: uringOptions{shared: true}})
	u := uringStateOf(t, srv)
	defer func() {
		if !t.Failed() && u.inPlaceBytes.Load() == 0 {
			t.Error("no value was received in place")
		}
	}()
	const conns, rounds, depth, size = 4, 4, 16, 256 << 10
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for id := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				nc, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
				if err != nil {
					return err
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(60 * time.Second))
				br := bufio.NewReaderSize(nc, 64<<10)
				vals := make([][]byte, depth)
				var batch []byte
				for d := range depth {
					vals[d] = randomValue(uint64(id*1000+d), size)
					batch = appendCmd(batch, "SET", fmt.Sprintf("c%d:%d", id, d), string(vals[d]))
				}
				if _, err := nc.Write(batch); err != nil {
					return err
				}
				for range depth {
					if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
						return fmt.Errorf("client %d: SET reply %q, %v", id, line, err)
					}
				}
				for r := range rounds {
					// GET every key, replace every value, GET again: the
					// first GETs answer the old values.
					next := make([][]byte, depth)
					batch := []byte(nil)
					for d := range depth {
						batch = appendCmd(batch, "GET", fmt.Sprintf("c%d:%d", id, d))
					}
					for d := range depth {
						next[d] = randomValue(uint64(id*1000+(r+1)*100+d), size)
						batch = appendCmd(batch, "SET", fmt.Sprintf("c%d:%d", id, d), string(next[d]))
						batch = appendCmd(batch, "GET", fmt.Sprintf("c%d:%d", id, d))
					}
					wrote := make(chan error, 1)
					go func() { _, err := nc.Write(batch); wrote <- err }() // the replies are read meanwhile
					for d := range depth {
						if err := readBulk(br, vals[d]); err != nil {
							return fmt.Errorf("client %d round %d: GET %d: %w", id, r, d, err)
						}
					}
					for d := range depth {
						if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
							return fmt.Errorf("client %d round %d: SET %d reply %q, %v", id, r, d, line, err)
						}
						if err := readBulk(br, next[d]); err != nil {
							return fmt.Errorf("client %d round %d: GET %d after SET: %w", id, r, d, err)
						}
					}
					if err := <-wrote; err != nil {
						return err
					}
					vals = next
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestUringSlowReaderLargeReply: replies of a 1 MB value to a client that
// first reads nothing, then reads a little at a time, arrive whole and in
// order; meanwhile the server stops taking the client's requests once its
// queue and stash are full, and the memory the connection holds for its
// replies and its stash stays within the loop's bound (the values are
// written from the table, not copied), far below the replies' size.
func TestUringSlowReaderLargeReply(t *testing.T) {
	requireUring(t)
	srv := startServer(t, Config{IO: IOUring, Loops: 1, uring: uringOptions{shared: true}})
	u := uringStateOf(t, srv)
	big := randomValue(11, 1<<20)
	small := []byte("small")
	rc := dialRaw(t, srv)
	runExchanges(t, rc, []exchange{
		{[]string{"SET", "big", string(big)}, "+OK\r\n"},
		{[]string{"SET", "s", string(small)}, "+OK\r\n"},
	})
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// 32 GETs of the large value (32 MB of replies), then GETs of a small
	// one until the server stops taking them.
	var bigs []byte
	const nbig = 32
	for range nbig {
		bigs = appendCmd(bigs, "GET", "big")
	}
	get := appendCmd(nil, "GET", "s")
	written := make(chan int64, 1)
	go func() {
		var n int64
		defer func() { written <- n }()
		w, err := nc.Write(bigs)
		n += int64(w)
		if err != nil {
			return
		}
		nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		for n < 1<<30 {
			w, err := nc.Write(get)
			n += int64(w)
			if err != nil {
				return // the deadline: the server stopped reading
			}
		}
	}()
	n := <-written
	if n >= 32<<20 {
		t.Fatalf("the server read %d bytes of requests while their replies waited", n)
	}
	gets := (n - int64(len(bigs))) / int64(len(get))
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	// A slow reader: 4 KB a read.
	br := bufio.NewReaderSize(&smallReads{r: nc, n: 4 << 10}, 16)
	for i := range nbig {
		if err := readBulk(br, big); err != nil {
			t.Fatalf("GET big %d: %v", i, err)
		}
	}
	for i := range gets {
		if err := readBulk(br, small); err != nil {
			t.Fatalf("GET s %d: %v", i, err)
		}
	}
	// The bounds: what one connection may keep aside (the stash, plus the
	// receive buffers the kernel had filled before the receive stopped),
	// and the memory it holds: the stash's buffer, a send's and a queue's
	// buffers of about roundOutMax each, plus a batch's worth of replies.
	ring := recvBufs * recvBufSize
	if got, bound := u.maxStash.Load(), int64(stashMax+ring); got > bound {
		t.Errorf("a connection kept %d bytes aside, over the bound %d", got, bound)
	}
	if got, bound := u.maxHeld.Load(), int64(2*(stashMax+ring)+4*(roundOutMax+blockSize)); got > bound {
		t.Errorf("a connection held %d bytes for its replies and stash, over the bound %d (the replies were %d bytes)", got, bound, nbig<<20)
	}
	t.Logf("the client wrote %d bytes (%d small GETs) before the server stopped reading; at most %d bytes kept aside, %d held", n, gets, u.maxStash.Load(), u.maxHeld.Load())
}

// smallReads reads at most n bytes a call from r.
type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// TestUringLargeSetsInPlace: a client that sends SETs of 1 MB values one
// at a time, each written whole before the server reads it, has all but
// each request's first bytes received in place once it has sent one
// (singleRun): a multishot receive would take a whole value into the
// receive buffers and the loop copy it out again. The values read back
// byte for byte, and small pipelined requests after them, which the
// connection takes by its multishot receive again, are answered in order.
func TestUringLargeSetsInPlace(t *testing.T) {
	requireUring(t)
	srv := startServer(t, Config{IO: IOUring, Loops: 1, uring: uringOptions{shared: true}})
	u := uringStateOf(t, srv)
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	const n, size = 12, 1 << 20
	value := func(i int) []byte { return bytes.Repeat([]byte{'a' + byte(i)}, size) }
	for i := range n {
		req := fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$6\r\nkey:%02d\r\n$%d\r\n", i, size)
		req = append(append(req, value(i)...), "\r\n"...)
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
			t.Fatalf("SET %d: %q, %v", i, line, err)
		}
	}
	if got, want := u.inPlaceBytes.Load(), int64((n-1)*size*9/10); got < want {
		t.Errorf("%d of %d bytes received in place, want %d or more", got, n*size, want)
	}
	for i := range n {
		fmt.Fprintf(nc, "GET key:%02d\r\n", i)
		if err := readBulk(br, value(i)); err != nil {
			t.Fatalf("GET key:%02d: %v", i, err)
		}
	}
	const small = 4 * singleRun
	var pipe []byte
	for i := range small {
		pipe = fmt.Appendf(pipe, "SET s:%d %d\r\nGET s:%d\r\n", i, i, i)
	}
	for range 4 {
		if _, err := nc.Write(pipe); err != nil {
			t.Fatal(err)
		}
		for i := range small {
			if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
				t.Fatalf("SET s:%d: %q, %v", i, line, err)
			}
			if err := readBulk(br, []byte(strconv.Itoa(i))); err != nil {
				t.Fatalf("GET s:%d: %v", i, err)
			}
		}
	}
}

// TestUringLoneConnection: a loop's only connection is served directly
// (alone), goes back to the ring when a second one comes, with 16 MB of
// replies it has yet to write, and goes direct again once the second has
// gone, while it pipelines; every reply crosses the switches whole and in
// order.
func TestUringLoneConnection(t *testing.T) {
	requireUring(t)
	if defaultShared {
		t.Skip("KVBENCH_TEST_IO=uring-shared keeps lone connections in the ring")
	}
	srv := startServer(t, Config{IO: IOUring, Loops: 1})
	u := uringStateOf(t, srv)
	nc, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Minute)) // a guard: the test waits for events
	nc.(*net.TCPConn).SetReadBuffer(64 << 10)
	br := bufio.NewReader(nc)
	// pipeline sends n SETs and GETs of small values tagged with round and
	// reads their replies unless the caller does.
	pipeline := func(round, n int) []byte {
		var b []byte
		for i := range n {
			b = appendCmd(b, "SET", fmt.Sprintf("k%d", i), fmt.Sprintf("v%d.%d", round, i))
			b = appendCmd(b, "GET", fmt.Sprintf("k%d", i))
		}
		return b
	}
	check := func(round, n int) {
		t.Helper()
		for i := range n {
			if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
				t.Fatalf("round %d: SET k%d: %q, %v", round, i, line, err)
			}
			if err := readBulk(br, fmt.Appendf(nil, "v%d.%d", round, i)); err != nil {
				t.Fatalf("round %d: GET k%d: %v", round, i, err)
			}
		}
	}
	nc.Write(pipeline(0, 100))
	check(0, 100)
	if got := u.wentDirect.Load(); got != 1 {
		t.Fatalf("a lone connection went direct %d times, want 1", got)
	}

	// Replies it cannot write yet when a second connection comes.
	big := randomValue(7, 1<<20)
	if _, err := nc.Write(appendCmd(nil, "SET", "big", string(big))); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("SET big: %q, %v", line, err)
	}
	const gets = 16
	var batch []byte
	for range gets {
		batch = appendCmd(batch, "GET", "big")
	}
	nc.Write(batch)
	// Once the first reply has begun, all are queued, and far more than
	// the sockets hold.
	head := fmt.Sprintf("$%d\r\n", len(big))
	if line, err := br.ReadString('\n'); err != nil || line != head {
		t.Fatalf("GET big: %q, %v", line, err)
	}
	other := dialRaw(t, srv)
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("second connection: PING: %q", got)
	}
	waitFor(t, "the first connection back in the ring", func() bool { return u.leftDirect.Load() == 1 })
	br = bufio.NewReader(io.MultiReader(strings.NewReader(head), br))
	for i := range gets {
		if err := readBulk(br, big); err != nil {
			t.Fatalf("GET big %d: %v", i, err)
		}
	}

	// Alone again while it pipelines: its receive is cancelled mid-stream.
	const rounds = 40
	wrote := make(chan error, 1)
	go func() {
		for r := 1; r <= rounds; r++ {
			if _, err := nc.Write(pipeline(r, 50)); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	for r := 1; r <= rounds; r++ {
		check(r, 50)
		if r == rounds/4 {
			other.nc.Close()
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first connection direct again", func() bool { return u.wentDirect.Load() == 2 })
	nc.Write(pipeline(rounds+1, 100))
	check(rounds+1, 100)
	if got := u.leftDirect.Load(); got != 1 {
		t.Errorf("went back to the ring %d times, want 1", got)
	}
}
