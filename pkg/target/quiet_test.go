package target

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
)

// TestWaitQuietRedis starts a rewrite on redis-server aof_everysec, slowed
// down to half a second by rdb-key-save-delay (Redis's own testing knob),
// and checks that WaitQuiet returns once it is over.
func TestWaitQuietRedis(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	r, err := NewRedis(RedisConfig{Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, r, "aof_everysec")
	defer stopAndCheck(t, inst, env)
	addr := inst.Info().Addr

	// 10,000 SETs in one pipeline.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const keys = 10_000
	var out []byte
	for i := range keys {
		out = resp.AppendCommandString(out, "SET", fmt.Sprintf("key:%d", i), "0123456789abcdef0123456789abcdef")
	}
	go conn.Write(out)
	rd := bufio.NewReader(conn)
	for i := range keys {
		if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
			t.Fatalf("reply %d to SET: %q, %v", i, line, err)
		}
	}

	c, err := dialControl(context.Background(), addr, creds{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, cmd := range [][]string{{"CONFIG", "SET", "rdb-key-save-delay", "50"}, {"BGREWRITEAOF"}} {
		if _, err := c.Do(context.Background(), cmd...); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.Info(context.Background(), "persistence")
	if err != nil {
		t.Fatal(err)
	}
	if m["aof_rewrite_in_progress"] != "1" {
		t.Fatalf("no rewrite in progress after BGREWRITEAOF: %v", m)
	}
	busy, err := WaitQuiet(context.Background(), addr, control.Options{}, time.Minute)
	if err != nil || busy {
		t.Fatalf("WaitQuiet: busy %v, %v", busy, err)
	}
	m, err = c.Info(context.Background(), "persistence")
	if err != nil {
		t.Fatal(err)
	}
	if m["aof_rewrite_in_progress"] != "0" || m["aof_rewrites"] != "1" || m["aof_last_bgrewrite_status"] != "ok" {
		t.Errorf("after WaitQuiet: in progress %s, rewrites %s, status %s", m["aof_rewrite_in_progress"], m["aof_rewrites"], m["aof_last_bgrewrite_status"])
	}
}

// TestWaitQuietLimits checks a server that never finishes (busy after the
// limit), one without persistence fields (quiet at once), and cancellation.
func TestWaitQuietLimits(t *testing.T) {
	fake := func(mode string) string {
		tg, err := NewCommand(CommandConfig{Name: "fake", Command: fakeCommand(mode), Strategies: []Strategy{{Name: "x"}}})
		if err != nil {
			t.Fatal(err)
		}
		inst, env := start(t, tg, "x")
		t.Cleanup(func() { stopAndCheck(t, inst, env) })
		return inst.Info().Addr
	}
	plain, rewriting := fake("plain"), fake("rewriting")

	if busy, err := WaitQuiet(context.Background(), plain, control.Options{}, time.Minute); busy || err != nil {
		t.Errorf("plain server: busy %v, %v", busy, err)
	}
	t0 := time.Now()
	if busy, err := WaitQuiet(context.Background(), rewriting, control.Options{}, 200*time.Millisecond); !busy || err != nil {
		t.Errorf("rewriting server: busy %v, %v", busy, err)
	}
	if d := time.Since(t0); d < 200*time.Millisecond { // a floor, which load cannot break
		t.Errorf("rewriting server: returned after %v, limit 200ms", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := WaitQuiet(ctx, rewriting, control.Options{}, time.Minute); err == nil {
		t.Error("cancelled wait: no error")
	}
}
