package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

// runSegments runs cfg as n agents at once, segment i of n each, and
// returns their results in segment order.
func runSegments(t *testing.T, cfg Config, n int, f func(context.Context, Config) (Result, error)) []Result {
	t.Helper()
	res := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		c := cfg
		c.Segment, c.Segments = i, n
		wg.Go(func() { res[i], errs[i] = f(context.Background(), c) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("segment %d/%d: %v", i, n, err)
		}
	}
	return res
}

// TestSegmentsAddUp: N agents with segments do exactly what one run does:
// the same number of requests, and in mixed mode the same sets and gets
// (each connection keeps its global index, so its random streams), and
// in set mode with a permutation every key once: DBSIZE is the keyspace,
// and the insert-only RSET of the kvstore meets no existing key.
func TestSegmentsAddUp(t *testing.T) {
	rd := redisTarget(t)
	kv, _ := kvstoreTarget(t)
	const keys = 10007
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// 3 connections, raised to one per agent.
			whole := run(t, rd, fill(Config{Mode: ModeMixed, Load: Load{Requests: 20011, Keyspace: keys, Pipeline: 16, Connections: max(3, n), Seed: 3}}))
			// Mixed: the split adds up to the whole run, set for set.
			cfg := fill(Config{Addr: rd.addr, Mode: ModeMixed, Load: Load{Requests: 20011, Keyspace: keys, Pipeline: 16, Connections: 3, Seed: 3}})
			var req, sets, gets int64
			conns := 0
			for i, r := range runSegments(t, cfg, n, Run) {
				req, sets, gets = req+r.Requests, sets+r.Sets, gets+r.Gets
				conns += r.Config.LocalConnections()
				if r.Config.Connections != max(3, n) || r.Config.Segment != i {
					t.Errorf("segment %d: config %d connections, segment %d", i, r.Config.Connections, r.Config.Segment)
				}
				if r.Start.IsZero() || !r.End.After(r.Start) {
					t.Errorf("segment %d: window %v to %v", i, r.Start, r.End)
				}
			}
			if req != whole.Requests || sets != whole.Sets || gets != whole.Gets || conns != max(3, n) {
				t.Errorf("%d agents: %d requests (%d sets, %d gets) on %d connections; one run: %d (%d, %d)",
					n, req, sets, gets, conns, whole.Requests, whole.Sets, whole.Gets)
			}

			// Set, permutation: every key written once.
			for _, tg := range []target{rd, kv} {
				tg.flush(t)
				set := fill(Config{Addr: tg.addr, Mode: ModeSet, SetCmd: "SET", Load: Load{Requests: keys, Keyspace: keys, Pipeline: 16, Connections: 3, Seed: 4}})
				if tg.addr == kv.addr {
					set.SetCmd, set.GetCmd = "RSET", "RGET"
				}
				var sets, conflicts int64
				for _, r := range runSegments(t, set, n, Run) {
					sets, conflicts = sets+r.Sets, conflicts+r.Conflicts
				}
				size, err := tg.client.DBSize(context.Background()).Result()
				if err != nil || sets != keys || conflicts != 0 || size != keys {
					t.Errorf("%s %s: %d sets, %d conflicts, DBSIZE %d (%v); want %d, 0, %d", tg.addr, set.SetCmd, sets, conflicts, size, err, keys, keys)
				}
			}
		})
	}
}

// TestSegmentsPrefill: agents prefilling at once write disjoint
// contiguous shares: every key once (no RSET conflict), all of them.
func TestSegmentsPrefill(t *testing.T) {
	kv, _ := kvstoreTarget(t)
	const keys = 5003
	for _, n := range []int{1, 2, 4} {
		kv.flush(t)
		cfg := fill(Config{Addr: kv.addr, SetCmd: "RSET", GetCmd: "RGET", Load: Load{Keyspace: keys, Pipeline: 64, Seed: 8}})
		var sets, conflicts int64
		next := int64(0)
		for i, r := range runSegments(t, cfg, n, Prefill) {
			sets, conflicts = sets+r.Sets, conflicts+r.Conflicts
			lo, hi := PrefillRange(r.Config)
			if lo != next || r.Sets != hi-lo {
				t.Errorf("%d agents, segment %d: range [%d, %d), %d keys; want it to start at %d", n, i, lo, hi, r.Sets, next)
			}
			next = hi
		}
		size, err := kv.client.DBSize(context.Background()).Result()
		if err != nil || sets != keys || conflicts != 0 || size != keys || next != keys {
			t.Errorf("%d agents: %d keys, %d conflicts, DBSIZE %d (%v), up to %d; want %d, 0, %d", n, sets, conflicts, size, err, next, keys, keys)
		}
		// The keys verify: the agents wrote the values one prefill would.
		get := cfg
		get.Mode, get.Requests, get.KeyPattern, get.VerifyGet, get.Segments = ModeGet, keys, keyspace.Sequential, true, 1
		if r := run(t, kv, get); r.VerifyFailures != 0 || r.Misses != 0 {
			t.Errorf("%d agents: %d wrong values, %d misses", n, r.VerifyFailures, r.Misses)
		}
	}
}

// TestStartAt: a run waits for its start time, and one more than a
// second late fails before sending anything.
func TestStartAt(t *testing.T) {
	rd := redisTarget(t)
	cfg := fill(Config{Addr: rd.addr, Mode: ModeSet, Load: Load{Requests: 100, Keyspace: 100}})
	cfg.StartAt = time.Now().Add(300 * time.Millisecond)
	r := run(t, rd, cfg)
	if r.Start.Before(cfg.StartAt) {
		t.Errorf("started at %v, before the start time %v", r.Start, cfg.StartAt)
	}
	cfg.StartAt = time.Now().Add(-2 * time.Second)
	r, err := Run(context.Background(), cfg)
	if err == nil || !errors.Is(err, ErrLateStart) || r.Sent != 0 {
		t.Errorf("late start: %v, %d sent; want ErrLateStart and nothing sent", err, r.Sent)
	}
}

// TestSegmentsInvalid: a segment outside its count is refused, naming it.
func TestSegmentsInvalid(t *testing.T) {
	for _, c := range []struct{ i, n int }{{2, 2}, {-1, 2}, {0, -1}} {
		cfg := fill(Config{Segment: c.i, Segments: c.n})
		if _, err := cfg.Normalize(); err == nil {
			t.Errorf("segment %d/%d accepted", c.i, c.n)
		}
	}
}

// TestSegmentsOpenLoop: agents of an open loop split the rate as they
// split the requests: each keeps the whole run's schedule for its
// connections, so each takes as long as the whole run would, and
// together they send at the configured rate.
func TestSegmentsOpenLoop(t *testing.T) {
	rd := redisTarget(t)
	const rate, requests = 20000.0, 4000 // 0.2 s
	cfg := fill(Config{Addr: rd.addr, Mode: ModeGet, Load: Load{Requests: requests, Rate: rate, Keyspace: 1000, Pipeline: 8, Connections: 4, Threads: 1}})
	cfg.StartAt = time.Now().Add(200 * time.Millisecond)
	res := runSegments(t, cfg, 2, Run)
	first, last := res[0].Start, res[0].End
	var total int64
	for i, r := range res {
		total += r.Requests
		// Never ahead of the schedule; behind it only by what a loaded
		// machine can do to a 0.2 s run.
		if d := r.Elapsed.Seconds(); d < 0.8*requests/rate || d > 4*requests/rate {
			t.Errorf("segment %d: %d requests in %.3f s; want about %.3f s, the whole run's schedule", i, r.Requests, d, requests/rate)
		}
		if r.Start.Before(first) {
			first = r.Start
		}
		if r.End.After(last) {
			last = r.End
		}
	}
	if qps := float64(total) / last.Sub(first).Seconds(); total != requests || qps < rate/4 || qps > 1.1*rate {
		t.Errorf("together: %d requests at %.0f req/s; want %d at about %.0f", total, qps, requests, rate)
	}
}
