package rbtests

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// TestClusterTestNames: the keys carry redis-benchmark's cluster tag
// after their first word; MSET's ten keys all do.
func TestClusterTestNames(t *testing.T) {
	want := map[string]string{
		"ping_inline": "PING",
		"set":         "SET key:{tag}:__rand_int__ __data__",
		"incr":        "INCR counter:{tag}:__rand_int__",
		"lpush":       "LPUSH mylist:{tag} __data__",
		"hset":        "HSET myhash:{tag} element:__rand_int__ __data__",
		"zadd":        "ZADD myzset:{tag} __rand_int__ element:__rand_int__",
		"lrange_100":  "LRANGE mylist:{tag} 0 99",
		"mset":        "MSET" + strings.Repeat(" key:{tag}:__rand_int__ __data__", 10),
	}
	for _, test := range Tests {
		got := strings.Join(ClusterTest(test).Command.Args, " ")
		if w, ok := want[test.Name]; ok && got != w {
			t.Errorf("%s: %q, want %q", test.Name, got, w)
		}
		if strings.Join(test.Command.Args, " ") == got && test.Name != "ping_inline" && test.Name != "ping_mbulk" {
			t.Errorf("%s: ClusterTest changed the test itself", test.Name)
		}
	}
}

// TestTestsCluster runs every test against a 3-master cluster: each
// request goes to one master with all its keys (no redirect, no error,
// MSET's ten keys included), every master takes a share, and the
// constant keys exist once per master under its tag; the reads find
// what their preparation wrote.
func TestTestsCluster(t *testing.T) {
	info := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3})
	cfg := config(info.Addr, 3000, 500, 8, 2, 8, 5)
	cfg.Cluster = true
	res, err := RunTests(context.Background(), cfg, Tests)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(Tests) {
		t.Fatalf("%d results for %d tests", len(res), len(Tests))
	}
	for _, r := range res {
		if r.Requests != 3000 || r.ErrorCount() != 0 {
			t.Errorf("%s: %d requests, errors %v; want 3000 and none", r.Test, r.Requests, r.Errors)
		}
		if len(r.Nodes) != 3 {
			t.Errorf("%s: %d nodes, want 3", r.Test, len(r.Nodes))
			continue
		}
		for _, n := range r.Nodes {
			if n.Requests == 0 || n.Moved != 0 || n.Ask != 0 {
				t.Errorf("%s: master %s: %d requests, %d MOVED, %d ASK; want some and no redirect", r.Test, n.Addr, n.Requests, n.Moved, n.Ask)
			}
		}
	}
	ctx := context.Background()
	topo, err := cluster.FetchTopology(ctx, []string{info.Addr}, control.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for m, addr := range topo.Masters {
		tag, ok := topo.Tag(m)
		if !ok || int(topo.Owner[keyslot.Of(tag[:])]) != m {
			t.Fatalf("master %s: tag %q (%v) is not its own", addr, tag, ok)
		}
		c, err := control.Dial(ctx, addr, control.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		list := "mylist:{" + string(tag[:]) + "}"
		if v, err := c.Do(ctx, "LLEN", list); err != nil || v.(int64) < LRangeFill {
			t.Errorf("master %s: LLEN %s = %v, %v; want at least %d", addr, list, v, err, LRangeFill)
		}
		for _, key := range []string{"myhash", "myzset"} {
			key += ":{" + string(tag[:]) + "}"
			if v, err := c.Do(ctx, "EXISTS", key); err != nil || v != int64(1) {
				t.Errorf("master %s: EXISTS %s = %v, %v", addr, key, v, err)
			}
		}
		v, err := c.Do(ctx, "SCAN", "0", "MATCH", "key:{"+string(tag[:])+"}:*", "COUNT", "10000")
		if err != nil || len(v.([]any)[1].([]any)) == 0 {
			t.Errorf("master %s: no key:{%s}:* key (%v)", addr, tag, err)
		}
	}
}

// TestGetClusterFindsItsFill: GET alone on a cluster reads keys its
// preparation wrote under the same tags: no miss.
func TestGetClusterFindsItsFill(t *testing.T) {
	info := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3})
	cfg := config(info.Addr, 2000, 300, 8, 2, 8, 7)
	cfg.Cluster = true
	tests, err := ParseTests("get")
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunTests(context.Background(), cfg, tests)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Requests != 2000 || res[0].Misses != 0 {
		t.Errorf("GET: %d requests, %d misses; want 2000 and none", res[0].Requests, res[0].Misses)
	}
}
