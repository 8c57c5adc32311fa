package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

func kvstoreTarget(t *testing.T) (target, *kvstore.Server) {
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return newTarget(t, srv.Addr()), srv
}

// TestKvstoreFamilies runs each command family of the embedded kvstore:
// exact counts, EXIST conflicts for the insert-only ones, verification
// after a prefill, the one overwritten value, misses.
func TestKvstoreFamilies(t *testing.T) {
	tg, _ := kvstoreTarget(t)
	ctx := context.Background()
	for _, f := range []struct {
		set, get, mod string
		insertOnly    bool
	}{
		{"SET", "GET", "SET", false},
		{"RSET", "RGET", "RMOD", true},
		{"HSET", "HGET", "HMOD", true},
	} {
		t.Run(f.set, func(t *testing.T) {
			prefix := "t:" + f.set + ":"
			cfg := fill(Config{Addr: tg.addr, SetCmd: f.set, GetCmd: f.get, Load: Load{KeyPrefix: prefix, Keyspace: 3000, Pipeline: 64, Connections: 3, Seed: 5}})

			// A permutation pass writes each key once: no conflict.
			set := cfg
			set.Mode, set.Requests = ModeSet, 3000
			res := run(t, tg, set)
			if res.Sets != 3000 || res.Conflicts != 0 {
				t.Fatalf("first pass: %d sets, %d conflicts; want 3000 and 0", res.Sets, res.Conflicts)
			}
			// A second pass finds every key there.
			res = run(t, tg, set)
			want := int64(0)
			if f.insertOnly {
				want = 3000
			}
			if res.Sets != 3000 || res.Conflicts != want || len(res.Errors) != 0 {
				t.Fatalf("second pass: %d sets, %d conflicts, errors %v; want 3000, %d, none", res.Sets, res.Conflicts, res.Errors, want)
			}

			// Every value verifies.
			get := cfg
			get.Mode, get.Requests, get.VerifyGet, get.KeyPattern = ModeGet, 3000, true, keyspace.Sequential
			if res := run(t, tg, get); res.VerifyFailures != 0 || res.Misses != 0 {
				t.Fatalf("verify: %d failures, %d misses", res.VerifyFailures, res.Misses)
			}
			// Overwrite one behind the generator's back.
			key := string(keyspace.Spec{Keyspace: 3000}.AppendName(nil, prefix, uint64(2999)))
			if err := tg.client.Do(ctx, f.mod, key, "tampered").Err(); err != nil {
				t.Fatalf("%s: %v", f.mod, err)
			}
			res, err := Run(ctx, get)
			if !errors.Is(err, ErrVerify) || res.VerifyFailures != 1 || !strings.Contains(res.Warnings[0].Error(), key) {
				t.Fatalf("after %s %s: %d failures (%v), err %v; want 1", f.mod, key, res.VerifyFailures, res.Warnings, err)
			}

			// Keys never written are misses.
			miss := get
			miss.KeyPrefix, miss.AllowMisses = "t:none:", true
			if res := run(t, tg, miss); res.Misses != 3000 {
				t.Errorf("unwritten keys: %d misses, want 3000", res.Misses)
			}

			// Prefill expects an empty server.
			if pre, err := Prefill(ctx, cfg); !errors.Is(err, ErrNotEmpty) || pre.Sent != 0 {
				t.Errorf("prefill over existing keys: %d keys sent, err %v; want none and ErrNotEmpty", pre.Sent, err)
			}
		})
	}
}

func TestKvstoreRandomInsertConflicts(t *testing.T) {
	tg, _ := kvstoreTarget(t)
	// 2000 random writes over 500 keys must meet existing keys.
	res := run(t, tg, fill(Config{Mode: ModeSet, SetCmd: "RSET", Load: Load{KeyPattern: keyspace.Random, Keyspace: 500, Requests: 2000, Seed: 1}}))
	if res.Requests != 2000 || res.Conflicts < 1000 || res.Conflicts >= 2000 {
		t.Errorf("%d requests, %d conflicts; want 2000 and most of them conflicts", res.Requests, res.Conflicts)
	}
	// Mixed mode: conflicts on writes, misses on reads, both counted.
	res = run(t, tg, fill(Config{Mode: ModeMixed, SetCmd: "RSET", GetCmd: "RGET", Load: Load{KeyPrefix: "m:", Keyspace: 500, Requests: 2000, VerifyGet: true, Seed: 2}}))
	if res.Requests != 2000 || res.Conflicts == 0 || res.Misses == 0 || res.VerifyFailures != 0 {
		t.Errorf("mixed: %+v", res)
	}
}

func TestKvstoreClosedMidRun(t *testing.T) {
	tg, srv := kvstoreTarget(t)
	errc := make(chan error, 1)
	started := make(chan struct{}, 1)
	go func() {
		_, err := Run(context.Background(), fill(Config{Addr: tg.addr, Mode: ModeSet, ProgressInterval: 10 * time.Millisecond, Progress: func(p Progress) {
			if p.Done > 0 {
				select {
				case started <- struct{}{}:
				default:
				}
			}
		}, Load: Load{Duration: 20 * time.Second, Connections: 2}}))
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no progress in 5s")
	}
	srv.Close()
	closed := time.Now()
	select {
	case err := <-errc:
		if err == nil || time.Since(closed) > 5*time.Second {
			t.Errorf("err %v %v after the server closed", err, time.Since(closed))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run still going 3s after the server closed")
	}
}

// TestRefusedWritesWarned: a set run of the insert-only RSET that meets
// the keys a first run wrote counts every write as a conflict, and says
// in a warning that its QPS counts writes that did not happen.
func TestRefusedWritesWarned(t *testing.T) {
	tg, _ := kvstoreTarget(t)
	cfg := fill(Config{Addr: tg.addr, Mode: ModeSet, SetCmd: "RSET", GetCmd: "RGET", Load: Load{Requests: 2000, Keyspace: 2000, Pipeline: 32}})
	first := run(t, tg, cfg)
	if first.Conflicts != 0 || len(first.Warnings) != 0 {
		t.Fatalf("first run: %d conflicts, warnings %v", first.Conflicts, first.Warnings)
	}
	if err := cfg.InsertOnlyErrors(); err != nil {
		t.Fatalf("a run of as many requests as keys is refused: %v", err)
	}
	again := run(t, tg, cfg)
	if again.Conflicts != 2000 || len(again.Warnings) != 1 || !errors.Is(again.Warnings[0], ErrRefusedWrites) ||
		!strings.Contains(again.Warnings[0].Error(), "2000 of 2000 writes") {
		t.Errorf("second run: %d conflicts, warnings %v; want 2000 and one warning", again.Conflicts, again.Warnings)
	}
	cfg.Requests = 2001
	if err := cfg.InsertOnlyErrors(); err == nil || !strings.Contains(err.Error(), "1 refused writes") {
		t.Errorf("one request more than keys: %v", err)
	}
}

// TestVerifyOtherSeed: reads verified against values another seed wrote
// are all wrong, and the error says so, naming --seed.
func TestVerifyOtherSeed(t *testing.T) {
	tg, _ := kvstoreTarget(t)
	cfg := fill(Config{Addr: tg.addr, Mode: ModeSet, Load: Load{Requests: 500, Keyspace: 500, Seed: 1}})
	run(t, tg, cfg)
	cfg.Mode, cfg.Seed, cfg.VerifyGet = ModeGet, 2, true
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "written with another seed") || !strings.Contains(err.Error(), "--seed") {
		t.Errorf("got %v, want a verify error naming the seed", err)
	}
}
