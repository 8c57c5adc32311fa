package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"github.com/redis/go-redis/v9"
)

// target is a server the integration tests run against.
type target struct {
	addr string
	// flush empties the server's keyspaces.
	flush func(t *testing.T)
	// client inspects and changes the server behind the generator's back.
	client *redis.Client
}

func redisTarget(t *testing.T) target {
	r := testutil.StartRedis(t)
	return newTarget(t, r.Addr)
}

func newTarget(t *testing.T, addr string) target {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return target{addr: addr, client: c, flush: func(t *testing.T) {
		t.Helper()
		if err := c.FlushAll(context.Background()).Err(); err != nil {
			t.Fatalf("FLUSHALL: %v", err)
		}
	}}
}

// jsonOf returns res's JSON form as a map.
func jsonOf(t *testing.T, res Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// run runs cfg against tg and fails the test on error.
func run(t *testing.T, tg target, cfg Config) Result {
	t.Helper()
	cfg.Addr = tg.addr
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(%+v): %v", cfg, err)
	}
	return res
}

func TestExactCounts(t *testing.T) {
	tg := redisTarget(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"set one connection", fill(Config{Mode: ModeSet, Load: Load{Requests: 1000, Pipeline: 64}})},
		{"set uneven", fill(Config{Mode: ModeSet, Load: Load{Requests: 10007, Pipeline: 16, Connections: 3, Threads: 2}})},
		{"get", fill(Config{Mode: ModeGet, Load: Load{Requests: 999, Pipeline: 100, Connections: 4}})},
		{"mixed", fill(Config{Mode: ModeMixed, Load: Load{Requests: 5000, Pipeline: 7, Connections: 5, Threads: 1, SetRatio: 30}})},
		{"pipeline 1", fill(Config{Mode: ModeMixed, Load: Load{Requests: 500, Pipeline: 1, Connections: 10}})},
		{"fewer requests than connections", fill(Config{Mode: ModeSet, Load: Load{Requests: 3, Connections: 8}})},
		{"warmup", fill(Config{Mode: ModeSet, Load: Load{Requests: 700, WarmupRequests: 300, Keyspace: 1000}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Keyspace = max(tc.cfg.Keyspace, 500)
			before := testutil.CommandsProcessed(t, tg.client)
			res := run(t, tg, tc.cfg)
			n := tc.cfg.Requests
			if res.Requests != n || res.Sent != n || res.Sets+res.Gets != n || res.Histogram.TotalCount() != n {
				t.Errorf("requests %d, sent %d, sets+gets %d, latencies %d: want %d each",
					res.Requests, res.Sent, res.Sets+res.Gets, res.Histogram.TotalCount(), n)
			}
			// The server saw exactly the requests, warmup included (INFO
			// itself is counted once).
			if got, want := testutil.CommandsProcessed(t, tg.client)-before, n+tc.cfg.WarmupRequests+1; got != want {
				t.Errorf("server processed %d commands, want %d", got, want)
			}
			switch tc.cfg.Mode {
			case ModeSet:
				if res.Gets != 0 {
					t.Errorf("%d gets in set mode", res.Gets)
				}
			case ModeGet:
				if res.Sets != 0 {
					t.Errorf("%d sets in get mode", res.Sets)
				}
			case ModeMixed:
				want := float64(tc.cfg.SetRatio)
				if pct := 100 * float64(res.Sets) / float64(n); pct < want-5 || pct > want+5 {
					t.Errorf("%.1f%% sets, want about %v", pct, want)
				}
			}
			if res.QPS <= 0 || res.Elapsed <= 0 || res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 {
				t.Errorf("implausible figures: qps %g, elapsed %v, latency %+v", res.QPS, res.Elapsed, res.Latency)
			}
		})
	}
}

// keysUnder returns every key and value under prefix.
func keysUnder(t *testing.T, tg target, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := tg.client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, k := range keys {
		v, err := tg.client.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	return m
}

func TestSameSeedSameKeysAndValues(t *testing.T) {
	tg := redisTarget(t)
	write := func(pattern keyspace.Pattern, seed int64) map[string]string {
		tg.flush(t)
		run(t, tg, fill(Config{Mode: ModeSet, Load: Load{KeyPattern: pattern, Requests: 300, Keyspace: 1000, Pipeline: 8, Connections: 3, Seed: seed, ValueSize: 20}}))
		return keysUnder(t, tg, DefaultKeyPrefix)
	}
	for _, pattern := range []keyspace.Pattern{keyspace.Random, keyspace.Permutation, keyspace.Zipf} {
		a, b, c := write(pattern, 7), write(pattern, 7), write(pattern, 8)
		if len(a) == 0 || !maps.Equal(a, b) {
			t.Errorf("%s: seed 7 twice wrote different keys or values (%d and %d keys)", pattern, len(a), len(b))
		}
		if maps.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 wrote the same keys and values", pattern)
		}
		if pattern == keyspace.Permutation && len(a) != 300 {
			t.Errorf("permutation: 300 writes gave %d keys, want 300 distinct", len(a))
		}
		for k, v := range a {
			i, err := strconv.ParseInt(strings.TrimPrefix(k, DefaultKeyPrefix), 10, 64)
			if err != nil || len(k) != len(DefaultKeyPrefix)+3 {
				t.Fatalf("key %q is not prefix + 3 digits", k)
			}
			if want := string(keyspace.AppendValue(nil, 7, i, 20)); v != want {
				t.Fatalf("%s = %q, want keyspace.AppendValue(7, %d, 20) = %q", k, v, i, want)
			}
		}
	}
}

func TestVerifyAfterPrefill(t *testing.T) {
	tg := redisTarget(t)
	cfg := fill(Config{Addr: tg.addr, Load: Load{Keyspace: 2000, Pipeline: 32, Connections: 2, Seed: 99, ValueSize: 24}})
	pre, err := Prefill(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pre.Requests != 2000 || pre.Sets != 2000 {
		t.Fatalf("prefill: %d requests, %d sets, want 2000", pre.Requests, pre.Sets)
	}
	if n := tg.client.DBSize(context.Background()).Val(); n != 2000 {
		t.Fatalf("DBSIZE after prefill = %d, want 2000", n)
	}
	get := cfg
	get.Mode, get.Requests, get.VerifyGet = ModeGet, 5000, true
	res := run(t, tg, get)
	if res.VerifyFailures != 0 || res.Misses != 0 || res.Gets != 5000 {
		t.Fatalf("after prefill: %d failures, %d misses in %d gets, want 0, 0, 5000", res.VerifyFailures, res.Misses, res.Gets)
	}

	// Overwrite one key behind the generator's back: a sequential pass
	// over the nkeys reads it once.
	key := string(keyspace.Spec{Keyspace: 2000}.AppendName(nil, DefaultKeyPrefix, uint64(1234)))
	if err := tg.client.Set(context.Background(), key, "tampered", 0).Err(); err != nil {
		t.Fatal(err)
	}
	get.KeyPattern, get.Requests = keyspace.Sequential, 2000
	get.Addr = tg.addr
	res, err = Run(context.Background(), get)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("err = %v, want ErrVerify", err)
	}
	if res.VerifyFailures != 1 || res.Misses != 0 || len(res.Warnings) != 1 {
		t.Fatalf("%d failures, %d misses, warnings %v: want exactly the tampered key", res.VerifyFailures, res.Misses, res.Warnings)
	}
	if w := res.Warnings[0].Error(); !strings.Contains(w, key) || !strings.Contains(w, `"tampered"`) {
		t.Errorf("warning %q does not name %s and its value", w, key)
	}
	get.AllowMisses = true
	if res := run(t, tg, get); res.VerifyFailures != 1 {
		t.Errorf("with AllowMisses: %d failures, want 1 and no error", res.VerifyFailures)
	}
	// Another seed writes other values: every read fails.
	get.Seed, get.Requests = 100, 100
	if res := run(t, tg, get); res.VerifyFailures != 100 {
		t.Errorf("wrong seed: %d failures of 100", res.VerifyFailures)
	}
}

func TestMisses(t *testing.T) {
	tg := redisTarget(t)
	cfg := fill(Config{Mode: ModeGet, Load: Load{Requests: 500, Keyspace: 100, Pipeline: 50}})
	if res := run(t, tg, cfg); res.Misses != 500 || res.Gets != 500 {
		t.Errorf("empty server: %d misses in %d gets, want 500", res.Misses, res.Gets)
	}
	cfg.VerifyGet, cfg.Addr = true, tg.addr
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrVerify) || res.Misses != 500 {
		t.Errorf("verify on an empty server: %d misses, err %v; want 500 and ErrVerify", res.Misses, err)
	}
	cfg.AllowMisses = true
	if res := run(t, tg, cfg); res.Misses != 500 || res.VerifyFailures != 0 {
		t.Errorf("allow misses: %d misses, %d failures", res.Misses, res.VerifyFailures)
	}
	// In mixed mode, misses on keys not yet written are expected.
	tg.flush(t)
	mixed := fill(Config{Mode: ModeMixed, Load: Load{Requests: 2000, Keyspace: 1000, VerifyGet: true, Seed: 3}})
	if res := run(t, tg, mixed); res.Misses == 0 || res.VerifyFailures != 0 {
		t.Errorf("mixed: %d misses, %d failures; want some misses and no failures", res.Misses, res.VerifyFailures)
	}
}

func TestErrorReplies(t *testing.T) {
	tg := redisTarget(t)
	cfg := fill(Config{Addr: tg.addr, Mode: ModeGet, GetCmd: "NOSUCHCMD", Load: Load{Requests: 100, Pipeline: 10}})
	res, err := Run(context.Background(), cfg)
	var re *ReplyError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Msg, "ERR") || re.Command != "NOSUCHCMD" {
		t.Fatalf("err = %v, want a ReplyError with ERR to NOSUCHCMD", err)
	}
	if res.Errors["ERR"] < 1 || res.Requests > 10 {
		t.Errorf("errors %v after %d requests: want the first batch to end the run", res.Errors, res.Requests)
	}
	cfg.ContinueOnError = true
	res = run(t, tg, cfg)
	if res.Errors["ERR"] != 100 || res.Requests != 100 {
		t.Errorf("continue on error: errors %v in %d requests, want ERR=100", res.Errors, res.Requests)
	}
	// WRONGTYPE: reading a list as a string.
	tg.flush(t)
	if err := tg.client.RPush(context.Background(), string(keyspace.Spec{Keyspace: 1}.AppendName(nil, "l:", uint64(0))), "x").Err(); err != nil {
		t.Fatal(err)
	}
	res = run(t, tg, fill(Config{Mode: ModeGet, Load: Load{KeyPrefix: "l:", Keyspace: 1, Requests: 5, ContinueOnError: true}}))
	if res.Errors["WRONGTYPE"] != 5 {
		t.Errorf("errors %v, want WRONGTYPE=5", res.Errors)
	}
}

func TestServerKilledMidRun(t *testing.T) {
	r := testutil.StartRedis(t)
	var done atomic.Int64
	errc := make(chan error, 1)
	var res Result
	go func() {
		var err error
		res, err = Run(context.Background(), fill(Config{Addr: r.Addr, Mode: ModeSet, ProgressInterval: 10 * time.Millisecond, Progress: func(p Progress) { done.Store(p.Done) }, Load: Load{Duration: 20 * time.Second, Pipeline: 16, Connections: 4}}))
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for done.Load() < 1000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // bounded poll of the progress hook
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case err := <-errc:
		if took := time.Since(killed); took > 5*time.Second {
			t.Errorf("run ended %v after the kill, want well before the 20s run's end", took)
		}
		if err == nil || !(errors.Is(err, link.ErrServerClosed) || strings.Contains(err.Error(), "connection reset")) {
			t.Fatalf("err = %v, want the server closing the connection", err)
		}
		if res.Requests < 1000 || res.Sent < res.Requests {
			t.Errorf("counts so far: %d requests, %d sent", res.Requests, res.Sent)
		}
		t.Logf("after the kill: %v (%d replies, %d sent)", err, res.Requests, res.Sent)
	case <-time.After(10 * time.Second):
		t.Fatal("run still going 10s after the server was killed")
	}
}

func TestUnreachable(t *testing.T) {
	// A port nobody listens on: refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = Run(context.Background(), fill(Config{Addr: addr, Load: Load{Requests: 10}}))
	if err == nil || !strings.Contains(err.Error(), "connect to "+addr) || time.Since(start) > 2*time.Second {
		t.Errorf("closed port: err %v after %v, want a quick connect error", err, time.Since(start))
	}

	// A listener that accepts but never answers AUTH: the connect timeout.
	start = time.Now()
	_, err = Run(context.Background(), fill(Config{Addr: silentServer(t), Password: "x", Load: Load{Requests: 10, ConnectTimeout: 200 * time.Millisecond}}))
	if took := time.Since(start); err == nil || took < 200*time.Millisecond || took > 2500*time.Millisecond {
		t.Errorf("silent server: err %v after %v, want a timeout after 200ms", err, took)
	}
}

// silentServer returns the address of a listener that accepts connections
// and never answers, until the test ends.
func silentServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().String()
}

func TestPassword(t *testing.T) {
	r := testutil.StartRedis(t, "--requirepass", "s3cret")
	if _, err := Run(context.Background(), fill(Config{Addr: r.Addr, Load: Load{Requests: 10}})); err == nil {
		t.Error("no password: want an error reply (NOAUTH)")
	}
	if _, err := Run(context.Background(), fill(Config{Addr: r.Addr, Password: "wrong", Load: Load{Requests: 10}})); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Errorf("wrong password: err %v, want an auth error", err)
	}
	if _, err := Run(context.Background(), fill(Config{Addr: r.Addr, Password: "s3cret", Load: Load{Requests: 10}})); err != nil {
		t.Errorf("right password: %v", err)
	}
}

func TestDurationRateAndProgress(t *testing.T) {
	tg := redisTarget(t)
	var calls []Progress
	res := run(t, tg, fill(Config{Mode: ModeMixed, ProgressInterval: 50 * time.Millisecond, Progress: func(p Progress) { calls = append(calls, p) }, Load: Load{Duration: 300 * time.Millisecond, Connections: 3, Pipeline: 4}}))
	if res.Requests == 0 || res.Requests != res.Sent || res.Elapsed < 300*time.Millisecond || res.Elapsed > 5*time.Second {
		t.Errorf("duration run: %d requests, %d sent, elapsed %v", res.Requests, res.Sent, res.Elapsed)
	}
	if len(calls) < 3 || !calls[len(calls)-1].Final || calls[len(calls)-1].Done != res.Requests || calls[0].Phase != "run" {
		t.Errorf("progress calls %+v: want several, the last final with Done = %d", calls, res.Requests)
	}

	// A timed warmup, then an exact count.
	phases := map[string]bool{}
	res = run(t, tg, fill(Config{Mode: ModeSet, ProgressInterval: 20 * time.Millisecond, Progress: func(p Progress) { phases[p.Phase] = true }, Load: Load{Warmup: 100 * time.Millisecond, Requests: 500, Connections: 2}}))
	if res.Requests != 500 || res.Sent != 500 || !phases["warmup"] || !phases["run"] {
		t.Errorf("warmup 100ms + 500 requests: %d requests, %d sent, phases %v", res.Requests, res.Sent, phases)
	}

	// Open loop: 2000 requests per second for 0.5 s.
	res = run(t, tg, fill(Config{Mode: ModeSet, Load: Load{Rate: 2000, Duration: 500 * time.Millisecond, Connections: 2, Pipeline: 8}}))
	if res.Requests < 800 || res.Requests > 1100 {
		t.Errorf("rate 2000/s for 0.5s: %d requests, want about 1000", res.Requests)
	}
	// Open loop bounded by count.
	res = run(t, tg, fill(Config{Mode: ModeGet, Load: Load{Rate: 5000, Requests: 500, Connections: 3, Pipeline: 2}}))
	if res.Requests != 500 || res.Elapsed < 90*time.Millisecond {
		t.Errorf("rate 5000/s for 500 requests: %d requests in %v, want 500 in about 100ms", res.Requests, res.Elapsed)
	}
}

func TestCancel(t *testing.T) {
	tg := redisTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, fill(Config{Addr: tg.addr, Mode: ModeSet, Load: Load{Duration: time.Minute}}))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second || res.Requests == 0 {
		t.Errorf("cancelled run: err %v after %v with %d requests", err, time.Since(start), res.Requests)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: "write"}, {Load: Load{KeyPattern: "spiral"}}, {Load: Load{Pipeline: -1}}, {Load: Load{SetRatio: 101}},
		{Load: Load{KeyPattern: keyspace.Random, Zipf: 1.1}}, {Load: Load{Keyspace: -5}}, {Load: Load{ValueSize: -1}},
	} {
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "invalid configuration") {
			t.Errorf("%+v: err %v, want invalid configuration", cfg, err)
		}
	}
}

// TestSchedulerSyscalls covers the worker loop with the scheduler-aware
// system calls instead of the raw ones (see sys.go).
func TestSchedulerSyscalls(t *testing.T) {
	tg := redisTarget(t)
	link.Raw = false
	defer func() { link.Raw = true }()
	res := run(t, tg, fill(Config{Mode: ModeMixed, Load: Load{Requests: 3000, Connections: 4, Pipeline: 10, VerifyGet: true, AllowMisses: true}}))
	if res.Requests != 3000 || res.VerifyFailures != 0 {
		t.Errorf("%d requests, %d verify failures", res.Requests, res.VerifyFailures)
	}
	tg.flush(t)
	if res, err := Prefill(context.Background(), fill(Config{Addr: tg.addr, Load: Load{Keyspace: 3000, Pipeline: 100}})); err != nil || res.Sets != 3000 {
		t.Errorf("prefill: %d keys, err %v", res.Sets, err)
	}
}

func TestGOMAXPROCSRestored(t *testing.T) {
	tg := redisTarget(t)
	before := runtime.GOMAXPROCS(0)
	run(t, tg, fill(Config{Load: Load{Requests: 100, Connections: 3, Threads: 3}}))
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after a run, %d before", after, before)
	}
	tg.flush(t)
	if _, err := Prefill(context.Background(), fill(Config{Addr: tg.addr, Load: Load{Keyspace: 100}})); err != nil {
		t.Fatal(err)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after a prefill, %d before", after, before)
	}
}

// TestLargeValues writes batches larger than the socket buffers (partial
// writes, EPOLLOUT) and reads replies larger than the read buffer.
func TestLargeValues(t *testing.T) {
	tg := redisTarget(t)
	cfg := fill(Config{Addr: tg.addr, Load: Load{Keyspace: 40, ValueSize: 200_000, Pipeline: 16, Connections: 2, Seed: 11}})
	if res, err := Prefill(context.Background(), cfg); err != nil || res.Sets != 40 {
		t.Fatalf("prefill: %d sets, err %v", res.Sets, err)
	}
	cfg.Mode, cfg.Requests, cfg.VerifyGet = ModeGet, 80, true
	if res := run(t, tg, cfg); res.Gets != 80 || res.VerifyFailures != 0 || res.Misses != 0 {
		t.Errorf("%d gets, %d failures, %d misses", res.Gets, res.VerifyFailures, res.Misses)
	}
}
