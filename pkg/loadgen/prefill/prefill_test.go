package prefill

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/redis/go-redis/v9"
)

// Config, Load and the rest as the tests name them.
type (
	Config     = loadgen.Config
	Load       = loadgen.Load
	Progress   = loadgen.Progress
	Result     = loadgen.Result
	ReplyError = loadgen.ReplyError
)

const (
	ModeGet          = loadgen.ModeGet
	DefaultKeyPrefix = loadgen.DefaultKeyPrefix
)

// target is a server the tests prefill.
type target struct {
	addr string
	// client inspects and changes the server behind the prefill's back.
	client *redis.Client
}

// flush empties the server's keyspaces.
func (tg target) flush(t *testing.T) {
	t.Helper()
	if err := tg.client.FlushAll(context.Background()).Err(); err != nil {
		t.Fatalf("FLUSHALL: %v", err)
	}
}

func redisTarget(t *testing.T) target { return newTarget(t, testutil.StartRedis(t).Addr) }

func newTarget(t *testing.T, addr string) target {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return target{addr: addr, client: c}
}

func kvstoreTarget(t *testing.T) target {
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return newTarget(t, srv.Addr())
}

// fill returns DefaultConfig with the fields the tests set taken from c.
func fill(c Config) Config {
	d := loadgen.DefaultConfig()
	d.Addr, d.Password, d.Progress = c.Addr, c.Password, c.Progress
	d.SetCmd, d.GetCmd = cmp.Or(c.SetCmd, d.SetCmd), cmp.Or(c.GetCmd, d.GetCmd)
	d.ProgressInterval, d.Timeout = cmp.Or(c.ProgressInterval, d.ProgressInterval), cmp.Or(c.Timeout, d.Timeout)
	d.KeyPrefix, d.Keyspace = cmp.Or(c.KeyPrefix, d.KeyPrefix), cmp.Or(c.Keyspace, d.Keyspace)
	d.Pipeline, d.ValueSize, d.Seed = cmp.Or(c.Pipeline, d.Pipeline), cmp.Or(c.ValueSize, d.ValueSize), c.Seed
	return d
}

// keysUnder returns every key under prefix.
func keysUnder(t *testing.T, tg target, prefix string) []string {
	t.Helper()
	keys, err := tg.client.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// run runs cfg against tg and fails the test on error.
func run(t *testing.T, tg target, cfg Config) Result {
	t.Helper()
	cfg.Addr = tg.addr
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(%+v): %v", cfg, err)
	}
	return res
}

// TestPrefillWritesWhatReadsVerify prefills with MSET (SET in any case)
// and with a single-key command, on Redis and on the kvstore, and checks
// the commands the server saw, the keys and values against those of the
// single-key prefill through Run, and a verified read of every key.
func TestPrefillWritesWhatReadsVerify(t *testing.T) {
	// Neither the keyspace nor the pipeline is a multiple of
	// PrefillMSetKeys: the last MSET of every batch is short, and so is the
	// last batch.
	const n = 2_345
	for _, tc := range []struct {
		name     string
		start    func(*testing.T) target
		set, get string
	}{
		{"redis SET", redisTarget, "SET", "GET"},
		{"kvstore set", kvstoreTarget, "set", "GET"},
		{"kvstore RSET", kvstoreTarget, "RSET", "RGET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.start(t)
			cfg := fill(Config{Addr: tg.addr, SetCmd: tc.set, GetCmd: tc.get, ProgressInterval: time.Nanosecond, Load: Load{KeyPrefix: "pf:", Keyspace: n, Pipeline: 200, ValueSize: 40, Seed: 17}})
			mset := strings.EqualFold(tc.set, "SET")

			var want []any
			if mset { // the single-key writes, for comparison
				run(t, tg, PrefillConfig(cfg))
				want = values(t, tg, cfg)
				tg.flush(t)
			}

			var calls []Progress
			cfg.Progress = func(p Progress) { calls = append(calls, p) }
			before := testutil.CommandsProcessed(t, tg.client)
			res, err := Prefill(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != n || res.Sent != n || res.Sets != n || res.Conflicts != 0 || len(res.Errors) != 0 || len(res.Warnings) != 0 {
				t.Fatalf("prefill: %d requests, %d sent, %d sets, %d conflicts, errors %v, warnings %v; want %d keys and nothing else",
					res.Requests, res.Sent, res.Sets, res.Conflicts, res.Errors, res.Warnings, n)
			}
			// Two DBSIZEs, the writes, and INFO itself.
			writes := int64(n)
			if mset {
				// 11 full batches of 200 keys (3 MSETs of 64, one of 8)
				// and one of 145 (2 of 64, one of 17).
				writes = 11*4 + 3
			}
			if got := testutil.CommandsProcessed(t, tg.client) - before; got != writes+3 {
				t.Errorf("the server processed %d commands, want %d writes, 2 DBSIZE and INFO", got, writes)
			}
			if len(calls) < 2 || calls[0].Phase != "prefill" || calls[0].Total != n {
				t.Errorf("progress %+v: want several calls of phase prefill, total %d", calls, n)
			} else if last := calls[len(calls)-1]; !last.Final || last.Done != n || calls[len(calls)-2].Final {
				t.Errorf("last progress %+v: want the only final one, with all %d keys", last, n)
			}
			if mset {
				if got := values(t, tg, cfg); !slices.Equal(got, want) {
					t.Errorf("MSET wrote other keys or values than the single-key prefill")
				}
			}

			get := cfg
			get.Progress = nil
			get.Mode, get.KeyPattern, get.Requests, get.VerifyGet = ModeGet, keyspace.Sequential, n, true
			if res := run(t, tg, get); res.Gets != n || res.Misses != 0 || res.VerifyFailures != 0 {
				t.Errorf("verified read of every key: %d gets, %d misses, %d wrong values", res.Gets, res.Misses, res.VerifyFailures)
			}
			get.KeyPattern, get.Requests = keyspace.Random, 3*n
			if res := run(t, tg, get); res.Gets != 3*n || res.Misses != 0 || res.VerifyFailures != 0 {
				t.Errorf("verified random reads: %d gets, %d misses, %d wrong values", res.Gets, res.Misses, res.VerifyFailures)
			}
		})
	}
}

// values reads keys 0 to cfg.Keyspace-1 with MGET and checks that there
// are no others.
func values(t *testing.T, tg target, cfg Config) []any {
	t.Helper()
	ctx := context.Background()
	if n := tg.client.DBSize(ctx).Val(); n != cfg.Keyspace {
		t.Fatalf("DBSIZE %d, want %d", n, cfg.Keyspace)
	}
	var keys []string
	for i := range cfg.Keyspace {
		keys = append(keys, string(cfg.Keys().AppendName(nil, cfg.KeyPrefix, uint64(i))))
	}
	vals, err := tg.client.MGet(ctx, keys...).Result()
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(vals, nil); i >= 0 {
		t.Fatalf("%s is missing", keys[i])
	}
	return vals
}

// TestPrefillRefusesNonEmpty: a key anywhere, in any keyspace, stops the
// prefill before it writes.
func TestPrefillRefusesNonEmpty(t *testing.T) {
	ctx := context.Background()
	rd := redisTarget(t)
	kv := kvstoreTarget(t)
	for _, tc := range []struct {
		name   string
		tg     target
		set    string
		stale  []any
		remove []any
	}{
		{"redis", rd, "SET", []any{"SET", "stale", "x"}, nil},
		{"kvstore SET, a key of the ordered engine", kv, "SET", []any{"RSET", "stale", "x"}, []any{"RDEL", "stale"}},
		{"kvstore RSET, a key of the hash engine", kv, "RSET", []any{"HSET", "stale", "x"}, []any{"HDEL", "stale"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.tg.client.Do(ctx, tc.stale...).Err(); err != nil {
				t.Fatal(err)
			}
			res, err := Prefill(ctx, fill(Config{Addr: tc.tg.addr, SetCmd: tc.set, Load: Load{Keyspace: 1000}}))
			if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "DBSIZE on "+tc.tg.addr+" is 1 before the prefill") {
				t.Errorf("err %v, want ErrNotEmpty naming the server and its DBSIZE", err)
			}
			if n := tc.tg.client.DBSize(ctx).Val(); n != 1 || res.Sent != 0 {
				t.Errorf("DBSIZE %d after the refusal, %d keys sent: want the stale key alone", n, res.Sent)
			}
			if tc.remove != nil {
				tc.tg.client.Do(ctx, tc.remove...)
			} else {
				tc.tg.flush(t)
			}
		})
	}
}

func TestPrefillCancel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*testing.T) target
		set   string
	}{
		{"redis MSET", redisTarget, "SET"},
		{"kvstore RSET", kvstoreTarget, "RSET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.start(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			progressed := make(chan struct{})
			var once sync.Once
			// Some seconds of work, were it not cancelled.
			cfg := fill(Config{Addr: tg.addr, SetCmd: tc.set, ProgressInterval: time.Millisecond, Progress: func(p Progress) {
				if p.Done > 0 {
					once.Do(func() { close(progressed) })
				}
			}, Load: Load{Keyspace: 20_000_000}})
			type result struct {
				res Result
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := Prefill(ctx, cfg)
				done <- result{res, err}
			}()
			select {
			case <-progressed:
			case <-time.After(5 * time.Second):
				t.Fatal("no progress in 5s")
			}
			cancel()
			cancelled := time.Now()
			select {
			case r := <-done:
				if took := time.Since(cancelled); took > 3*time.Second {
					t.Errorf("Prefill returned %v after the cancel", took)
				}
				if !errors.Is(r.err, context.Canceled) || r.res.Requests == 0 || r.res.Requests >= cfg.Keyspace {
					t.Errorf("err %v with %d keys written: want context.Canceled part way", r.err, r.res.Requests)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Prefill still running 5s after the cancel")
			}
		})
	}

	// A server that never answers: the cancel ends the wait.
	addr := testutil.ServeBytes(t, "") // never answers
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Prefill(ctx, fill(Config{Addr: addr, Load: Load{Keyspace: 10}}))
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
		t.Errorf("silent server, cancelled after 100ms: err %v after %v", err, took)
	}
	// ... and so does the reply timeout.
	start = time.Now()
	_, err = Prefill(context.Background(), fill(Config{Addr: addr, Load: Load{Keyspace: 10, Timeout: 100 * time.Millisecond}}))
	if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "no reply for 100ms") || took > 3*time.Second {
		t.Errorf("silent server, timeout 100ms: err %v after %v", err, took)
	}
}

// TestPrefillErrors: error replies name the command, its keys and the
// reply; keys that do not all stay are caught by the second DBSIZE; a
// server without DBSIZE is prefilled with a warning.
func TestPrefillErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("MSET refused", func(t *testing.T) {
		r := testutil.StartRedis(t, "--maxmemory", "1", "--maxmemory-policy", "noeviction")
		res, err := Prefill(ctx, fill(Config{Addr: r.Addr, Load: Load{Keyspace: 1000, KeyPrefix: "k:"}}))
		var re *ReplyError
		if !errors.As(err, &re) || re.Command != "MSET" || re.Key != "k:000 ... k:063 (64 keys)" || !strings.HasPrefix(re.Msg, "OOM") {
			t.Fatalf("err %v (%#v), want the OOM reply to MSET k:000 ... k:063", err, re)
		}
		if !strings.Contains(err.Error(), `server replied "OOM`) || res.Requests != 0 || res.Errors["OOM"] != 1 {
			t.Errorf("err %q, %d keys acknowledged, errors %v", err, res.Requests, res.Errors)
		}
	})
	t.Run("single-key command refused", func(t *testing.T) {
		tg := kvstoreTarget(t)
		_, err := Prefill(ctx, fill(Config{Addr: tg.addr, SetCmd: "NOSUCH", Load: Load{Keyspace: 100, KeyPrefix: "k:"}}))
		var re *ReplyError
		if !errors.As(err, &re) || re.Command != "NOSUCH" || re.Key != "k:00" || !strings.Contains(re.Msg, "unknown command") {
			t.Fatalf("err %v, want the unknown-command reply to NOSUCH k:00", err)
		}
	})
	t.Run("keys evicted", func(t *testing.T) {
		r := testutil.StartRedis(t, "--maxmemory", "3mb", "--maxmemory-policy", "allkeys-random")
		res, err := Prefill(ctx, fill(Config{Addr: r.Addr, Load: Load{Keyspace: 100_000}}))
		if err == nil || !strings.Contains(err.Error(), "after writing 100000 keys, want 100000") || res.Requests != 100_000 {
			t.Errorf("err %v after %d keys, want the DBSIZE after the prefill short of 100000", err, res.Requests)
		}
	})
	t.Run("no DBSIZE", func(t *testing.T) {
		r := testutil.StartRedis(t, "--rename-command", "DBSIZE", "")
		tg := newTarget(t, r.Addr)
		res, err := Prefill(ctx, fill(Config{Addr: r.Addr, Load: Load{Keyspace: 500, Seed: 3}}))
		if err != nil || res.Sets != 500 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Error(), "does not answer DBSIZE") {
			t.Fatalf("err %v, %d keys, warnings %v: want 500 keys and a warning", err, res.Sets, res.Warnings)
		}
		if got := keysUnder(t, tg, DefaultKeyPrefix); len(got) != 500 {
			t.Errorf("%d keys written, want 500", len(got))
		}
	})
	t.Run("password", func(t *testing.T) {
		r := testutil.StartRedis(t, "--requirepass", "s3cret")
		if _, err := Prefill(ctx, fill(Config{Addr: r.Addr, Load: Load{Keyspace: 10}})); err == nil || !strings.Contains(err.Error(), `DBSIZE on `+r.Addr+`: server replied "NOAUTH`) {
			t.Errorf("no password: err %v, want the NOAUTH reply to DBSIZE", err)
		}
		if res, err := Prefill(ctx, fill(Config{Addr: r.Addr, Password: "s3cret", Load: Load{Keyspace: 10}})); err != nil || res.Sets != 10 {
			t.Errorf("right password: %d keys, err %v", res.Sets, err)
		}
	})
}
