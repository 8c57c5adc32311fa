package rbtests

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/redis/go-redis/v9"
)

// config is a run of the tests against addr.
func config(addr string, requests, keyspace int64, valueSize, connections, pipeline int, seed int64) loadgen.Config {
	c := loadgen.DefaultConfig()
	c.Addr, c.Requests, c.Keyspace, c.ValueSize = addr, requests, keyspace, valueSize
	c.Connections, c.Pipeline, c.Seed = connections, pipeline, seed
	return c
}

// distinct returns the distinct shapes, sorted, without the commands of
// the tools themselves (redis-benchmark's CONFIG GET, kvbench's COMMAND
// INFO and container lengths).
func distinct(s []string) []string {
	var out []string
	for _, x := range s {
		name, _, _ := strings.Cut(x, " ")
		switch name {
		case "CONFIG", "COMMAND", "LLEN", "SCARD", "ZCARD":
			continue
		}
		out = append(out, x)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestTestsMatchRedisBenchmark: every test sends the commands of
// redis-benchmark's test of the same name with the same arguments (key
// names, argument counts and value sizes), as MONITOR on a real
// redis-server sees them; and every test runs its requests without an
// error reply.
func TestTestsMatchRedisBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (make test)")
	}
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		if os.Getenv(testutil.RequireRedisEnv) == "1" {
			t.Fatal(err)
		}
		t.Skip("redis-benchmark not installed")
	}
	r := testutil.StartRedis(t)
	host, port, _ := net.SplitHostPort(r.Addr)
	const dataLen = 7
	for _, test := range Tests {
		t.Run(test.Name, func(t *testing.T) {
			stop := testutil.Monitor(t, r.Addr, dataLen)
			out, err := exec.Command(bin, "-h", host, "-p", port, "-t", test.Name, "-n", "300", "-r", "1000",
				"-d", strconv.Itoa(dataLen), "-c", "2", "-q").CombinedOutput()
			if err != nil {
				t.Fatalf("redis-benchmark: %v\n%s", err, out)
			}
			want := distinct(stop())
			if len(want) == 0 {
				t.Fatalf("MONITOR saw nothing of redis-benchmark:\n%s", out)
			}
			// redis-benchmark measures the fill of the LRANGE tests.
			want = slices.DeleteFunc(want, func(s string) bool {
				return strings.HasPrefix(test.Name, "lrange") && strings.HasPrefix(s, "LPUSH")
			})

			stop = testutil.Monitor(t, r.Addr, dataLen)
			cfg := config(r.Addr, 300, 1000, dataLen, 2, 4, 3)
			res, err := RunTests(context.Background(), cfg, []Test{test})
			if err != nil {
				t.Fatal(err)
			}
			// The fill of a read test are other commands: compare only
			// those of the measured phase (the last 300).
			all := stop()
			got := distinct(all[len(all)-300:])
			if !slices.Equal(got, want) {
				t.Errorf("kvbench sent %q\nredis-benchmark sent %q", got, want)
			}
			if len(res) != 1 || res[0].Requests != 300 || res[0].ErrorCount() != 0 {
				t.Errorf("results %+v", res)
			}
		})
	}
}

// TestTestsPrepare: a test that reads gets its state first: GET without
// SET finds every key, the pops never find an empty container.
func TestTestsPrepare(t *testing.T) {
	r := testutil.StartRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	tests, err := ParseTests("GET,lpop,SPOP,zpopmin,lrange_600")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(r.Addr, 2000, 500, 10, 4, 16, 1)
	res, err := RunTests(context.Background(), cfg, tests)
	if err != nil {
		t.Fatal(err)
	}
	if n := rc.DBSize(context.Background()).Val(); n < 500 {
		t.Errorf("DBSIZE %d after GET's fill: want >= 500", n)
	}
	for _, x := range res {
		if x.Requests != 2000 {
			t.Errorf("%s: %d requests", x.Test, x.Requests)
		}
	}
	if n := rc.LLen(context.Background(), "mylist").Val(); n != LRangeFill {
		t.Errorf("LLEN mylist %d: want %d (emptied by LPOP, then filled for LRANGE)", n, LRangeFill)
	}
	if n := rc.SCard(context.Background(), "myset").Val(); n != 0 {
		t.Errorf("SCARD myset %d: want 0, SPOP taking exactly what was added", n)
	}
}

// TestParseTests: case-insensitive names in redis-benchmark's order, and
// an unknown name refused by name.
func TestParseTests(t *testing.T) {
	got, err := ParseTests("GET, set,Lrange")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range got {
		names = append(names, x.Name)
	}
	if want := []string{"set", "get", "lrange_100", "lrange_300", "lrange_500", "lrange_600"}; !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
	if _, err := ParseTests("set,sett"); err == nil || !strings.Contains(err.Error(), `"sett"`) {
		t.Errorf("unknown test: %v", err)
	}
}
