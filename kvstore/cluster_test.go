package kvstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/redis/go-redis/v9"
)

// threeNodeYAML is a cluster configuration of three nodes on ports.
func threeNodeYAML(ports [3]int) string {
	return fmt.Sprintf(`nodes:
  - {id: node-a, host: 127.0.0.1, port: %d, slots: [0-5460]}
  - {id: node-b, host: 127.0.0.1, port: %d, slots: [5461-10922]}
  - {id: node-c, host: 127.0.0.1, port: %d, slots: [10923-16000, 16001-16383]}
`, ports[0], ports[1], ports[2])
}

// startCluster starts three cluster nodes on free loopback ports.
func startCluster(t *testing.T) ([3]*Server, *ClusterConfig) {
	t.Helper()
	var lns [3]net.Listener
	var ports [3]int
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	cfg, err := ParseClusterConfig(strings.NewReader(threeNodeYAML(ports)), "cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var srvs [3]*Server
	for i, id := range []string{"node-a", "node-b", "node-c"} {
		srv, err := New(Config{Cluster: cfg, ClusterID: id})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(lns[i])
		t.Cleanup(func() { srv.Close() })
		srvs[i] = srv
	}
	for _, srv := range srvs {
		for srv.Addr() == "" {
			time.Sleep(time.Millisecond)
		}
	}
	return srvs, cfg
}

func newClusterClient(t *testing.T, srvs [3]*Server) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:       []string{srvs[0].Addr()},
		DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second,
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func TestClusterClient(t *testing.T) {
	srvs, _ := startCluster(t)
	rdb := newClusterClient(t, srvs)
	ctx := context.Background()
	const n = 300
	for i := range n {
		k := "key:" + strconv.Itoa(i)
		if err := rdb.Set(ctx, "s"+k, i, 0).Err(); err != nil {
			t.Fatalf("SET s%s: %v", k, err)
		}
		if err := rdb.HSet(ctx, "h"+k, "f", i).Err(); err != nil {
			t.Fatalf("HSET h%s: %v", k, err)
		}
		if err := rdb.Do(ctx, "RSET", "r"+k, i).Err(); err != nil {
			t.Fatalf("RSET r%s: %v", k, err)
		}
		if err := rdb.Do(ctx, "HSET", "e"+k, i).Err(); err != nil {
			t.Fatalf("HSET e%s (hash engine): %v", k, err)
		}
	}
	for i := range n {
		k, want := "key:"+strconv.Itoa(i), strconv.Itoa(i)
		for what, cmd := range map[string]*redis.Cmd{
			"GET":         rdb.Do(ctx, "GET", "s"+k),
			"HGET field":  rdb.Do(ctx, "HGET", "h"+k, "f"),
			"RGET":        rdb.Do(ctx, "RGET", "r"+k),
			"HGET engine": rdb.Do(ctx, "HGET", "e"+k),
		} {
			if got, err := cmd.Text(); err != nil || got != want {
				t.Fatalf("%s %s = %q, %v; want %q", what, k, got, err, want)
			}
		}
	}
	// The keys are spread: every node holds some, none holds all.
	var total int64
	for i, srv := range srvs {
		c := newClient(t, srv)
		keys, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if keys == 0 || keys >= 4*n {
			t.Errorf("node %d holds %d keys of %d", i, keys, 4*n)
		}
		total += keys
	}
	if total != 4*n {
		t.Errorf("the nodes hold %d keys, want %d", total, 4*n)
	}
	// Hash tags keep related keys together: MSET/MGET across one slot work.
	if err := rdb.MSet(ctx, "{user1000}.following", "a", "{user1000}.followers", "b").Err(); err != nil {
		t.Fatalf("MSET in one slot: %v", err)
	}
	if got, err := rdb.MGet(ctx, "{user1000}.following", "{user1000}.followers").Result(); err != nil || fmt.Sprint(got) != "[a b]" {
		t.Fatalf("MGET in one slot = %v, %v", got, err)
	}
}

// keyOn returns a key of prefix whose slot is in r.
func keyOn(prefix string, r SlotRange) (string, int) {
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		if s := keyslot.Of([]byte(k)); r.Start <= s && s <= r.End {
			return k, s
		}
	}
}

func TestClusterRedirects(t *testing.T) {
	srvs, cfg := startCluster(t)
	ctx := context.Background()
	a := newClient(t, srvs[0]) // node-a: slots 0-5460
	bAddr := cfg.Nodes[1].Addr()
	for _, tc := range []struct {
		name string
		args func(key string) []any
	}{
		{"GET", func(k string) []any { return []any{"GET", k} }},
		{"SET", func(k string) []any { return []any{"SET", k, "v"} }},
		{"HSET field", func(k string) []any { return []any{"HSET", k, "f", "v"} }},
		{"HGET engine", func(k string) []any { return []any{"HGET", k} }},
		{"RSET", func(k string) []any { return []any{"RSET", k, "v"} }},
		{"RGET", func(k string) []any { return []any{"RGET", k} }},
		{"RDEL", func(k string) []any { return []any{"RDEL", k} }},
		{"INCR", func(k string) []any { return []any{"INCR", k} }},
		{"DEL", func(k string) []any { return []any{"DEL", k} }},
	} {
		key, slot := keyOn(tc.name+":", cfg.Nodes[1].Slots[0])
		err := a.Do(ctx, tc.args(key)...).Err()
		want := fmt.Sprintf("MOVED %d %s", slot, bAddr)
		if err == nil || err.Error() != want {
			t.Errorf("%s %s on node-a: %v, want %s", tc.name, key, err, want)
		}
	}
	// A key of node-a itself is served.
	mine, _ := keyOn("mine:", cfg.Nodes[0].Slots[0])
	if err := a.Set(ctx, mine, "v", 0).Err(); err != nil {
		t.Fatalf("SET %s on its own node: %v", mine, err)
	}
	// Keys of two slots, even both of this node: CROSSSLOT.
	k1, s1 := keyOn("x", SlotRange{0, 5460})
	k2, s2 := keyOn("y", SlotRange{0, 5460})
	if s1 == s2 {
		t.Fatal("test keys share a slot")
	}
	for _, args := range [][]any{
		{"MSET", k1, "1", k2, "2"},
		{"MGET", k1, k2},
		{"DEL", k1, k2},
		{"EXISTS", k1, k2},
	} {
		err := a.Do(ctx, args...).Err()
		if err == nil || err.Error() != errCrossSlot {
			t.Errorf("%v: %v, want %s", args, err, errCrossSlot)
		}
	}
	// Keyless commands are answered by any node.
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestClusterTopology(t *testing.T) {
	srvs, cfg := startCluster(t)
	ctx := context.Background()
	b := newClient(t, srvs[1])
	slots, err := b.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range slots {
		for _, n := range s.Nodes {
			got = append(got, fmt.Sprintf("%d-%d %s %s", s.Start, s.End, n.Addr, n.ID))
		}
	}
	want := []string{
		"0-5460 " + cfg.Nodes[0].Addr() + " node-a",
		"5461-10922 " + cfg.Nodes[1].Addr() + " node-b",
		"10923-16000 " + cfg.Nodes[2].Addr() + " node-c",
		"16001-16383 " + cfg.Nodes[2].Addr() + " node-c",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CLUSTER SLOTS = %q, want %q", got, want)
	}
	shards, err := b.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range shards {
		for _, n := range s.Nodes {
			got = append(got, fmt.Sprintf("%v %s %s:%d %s %s %s", s.Slots, n.ID, n.IP, n.Port, n.Endpoint, n.Role, n.Health))
		}
	}
	p := func(i int) string { return strconv.Itoa(cfg.Nodes[i].Port) }
	want = []string{
		"[{0 5460}] node-a 127.0.0.1:" + p(0) + " 127.0.0.1 master online",
		"[{5461 10922}] node-b 127.0.0.1:" + p(1) + " 127.0.0.1 master online",
		"[{10923 16000} {16001 16383}] node-c 127.0.0.1:" + p(2) + " 127.0.0.1 master online",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CLUSTER SHARDS = %q, want %q", got, want)
	}
	info, err := b.ClusterInfo(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3", "cluster_size:3", "cluster_my_epoch:2"} {
		if !strings.Contains(info, line+"\r\n") {
			t.Errorf("CLUSTER INFO lacks %s:\n%s", line, info)
		}
	}
	if id, err := b.ClusterMyID(ctx).Result(); err != nil || id != "node-b" {
		t.Errorf("CLUSTER MYID = %q, %v", id, err)
	}
	if n, err := b.ClusterKeySlot(ctx, "123456789").Result(); err != nil || n != 0x31C3%16384 {
		t.Errorf("CLUSTER KEYSLOT 123456789 = %d, %v", n, err)
	}
	nodes, err := b.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := fmt.Sprintf("node-a %s@%d master - 0 0 1 connected 0-5460\n"+
		"node-b %s@%d myself,master - 0 0 2 connected 5461-10922\n"+
		"node-c %s@%d master - 0 0 3 connected 10923-16000 16001-16383\n",
		cfg.Nodes[0].Addr(), cfg.Nodes[0].Port+10000, cfg.Nodes[1].Addr(), cfg.Nodes[1].Port+10000, cfg.Nodes[2].Addr(), cfg.Nodes[2].Port+10000)
	if nodes != wantNodes {
		t.Errorf("CLUSTER NODES =\n%s\nwant\n%s", nodes, wantNodes)
	}
	if mode, err := b.Info(ctx, "cluster").Result(); err != nil || !strings.Contains(mode, "cluster_enabled:1") {
		t.Errorf("INFO cluster = %q, %v", mode, err)
	}
}

func TestClusterDisabled(t *testing.T) {
	c := newClient(t, startServer(t, Config{}))
	err := c.ClusterSlots(context.Background()).Err()
	if err == nil || err.Error() != errNoCluster {
		t.Errorf("CLUSTER SLOTS without cluster mode: %v, want %s", err, errNoCluster)
	}
}

func TestClusterConfigErrors(t *testing.T) {
	node := func(id string, port int, slots string) string {
		return fmt.Sprintf("  - {id: %s, host: 127.0.0.1, port: %d, slots: [%s]}\n", id, port, slots)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"no nodes", "nodes: []\n", "c.yaml: no nodes"},
		{"empty file", "", "c.yaml: no nodes"},
		{"overlap", "nodes:\n" + node("a", 1, "0-8200") + node("b", 2, "8000-16383"),
			`c.yaml: node "b": slot range 8000-16383 overlaps node "a"'s ranges (slot 8000)`},
		{"gap", "nodes:\n" + node("a", 1, "0-8000") + node("b", 2, "8100-16383"),
			"c.yaml: slots 8001-8099 belong to no node"},
		{"bad range", "nodes:\n" + node("a", 1, "0-16384"), `c.yaml: node "a": slot range "0-16384": want 0 <= start <= end <= 16383`},
		{"reversed range", "nodes:\n" + node("a", 1, "9-3"), `c.yaml: node "a": slot range "9-3"`},
		{"not a range", "nodes:\n" + node("a", 1, "all"), `c.yaml: node "a": slot range "all": want start-end`},
		{"no slots", "nodes:\n" + node("a", 1, "0-16383") + "  - {id: b, host: h, port: 2}\n", `c.yaml: node "b": no slot ranges`},
		{"duplicate id", "nodes:\n" + node("a", 1, "0-100") + node("a", 2, "101-16383"), `c.yaml: node "a": the id is used twice`},
		{"bad port", "nodes:\n" + node("a", 0, "0-16383"), `c.yaml: node "a": port 0`},
		{"bad id", "nodes:\n" + node(`"a b"`, 1, "0-16383"), `c.yaml: node "a b": id "a b"`},
		{"unknown field", "nodes:\n  - {id: a, host: h, port: 1, slot: [0-16383]}\n", "c.yaml: yaml: unmarshal errors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseClusterConfig(strings.NewReader(tc.yaml), "c.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want an error starting %q", err, tc.want)
			}
		})
	}
	cfg, err := ParseClusterConfig(strings.NewReader("nodes:\n"+node("a", 1, "0-16383")), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{Cluster: cfg, ClusterID: "z"})
	if want := `cluster id "z" names no node of the configuration (its nodes: a)`; err == nil || err.Error() != want {
		t.Errorf("unknown id: %v, want %s", err, want)
	}
}

// TestClusterRedisBenchmark: redis-benchmark --cluster reads CLUSTER NODES
// from one node and spreads SET and GET over the three without errors.
func TestClusterRedisBenchmark(t *testing.T) {
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		if os.Getenv("KVBENCH_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-benchmark not found and KVBENCH_REQUIRE_REDIS=1: %v", err)
		}
		t.Skipf("redis-benchmark not found (apt-get install redis-tools): %v", err)
	}
	srvs, cfg := startCluster(t)
	out, err := exec.Command(bench, "--cluster", "-h", "127.0.0.1", "-p", strconv.Itoa(cfg.Nodes[0].Port),
		"-t", "set,get", "-n", "10000", "-r", "10000", "-q").CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("redis-benchmark --cluster: %v\n%s", err, text)
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
		if l := strings.ToLower(line); strings.Contains(l, "error") || strings.Contains(l, "moved") || strings.Contains(line, "WARN") {
			t.Errorf("redis-benchmark: %s", line)
		}
	}
	for _, test := range []string{"SET:", "GET:"} {
		if !strings.Contains(text, test+" ") {
			t.Errorf("redis-benchmark printed no result for %s\n%s", test, text)
		}
	}
	for i, srv := range srvs {
		if n := srv.stats.commands.Load(); n < 1000 {
			t.Errorf("node %d served %d commands: the load was not spread", i, n)
		}
	}
}
