package target

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
)

// TestPersistJob: which strategy of each kind has which job, and the
// reason given where it has none.
func TestPersistJob(t *testing.T) {
	kv, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := NewCommand(CommandConfig{Name: "valkey", Command: []string{"valkey-server", "--port", "{port}"}, Baseline: "none",
		Strategies:  []Strategy{{Name: "none", Args: []string{"--appendonly", "no"}}, {Name: "aof", Args: []string{"--appendonly", "yes"}}},
		PersistJobs: map[string][]string{JobBGSave: {"BGSAVE"}}})
	if err != nil {
		t.Fatal(err)
	}
	att, err := NewAttach(AttachConfig{Name: "remote", Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRedis(RedisConfig{Bin: testutil.RequireRedisServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc          Desc
		strategy, job string
		want          string // the command, or a part of the error
	}{
		{kv.Desc(), "nopersist", JobBGSave, "BGSAVE"},
		{kv.Desc(), "persist_everysec", JobRewrite, "BGREWRITEAOF"},
		{kv.Desc(), "nopersist", JobRewrite, "strategy nopersist of kvstore keeps no append-only log to rewrite (appendonly no)"},
		{r.Desc(), "none", JobBGSave, "BGSAVE"},
		{r.Desc(), "rdb_default", JobRewrite, "keeps no append-only log to rewrite (appendonly no)"},
		{cmd.Desc(), "aof", JobBGSave, "BGSAVE"},
		{cmd.Desc(), "aof", JobRewrite, "names no command for the rewrite job: give it persist_jobs: {rewrite: COMMAND}"},
		{att.Desc(), "default", JobBGSave, "names no command for the bgsave job"},
		{kv.Desc(), "nopersist", "snapshot", `persist job "snapshot": want bgsave or rewrite`},
	}
	for _, tt := range tests {
		s, _ := tt.desc.Strategy(tt.strategy)
		got, err := tt.desc.PersistJob(s, tt.job)
		switch {
		case err != nil && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s/%s %s: %v, want %q", tt.desc.Name, tt.strategy, tt.job, err, tt.want)
		case err == nil && strings.Join(got, " ") != tt.want:
			t.Errorf("%s/%s %s: %q, want %q", tt.desc.Name, tt.strategy, tt.job, got, tt.want)
		}
	}
}

// TestParsePersistJobs: a file's persist_jobs: entries, split into words;
// an unknown job or an empty command is refused.
func TestParsePersistJobs(t *testing.T) {
	got, err := ParsePersistJobs(map[string]string{JobBGSave: "BGSAVE SCHEDULE", JobRewrite: "BGREWRITEAOF"})
	if err != nil || !slices.Equal(got[JobBGSave], []string{"BGSAVE", "SCHEDULE"}) || !slices.Equal(got[JobRewrite], []string{"BGREWRITEAOF"}) {
		t.Errorf("%q, %v", got, err)
	}
	for in, want := range map[string]string{"snapshot": `persist job "snapshot"`, JobBGSave: "an empty command"} {
		if _, err := ParsePersistJobs(map[string]string{in: " "}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// TestRedisReplicas: a redis target with replicas starts them beside the
// master, in sync before Start returns (WAIT 1 answers 1 at once), and
// Stop leaves no process of any.
func TestRedisReplicas(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	r, err := NewRedis(RedisConfig{Bin: bin, Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Desc().Replicas != 2 {
		t.Errorf("Desc().Replicas %d", r.Desc().Replicas)
	}
	inst, env := start(t, r, "aof_everysec")
	info := inst.Info()
	if len(info.Nodes) != 0 || info.PID == 0 {
		t.Errorf("info: nodes %v, pid %d: want a single server, the master", info.Nodes, info.PID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, info.Addr, control.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, "WAIT", "2", "5000"); err != nil || n != int64(2) {
		t.Errorf("WAIT 2 5000: %v, %v: want both replicas", n, err)
	}
	rep, err := c.Info(ctx, "replication")
	if err != nil || rep["role"] != "master" || rep["connected_slaves"] != "2" {
		t.Errorf("INFO replication of the master: %v, %v", rep, err)
	}
	stopAndCheck(t, inst, env)
	if _, err := NewRedis(RedisConfig{Bin: bin, Replicas: -1}); err == nil {
		t.Error("replicas -1 accepted")
	}
}

// TestServerMemoryFork: while a redis-server's fork writes a snapshot
// (slowed by rdb-key-save-delay) and the server overwrites its data, the
// server's memory is its resident set and the pages the fork keeps
// alone: more than the server's own, less than the two resident sets
// summed (the pages they share count once).
func TestServerMemoryFork(t *testing.T) {
	r, err := NewRedis(RedisConfig{Bin: testutil.RequireRedisServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, r, "none")
	defer stopAndCheck(t, inst, env)
	info := inst.Info()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := control.Dial(ctx, info.Addr, control.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(args ...string) {
		t.Helper()
		if _, err := c.Do(ctx, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	fill := func(b byte) { // 80 MB in 400 values
		t.Helper()
		v := strings.Repeat(string(b), 200<<10)
		for i := range 400 {
			do("SET", fmt.Sprint("k", i), v)
		}
	}
	fill('a')
	before, ok := ServerMemory(info)
	if !ok {
		t.Fatal("no memory for a server kvbench started")
	}
	do("CONFIG", "SET", "rdb-key-save-delay", "1000000") // 1 s a key: the fork outlives the test
	do("BGSAVE")
	var fork []int // the stop kills it
	for len(fork) == 0 {
		if ctx.Err() != nil {
			t.Fatal("no fork appeared")
		}
		fork = children(info.PID)
		time.Sleep(10 * time.Millisecond)
	}
	child := fork[0]
	fill('b') // new values: the old ones are the fork's alone
	mem, ok := ServerMemory(info)
	parent, err1 := processRSS(info.PID)
	childRSS, err2 := processRSS(child)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("memory %v, parent %v, child %v", ok, err1, err2)
	}
	t.Logf("server memory %d MB, server %d MB, fork %d MB, before %d MB", mem>>20, parent>>20, childRSS>>20, before>>20)
	if mem < parent+40<<20 || mem >= parent+childRSS {
		t.Errorf("server memory %d MB: want the server's %d MB and most of the fork's 80 MB of old values, below both resident sets summed (%d MB); before the fork %d MB",
			mem>>20, parent>>20, (parent+childRSS)>>20, before>>20)
	}
}
