package kvstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// randomValue is n bytes no two of whose 8-byte windows repeat, so that a
// reply cut, shifted or spliced from two values cannot pass for it.
func randomValue(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestValueSizes round-trips values of every size class a reply treats
// differently (empty, tiny, copied into the reply, copied into a block,
// written from the table) byte for byte, under both allocators.
func TestValueSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (make test)")
	}
	sizes := []int{0, 1, 16 << 10, zeroCopyMin - 1, zeroCopyMin, 256 << 10, 64 << 20}
	for _, alloc := range []string{AllocPool, AllocGo} {
		t.Run(alloc, func(t *testing.T) {
			srv := startServer(t, Config{Alloc: alloc})
			rdb := newClient(t, srv)
			c := ctx(t)
			for _, n := range sizes {
				want := randomValue(1, n)
				key := fmt.Sprint("v", n)
				if err := rdb.Set(c, key, want, 0).Err(); err != nil {
					t.Fatalf("SET %d bytes: %v", n, err)
				}
				got, err := rdb.Get(c, key).Bytes()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("GET of %d bytes: %d bytes back, equal %v, err %v", n, len(got), bytes.Equal(got, want), err)
				}
			}
			// MGET mixes copied and uncopied replies in one array.
			keys := []string{"v0", "v1", "v16384", "missing", "v262144", "v65535", "v65536"}
			vals, err := rdb.MGet(c, keys...).Result()
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				if k == "missing" {
					if vals[i] != nil {
						t.Fatalf("MGET %s = %.20q, want nil", k, vals[i])
					}
					continue
				}
				var n int
				fmt.Sscan(k[1:], &n)
				if s, _ := vals[i].(string); s != string(randomValue(1, n)) {
					t.Fatalf("MGET %s: %d bytes back, not the value", k, len(s))
				}
			}
		})
	}
}

// TestBulkLimit: a bulk argument one byte over proto-max-bulk-len is
// refused with Redis's error and the connection closed; one at the limit
// is stored.
func TestBulkLimit(t *testing.T) {
	const limit = 100 << 10
	srv := startServer(t, Config{Limits: resp.Limits{MaxBulkLen: limit}})
	rc := dialRaw(t, srv)
	if got := rc.do("SET", "k", strings.Repeat("a", limit)); got != "+OK\r\n" {
		t.Fatalf("SET at the limit: %q", got)
	}
	rc = dialRaw(t, srv)
	if got := rc.do("SET", "k", strings.Repeat("a", limit+1)); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("SET one byte over the limit: %q", got)
	}
	if !rc.closed() {
		t.Fatal("connection still open after the refusal")
	}
}

// TestLargeValueChangedWhileSent: replies that write a value from the
// table after the lock is released send the value as it was when the GET
// ran, whatever SET, APPEND, DEL and FLUSHALL do to the key meanwhile.
func TestLargeValueChangedWhileSent(t *testing.T) {
	const n = 256 << 10
	versions := make([][]byte, 8)
	for i := range versions {
		versions[i] = bytes.Repeat([]byte{'a' + byte(i)}, n)
	}
	srv := startServer(t, Config{Loops: 2})
	rdb := newClient(t, srv)
	c := ctx(t)
	if err := rdb.Set(c, "k", versions[0], 0).Err(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var writerErr error
	go func() {
		defer wg.Done()
		w := newClient(t, srv)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			switch i % 16 {
			case 0:
				err = w.Del(c, "k").Err()
			case 5:
				err = w.FlushAll(c).Err()
			case 10:
				// A record with room to spare: a SET could rewrite it in
				// place.
				err = w.Append(c, "k", "tail").Err()
			}
			if err == nil {
				err = w.Set(c, "k", versions[i%len(versions)], 0).Err()
			}
			if err != nil {
				writerErr = err
				return
			}
		}
	}()

	rc := dialRaw(t, srv)
	var batch []byte
	for range 64 {
		batch = appendCmd(batch, "GET", "k")
	}
	seen := 0
	buf := make([]byte, n+len("tail\r\n"))
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		rc.send(batch)
		rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		for range 64 {
			line, err := rc.br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "$-1\r\n" {
				continue
			}
			var size int
			if _, err := fmt.Sscanf(line, "$%d\r\n", &size); err != nil || size != n && size != n+len("tail") {
				t.Fatalf("reply header %q", line)
			}
			v := buf[:size+2]
			if _, err := io.ReadFull(rc.br, v); err != nil {
				t.Fatal(err)
			}
			if bytes.Count(v[:n], v[:1]) != n {
				t.Fatalf("a reply of %d bytes mixes versions", size)
			}
			seen++
		}
	}
	close(stop)
	wg.Wait()
	if writerErr != nil {
		t.Fatal(writerErr)
	}
	if seen == 0 {
		t.Fatal("no GET found the key")
	}
}

// TestLargePipelineAndPing: a client reading 1,000 pipelined 256 KB GETs
// at full speed gets every reply intact, and a client on the same loop
// keeps getting its PINGs answered meanwhile.
func TestLargePipelineAndPing(t *testing.T) {
	const n, count = 256 << 10, 1000
	srv := startServer(t, Config{Loops: 1})
	rdb := newClient(t, srv)
	c := ctx(t)
	vals := make([][]byte, 8)
	for i := range vals {
		vals[i] = randomValue(uint64(i), n)
		if err := rdb.Set(c, fmt.Sprint("big:", i), vals[i], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}

	done := make(chan struct{})
	var readerDone atomic.Bool
	var lat []time.Duration
	var pingErr error
	p := newClient(t, srv)
	if err := p.Ping(c).Err(); err != nil { // connected before the pipeline
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		for !readerDone.Load() {
			start := time.Now()
			if err := p.Ping(c).Err(); err != nil {
				pingErr = err
				return
			}
			lat = append(lat, time.Since(start))
		}
	}()

	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var batch []byte
	for i := range count {
		batch = appendCmd(batch, "GET", fmt.Sprint("big:", i%len(vals)))
	}
	go nc.Write(batch)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReaderSize(nc, 1<<20)
	want := fmt.Sprintf("$%d\r\n", n)
	buf := make([]byte, n+2)
	for i := range count {
		line, err := br.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("reply %d: header %q, %v", i, line, err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if !bytes.Equal(buf[:n], vals[i%len(vals)]) || string(buf[n:]) != "\r\n" {
			t.Fatalf("reply %d is not the value of big:%d", i, i%len(vals))
		}
	}
	readerDone.Store(true)
	<-done
	if pingErr != nil {
		t.Fatal(pingErr)
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("%d PINGs during the pipeline: p50 %v, p99 %v", len(lat), lat[len(lat)/2], p99)
	if p99 > time.Second {
		t.Fatalf("PING p99 %v while another client read a large pipeline", p99)
	}
}

// TestOutputBufferLimit: a client the server would hold more than
// OutputBufferLimit bytes of replies for is disconnected, whether by a
// deep pipeline it does not read or by one command, before the server's
// memory grows past the limit; other clients go on.
func TestOutputBufferLimit(t *testing.T) {
	const limit = 8 << 20
	srv := startServer(t, Config{OutputBufferLimit: limit, Loops: 1})
	rdb := newClient(t, srv)
	c := ctx(t)
	if err := rdb.Set(c, "v", randomValue(2, 16<<10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	disconnections := func() string {
		info, err := rdb.Info(c, "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		_, after, _ := strings.Cut(info, "client_output_buffer_limit_disconnections:")
		return strings.TrimSpace(strings.SplitN(after, "\r\n", 2)[0])
	}

	t.Run("pipeline not read", func(t *testing.T) {
		rc := dialRaw(t, srv)
		var batch []byte
		for range 20000 { // 320 MB of replies
			batch = appendCmd(batch, "GET", "v")
		}
		go rc.nc.Write(batch)
		if !rc.closed() {
			t.Fatal("client not disconnected")
		}
		if got := disconnections(); got != "1" {
			t.Fatalf("client_output_buffer_limit_disconnections %s, want 1", got)
		}
	})

	t.Run("one command", func(t *testing.T) {
		before := int64(readRSS())
		rc := dialRaw(t, srv)
		args := []string{"MGET"}
		for range 20000 { // 320 MB of replies
			args = append(args, "v")
		}
		rc.send(appendCmd(nil, args...))
		if !rc.closed() {
			t.Fatal("client not disconnected")
		}
		after := int64(readRSS())
		if grew := after - before; grew > limit+48<<20 {
			t.Fatalf("RSS grew %d MiB with an output buffer limit of %d MiB", grew>>20, limit>>20)
		}
		if got := disconnections(); got != "2" {
			t.Fatalf("client_output_buffer_limit_disconnections %s, want 2", got)
		}
	})

	if err := rdb.Ping(c).Err(); err != nil {
		t.Fatalf("server down: %v", err)
	}
}

// TestLargeRecordReuse: a freed large record's memory goes to the next large
// record of its size, unless a reply may still be writing it or a snapshot
// may still read it.
func TestLargeRecordReuse(t *testing.T) {
	const n = 256 << 10
	val := bytes.Repeat([]byte("v"), n)
	for _, tc := range []struct {
		name  string
		hold  func(a *arena, r ref) (release func())
		reuse bool
	}{
		{"overwritten", func(*arena, ref) func() { return func() {} }, true},
		{"lent to a reply", func(*arena, ref) func() { valuesLent.Add(1); return func() {} }, false},
		{"read by a snapshot", func(a *arena, _ ref) func() { a.freeze(); return a.thaw }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArena()
			r := a.newRecord([]byte("k"), val)
			old := &a.record(r)[0]
			release := tc.hold(a, r)
			a.free(r)
			release()
			r2 := a.newRecord([]byte("k2"), val[:n-100])
			if got := &a.record(r2)[0] == old; got != tc.reuse {
				t.Errorf("memory reused: %v, want %v", got, tc.reuse)
			}
			if !bytes.Equal(a.key(r2), []byte("k2")) || !bytes.Equal(a.val(r2), val[:n-100]) {
				t.Error("the new record does not hold its key and value")
			}
		})
	}
}

// TestLargeArgumentsInPlace: values read straight into their records (see
// conn.bigArg) and values that are not (other commands, records that stay
// pooled), sent in one pipeline with small requests between them, read
// back byte for byte, from the server and from its log after a restart.
func TestLargeArgumentsInPlace(t *testing.T) {
	dir := t.TempDir()
	type kv struct{ key, val string }
	var want []kv
	var batch []byte
	sent := 0
	add := func(args ...string) { batch = appendCmd(batch, args...); sent++ }
	for i, n := range []int{detachMin - 1, detachMin, maxClassSize - recordHeader - 2, maxClassSize, 256 << 10, 4 << 20} {
		k := fmt.Sprint("k", i)
		v := string(randomValue(uint64(i), n))
		add("SET", k, v)
		add("PING")
		want = append(want, kv{k, v})
	}
	big1, big2 := string(randomValue(7, 300<<10)), string(randomValue(8, 200<<10))
	add("MSET", "m1", big1, "m2", big2)
	add("APPEND", "m1", big2)
	add("SET", "k0", big2) // replaces a record made in place
	want = append(want, kv{"m1", big1 + big2}, kv{"m2", big2})
	want[0].val = big2

	check := func(srv *Server) {
		rdb := newClient(t, srv)
		for _, w := range want {
			got, err := rdb.Get(ctx(t), w.key).Result()
			if err != nil || got != w.val {
				t.Fatalf("GET %s: %d bytes, want %d (%v)", w.key, len(got), len(w.val), err)
			}
		}
	}
	srv := startPersistent(t, dir, "always")
	rc := dialRaw(t, srv)
	for len(batch) > 0 { // in pieces, so that requests straddle reads
		n := min(len(batch), 100<<10)
		rc.send(batch[:n])
		batch = batch[n:]
	}
	for range sent {
		if r := rc.reply(); strings.HasPrefix(r, "-") {
			t.Fatalf("reply %q", r)
		}
	}
	check(srv)
	srv.Close()
	check(startPersistent(t, dir, "always"))
}
