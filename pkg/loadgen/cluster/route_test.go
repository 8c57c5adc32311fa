package cluster

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// TestHeirOfUnwrittenMaster: a master that has a replica is lost before
// its replica has received a write, so CLUSTER SLOTS on the other nodes
// does not list the replica (Redis lists one only once it has heard of
// its replication offset); Heir waits for the replica, which CLUSTER
// NODES does list, to take the slots over, and does not give up at once
// for want of a replica.
func TestHeirOfUnwrittenMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a Redis failover")
	}
	info := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3, Replicas: 1,
		RedisConfig: kvtarget.RedisConfig{Config: []string{"cluster-node-timeout 500"}}})
	o := control.Options{Timeout: time.Second}
	topo, err := FetchTopology(t.Context(), info.Nodes[1:], o)
	if err != nil {
		t.Fatal(err)
	}
	if topo.Masters[0] != info.Nodes[0] {
		t.Fatalf("CLUSTER SLOTS lists masters %v: want %s first", topo.Masters, info.Nodes[0])
	}
	if topo.Replicas[0] != 0 {
		// The master pinged its replica before the cluster was ready (its
		// first ping is 10 s after the sync): the case is not there.
		t.Skipf("CLUSTER SLOTS already lists %d replicas of %s", topo.Replicas[0], info.Nodes[0])
	}
	rt := NewRoute(t.Context(), topo, "key:", keyspace.Spec{Keyspace: 1000})
	if err := syscall.Kill(-info.NodePIDs[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	heir, err := rt.Heir(0, o, time.Minute)
	if err != nil || heir == "" || slices.Contains(info.Nodes, heir) {
		t.Fatalf("heir %q, %v: want the replica, none of the masters %v", heir, err, info.Nodes)
	}
	if got := rt.Addr(rt.Owner(0)); got != heir {
		t.Errorf("slot 0 is routed to %s after the failover, want %s", got, heir)
	}
}

// TestCountFollowers reads CLUSTER NODES texts: a failed replica does
// not count, one only suspected ("fail?") does, and a master the text
// does not list gives no answer.
func TestCountFollowers(t *testing.T) {
	const nodes = "" +
		"a1 127.0.0.1:7000@17000 master,fail - 0 0 1 disconnected 0-5460\n" +
		"b2 127.0.0.1:7001@17001,host myself,master - 0 0 2 connected 5461-16383\n" +
		"c3 127.0.0.1:7002@17002 slave a1 0 0 1 connected\n" +
		"d4 127.0.0.1:7003@17003 slave,fail? a1 0 0 1 connected\n" +
		"e5 127.0.0.1:7004@17004 slave,fail b2 0 0 2 disconnected\n"
	for _, tc := range []struct {
		addr string
		n    int
		ok   bool
	}{{"127.0.0.1:7000", 2, true}, {"127.0.0.1:7001", 0, true}, {"127.0.0.1:7009", 0, false}} {
		if n, ok := countFollowers(nodes, tc.addr); n != tc.n || ok != tc.ok {
			t.Errorf("%s: %d, %v: want %d, %v", tc.addr, n, ok, tc.n, tc.ok)
		}
	}
}

// FuzzCountFollowers: no CLUSTER NODES text, however malformed, makes
// the parser panic or count a master it does not list.
func FuzzCountFollowers(f *testing.F) {
	f.Add("a1 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16383\nc3 127.0.0.1:7002@17002 slave a1 0 0 1 connected\n", "127.0.0.1:7000")
	f.Add("x 1:2 slave,fail x 0 0 0 c\n", "1:2")
	f.Fuzz(func(t *testing.T, nodes, addr string) {
		n, ok := countFollowers(nodes, addr)
		if n < 0 || !ok && n != 0 {
			t.Fatalf("%d followers, ok %v", n, ok)
		}
	})
}
