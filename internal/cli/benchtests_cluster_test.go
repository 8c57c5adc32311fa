package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// TestBenchTestsCluster: "kvbench bench --cluster -t ..." runs
// redis-benchmark's tests against a cluster, MSET and the constant keys
// included, and over RESP3 too.
func TestBenchTestsCluster(t *testing.T) {
	cfg := kvtarget.RedisClusterConfig{Shards: 3}
	cfg.Bin = testutil.RequireRedisServer(t)
	c, err := kvtarget.NewRedisCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Desc().Strategy("none")
	inst, err := c.Start(context.Background(), s, kvtarget.Env{Dir: t.TempDir(), Tracker: &kvtarget.Tracker{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = inst.Stop(ctx)
	})
	_, port, _ := strings.Cut(inst.Info().Addr, ":")
	for _, extra := range [][]string{nil, {"--resp3"}} {
		args := append([]string{"bench", "--cluster", "-p", port, "-t", "set,get,incr,lpush,lpop,mset,lrange_100", "-n", "2000", "-r", "300", "-c", "2", "-q"}, extra...)
		code, stdout, stderr := execute(t, args...)
		if code != 0 || strings.Count(stdout, "requests per second") != 7 {
			t.Errorf("%v: exit %d\n%s%s", extra, code, stdout, stderr)
		}
	}
}
