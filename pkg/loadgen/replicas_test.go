package loadgen

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// resetStats zeroes INFO commandstats on every server of addrs.
func resetStats(t *testing.T, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		if err := redisNode(t, a).ConfigResetStat(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// nodeOf returns the node of res at addr.
func nodeOf(t *testing.T, res Result, addr string) measure.Node {
	t.Helper()
	i := slices.IndexFunc(res.Nodes, func(n measure.Node) bool { return n.Addr == addr })
	if i < 0 {
		t.Fatalf("no node %s in %+v", addr, res.Nodes)
	}
	return res.Nodes[i]
}

// TestReplicasStandalone: with Replicas a single server's reads go to
// its replicas and its writes to it, as each server's INFO commandstats
// counts them, and the per-node results name both with their role: in a
// mixed run, in a command mix (a read of several keys, a read by
// __rand_int__, a read-modify-write, which is a write), and in a
// verified read run after a prefill, whose every value the replicas
// return.
func TestReplicasStandalone(t *testing.T) {
	master := testutil.StartRedis(t)
	reps := []*testutil.Redis{testutil.StartReplica(t, master), testutil.StartReplica(t, master)}
	all := []string{master.Addr, reps[0].Addr, reps[1].Addr}
	ctx := context.Background()
	base := fill(Config{Addr: master.Addr, Replicas: []string{reps[0].Addr, reps[1].Addr}, Load: Load{Keyspace: 1000, Connections: 2, Threads: 2, Pipeline: 16, Seed: 5}})

	t.Run("mixed", func(t *testing.T) {
		resetStats(t, all...)
		cfg := base
		cfg.Mode, cfg.Requests = ModeMixed, 20_000
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != cfg.Requests || res.Sets == 0 || res.Gets == 0 || len(res.Errors) != 0 {
			t.Fatalf("%d requests (want %d), %d sets, %d gets, errors %v", res.Requests, cfg.Requests, res.Sets, res.Gets, res.Errors)
		}
		m := testutil.CommandCalls(t, master.Addr)
		if m["set"] != res.Sets || m["get"] != 0 {
			t.Errorf("the master ran %d SETs and %d GETs, want %d and 0", m["set"], m["get"], res.Sets)
		}
		var gets int64
		for _, r := range reps {
			n := testutil.CommandCalls(t, r.Addr)["get"]
			if n == 0 {
				t.Errorf("replica %s ran no GET", r.Addr)
			}
			if nd := nodeOf(t, res, r.Addr); nd.Role != RoleReplica || nd.Requests != n {
				t.Errorf("node %s: role %q, %d requests; want replica, %d (its GETs)", r.Addr, nd.Role, nd.Requests, n)
			}
			gets += n
		}
		if gets != res.Gets {
			t.Errorf("the replicas ran %d GETs, the run counted %d", gets, res.Gets)
		}
		if nd := nodeOf(t, res, master.Addr); nd.Role != RoleMaster || nd.Requests != res.Sets {
			t.Errorf("master node: role %q, %d requests; want master, %d", nd.Role, nd.Requests, res.Sets)
		}
		if len(res.Nodes) != 3 || res.Shards != 0 {
			t.Errorf("%d nodes, %d shards; want 3 and 0 (a single server)", len(res.Nodes), res.Shards)
		}
		j := jsonOf(t, res)
		if got := j["settings"].(map[string]any)["replicas"]; len(got.([]any)) != 2 {
			t.Errorf("JSON settings replicas %v", got)
		}
	})

	t.Run("mix", func(t *testing.T) {
		resetStats(t, all...)
		cfg := base
		cfg.Requests = 10_000
		cfg.Commands = []mix.Command{
			{Args: []string{"SET", "__key__", "__data__"}},
			{Args: []string{"MGET", "__key__", "__key__", "__key__"}},
			{Args: []string{"GET", "key:__rand_int__"}},
			{Args: []string{"GET", "__key__"}, Then: []string{"SET", "__key__", "__data__"}},
		}
		mix.NameCommands(cfg.Commands)
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]int64{}
		for _, c := range res.Commands {
			byName[c.Name] = c.Requests
		}
		m := testutil.CommandCalls(t, master.Addr)
		r0, r1 := testutil.CommandCalls(t, reps[0].Addr), testutil.CommandCalls(t, reps[1].Addr)
		if m["mget"] != 0 || r0["mget"]+r1["mget"] != byName["MGET"] || r0["mget"] == 0 || r1["mget"] == 0 {
			t.Errorf("MGETs: master %d, replicas %d and %d; want 0 and %d in all", m["mget"], r0["mget"], r1["mget"], byName["MGET"])
		}
		if r0["get"]+r1["get"] != byName["GET"] {
			t.Errorf("the replicas ran %d GETs, want the %d of GET key:__rand_int__", r0["get"]+r1["get"], byName["GET"])
		}
		if m["get"] != byName["RMW"] || m["set"] != byName["SET"]+byName["RMW"] {
			t.Errorf("the master ran %d GETs and %d SETs, want %d (the read-modify-writes) and %d", m["get"], m["set"], byName["RMW"], byName["SET"]+byName["RMW"])
		}
		// The keys of an MGET are three draws: not one key thrice.
		if n := redisNode(t, master.Addr).DBSize(ctx).Val(); n < 100 {
			t.Errorf("the master holds %d keys", n)
		}
	})

	t.Run("verified", func(t *testing.T) {
		flushAll(t, master.Addr)
		cfg := base
		cfg.Mode = ModeSet
		// Prefill returns once the replicas have the keys.
		if res, err := Prefill(ctx, cfg); err != nil || len(res.Warnings) > 0 {
			t.Fatalf("prefill: %v, warnings %v", err, res.Warnings)
		}
		resetStats(t, all...)
		cfg.Mode, cfg.Requests, cfg.VerifyGet = ModeGet, 5000, true
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Gets != cfg.Requests || res.Misses != 0 || res.VerifyFailures != 0 {
			t.Errorf("%d reads, %d misses, %d verify failures", res.Gets, res.Misses, res.VerifyFailures)
		}
		if n := testutil.CommandCalls(t, master.Addr)["get"]; n != 0 {
			t.Errorf("the master ran %d GETs", n)
		}
	})

	t.Run("set", func(t *testing.T) {
		cfg := base
		cfg.Mode, cfg.Requests = ModeSet, 1000
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Warnings, func(w error) bool { return strings.Contains(w.Error(), "no request went to a replica") }) {
			t.Errorf("warnings %v, want one saying no request went to a replica", res.Warnings)
		}
	})
}

// flushAll empties the server at addr.
func flushAll(t *testing.T, addr string) {
	t.Helper()
	if err := redisNode(t, addr).FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestReplicasConfig: the replicas' settings that cannot go together are
// refused, each error naming the setting.
func TestReplicasConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"read from replicas without a cluster", func(c *Config) { c.ReadFromReplicas = true }, "read from replicas: needs a cluster"},
		{"replicas of a cluster", func(c *Config) { c.Cluster, c.Replicas = true, []string{"127.0.0.1:7001"} }, "ReadFromReplicas"},
		{"bad address", func(c *Config) { c.Replicas = []string{"127.0.0.1"} }, `replica "127.0.0.1": want host:port`},
		{"bad port", func(c *Config) { c.Replicas = []string{"127.0.0.1:0"} }, "TCP port from 1 to 65535"},
		{"the server itself", func(c *Config) { c.Replicas = []string{c.Addr} }, "it is the server the writes go to"},
		{"reconnect", func(c *Config) { c.Replicas, c.Reconnect = []string{"127.0.0.1:7001"}, true }, "reconnect: not with replicas"},
		{"multi-key get", func(c *Config) { c.Replicas, c.MultiKeyGet = []string{"127.0.0.1:7001"}, 2 }, "multi-key get: not with replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.set(&c)
			if _, err := c.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestClusterReadFromReplicas: with ReadFromReplicas a cluster run's
// reads go to the replicas of their key's slot (each replica's INFO
// commandstats counts GETs, no master's does) and its writes to the
// masters; the per-node results list the replicas with their role and
// their master's slots; a prefill waits for the replicas, so that a
// verified read run after it finds every key there; a read sent to a
// replica that does not serve its slot is redirected. A cluster without
// replicas reads from its masters and says so in a warning.
func TestClusterReadFromReplicas(t *testing.T) {
	ctx := context.Background()
	t.Run("replicas", func(t *testing.T) {
		info := startClusterWith(t, kvtarget.RedisClusterConfig{Shards: 3, Replicas: 1})
		// CLUSTER SLOTS lists a replica once the gossip gave its
		// replication offset.
		var topo *cluster.Topology
		var replicas []string
		for deadline := time.Now().Add(20 * time.Second); len(replicas) != 3; {
			var err error
			if topo, err = cluster.FetchTopology(ctx, []string{info.Addr}, control.Options{Timeout: time.Second}); err != nil {
				t.Fatal(err)
			}
			replicas = nil
			for _, r := range topo.ReplicaAddrs {
				replicas = append(replicas, r...)
			}
			if time.Now().After(deadline) {
				t.Fatalf("replicas %v: want one per master", topo.ReplicaAddrs)
			}
			time.Sleep(50 * time.Millisecond) // bounded poll of the slot map
		}
		cfg := fill(Config{Addr: info.Addr, Cluster: true, ReadFromReplicas: true, Mode: ModeSet, Load: Load{Keyspace: 3000, Requests: 30_000, Connections: 2, Threads: 2, Pipeline: 16, Seed: 7}})
		// Prefill returns once the replicas have the keys: a verified
		// read run finds every one there.
		if res, err := Prefill(ctx, cfg); err != nil || len(res.Warnings) > 0 {
			t.Fatalf("prefill: %v, warnings %v", err, res.Warnings)
		}
		resetStats(t, append(slices.Clone(topo.Masters), replicas...)...)
		get := cfg
		get.Mode, get.VerifyGet = ModeGet, true
		res, err := Run(ctx, get)
		if err != nil {
			t.Fatal(err)
		}
		if res.Gets != get.Requests || res.Misses != 0 || res.VerifyFailures != 0 || res.Moved != 0 {
			t.Errorf("get: %d reads, %d misses, %d verify failures, %d MOVED (the replicas' READONLY)", res.Gets, res.Misses, res.VerifyFailures, res.Moved)
		}
		for _, a := range topo.Masters {
			if n := testutil.CommandCalls(t, a)["get"]; n != 0 {
				t.Errorf("get: master %s ran %d GETs", a, n)
			}
		}

		// A read a replica does not serve (two replica sockets of each
		// connection swapped, each taking the other's reads) gets MOVED
		// to its slot's master: followed, counted, and answered right.
		get.Requests = 3000
		r, get, err := open(ctx, get)
		if err != nil {
			t.Fatal(err)
		}
		for _, grp := range r.groups {
			var reps []*sock
			for _, s := range grp.socks {
				if s.route.replica {
					reps = append(reps, s)
				}
			}
			reps[0].route.node, reps[1].route.node = reps[1].route.node, reps[0].route.node
			grp.setNode(reps[0].route.node, reps[0])
			grp.setNode(reps[1].route.node, reps[1])
		}
		res, err = r.phase(ctx, "run", get.Requests, 0)
		r.close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Gets != get.Requests || res.Moved == 0 || res.Misses != 0 || res.VerifyFailures != 0 || len(res.Errors) != 0 {
			t.Errorf("swapped replicas: %d reads, %d MOVED (want some), %d misses, %d verify failures, errors %v", res.Gets, res.Moved, res.Misses, res.VerifyFailures, res.Errors)
		}

		resetStats(t, append(slices.Clone(topo.Masters), replicas...)...)
		cfg.Mode = ModeMixed
		res, err = Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != cfg.Requests || len(res.Errors) != 0 || len(res.Nodes) != 6 || res.Moved != 0 {
			t.Fatalf("%d requests (want %d), errors %v, %d nodes (want 6), %d MOVED", res.Requests, cfg.Requests, res.Errors, len(res.Nodes), res.Moved)
		}
		var sets, gets int64
		for m, addr := range topo.Masters {
			calls := testutil.CommandCalls(t, addr)
			if calls["get"] != 0 || calls["set"] == 0 {
				t.Errorf("master %s ran %d GETs and %d SETs, want none and some", addr, calls["get"], calls["set"])
			}
			sets += calls["set"]
			nd := nodeOf(t, res, addr)
			if nd.Role != RoleMaster || nd.Requests != calls["set"] {
				t.Errorf("node %s: role %q, %d requests; want master, %d", addr, nd.Role, nd.Requests, calls["set"])
			}
			rep := topo.ReplicaAddrs[m][0]
			n := testutil.CommandCalls(t, rep)["get"]
			if n == 0 {
				t.Errorf("replica %s ran no GET", rep)
			}
			gets += n
			rn := nodeOf(t, res, rep)
			if rn.Role != RoleReplica || rn.Requests != n || rn.Slots != nd.Slots {
				t.Errorf("node %s: role %q, %d requests, %d slots; want replica, %d, %d (its master's)", rep, rn.Role, rn.Requests, rn.Slots, n, nd.Slots)
			}
		}
		if sets != res.Sets || gets != res.Gets {
			t.Errorf("the masters ran %d SETs, the replicas %d GETs; the run counted %d and %d", sets, gets, res.Sets, res.Gets)
		}

		// A command mix: its read goes to the replicas, its write and
		// a command without a key to the masters.
		resetStats(t, append(slices.Clone(topo.Masters), replicas...)...)
		cfg.Requests = 9000
		cfg.Commands = []mix.Command{{Args: []string{"SET", "user:__key__", "__data__"}}, {Args: []string{"GET", "user:__key__"}}, {Args: []string{"PING"}}}
		res, err = Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, c := range res.Commands {
			want[c.Name] = c.Requests
		}
		got := map[string]int64{}
		for _, a := range topo.Masters {
			calls := testutil.CommandCalls(t, a)
			got["GET on masters"] += calls["get"]
			got["SET"] += calls["set"]
			got["PING"] += calls["ping"]
		}
		for _, a := range replicas {
			calls := testutil.CommandCalls(t, a)
			got["GET"] += calls["get"] // not PING: the master's replication stream sends some
		}
		if got["GET on masters"] != 0 || got["GET"] != want["GET"] || got["SET"] != want["SET"] || got["PING"] != want["PING"] {
			t.Errorf("mix: the servers ran %v, the run counted %v", got, want)
		}
	})
	t.Run("no replica", func(t *testing.T) {
		info := startCluster(t, 2)
		resetStats(t, info.Nodes...)
		cfg := fill(Config{Addr: info.Addr, Cluster: true, ReadFromReplicas: true, Mode: ModeGet, Load: Load{Keyspace: 100, Requests: 1000, Connections: 1, Pipeline: 16}})
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var gets int64
		for _, a := range info.Nodes {
			gets += testutil.CommandCalls(t, a)["get"]
		}
		if gets != cfg.Requests {
			t.Errorf("the masters ran %d GETs, want %d", gets, cfg.Requests)
		}
		if !slices.ContainsFunc(res.Warnings, func(w error) bool {
			return strings.Contains(w.Error(), "no replica: the reads of the slots of ["+strings.Join(info.Nodes, " ")+"] went to the master")
		}) {
			t.Errorf("warnings %v, want one naming the master without a replica", res.Warnings)
		}
	})
}
