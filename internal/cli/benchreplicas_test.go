package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/redis/go-redis/v9"
)

// TestBenchReplicaUsageErrors: the replicas' flags that cannot be used
// as given are usage errors naming the flag.
func TestBenchReplicaUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--read-from-replicas"}, "--read-from-replicas needs --cluster"},
		{[]string{"--cluster", "--replicas", "127.0.0.1:7001"}, "--replicas and --cluster cannot be used together: a cluster's replicas come from its slot map, use --read-from-replicas"},
		{[]string{"--replicas", "127.0.0.1"}, `--replicas "127.0.0.1": "127.0.0.1" is not host:port`},
		{[]string{"--replicas", "127.0.0.1:7001,:7002"}, `":7002" is not host:port`},
		{[]string{"--replicas", "127.0.0.1:99999"}, "TCP port from 1 to 65535"},
		{[]string{"--replicas", ""}, `"" is not host:port`},
		{[]string{"--port", "7001", "--replicas", "127.0.0.1:7001"}, "127.0.0.1:7001 is the server the writes go to"},
		{[]string{"--replicas", "127.0.0.1:7001", "--reconnect"}, "--replicas and --reconnect cannot be used together"},
		{[]string{"--replicas", "127.0.0.1:7001", "--multi-key-get", "2"}, "--replicas and --multi-key-get cannot be used together"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestBenchReplicas: "bench --replicas" sends a single server's reads
// to its replica and its writes to it, as each server's INFO
// commandstats counts them: a verified get run after a prefill, whose
// JSON lists both nodes with their role, and a mixed run, whose text
// report prints a line per node; redis-benchmark's read tests, after
// the state they read was written to the master; a set run says the
// replica gets nothing.
func TestBenchReplicas(t *testing.T) {
	master := testutil.StartRedis(t)
	replica := testutil.StartReplica(t, master)
	_, port, _ := strings.Cut(master.Addr, ":")
	base := []string{"bench", "-p", port, "--replicas", replica.Addr, "-r", "1000", "-c", "2", "-P", "16", "--threads", "2"}
	reset := func() {
		for _, a := range []string{master.Addr, replica.Addr} {
			c := redis.NewClient(&redis.Options{Addr: a, Protocol: 2, DisableIdentity: true})
			err := c.ConfigResetStat(context.Background()).Err()
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	code, stdout, stderr := execute(t, append(base, "--mode", "get", "--prefill", "--verify-get", "-n", "5000", "--output", "json")...)
	if code != 0 {
		t.Fatalf("get: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Gets  int64 `json:"gets"`
		Nodes []struct {
			Addr     string `json:"addr"`
			Role     string `json:"role"`
			Requests int64  `json:"requests"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	m, r := testutil.CommandCalls(t, master.Addr), testutil.CommandCalls(t, replica.Addr)
	if m["get"] != 0 || r["get"] != 5000 || doc.Gets != 5000 {
		t.Errorf("GETs: master %d, replica %d, run %d; want 0, 5000, 5000", m["get"], r["get"], doc.Gets)
	}
	if len(doc.Nodes) != 2 || doc.Nodes[0].Addr != master.Addr || doc.Nodes[0].Role != "master" || doc.Nodes[0].Requests != 0 ||
		doc.Nodes[1].Addr != replica.Addr || doc.Nodes[1].Role != "replica" || doc.Nodes[1].Requests != 5000 {
		t.Errorf("JSON nodes %+v", doc.Nodes)
	}

	reset()
	code, stdout, stderr = execute(t, append(base, "--mode", "mixed", "-n", "10000")...)
	if code != 0 {
		t.Fatalf("mixed: exit %d\n%s", code, stderr)
	}
	m, r = testutil.CommandCalls(t, master.Addr), testutil.CommandCalls(t, replica.Addr)
	if m["get"] != 0 || m["set"] == 0 || r["get"] == 0 || m["set"]+r["get"] != 10000 {
		t.Errorf("master: %d GETs, %d SETs; replica: %d GETs; want no GET on the master, 10000 requests in all", m["get"], m["set"], r["get"])
	}
	for _, want := range []string{
		"target: " + master.Addr + ", reads from replicas " + replica.Addr + "\n",
		"\nnode " + master.Addr + " (master): ",
		"\nnode " + replica.Addr + " (replica): ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, stdout)
		}
	}

	// redis-benchmark's tests: the state a read test needs is written to
	// the master and replicated before the test reads it.
	reset()
	code, _, stderr = execute(t, "bench", "-p", port, "--replicas", replica.Addr, "-r", "1000", "-c", "2", "-P", "16", "-n", "2000", "--tests", "get,lrange_100")
	if code != 0 {
		t.Fatalf("tests: exit %d\n%s", code, stderr)
	}
	m, r = testutil.CommandCalls(t, master.Addr), testutil.CommandCalls(t, replica.Addr)
	if m["get"] != 0 || m["lrange"] != 0 || r["get"] != 2000 || r["lrange"] != 2000 || m["set"] == 0 || m["lpush"] == 0 {
		t.Errorf("master: %d GETs, %d LRANGEs, %d SETs, %d LPUSHes; replica: %d GETs, %d LRANGEs; want the reads on the replica, the writes on the master",
			m["get"], m["lrange"], m["set"], m["lpush"], r["get"], r["lrange"])
	}

	code, stdout, stderr = execute(t, append(base, "--mode", "set", "-n", "1000")...)
	if code != 0 || !strings.Contains(stdout, "\nwarning: no request went to a replica: the run sent no read\n") {
		t.Errorf("set: exit %d, stderr %q; want 0 and a warning in the report:\n%s", code, stderr, stdout)
	}
}

// TestBenchReadFromReplicas: "bench --cluster --read-from-replicas"
// sends the reads to the replicas and the writes to the masters of a
// 3-master, 1-replica-each cluster (INFO commandstats of each node), and
// prints a line per node naming its role.
func TestBenchReadFromReplicas(t *testing.T) {
	ctx := context.Background()
	addr := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3, Replicas: 1}).Addr
	// CLUSTER SLOTS lists a replica once the gossip gave its offset.
	var (
		topo *cluster.Topology
		err  error
	)
	for deadline := time.Now().Add(time.Minute); ; {
		if topo, err = cluster.FetchTopology(ctx, []string{addr}, control.Options{Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range topo.ReplicaAddrs {
			n += len(r)
		}
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLUSTER SLOTS lists the replicas %v", topo.ReplicaAddrs)
		}
		time.Sleep(50 * time.Millisecond) // bounded poll of the slot map
	}
	_, port, _ := strings.Cut(addr, ":")
	code, stdout, stderr := execute(t, "bench", "--cluster", "-p", port, "--read-from-replicas", "--mode", "mixed",
		"-n", "30000", "-r", "3000", "-c", "1", "-P", "16", "--threads", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for m, master := range topo.Masters {
		mc := testutil.CommandCalls(t, master)
		rep := topo.ReplicaAddrs[m][0]
		rc := testutil.CommandCalls(t, rep)
		if mc["get"] != 0 || mc["set"] == 0 || rc["get"] == 0 {
			t.Errorf("master %s: %d GETs, %d SETs; its replica %s: %d GETs; want no GET on the master, some SETs and GETs", master, mc["get"], mc["set"], rep, rc["get"])
		}
		for _, want := range []string{"\nnode " + master + " (master, ", "\nnode " + rep + " (replica, "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("text report lacks %q:\n%s", want, stdout)
			}
		}
	}
	if !strings.Contains(stdout, "target: "+addr+", reads from replicas\n") {
		t.Errorf("text report lacks the target line:\n%s", stdout)
	}
}

// TestLoadJSONReplicas: the load an agent gets as JSON for a run that
// reads from replicas is its Config.
func TestLoadJSONReplicas(t *testing.T) {
	for _, c := range []loadgen.Config{
		{Addr: "10.1.2.3:7001", Cluster: true, ReadFromReplicas: true},
		{Addr: "10.1.2.3:6379", Replicas: []string{"10.1.2.4:6379", "10.1.2.5:6380"}},
	} {
		want := loadgen.DefaultConfig()
		want.Addr, want.Cluster, want.ReadFromReplicas, want.Replicas = c.Addr, c.Cluster, c.ReadFromReplicas, c.Replicas
		opts, args := agentBench(t, want, tlsconf.Options{})
		got := opts.Config
		if got.ReadFromReplicas != want.ReadFromReplicas || !slices.Equal(got.Replicas, want.Replicas) || got.Cluster != want.Cluster {
			t.Errorf("bench %q: read from replicas %v, replicas %v; want %v, %v", args, got.ReadFromReplicas, got.Replicas, want.ReadFromReplicas, want.Replicas)
		}
	}
}

// TestBenchReadFromReplicasNone: --read-from-replicas on a cluster whose
// slot map lists no replica reads from the masters, and says so on every
// output format, -q and csv too (their warnings go to stderr).
func TestBenchReadFromReplicasNone(t *testing.T) {
	addr := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3}).Addr
	_, port, _ := strings.Cut(addr, ":")
	for _, format := range [][]string{{"-q"}, {"--output", "csv"}, {"--output", "text"}} {
		args := append([]string{"bench", "--cluster", "-p", port, "--read-from-replicas", "--mode", "get", "-n", "3000", "-r", "300"}, format...)
		code, stdout, stderr := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", format, code, stderr)
		}
		if !strings.Contains(stdout+stderr, "warning: no replica: the reads of the slots of") {
			t.Errorf("%v: no word of the reads going to the masters:\n%s\n%s", format, stdout, stderr)
		}
	}
}
