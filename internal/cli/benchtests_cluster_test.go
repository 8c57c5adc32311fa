package cli

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
)

// TestBenchTestsCluster: "kvbench bench --cluster -t ..." runs
// redis-benchmark's tests against a cluster, MSET and the constant keys
// included, and over RESP3 too.
func TestBenchTestsCluster(t *testing.T) {
	info := rediscluster.Start(t, kvtarget.RedisClusterConfig{Shards: 3})
	_, port, _ := strings.Cut(info.Addr, ":")
	for _, extra := range [][]string{nil, {"--resp3"}} {
		args := append([]string{"bench", "--cluster", "-p", port, "-t", "set,get,incr,lpush,lpop,mset,lrange_100", "-n", "2000", "-r", "300", "-c", "2", "-q"}, extra...)
		code, stdout, stderr := execute(t, args...)
		if code != 0 || strings.Count(stdout, "requests per second") != 7 {
			t.Errorf("%v: exit %d\n%s%s", extra, code, stdout, stderr)
		}
	}
}
