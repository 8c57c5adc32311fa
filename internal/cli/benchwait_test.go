package cli

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

// TestBenchWait: "bench --mode set --wait-ratio 1:10" against a master
// with a replica: the set mode becomes its mix, a WAIT after every tenth
// write, each acknowledged by the replica, the wait command's line in
// the report; the WAIT flags that cannot be used as given are usage
// errors.
func TestBenchWait(t *testing.T) {
	master := testutil.StartRedis(t)
	testutil.StartReplica(t, master)
	host, port, _ := strings.Cut(master.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--host", host, "--port", port, "--mode", "set", "--requests", "2200", "--keyspace", "1000",
		"--connections", "1", "--pipeline", "4", "--wait-ratio", "1:10", "--num-replicas", "1", "--wait-timeout", "10s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2,200 requests on one connection: 2,000 writes, 200 WAITs. The
	// replica acknowledges each at once; the timeout is long for a busy
	// machine, where a replica may lag 100 ms behind.
	for _, want := range []string{"waits: 200 acknowledged by 1 replicas within 10s, 0 by fewer", "wait"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report without %q:\n%s", want, stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-replicas", "2"}, "--num-replicas and --wait-timeout go with --wait-ratio"},
		{[]string{"--wait-ratio", "10"}, "want WAITS:WRITES"},
		{[]string{"--wait-ratio", "1:10", "--wait-timeout", "0s"}, "--wait-timeout 0s: want whole milliseconds"},
		{[]string{"--wait-ratio", "1:10", "--tests", "set"}, "--wait-ratio: not with --tests"},
		{[]string{"--wait-ratio", "1:10", "--cluster"}, "not in a cluster"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
