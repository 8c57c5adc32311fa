package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// TestConsumeRESP3 feeds a connection a batch of RESP3 replies, whole and
// a byte at a time: a push before, between and after the replies takes
// no request's place, a null (_) is a miss, an attribute is skipped for
// the value it annotates, a blob error is an error reply.
func TestConsumeRESP3(t *testing.T) {
	cfg := fill(Config{Mode: ModeGet, Load: Load{Pipeline: 5, Keyspace: 1000, VerifyGet: true, AllowMisses: true, ContinueOnError: true}})
	push := ">3\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\nkey:001\r\n_\r\n"
	for _, chunk := range []int{0, 1} {
		h := newHotPath(t, cfg)
		c := h.c
		c.build(nil, cfg.Pipeline, 0)
		c.stamp(cfg.Pipeline, 0)
		mask := len(c.ring) - 1
		value := func(i int) string {
			v := c.p.appendValue(nil, c.ring[(c.head+i)&mask].key)
			return fmt.Sprintf("$%d\r\n%s\r\n", len(v), v)
		}
		replies := push + value(0) + push + "_\r\n" +
			"|1\r\n+ttl\r\n%1\r\n+seconds\r\n,1.5\r\n" + value(2) +
			"!21\r\nSYNTAX invalid syntax\r\n" + push + push + value(4) + push
		b := []byte(replies)
		got := 0
		for end := chunk; got < len(b); end++ {
			if chunk == 0 || end > len(b) {
				end = len(b)
			}
			n, err := c.consume(b[got:end], 1)
			if err != nil {
				t.Fatalf("chunk %d: consume at %d: %v", chunk, got, err)
			}
			got += n
			if end == len(b) && n == 0 {
				break
			}
		}
		if got != len(b) || c.inflight != 0 || c.Gets != 5 || c.Misses != 1 || c.VerifyFailures != 0 || c.errors["SYNTAX"] != 1 {
			t.Errorf("chunk %d: consumed %d of %d bytes, %d in flight, %d gets, %d misses, %d failures, errors %v; want all, 0, 5, 1, 0, SYNTAX 1 (%v)",
				chunk, got, len(b), c.inflight, c.Gets, c.Misses, c.VerifyFailures, c.errors, c.warnings)
		}
	}
}

// startRedisRESP3 starts a redis-server with an ACL user bench (password
// pw) and returns its target.
func startRedisRESP3(t *testing.T) target {
	r := testutil.StartRedis(t, "--user", "bench", "on", ">pw", "~*", "&*", "+@all")
	return newTarget(t, r.Addr)
}

// TestRESP3ClientList: every load connection of a --resp3 run speaks
// RESP3, as the server sees it (CLIENT LIST, taken mid-run), with an ACL
// user and its password.
func TestRESP3ClientList(t *testing.T) {
	tg := startRedisRESP3(t)
	cfg := fill(Config{Addr: tg.addr, Mode: ModeMixed, User: "bench", Password: "pw", Load: Load{Duration: time.Minute, Connections: 3, Pipeline: 4, RESP3: true}})
	running := afterReplies(&cfg, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg)
		done <- err
	}()
	select {
	case <-running:
	case err := <-done:
		t.Fatalf("run ended before it was under way: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no replies within 30 s")
	}
	list, err := tg.client.ClientList(context.Background()).Result()
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	<-done
	load := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if !strings.Contains(line, " user=bench ") {
			continue
		}
		load++
		if !slices.Contains(strings.Fields(line), "resp=3") {
			t.Errorf("load connection not in RESP3: %s", line)
		}
	}
	if load != 3 {
		t.Errorf("%d connections of user bench, want 3:\n%s", load, list)
	}
	// A wrong password is still refused as one.
	cfg.Password, cfg.Duration, cfg.Requests, cfg.Progress = "wrong", 0, 10, nil
	if _, err := Run(context.Background(), cfg); !errors.Is(err, control.ErrAuth) || !strings.Contains(err.Error(), `refused user "bench"`) {
		t.Errorf("wrong password: %v, want the AUTH refusal", err)
	}
}

// TestRESP3Verify: under RESP3 a prefill is checked and read back byte
// for byte, single GETs and MGETs, and a read of a missing key (_) is a
// miss.
func TestRESP3Verify(t *testing.T) {
	tg := startRedisRESP3(t)
	cfg := fill(Config{Addr: tg.addr, Load: Load{Keyspace: 2000, Pipeline: 32, Connections: 2, Seed: 99, ValueSize: 24, RESP3: true}})
	pre, err := Prefill(context.Background(), cfg)
	if err != nil || pre.Sets != 2000 {
		t.Fatalf("prefill: %d sets, %v", pre.Sets, err)
	}
	get := cfg
	get.Mode, get.Requests, get.VerifyGet = ModeGet, 5000, true
	if res := run(t, tg, get); res.VerifyFailures != 0 || res.Misses != 0 || res.Gets != 5000 {
		t.Errorf("after prefill: %d failures, %d misses in %d gets, want 0, 0, 5000 (%v)", res.VerifyFailures, res.Misses, res.Gets, res.Warnings)
	}
	mget := get
	mget.MultiKeyGet = 4
	if res := run(t, tg, mget); res.VerifyFailures != 0 || res.Misses != 0 || res.Gets != 5000 {
		t.Errorf("MGET after prefill: %d failures, %d misses in %d gets (%v)", res.VerifyFailures, res.Misses, res.Gets, res.Warnings)
	}
	// Twice the keyspace: the keys past the prefill's are missing.
	miss := get
	miss.Keyspace, miss.KeyPattern, miss.Requests, miss.AllowMisses = 4000, keyspace.Sequential, 4000, true
	if res := run(t, tg, miss); res.VerifyFailures != 0 || res.Misses != 2000 || res.Gets != 4000 {
		t.Errorf("half missing: %d failures, %d misses in %d gets, want 0, 2000, 4000 (%v)", res.VerifyFailures, res.Misses, res.Gets, res.Warnings)
	}
	miss.AllowMisses = false
	miss.Addr = tg.addr
	if res, err := Run(context.Background(), miss); !errors.Is(err, ErrVerify) || res.Misses != 2000 {
		t.Errorf("verified reads of missing keys: %d misses, err %v; want 2000 and ErrVerify", res.Misses, err)
	}
}

// TestRESP3Pushes: a command mix that turns client tracking on makes the
// server push an invalidation into the replies each time a read key is
// written; the run counts exactly its requests, none a push.
func TestRESP3Pushes(t *testing.T) {
	tg := startRedisRESP3(t)
	// The server does push on such a connection.
	nc, err := net.DialTimeout("tcp", tg.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := "HELLO 3\r\nCLIENT TRACKING on\r\nGET tracked\r\nSET tracked v\r\nPING\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for !strings.HasSuffix(string(got), "+PONG\r\n") {
		buf := make([]byte, 4096)
		n, err := nc.Read(buf)
		if err != nil {
			t.Fatalf("reading %q: %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if !strings.Contains(string(got), ">2\r\n$10\r\ninvalidate\r\n") {
		t.Fatalf("no invalidation pushed: %q", got)
	}

	cfg := fill(Config{Addr: tg.addr, Commands: []mix.Command{
		{Args: []string{"CLIENT", "TRACKING", "on"}},
		{Args: []string{"GET", mix.PlaceholderKey}, Ratio: 3},
		{Args: []string{"SET", mix.PlaceholderKey, mix.PlaceholderData}, Ratio: 3},
	}, Load: Load{Requests: 3000, Connections: 1, Pipeline: 8, Keyspace: 20, RESP3: true}})
	res := run(t, tg, cfg)
	if res.Requests != 3000 || res.Sent != 3000 || len(res.Errors) != 0 {
		t.Errorf("%d requests, %d sent, errors %v; want 3000, 3000, none", res.Requests, res.Sent, res.Errors)
	}
	// Two connections in open loop: the writes of one invalidate the keys
	// the other read, pushed to it while it mostly has nothing in flight.
	cfg.Connections, cfg.Pipeline, cfg.Rate, cfg.Requests, cfg.Keyspace = 2, 1, 4000, 2000, 5
	res = run(t, tg, cfg)
	if res.Requests != 2000 || res.Sent != 2000 || len(res.Errors) != 0 {
		t.Errorf("open loop: %d requests, %d sent, errors %v; want 2000, 2000, none", res.Requests, res.Sent, res.Errors)
	}
}

// TestRESP3Refused: a server without HELLO (renamed away), and the
// embedded kvstore, which answers HELLO 3 NOPROTO, fail a RESP3 run at
// once with the server's error.
func TestRESP3Refused(t *testing.T) {
	r := testutil.StartRedis(t, "--rename-command", "HELLO", "")
	kv, _ := kvstoreTarget(t)
	for _, tc := range []struct{ addr, msg string }{
		{r.Addr, "ERR unknown command 'HELLO'"},
		{kv.addr, "NOPROTO"},
	} {
		cfg := fill(Config{Addr: tc.addr, Load: Load{Requests: 10, RESP3: true}})
		_, err := Run(context.Background(), cfg)
		var nr *control.NoRESP3Error
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), "server does not support RESP3: HELLO 3: "+tc.msg) {
			t.Errorf("%s: err %v, want a NoRESP3Error with %q", tc.addr, err, tc.msg)
		}
		if _, err := Prefill(context.Background(), cfg); !errors.As(err, &nr) {
			t.Errorf("%s: prefill: err %v, want a NoRESP3Error", tc.addr, err)
		}
	}
}
