package loadgen

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// TestCommandMix: over 100,000 requests each command's share is within 1
// percentage point of its ratio, the per-command counts add up to the
// run's, every command has its latencies, and the keys of each command
// follow its own pattern (a sequential SET over the whole keyspace writes
// every key).
func TestCommandMix(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 100_000, Keyspace: 1000, KeyPrefix: "m:", ValueSize: 16, Connections: 4, Pipeline: 32, Seed: 7}})
	cfg.Commands = []mix.Command{
		{Args: []string{"SET", "__key__", "__data__"}, Ratio: 2, KeyPattern: keyspace.Sequential},
		{Args: []string{"GET", "__key__"}, Ratio: 5},
		{Args: []string{"HSET", "h:__rand_int__", "f", "__data__"}, Ratio: 3},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 100_000 || len(res.Commands) != 3 {
		t.Fatalf("requests %d, %d commands", res.Requests, len(res.Commands))
	}
	var sum, hist int64
	for i, c := range res.Commands {
		share := 100 * float64(c.Requests) / float64(res.Requests)
		want := 100 * float64(cfg.Commands[i].Ratio) / 10
		if math.Abs(share-want) > 1 {
			t.Errorf("%s: %.2f%% of requests, want %.0f%% ± 1", c.Name, share, want)
		}
		if c.Errors != 0 || c.Latency.P50 <= 0 || c.QPS <= 0 {
			t.Errorf("%s: %+v", c.Name, c)
		}
		sum += c.Requests
		hist += c.Histogram.TotalCount()
	}
	if sum != res.Requests || hist != res.Histogram.TotalCount() {
		t.Errorf("commands add up to %d requests and %d latencies, run %d and %d", sum, hist, res.Requests, res.Histogram.TotalCount())
	}
	keys := tg.client.Keys(context.Background(), "m:*").Val()
	if len(keys) != 1000 {
		t.Errorf("%d m:* keys after 20000 sequential SETs over 1000 keys: want 1000", len(keys))
	}
	if n := len(tg.client.Keys(context.Background(), "h:*").Val()); n < 900 || !strings.HasPrefix(tg.client.Keys(context.Background(), "h:*").Val()[0], "h:000000000") {
		t.Errorf("%d h:* keys, want about 1000 named h: and 12 digits", n)
	}
}

// TestCommandMixErrors: an error reply is counted against its command and
// ends the run naming the command, unless ContinueOnError.
func TestCommandMixErrors(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	if err := tg.client.Set(context.Background(), "notalist", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cfg := fill(Config{Addr: r.Addr, Load: Load{Requests: 1000, Connections: 2, Pipeline: 8, Seed: 1}})
	cfg.Commands = []mix.Command{{Args: []string{"PING"}}, {Args: []string{"LPUSH", "notalist", "__data__"}}}
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), "LPUSH notalist __data__") {
		t.Fatalf("error %v: want WRONGTYPE naming the command", err)
	}
	cfg.ContinueOnError = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p, l := res.Commands[0], res.Commands[1]; p.Errors != 0 || l.Errors != l.Requests || res.Errors["WRONGTYPE"] != l.Requests || p.Requests+l.Requests != 1000 {
		t.Errorf("PING %+v, LPUSH %+v, errors %v", p, l, res.Errors)
	}
}

// TestCommandConfigErrors: a bad mix is refused by name.
func TestCommandConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cmds []mix.Command
		want string
	}{
		{[]mix.Command{{}}, "command 1: empty"},
		{[]mix.Command{{Args: []string{"GET", "__key__"}, Ratio: -1}}, `"GET __key__": ratio -1`},
		{[]mix.Command{{Args: []string{"GET", "__key__"}, KeyPattern: "gauss"}}, `key pattern "gauss"`},
	} {
		c := fill(Config{})
		c.Commands = tc.cmds
		if _, err := c.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.cmds, err, tc.want)
		}
	}
}
