package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
	"github.com/redis/go-redis/v9"
)

// startCluster starts a Redis Cluster of shards masters for the test.
func startCluster(t *testing.T, shards int) kvtarget.Info {
	t.Helper()
	return startClusterWith(t, kvtarget.RedisClusterConfig{Shards: shards})
}

// startClusterWith starts the Redis Cluster cfg describes for the test.
func startClusterWith(t *testing.T, cfg kvtarget.RedisClusterConfig) kvtarget.Info {
	t.Helper()
	return rediscluster.Start(t, cfg)
}

func redisNode(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestClusterSetGet writes the nkeys through a 3-shard cluster and
// reads it back verified: every key lands on its slot's master.
func TestClusterSetGet(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	topo, err := cluster.FetchTopology(ctx, []string{info.Addr}, control.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Masters) != 3 || topo.Masters[0] != info.Nodes[0] {
		t.Fatalf("masters %v, want %v", topo.Masters, info.Nodes)
	}
	const nkeys = 3000
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster = info.Addr, true
	cfg.Mode, cfg.Keyspace, cfg.Requests = ModeSet, nkeys, 3*nkeys
	cfg.Connections, cfg.Threads, cfg.Pipeline = 2, 2, 16
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != cfg.Requests || res.Shards != 3 || len(res.Errors) != 0 || res.Moved != 0 || res.Ask != 0 {
		t.Errorf("set: %d requests (want %d), %d shards, errors %v, moved %d, ask %d", res.Requests, cfg.Requests, res.Shards, res.Errors, res.Moved, res.Ask)
	}
	var total int64
	for i, addr := range info.Nodes {
		c := redisNode(t, addr)
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("master %d (%s) holds no key", i, addr)
		}
		// Every key a master holds is in its slots.
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if o := topo.Owner[keyslot.Of([]byte(k))]; int(o) != i {
				t.Errorf("%s on master %d, its slot's master is %d", k, i, o)
			}
		}
		total += n
	}
	if total != nkeys {
		t.Errorf("the masters hold %d keys, want %d", total, nkeys)
	}
	cfg.Mode, cfg.Requests, cfg.VerifyGet = ModeGet, nkeys, true
	res, err = Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != nkeys || res.Misses != 0 || res.VerifyFailures != 0 || len(res.Errors) != 0 {
		t.Errorf("get: %d requests, %d misses, %d verify failures, errors %v", res.Requests, res.Misses, res.VerifyFailures, res.Errors)
	}
	if j := jsonOf(t, res); j["shards"] != 3.0 || j["settings"].(map[string]any)["connections"] != 2.0 {
		t.Errorf("JSON: shards %v settings %v", j["shards"], j["settings"])
	}
}

// TestClusterResharding moves a slot while a verified mixed run goes on:
// the redirects are counted and followed, and nothing fails.
func TestClusterResharding(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (make test)")
	}
	info := startCluster(t, 2)
	ctx := context.Background()
	const nkeys = 100_000 // some 12 keys a slot
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster = info.Addr, true
	cfg.Mode, cfg.Keyspace, cfg.Requests = ModeSet, nkeys, 3*nkeys
	cfg.Connections, cfg.Threads, cfg.Pipeline = 2, 2, 32
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	src, dst := redisNode(t, info.Nodes[0]), redisNode(t, info.Nodes[1])
	srcID, _ := src.Do(ctx, "CLUSTER", "MYID").Text()
	dstID, _ := dst.Do(ctx, "CLUSTER", "MYID").Text()
	// The slot of the most keys among master 0's.
	counts := map[int]int{}
	for i := range int64(nkeys) {
		s := keyslot.Of(keyspace.Spec{Keyspace: nkeys}.AppendName(nil, cfg.KeyPrefix, uint64(i)))
		if s < cluster.Slots/2 {
			counts[s]++
		}
	}
	slot, most := 0, 0
	for s, n := range counts {
		if n > most {
			slot, most = s, n
		}
	}
	cfg.Mode, cfg.Requests, cfg.VerifyGet = ModeGet, 0, true
	res := runWhileMigrating(t, cfg, func(ctx context.Context) error {
		return migrateSlot(ctx, src, dst, srcID, dstID, info.Nodes[1], slot)
	})
	t.Logf("slot %d (%d keys): %d requests, moved %d, ask %d", slot, most, res.Requests, res.Moved, res.Ask)
	if res.Moved == 0 || res.Ask == 0 {
		t.Errorf("moved %d, ask %d: want both counted", res.Moved, res.Ask)
	}
	// The redirects are the old master's, and the slot the new one's.
	if n := res.Nodes; len(n) != 2 || n[0].Moved != res.Moved || n[0].Ask != res.Ask || n[1].Slots != n[0].Slots+2 {
		t.Errorf("nodes %+v: want master 0's moved %d and ask %d, master 1 two slots more than master 0", n, res.Moved, res.Ask)
	}
	if res.Misses != 0 || res.VerifyFailures != 0 || len(res.Errors) != 0 {
		t.Errorf("%d misses, %d verify failures, errors %v", res.Misses, res.VerifyFailures, res.Errors)
	}
	if n, _ := dst.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", slot).Int(); n != most {
		t.Errorf("the new master holds %d keys of slot %d, want %d", n, slot, most)
	}

	// A command mix follows the redirects too, verified: the slot moved
	// back while SETs and GETs of the keys and counters go on.
	mixed := cfg
	mixed.Commands = []mix.Command{
		{Args: []string{"SET", "__key__", "__data__"}},
		{Args: []string{"GET", "__key__"}, Ratio: 3},
		{Args: []string{"INCR", "{__key__}:n"}},
	}
	res = runWhileMigrating(t, mixed, func(ctx context.Context) error {
		return migrateSlot(ctx, dst, src, dstID, srcID, info.Nodes[0], slot)
	})
	t.Logf("mixed, slot %d back: %d requests, moved %d, ask %d", slot, res.Requests, res.Moved, res.Ask)
	if res.Moved == 0 || res.Ask == 0 || res.VerifyFailures != 0 || res.Misses != 0 || len(res.Errors) != 0 {
		t.Errorf("mixed: moved %d, ask %d, %d verify failures, %d misses, errors %v; want redirects followed and nothing wrong",
			res.Moved, res.Ask, res.VerifyFailures, res.Misses, res.Errors)
	}
}

// runWhileMigrating runs cfg until move, started once 1,000 replies are
// in, has ended and the run has counted a MOVED and an ASK, and returns
// what the run measured. move waits for the redirects it provokes, and a
// server counts a redirect before its client reads it, so the run lasts
// as long as the machine needs for both and no longer.
func runWhileMigrating(t *testing.T, cfg Config, move func(context.Context) error) Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Duration = time.Hour // ended by move (or by its deadline)
	running, redirected := make(chan struct{}), make(chan struct{})
	var startOnce, redirectOnce sync.Once
	cfg.ProgressInterval = 5 * time.Millisecond
	cfg.Progress = func(p Progress) {
		if p.Phase != "run" {
			return
		}
		if p.Done >= 1000 || p.Final {
			startOnce.Do(func() { close(running) })
		}
		if p.Moved > 0 && p.Ask > 0 || p.Final {
			redirectOnce.Do(func() { close(redirected) })
		}
	}
	done := make(chan error, 1)
	go func() {
		<-running
		mctx, stop := context.WithTimeout(ctx, time.Minute)
		defer stop()
		err := move(mctx)
		if err == nil {
			select {
			case <-redirected:
			case <-mctx.Done():
			}
		}
		done <- err
		cancel()
	}()
	res, err := Run(ctx, cfg)
	if merr := <-done; merr != nil {
		t.Fatal(merr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	return res
}

// migrateSlot moves slot from src to dst as redis-cli --cluster reshard
// does: IMPORTING, MIGRATING, MIGRATE key by key, then NODE on both. A
// run going on meets the slot half-moved, then moved: with every key
// moved, migrateSlot waits until src has answered an ASK, and after the
// NODE until it has answered a MOVED (INFO errorstats), so that both
// happen however slow the machine (ctx bounds the waits).
func migrateSlot(ctx context.Context, src, dst *redis.Client, srcID, dstID, dstAddr string, slot int) error {
	asks, err := errorCount(ctx, src, "ASK")
	if err != nil {
		return err
	}
	moves, err := errorCount(ctx, src, "MOVED")
	if err != nil {
		return err
	}
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return err
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return err
	}
	host, port := dstAddr[:len(dstAddr)-len(portOf(dstAddr))-1], portOf(dstAddr)
	for {
		keys, err := src.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 10).StringSlice()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			if err := src.Do(ctx, "MIGRATE", host, port, k, 0, 5000).Err(); err != nil {
				return fmt.Errorf("MIGRATE %s: %w", k, err)
			}
		}
	}
	if err := errorAbove(ctx, src, "ASK", asks); err != nil {
		return err
	}
	for _, c := range []*redis.Client{dst, src} {
		if err := c.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err(); err != nil {
			return err
		}
	}
	return errorAbove(ctx, src, "MOVED", moves)
}

// errorCount is how many error replies of kind (ASK, MOVED) c's server
// has sent: INFO errorstats.
func errorCount(ctx context.Context, c *redis.Client, kind string) (int64, error) {
	info, err := c.Info(ctx, "errorstats").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "errorstat_"+kind+":count="); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, nil // none sent yet
}

// errorAbove waits until c's server has sent more than n error replies
// of kind, or ctx ends.
func errorAbove(ctx context.Context, c *redis.Client, kind string, n int64) error {
	for {
		m, err := errorCount(ctx, c, kind)
		if err != nil {
			return fmt.Errorf("waiting for a %s reply: %w", kind, err)
		}
		if m > n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no %s reply from %s: %w", kind, c.Options().Addr, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			p := addr[i+1:]
			if _, err := strconv.Atoi(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// TestClusterPrefill fills a cluster exactly, each key on its master,
// and refuses to fill it again.
func TestClusterPrefill(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster, cfg.Keyspace, cfg.Pipeline = info.Addr, true, 5000, 64
	pre, err := Prefill(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pre.Sets != 5000 || pre.Shards != 3 || len(pre.Errors) != 0 {
		t.Errorf("prefill: %d sets, %d shards, errors %v", pre.Sets, pre.Shards, pre.Errors)
	}
	cfg.Mode, cfg.Requests, cfg.VerifyGet, cfg.Connections = ModeGet, 20000, true, 2
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 20000 || res.Misses != 0 || res.VerifyFailures != 0 {
		t.Errorf("get: %d requests, %d misses, %d verify failures", res.Requests, res.Misses, res.VerifyFailures)
	}
	_, err = Prefill(ctx, cfg)
	testutil.CheckError(t, err, "prefill: server not empty: the masters' DBSIZE sums to 5000 before the prefill, want 0", ErrNotEmpty)
}

// TestClusterNodes checks each master's share of a cluster run: every
// master appears, with all the slots between them, and their requests
// and histograms add up to the run's, in the Result, its JSON and its
// text.
func TestClusterNodes(t *testing.T) {
	info := startCluster(t, 3)
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster = info.Addr, true
	cfg.Mode, cfg.Keyspace, cfg.Requests = ModeSet, 3000, 9000
	cfg.Connections, cfg.Threads, cfg.Pipeline = 2, 2, 16
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, res Result) {
		t.Helper()
		if len(res.Nodes) != len(info.Nodes) {
			t.Fatalf("%s: %d nodes, want %d", what, len(res.Nodes), len(info.Nodes))
		}
		var requests, count int64
		slots := 0
		for i, n := range res.Nodes {
			if n.Addr != info.Nodes[i] || n.Role != "master" {
				t.Errorf("%s: node %d is %s (%s), want the master %s", what, i, n.Addr, n.Role, info.Nodes[i])
			}
			if n.Requests == 0 || n.Histogram.TotalCount() != n.Requests || n.Latency.P50 <= 0 {
				t.Errorf("%s: node %s: %d requests, %d latencies, p50 %v us", what, n.Addr, n.Requests, n.Histogram.TotalCount(), n.Latency.P50)
			}
			if n.QPS <= 0 || n.QPS > res.QPS {
				t.Errorf("%s: node %s: QPS %.0f of %.0f", what, n.Addr, n.QPS, res.QPS)
			}
			requests += n.Requests
			count += n.Histogram.TotalCount()
			slots += n.Slots
		}
		if requests != res.Requests || count != res.Histogram.TotalCount() || requests != cfg.Requests {
			t.Errorf("%s: the nodes' requests sum to %d, their latencies to %d; the run's %d and %d, want %d",
				what, requests, count, res.Requests, res.Histogram.TotalCount(), cfg.Requests)
		}
		if slots != cluster.Slots {
			t.Errorf("%s: the nodes serve %d slots, want %d", what, slots, cluster.Slots)
		}
	}
	check("result", res)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	check("JSON", back)
}

// TestClusterSetExactlyOnce: a set run of Keyspace requests in the
// sequential or permutation order writes each key exactly once across
// the masters: they executed Keyspace SETs in all (INFO commandstats) and
// hold Keyspace keys, so no key was written twice.
func TestClusterSetExactlyOnce(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	const nkeys = 5000
	for _, tc := range []struct {
		order       keyspace.Pattern
		connections int
		warmup      int64
	}{
		{keyspace.Permutation, 1, 0},
		{keyspace.Permutation, 3, 0},
		{keyspace.Sequential, 2, 0},
		{keyspace.Permutation, 2, 700}, // the run continues the warmup's walk
	} {
		t.Run(fmt.Sprintf("%s/%d/%d", tc.order, tc.connections, tc.warmup), func(t *testing.T) {
			for _, addr := range info.Nodes {
				c := redisNode(t, addr)
				if err := c.FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.ConfigResetStat(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			cfg := DefaultConfig()
			cfg.Addr, cfg.Cluster = info.Addr, true
			cfg.Mode, cfg.KeyPattern, cfg.Keyspace = ModeSet, tc.order, nkeys
			cfg.Requests, cfg.WarmupRequests = nkeys-tc.warmup, tc.warmup
			cfg.Connections, cfg.Threads, cfg.Pipeline = tc.connections, 2, 16
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != cfg.Requests || len(res.Errors) != 0 {
				t.Errorf("%d requests (want %d), errors %v", res.Requests, cfg.Requests, res.Errors)
			}
			var keys, sets int64
			for _, addr := range info.Nodes {
				c := redisNode(t, addr)
				n, err := c.DBSize(ctx).Result()
				if err != nil {
					t.Fatal(err)
				}
				keys += n
				stats, err := c.Info(ctx, "commandstats").Result()
				if err != nil {
					t.Fatal(err)
				}
				_, after, _ := strings.Cut(stats, "cmdstat_set:calls=")
				calls, _ := strconv.ParseInt(after[:strings.IndexByte(after, ',')], 10, 64)
				sets += calls
			}
			if keys != nkeys || sets != nkeys {
				t.Errorf("the masters hold %d keys after %d SETs: want %d and %d", keys, sets, nkeys, nkeys)
			}
		})
	}
}

// TestClusterCommands runs a command mix in cluster mode: single-key
// commands (also with the key inside a longer argument) go to their
// key's master and keyless ones to any master, with no error and no
// redirect; commands a cluster cannot route are refused up front.
func TestClusterCommands(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster = info.Addr, true
	cfg.Keyspace, cfg.Requests = 2000, 8000
	cfg.Connections, cfg.Threads, cfg.Pipeline = 2, 2, 8
	cfg.Commands = []mix.Command{
		{Args: []string{"SET", "__key__", "__data__"}, Ratio: 2},
		{Args: []string{"GET", "__key__"}, Ratio: 1},
		{Args: []string{"HSET", "user:__key__", "f", "__data__"}, Ratio: 1},
		{Args: []string{"PING"}, Ratio: 1},
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != cfg.Requests || len(res.Errors) != 0 || res.Moved != 0 || res.Ask != 0 || len(res.Commands) != 4 {
		t.Errorf("%d requests (want %d), errors %v, moved %d, ask %d, %d commands", res.Requests, cfg.Requests, res.Errors, res.Moved, res.Ask, len(res.Commands))
	}
	for i, addr := range info.Nodes {
		if n, err := redisNode(t, addr).DBSize(ctx).Result(); err != nil || n == 0 {
			t.Errorf("master %d (%s) holds %d keys (%v)", i, addr, n, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"MSET", "__key__", "__data__", "__key__", "__data__"}, "names 2 keys"},
		{[]string{"SET", "key:__rand_int__", "__data__"}, "__rand_int__ is not routed"},
	} {
		bad := cfg
		bad.Commands = []mix.Command{{Args: tc.args}}
		if _, err := Run(ctx, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// TestClusterFailover kills a master that has a replica in the middle of
// a set run: the connections to it read the slot map again, wait for the
// replica to take its slots over, move there and resend what was in
// flight, and the run completes with every request answered.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a Redis failover (TestRunClusterMasterKilled covers a lost master without one)")
	}
	info := startClusterWith(t, kvtarget.RedisClusterConfig{Shards: 3, Replicas: 1,
		RedisConfig: kvtarget.RedisConfig{Config: []string{"cluster-node-timeout 500"}}})
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster = info.Addr, true
	cfg.Mode, cfg.Keyspace, cfg.Requests = ModeSet, 100_000, 600_000
	cfg.Connections, cfg.Threads, cfg.Pipeline = 1, 2, 16
	cfg.ProgressInterval = 5 * time.Millisecond
	var once sync.Once
	killed := false
	cfg.Progress = func(p Progress) {
		if p.Done > 50_000 && !p.Final {
			once.Do(func() {
				killed = syscall.Kill(-info.NodePIDs[0], syscall.SIGKILL) == nil
			})
		}
	}
	res, err := Run(context.Background(), cfg)
	if !killed {
		t.Fatal("the master was not killed mid-run")
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != cfg.Requests || len(res.Errors) != 0 {
		t.Errorf("%d requests (want %d), errors %v", res.Requests, cfg.Requests, res.Errors)
	}
	topo, err := cluster.FetchTopology(context.Background(), info.Nodes[1:], control.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(topo.Masters, info.Nodes[0]) || slices.Contains(topo.Owner[:], -1) {
		t.Errorf("after the failover the masters are %v", topo.Masters)
	}
}

// TestClusterFollowsKeys: a cluster run's requests go where their keys
// hash. A Zipf read run over a 3-master cluster sends each master the
// share of the requests its keys draw (a chi-square test of the masters'
// own counts, INFO commandstats, against the shares of the distribution,
// drawn 2,000,000 times apart), so the master of the hot keys gets more
// than an even share; a time-bounded run, whose sockets are coupled to go
// through the stream together, too.
func TestClusterFollowsKeys(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	topo, err := cluster.FetchTopology(ctx, []string{info.Addr}, control.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const nkeys = 1000
	// The masters' shares of a Zipf 1.5 draw over the keyspace.
	spec := keyspace.Spec{Keyspace: nkeys, Pattern: keyspace.Zipf, Zipf: 1.5, Seed: 99}
	share := make([]float64, len(topo.Masters))
	g := keyspace.NewGen(spec, 0, 1)
	const draws = 2_000_000
	var buf []byte
	for range draws {
		buf = keyspace.Spec{Keyspace: nkeys}.AppendName(buf[:0], DefaultKeyPrefix, g.Next())
		share[topo.Owner[keyslot.Of(buf)]] += 1.0 / draws
	}
	calls := func() []int {
		var out []int
		for _, addr := range topo.Masters {
			s, err := redisNode(t, addr).Info(ctx, "commandstats").Result()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			if _, rest, ok := strings.Cut(s, "cmdstat_get:calls="); ok {
				n, _ = strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			}
			out = append(out, n)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		requests int64
		duration time.Duration
	}{{"requests", 30_000, 0}, {"duration", 0, 500 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, addr := range topo.Masters {
				if err := redisNode(t, addr).ConfigResetStat(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			cfg := fill(Config{Addr: info.Addr, Cluster: true, Mode: ModeGet, Load: Load{KeyPattern: keyspace.Zipf, Zipf: 1.5, Keyspace: nkeys, Requests: tc.requests, Duration: tc.duration, Connections: 2, Pipeline: 16, Seed: 99}})
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := calls()
			total := 0
			for _, n := range got {
				total += n
			}
			if tc.requests > 0 && int64(total) != tc.requests {
				t.Errorf("the masters ran %d GETs, want %d", total, tc.requests)
			}
			t.Logf("GETs per master %v, shares %.3f", got, share)
			if p, df := testutil.ChiSquareP(got, share); p < 0.001 {
				t.Errorf("GETs per master %v against shares %.3f: chi-square p = %.2g (%d degrees of freedom): not the keys' distribution", got, share, p, df)
			}
			hottest, sum := int64(0), int64(0)
			for i, n := range res.Nodes {
				if n.Requests != int64(got[slices.Index(topo.Masters, n.Addr)]) {
					t.Errorf("node %d: %d requests, the master ran %d", i, n.Requests, got[i])
				}
				hottest, sum = max(hottest, n.Requests), sum+n.Requests
			}
			if ratio := float64(hottest) / (float64(sum) / float64(len(res.Nodes))); ratio < 1.2 {
				t.Errorf("the hottest master has %.2f times an even share, want well above 1 (shares %.3f)", ratio, share)
			}
		})
	}
}

// afterReplies sets cfg's progress hook to close the returned channel once
// the measured phase has n replies: a test acts on the server mid-run when
// the run is under way, whatever the machine's speed.
func afterReplies(cfg *Config, n int64) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	cfg.ProgressInterval = 5 * time.Millisecond
	cfg.Progress = func(p Progress) {
		if p.Phase == "run" && (p.Done >= n || p.Final) {
			once.Do(func() { close(ch) })
		}
	}
	return ch
}

// TestClusterKeyRange: over a key range that does not start at 0, the
// prefill and a verified get run send each key to its master (no MOVED
// redirect) and the run reads every key the prefill wrote, numbered from
// KeyMinimum.
func TestClusterKeyRange(t *testing.T) {
	info := startCluster(t, 3)
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster, cfg.Keyspace, cfg.KeyMinimum, cfg.Pipeline = info.Addr, true, 3000, 123_456, 64
	if _, err := Prefill(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Mode, cfg.Requests, cfg.VerifyGet, cfg.Connections = ModeGet, 10_000, true, 2
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Misses != 0 || res.VerifyFailures != 0 || res.Moved != 0 {
		t.Errorf("get: %d misses, %d verify failures, %d MOVED", res.Misses, res.VerifyFailures, res.Moved)
	}
	keys := cfg.Keys()
	for _, k := range []uint64{keys.Key(0), keys.Key(2999)} {
		name := string(keys.AppendName(nil, cfg.KeyPrefix, k))
		if name != fmt.Sprintf("%s%d", cfg.KeyPrefix, k) {
			t.Errorf("key %d is named %q", k, name)
		}
	}
}
