package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// startCluster starts a 3-master Redis Cluster with pkg/target's cluster
// code, stopped when the test ends, and returns its masters.
func startCluster(t *testing.T) []string {
	t.Helper()
	return rediscluster.Start(t, target.RedisClusterConfig{Shards: 3}).Nodes
}

// clusterKeys returns the keys of each master.
func clusterKeys(t *testing.T, masters []string) (keys []int, sum int) {
	t.Helper()
	for _, addr := range masters {
		var n int
		if err := redisCmd(addr, "*1\r\n$6\r\nDBSIZE\r\n", &n); err != nil {
			t.Fatalf("DBSIZE on %s: %v", addr, err)
		}
		keys, sum = append(keys, n), sum+n
	}
	return keys, sum
}

// TestRunAttachCluster: an attach target with cluster: true, given one
// seed (not the first master), is measured in cluster mode over every
// master. Keys someone left in the cluster, summed over the masters,
// refuse it unless emptying it is allowed; then every master is emptied
// between attempts.
func TestRunAttachCluster(t *testing.T) {
	testutil.RequireRedisServer(t)
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow_flush=%v", allowed), func(t *testing.T) {
			masters := startCluster(t)
			// 1,234 keys of someone's, spread over the masters.
			pre := loadgen.DefaultConfig()
			pre.Addr, pre.Cluster, pre.Keyspace, pre.Requests = masters[1], true, 1234, 1234
			if _, err := prefill.Prefill(context.Background(), pre); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(t.TempDir(), "attach.yaml")
			yaml := fmt.Sprintf("targets:\n  - name: remote-cluster\n    kind: attach\n    cluster: true\n    addrs: [127.0.0.1:1, %s]\n    allow_flush: %v\n    strategies: [as_configured]\n", masters[1], allowed)
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			o := runOptions(t)
			o.ConfigFile, o.Rounds, o.Modes, o.Requests, o.Keyspace = cfg, 2, []string{"set", "get"}, 4000, 1000
			res, _, _, err := runQuiet(t, context.Background(), o)
			rows := readDetail(t, res)
			keys, sum := clusterKeys(t, masters)
			if !allowed {
				if !errors.Is(err, ErrScenariosFailed) {
					t.Fatalf("err %v, want ErrScenariosFailed", err)
				}
				want := fmt.Sprintf("remote-cluster: server not empty: the cluster's 3 masters (%s) hold 1,234 keys", strings.Join(masters, ", "))
				if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, want) {
					t.Errorf("rows %+v: want one failed row saying %q", rows, want)
				}
				if sum != 1234 {
					t.Errorf("keys per master %v after the refusal: want the 1234 keys kept", keys)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok := okRounds(rows); len(ok) != 4 || len(rows) != 4 {
				t.Errorf("%d rows, ok rounds %v: want set and get × 2 rounds, all ok", len(rows), ok)
			}
			for i, r := range rows {
				if r.Shards != 3 || r.Flushed != (i == 0) {
					t.Errorf("row %d: shards %d flushed %v: want 3 shards, flushed on the first attempt only", i+1, r.Shards, r.Flushed)
				}
			}
			if sum != 1000 || keys[0] == 0 || keys[1] == 0 || keys[2] == 0 {
				t.Errorf("keys per master %v after the run: want the last attempt's 1000 keys over the 3 masters", keys)
			}
		})
	}
}
