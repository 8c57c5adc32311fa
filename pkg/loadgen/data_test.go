package loadgen

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// gzipRatio is the compressed length of the values of keys [0, n) read
// back from tg over their raw length.
func gzipRatio(t *testing.T, tg target, cfg Config, n int64) float64 {
	t.Helper()
	var raw, z bytes.Buffer
	w := gzip.NewWriter(&z)
	for i := range n {
		v, err := tg.client.Get(context.Background(), string(keyspace.Spec{Keyspace: cfg.Keyspace}.AppendName(nil, cfg.KeyPrefix, uint64(i)))).Bytes()
		if err != nil {
			t.Fatalf("GET key %d: %v", i, err)
		}
		raw.Write(v)
		_, _ = w.Write(v)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return float64(z.Len()) / float64(raw.Len())
}

// TestRandomData: random values do not compress (the default ones do),
// whether a set run, the prefill or a command mix writes them; verified
// reads of them pass, and catch one corrupted value.
func TestRandomData(t *testing.T) {
	tg := redisTarget(t)
	ctx := context.Background()
	base := fill(Config{Addr: tg.addr, Load: Load{Keyspace: 2000, ValueSize: 256, Pipeline: 32, Seed: 7}})
	for _, tc := range []struct {
		name    string
		random  bool
		prefill bool
		mix     bool
	}{{"default", false, false, false}, {"random set", true, false, false}, {"random prefill", true, true, false}, {"random mix", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			tg.flush(t)
			cfg := base
			cfg.RandomData = tc.random
			switch {
			case tc.prefill:
				if _, err := Prefill(ctx, cfg); err != nil {
					t.Fatal(err)
				}
			case tc.mix:
				set := cfg
				set.Requests = cfg.Keyspace
				set.Commands = []mix.Command{{Args: []string{"SET", "__key__", "__data__"}, KeyPattern: keyspace.Sequential}}
				run(t, tg, set)
			default:
				set := cfg
				set.Mode, set.Requests = ModeSet, cfg.Keyspace // a permutation: every key once
				run(t, tg, set)
			}
			ratio := gzipRatio(t, tg, cfg, 200)
			t.Logf("gzip ratio %.3f", ratio)
			if tc.random != (ratio > 0.98) {
				t.Errorf("gzip ratio %.3f of %d-byte values, random %v", ratio, cfg.ValueSize, tc.random)
			}
			get := cfg
			get.Mode, get.Requests, get.VerifyGet, get.KeyPattern = ModeGet, cfg.Keyspace, true, keyspace.Sequential
			res := run(t, tg, get)
			if res.VerifyFailures != 0 || res.Misses != 0 || res.Gets != cfg.Keyspace {
				t.Errorf("verified reads: %d wrong, %d misses in %d reads", res.VerifyFailures, res.Misses, res.Gets)
			}
			key := string(keyspace.Spec{Keyspace: cfg.Keyspace}.AppendName(nil, cfg.KeyPrefix, uint64(1234)))
			v, err := tg.client.Get(ctx, key).Bytes()
			if err != nil {
				t.Fatal(err)
			}
			v[100] ^= 1
			if err := tg.client.Set(ctx, key, v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			res, err = Run(ctx, get)
			if !errors.Is(err, ErrVerify) || res.VerifyFailures != 1 {
				t.Errorf("one corrupted value: %d wrong values, err %v", res.VerifyFailures, err)
			}
		})
	}
}

// TestExpiryRange: every SET carries EX n, n within the range and drawn
// per key, so the keys' TTLs spread over it.
func TestExpiryRange(t *testing.T) {
	tg := redisTarget(t)
	ctx := context.Background()
	for _, mode := range []Mode{ModeSet, ModeMixed} {
		tg.flush(t)
		cfg := fill(Config{Mode: mode, Load: Load{Keyspace: 500, Requests: 5000, Pipeline: 16, ExpiryMin: 100, ExpiryMax: 200}})
		run(t, tg, cfg)
		keys, err := tg.client.Keys(ctx, cfg.KeyPrefix+"*").Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("%s: keys %d, %v", mode, len(keys), err)
		}
		seen := map[int64]bool{}
		for _, k := range keys[:min(len(keys), 100)] {
			ttl, err := tg.client.TTL(ctx, k).Result()
			s := int64(ttl.Seconds())
			if err != nil || s < 99 || s > 200 {
				t.Fatalf("%s: TTL %s = %v (%v): want 100 to 200 s", mode, k, ttl, err)
			}
			seen[s] = true
		}
		if len(seen) < 10 {
			t.Errorf("%s: %d distinct TTLs in 100 keys: not drawn from the range", mode, len(seen))
		}
	}
}

// commandCalls is the server's count of cmd calls (INFO commandstats).
func commandCalls(t *testing.T, tg target, cmd string) int64 {
	t.Helper()
	stats, err := tg.client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(stats, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(after[:strings.IndexByte(after, ',')], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMultiKeyGet: reads are MGETs of N keys, each one request; with
// verification every value of each is checked, and a key without one is
// a miss.
func TestMultiKeyGet(t *testing.T) {
	tg := redisTarget(t)
	ctx := context.Background()
	cfg := fill(Config{Addr: tg.addr, Load: Load{Keyspace: 1000, Pipeline: 16, Connections: 2, Seed: 3, RandomData: true}})
	get := cfg
	get.Mode, get.Requests, get.MultiKeyGet, get.VerifyGet, get.KeyPattern = ModeGet, 250, 4, true, keyspace.Sequential
	// The prefill of a run of MGETs writes the keys one by one.
	if _, err := Prefill(ctx, get); err != nil {
		t.Fatalf("prefill of a multi-key get run: %v", err)
	}
	before := commandCalls(t, tg, "mget")
	res := run(t, tg, get)
	if calls := commandCalls(t, tg, "mget") - before; calls != 250 || res.Requests != 250 || res.Gets != 250 ||
		res.Histogram.TotalCount() != 250 || res.VerifyFailures != 0 || res.Misses != 0 {
		t.Errorf("MGET calls %d, requests %d, gets %d, latencies %d, wrong %d, misses %d: want 250 MGETs, all right",
			calls, res.Requests, res.Gets, res.Histogram.TotalCount(), res.VerifyFailures, res.Misses)
	}
	// Sequential keys, 4 per MGET over 2 connections: every key once.
	key := func(i int64) string {
		return string(keyspace.Spec{Keyspace: cfg.Keyspace}.AppendName(nil, cfg.KeyPrefix, uint64(i)))
	}
	if err := tg.client.Set(ctx, key(10), "wrong", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := tg.client.Del(ctx, key(20), key(21)).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, get)
	if !errors.Is(err, ErrVerify) || res.VerifyFailures != 1 || res.Misses < 1 || res.Misses > 2 {
		t.Errorf("a wrong value and two keys missing: %d wrong, %d misses, err %v", res.VerifyFailures, res.Misses, err)
	}
}

// TestDataConfigErrors: the expiry range needs SET writes, a multi-key
// get GET reads outside a cluster.
func TestDataConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{fill(Config{Load: Load{ExpiryMin: 5, ExpiryMax: 2}}), "--expiry-range 5-2"},
		{fill(Config{Load: Load{ExpiryMin: 0, ExpiryMax: 2}}), "--expiry-range 0-2"},
		{fill(Config{SetCmd: "RSET", Load: Load{ExpiryMin: 1, ExpiryMax: 2}}), "needs the write command SET (not RSET"},
		{fill(Config{Mode: ModeGet, Load: Load{ExpiryMin: 1, ExpiryMax: 2}}), "a get run writes nothing"},
		{fill(Config{Load: Load{MultiKeyGet: -1}}), "--multi-key-get -1"},
		{fill(Config{GetCmd: "RGET", Load: Load{MultiKeyGet: 4}}), "needs the read command GET (not RGET"},
		{fill(Config{Mode: ModeSet, Load: Load{MultiKeyGet: 4}}), "a set run reads nothing"},
		{fill(Config{Cluster: true, Load: Load{MultiKeyGet: 4}}), "several slots"},
	} {
		if _, err := tc.cfg.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Normalize: %v, want %q", err, tc.want)
		}
	}
}
