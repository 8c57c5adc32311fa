package target

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
)

func TestSlotRange(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		next := 0
		for i := range n {
			lo, hi := SlotRange(i, n)
			if lo != next || hi < lo {
				t.Fatalf("SlotRange(%d, %d) = %d, %d; want to start at %d", i, n, lo, hi, next)
			}
			next = hi + 1
		}
		if next != ClusterSlots {
			t.Errorf("%d shards cover %d slots, want %d", n, next, ClusterSlots)
		}
	}
}

func TestRedisClusterBadShape(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	for _, tt := range []struct {
		cfg  RedisClusterConfig
		want string
	}{
		{RedisClusterConfig{Shards: -1}, "shards -1: want at least 1"},
		{RedisClusterConfig{Replicas: -2}, "replicas -2: want 0 or more"},
		{RedisClusterConfig{Shards: 40, Replicas: 1}, "make 80 nodes: at most 64"},
	} {
		tt.cfg.Bin = bin
		_, err := NewRedisCluster(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestRedisCluster starts real clusters, checks what every node reports,
// and that Stop leaves no process.
func TestRedisCluster(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	for _, tt := range []struct {
		name             string
		shards, replicas int
		strategy         string
	}{
		{"3x0", 3, 0, "aof_everysec"},
		{"2x1", 2, 1, "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewRedisCluster(RedisClusterConfig{RedisConfig: RedisConfig{Bin: bin}, Shards: tt.shards, Replicas: tt.replicas})
			if err != nil {
				t.Fatal(err)
			}
			if c.Desc().Kind != KindRedisCluster || c.Desc().Name != DefaultRedisClusterName {
				t.Errorf("desc %+v", c.Desc())
			}
			inst, env := start(t, c, tt.strategy)
			defer stopAndCheck(t, inst, env)
			info := inst.Info()
			if len(info.Nodes) != tt.shards || info.Addr != info.Nodes[0] {
				t.Errorf("nodes %v, addr %s: want %d masters, the first the address", info.Nodes, info.Addr, tt.shards)
			}
			if !strings.Contains(info.Config, "cluster-enabled=yes") {
				t.Errorf("config %q lacks cluster-enabled=yes", info.Config)
			}
			cl, err := dialControl(context.Background(), info.Addr, creds{}, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ci, err := clusterInfo(context.Background(), cl)
			if err != nil {
				t.Fatal(err)
			}
			total := tt.shards * (1 + tt.replicas)
			if ci["cluster_state"] != "ok" || ci["cluster_known_nodes"] != itoa(total) ||
				ci["cluster_size"] != itoa(tt.shards) || ci["cluster_slots_assigned"] != "16384" {
				t.Errorf("CLUSTER INFO: %v", ci)
			}
			slots, err := clusterNodesMap(context.Background(), cl)
			if err != nil {
				t.Fatal(err)
			}
			entries := strings.Fields(slots)
			if len(entries) != tt.shards {
				t.Fatalf("CLUSTER SLOTS %q: want %d ranges", slots, tt.shards)
			}
			for i, e := range entries {
				lo, hi := SlotRange(i, tt.shards)
				want := itoa(lo) + "-" + itoa(hi) + ":" + info.Nodes[i]
				if !strings.HasPrefix(e, want) || strings.Count(e, ",") != tt.replicas {
					t.Errorf("slot range %d: %q, want %s with %d replicas", i, e, want, tt.replicas)
				}
			}
			masters, err := clusterSlots(context.Background(), cl)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range strings.Fields(masters) {
				lo, hi := SlotRange(i, tt.shards)
				if want := itoa(lo) + "-" + itoa(hi) + ":" + info.Nodes[i]; !strings.HasPrefix(e, want) {
					t.Errorf("CLUSTER SLOTS range %d: %q, want %s", i, e, want)
				}
			}
			// Every node runs the strategy's persistence settings.
			for _, nd := range inst.(*clusterInstance).nodes {
				if nd.inst.info.Config != info.Config {
					t.Errorf("node %s: config %q, want %q", nd.inst.info.Addr, nd.inst.info.Config, info.Config)
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRedisClusterSampled: a cluster's Sample covers every master (its CPU
// time, the sum of theirs, grows with work any of them does), its idle
// check asks every master, and a master restarted on its address is told
// apart by its run_id, the error naming it.
func TestRedisClusterSampled(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	c, err := NewRedisCluster(RedisClusterConfig{RedisConfig: RedisConfig{Bin: bin}, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, c, "none")
	defer stopAndCheck(t, inst, env)
	info := inst.Info()
	ctx := context.Background()
	if len(info.NodePIDs) != 3 || slices.Contains(info.NodePIDs, 0) {
		t.Fatalf("node pids %v: want the 3 masters' processes", info.NodePIDs)
	}
	if busy, err := WaitQuietAll(ctx, info.Masters(), control.Options{}, time.Minute); busy || err != nil {
		t.Errorf("WaitQuietAll on an idle cluster: busy %v, %v", busy, err)
	}
	before, err := SampleServer(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Nodes) != 3 || before.CPU < 0 {
		t.Fatalf("sample %+v: want 3 masters' samples and their CPU time", before)
	}
	// The last master, alone, burns CPU time in a Lua loop.
	cl, err := dialControl(ctx, info.Nodes[2], creds{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Do(context.Background(), "EVAL", "local i = 0 while i < 20000000 do i = i + 1 end return i", "0"); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	after, err := SampleServer(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Restarted(before, after); err != nil {
		t.Errorf("no restart: %v", err)
	}
	if grew := after.Nodes[2].CPU - before.Nodes[2].CPU; grew < 20*time.Millisecond || after.CPU-before.CPU < grew {
		t.Errorf("CPU: the busy master's grew %v, the cluster's %v: want the busy master's counted", grew, after.CPU-before.CPU)
	}

	// The last master dies; a new process on its port and its files
	// takes its place in the cluster.
	if err := syscall.Kill(-info.NodePIDs[2], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); pingAddr(info.Nodes[2]) == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the killed master still answers PING after a minute")
		}
		time.Sleep(20 * time.Millisecond) // bounded poll for the process to go
	}
	again := exec.Command(bin, filepath.Join(env.Dir, "node-2", "redis.conf"))
	again.Dir = filepath.Join(env.Dir, "node-2")
	again.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-again.Process.Pid, syscall.SIGKILL); _ = again.Wait() }()
	for deadline := time.Now().Add(time.Minute); pingAddr(info.Nodes[2]) != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the restarted master does not answer PING in a minute")
		}
		time.Sleep(20 * time.Millisecond) // bounded poll for the new server
	}
	restarted, err := SampleServer(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Restarted(before, restarted); !errors.Is(err, ErrRestarted) || !strings.Contains(err.Error(), "node "+info.Nodes[2]+": its run_id went from") {
		t.Errorf("a restarted master: %v", err)
	}
	if _, err := WaitQuietAll(ctx, []string{info.Nodes[0], "127.0.0.1:1"}, control.Options{}, time.Second); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("WaitQuietAll with a master gone: %v, want an error naming it", err)
	}
}

// TestKvstoreCluster starts a kvstore-cluster (as its target file entry
// makes it: targetfile's TestParseConfigCluster): every node answers on
// its own port with the strategy's configuration, serves its even share of
// the slots (CLUSTER SLOTS lists all three), and Stop takes every node
// down.
func TestKvstoreCluster(t *testing.T) {
	c, err := NewKvstoreCluster(KvstoreClusterConfig{KvstoreConfig: KvstoreConfig{Bin: kvbenchBin, Alloc: AllocMalloc, Defaults: []string{"persist_everysec"}}, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Desc()
	if d.Name != DefaultKvstoreClusterName || d.Kind != KindKvstoreCluster || c.Shards() != 3 || !slices.Equal(d.Defaults, []string{"persist_everysec"}) {
		t.Fatalf("%+v: shards %d", d, c.Shards())
	}
	s, _ := d.Strategy("persist_everysec")
	tr := &Tracker{}
	dir := t.TempDir()
	inst, err := c.Start(context.Background(), s, Env{Dir: dir, Tracker: tr})
	if err != nil {
		t.Fatal(err)
	}
	info := inst.Info()
	if len(info.Nodes) != 3 || len(info.NodePIDs) != 3 || !strings.Contains(info.Config, "kvstore-alloc=go") {
		t.Errorf("info %+v", info)
	}
	for _, addr := range info.Nodes {
		cl, err := dialControl(context.Background(), addr, creds{}, cmdTimeout)
		if err != nil {
			t.Fatal(err)
		}
		got, err := clusterSlots(context.Background(), cl)
		cl.Close()
		var want []string
		for i, a := range info.Nodes {
			lo, hi := SlotRange(i, 3)
			want = append(want, fmt.Sprintf("%d-%d:%s", lo, hi, a))
		}
		if err != nil || got != strings.Join(want, " ") {
			t.Errorf("CLUSTER SLOTS on %s: %q, %v; want %q", addr, got, err, strings.Join(want, " "))
		}
	}
	if err := inst.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := tr.Live(); n != 0 {
		t.Errorf("%d nodes left running", n)
	}
}

// TestClusterBadInput: a server that is not in cluster mode, attached as
// a cluster, and a cluster that does not settle within the ready timeout
// (Redis masters report cluster_state:fail for their first 2 s) fail with
// errors naming the node, and leave nothing running.
func TestClusterBadInput(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	plain, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, plain, "nopersist")
	defer stopAndCheck(t, inst, env)
	addr := inst.Info().Addr
	a, err := NewAttach(AttachConfig{Name: "remote", Addr: addr, Cluster: true, Strategies: []Strategy{{Name: "as_configured"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := a.Desc().Strategy("as_configured")
	if _, err := a.Start(context.Background(), s, Env{ReadyTimeout: 300 * time.Millisecond}); err == nil ||
		!strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "cluster support disabled") {
		t.Errorf("attaching to %s as a cluster: %v; want an error naming it and saying it is not in cluster mode", addr, err)
	}

	c, err := NewRedisCluster(RedisClusterConfig{RedisConfig: RedisConfig{Bin: bin}, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = c.Desc().Strategy("none")
	tr := &Tracker{}
	dir := t.TempDir()
	_, err = c.Start(context.Background(), s, Env{Dir: dir, Tracker: tr, ReadyTimeout: 900 * time.Millisecond})
	if !errors.Is(err, ErrClusterNotReady) || !strings.Contains(err.Error(), "127.0.0.1:") {
		t.Errorf("a cluster that cannot settle in time: %v; want ErrClusterNotReady naming a node", err)
	}
	if n := tr.Live(); n != 0 {
		t.Errorf("%d nodes left running", n)
	}
	if ps := testutil.Processes(dir); len(ps) > 0 {
		testutil.KillProcesses(ps)
		t.Errorf("processes left: %+v", ps)
	}
}
