// Package rediscluster starts a Redis Cluster of redis-server processes
// for a test, on loopback, stopped when the test ends. It is apart from
// package testutil, which package target's own tests import.
package rediscluster

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// Start starts the cluster cfg describes (cfg.Bin: the redis-server
// found, testutil.RequireRedisServer) and returns its description; the
// test fails if a node is left running.
func Start(t testing.TB, cfg kvtarget.RedisClusterConfig) kvtarget.Info {
	t.Helper()
	cfg.Bin = testutil.RequireRedisServer(t)
	c, err := kvtarget.NewRedisCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Desc().Strategy("none")
	tr := &kvtarget.Tracker{}
	dir := t.TempDir()
	// A cluster forms slowly on a loaded machine.
	inst, err := c.Start(context.Background(), s, kvtarget.Env{Dir: dir, Tracker: tr, ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := inst.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		if n := tr.Live(); n != 0 {
			t.Errorf("%d nodes left running", n)
		}
		if ps := testutil.Processes(dir); len(ps) > 0 {
			testutil.KillProcesses(ps)
			t.Errorf("processes left: %+v", ps)
		}
	})
	return inst.Info()
}
