package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// TestReadModifyWrite: the write of a read-modify-write leaves only after
// its read's reply: on one connection with a pipeline of 8, MONITOR sees
// two batches of 8 GETs (the second built while the first was awaited)
// before the first batch's SETs, which go out after the next batch of
// GETs, each on the key of its GET. The pair counts once in its command (RMW), and twice
// in the run's requests.
func TestReadModifyWrite(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 24, Keyspace: 1000, KeyPrefix: "k:", ValueSize: 7, Connections: 1, Pipeline: 8, Seed: 3, KeyPattern: keyspace.Sequential}})
	cfg.Commands = []mix.Command{{Args: []string{"GET", "__key__"}, Then: []string{"SET", "__key__", "__data__"}}}
	stop := testutil.Monitor(t, r.Addr, 7)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := stop()
	var cmds []string
	for _, s := range got {
		if !strings.HasPrefix(s, "COMMAND") {
			cmds = append(cmds, s)
		}
	}
	var want []string
	for _, b := range []struct {
		cmd   string
		batch int
	}{{"GET k:%03d", 0}, {"GET k:%03d", 1}, {"SET k:%03d <data>", 0}, {"GET k:%03d", 2}, {"SET k:%03d <data>", 1}, {"SET k:%03d <data>", 2}} {
		for i := range 8 {
			want = append(want, fmt.Sprintf(b.cmd, 8*b.batch+i))
		}
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("server saw\n%s\nwant\n%s", strings.Join(cmds, ", "), strings.Join(want, ", "))
	}
	if c := res.Commands[0]; c.Name != "RMW" || c.Requests != 24 || c.Histogram.TotalCount() != 24 || res.Requests != 48 {
		t.Errorf("RMW %d operations, %d latencies, run %d requests: want 24, 24, 48", c.Requests, c.Histogram.TotalCount(), res.Requests)
	}
}

// TestReadModifyWriteOpenLoop: in an open loop the writes go out as the
// reads' replies come, and every operation completes: the run's requests
// are its operations plus one write per RMW.
func TestReadModifyWriteOpenLoop(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 4000, Rate: 40_000, Keyspace: 1000, ValueSize: 20, Connections: 4, Pipeline: 4, Seed: 6}})
	cfg.Commands = []mix.Command{{Args: []string{"GET", "__key__"}, Then: []string{"SET", "__key__", "__data__"}}, {Args: []string{"GET", "__key__"}}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rmw, get := res.Commands[0], res.Commands[1]
	if rmw.Requests+get.Requests != 4000 || res.Requests != 4000+rmw.Requests || rmw.Requests < 1800 {
		t.Errorf("RMW %d, GET %d, run %d requests", rmw.Requests, get.Requests, res.Requests)
	}
}

// TestValueSizes: every value a mix writes has the size ValueSizeOf gives
// its key, the JSON report's settings name the distribution, the sizes' shares are within a point of their weights over
// 20,000 keys, and reads verify them, after a prefill too.
func TestValueSizes(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	ranges, err := keyspace.ParseValueSizes("32:60,1024:30,100-200:10")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 5000, Keyspace: 2000, Connections: 2, Pipeline: 16, Seed: 4, KeyPattern: keyspace.Sequential, ValueSizes: ranges}})
	cfg.Commands = []mix.Command{{Args: []string{"SET", "__key__", "__data__"}}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, res)["settings"].(map[string]any)["value_sizes"]; got != "32:60,1024:30,100-200:10" {
		t.Errorf("JSON settings: value sizes %q", got)
	}
	for i := range int64(50) {
		key := string(keyspace.Spec{Keyspace: cfg.Keyspace}.AppendName(nil, cfg.KeyPrefix, uint64(i)))
		if n := tg.client.StrLen(context.Background(), key).Val(); n != int64(ValueSizeOf(cfg, i)) {
			t.Errorf("%s: %d bytes, want %d", key, n, ValueSizeOf(cfg, i))
		}
	}
	var n32, n1024, mid int
	for i := range int64(20_000) {
		switch s := ValueSizeOf(cfg, i); {
		case s == 32:
			n32++
		case s == 1024:
			n1024++
		case s >= 100 && s <= 200:
			mid++
		default:
			t.Fatalf("key %d: size %d not in the list", i, s)
		}
	}
	if math.Abs(float64(n32)/200-60) > 1 || math.Abs(float64(n1024)/200-30) > 1 || math.Abs(float64(mid)/200-10) > 1 {
		t.Errorf("shares %d %d %d of 20000: want 60%%, 30%%, 10%% ± 1", n32, n1024, mid)
	}
	for _, prefill := range []bool{false, true} {
		c := cfg
		c.VerifyGet = true
		c.Commands = []mix.Command{{Args: []string{"GET", "__key__"}}}
		if prefill {
			tg.flush(t)
			if _, err := Prefill(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Run(context.Background(), c)
		if err != nil || res.VerifyFailures != 0 || res.Misses != 0 {
			t.Errorf("prefill %v: %v, %d wrong, %d misses", prefill, err, res.VerifyFailures, res.Misses)
		}
	}
}

// TestVerifyMix: with VerifyGet, a mix's GETs of keys its SETs write, or
// of __key__ (which a prefill writes), are checked: none fails on
// redis-server, misses (keys not yet written) are counted apart, and
// corrupted values are caught, failing the run. GETs of keys another
// command also writes are not checked.
func TestVerifyMix(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 20_000, Keyspace: 500, Connections: 4, Pipeline: 16, Seed: 8, ValueSize: 100, VerifyGet: true}})
	cfg.Commands = []mix.Command{
		{Args: []string{"SET", "user:__rand_int__", "__data__"}},
		{Args: []string{"GET", "user:__rand_int__"}},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.VerifyFailures != 0 || res.Misses == 0 {
		t.Fatalf("%v, %d wrong values, %d misses: want none and some", err, res.VerifyFailures, res.Misses)
	}
	if _, err := Prefill(context.Background(), cfg); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("prefill of a written server: %v", err)
	}
	tg.flush(t)
	if _, err := Prefill(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for i := range int64(50) {
		tg.client.Set(context.Background(), string(keyspace.Spec{Keyspace: cfg.Keyspace}.AppendName(nil, cfg.KeyPrefix, uint64(i))), "corrupt", 0)
	}
	c := cfg
	c.Commands = []mix.Command{{Args: []string{"GET", "__key__"}}}
	res, err = Run(context.Background(), c)
	if !errors.Is(err, ErrVerify) || res.VerifyFailures == 0 || res.Misses != 0 || len(res.Warnings) == 0 ||
		!strings.Contains(res.Warnings[0].Error(), `got "$7\r\ncorrupt\r\n"`) {
		t.Errorf("corrupted: %v, %d wrong values, %d misses, warnings %v", err, res.VerifyFailures, res.Misses, res.Warnings)
	}
	c.Commands = append(c.Commands, mix.Command{Args: []string{"APPEND", "__key__", "x"}})
	if res, err = Run(context.Background(), c); err != nil || res.VerifyFailures != 0 {
		t.Errorf("GET beside APPEND: %v, %d wrong values: want no check", err, res.VerifyFailures)
	}
}

// TestVerifyCounters: with one connection, counters are checked: each
// INCR, INCRBY and LPUSH reply is the previous one for its key plus the
// step, so a clean run has no failure; a second writer incrementing the
// same keys meanwhile is caught; with two connections (two writers per
// key) nothing is checked.
func TestVerifyCounters(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 30_000, Keyspace: 20, Connections: 1, Pipeline: 16, Seed: 3, VerifyGet: true}})
	cfg.Commands = []mix.Command{
		{Args: []string{"INCR", "counter:__rand_int__"}},
		{Args: []string{"INCRBY", "by5:__key__", "5"}},
		{Args: []string{"LPUSH", "mylist", "__data__"}},
		{Args: []string{"DECR", "down:__key__"}},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.VerifyFailures != 0 {
		t.Fatalf("a clean run: %v, %d wrong replies %v", err, res.VerifyFailures, res.Warnings)
	}

	// A second writer on the same counters, while the run goes on at
	// pipeline 1 so that the two interleave.
	c := cfg
	c.Pipeline, c.Requests = 1, 20_000
	c.Commands = cfg.Commands[:1]
	res, err = runBeside(c, func(ctx context.Context, i int) {
		tg.client.Incr(ctx, fmt.Sprintf("counter:%012d", i%20)) // __rand_int__: 12 digits
	})
	if !errors.Is(err, ErrVerify) || res.VerifyFailures == 0 || len(res.Warnings) == 0 ||
		!strings.Contains(res.Warnings[0].Error(), "the previous reply +1") {
		t.Errorf("a second writer: %v, %d wrong replies, warnings %v; want them caught", err, res.VerifyFailures, res.Warnings)
	}

	// Two connections are two writers per key: not checked.
	c.Connections = 2
	res, err = runBeside(c, func(ctx context.Context, i int) {
		tg.client.Incr(ctx, fmt.Sprintf("counter:%012d", i%20))
	})
	if err != nil || res.VerifyFailures != 0 {
		t.Errorf("two connections: %v, %d wrong replies: want no check", err, res.VerifyFailures)
	}
}

// runBeside runs cfg while another client calls write(ctx, 0), (ctx, 1), …
// until the run ends.
func runBeside(cfg Config, write func(ctx context.Context, i int)) (Result, error) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			write(ctx, i)
		}
	}()
	res, err := Run(context.Background(), cfg)
	stop()
	<-done
	return res, err
}
