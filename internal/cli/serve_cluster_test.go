package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const clusterYAML = `nodes:
  - {id: node-a, host: 127.0.0.1, port: %A, slots: [0-5460]}
  - {id: node-b, host: 127.0.0.1, port: 7002, slots: [5461-10922]}
  - {id: node-c, host: 127.0.0.1, port: 7003, slots: [10923-16383]}
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServeClusterErrors: a bad cluster configuration or id exits 2 with
// an error naming the node or the range.
func TestServeClusterErrors(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.ReplaceAll(clusterYAML, "%A", "7001"))
	overlap := writeFile(t, "overlap.yaml", strings.ReplaceAll(strings.ReplaceAll(clusterYAML, "%A", "7001"), "[0-5460]", "[0-5500]"))
	gap := writeFile(t, "gap.yaml", strings.ReplaceAll(strings.ReplaceAll(clusterYAML, "%A", "7001"), "[0-5460]", "[0-5400]"))
	empty := writeFile(t, "empty.yaml", "nodes: []\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-config", overlap, "--cluster-id", "node-a"}, `node "node-b": slot range 5461-10922 overlaps node "node-a"'s ranges (slot 5461)`},
		{[]string{"--cluster-config", gap, "--cluster-id", "node-a"}, "slots 5401-5460 belong to no node"},
		{[]string{"--cluster-config", empty, "--cluster-id", "node-a"}, "no nodes: a cluster needs at least one"},
		{[]string{"--cluster-config", good, "--cluster-id", "node-z"}, `--cluster-id "node-z": no such node in ` + good + " (its nodes: node-a, node-b, node-c)"},
		{[]string{"--cluster-config", good, "--cluster-id", "node-a", "--port", "9999"}, `--port 9999: node "node-a" listens on port 7001`},
		{[]string{"--cluster-config", good}, "--cluster-config needs --cluster-id"},
		{[]string{"--cluster-id", "node-a"}, "--cluster-id needs --cluster-config"},
		{[]string{"--cluster-config", filepath.Join(t.TempDir(), "missing.yaml"), "--cluster-id", "a"}, "no such file"},
	} {
		code, _, stderr := execute(t, append([]string{"serve"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestServeCluster: "kvbench serve --cluster-config --cluster-id" serves on
// the node's port from the file and redirects the keys of other nodes.
func TestServeCluster(t *testing.T) {
	port := freePort(t)
	path := writeFile(t, "cluster.yaml", strings.ReplaceAll(clusterYAML, "%A", port))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		code, _, _ := executeCtx(ctx, "serve", "--cluster-config", path, "--cluster-id", "node-a")
		done <- code
	}()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, DialTimeout: time.Second})
	defer rdb.Close()
	var err error
	for range 100 {
		if err = rdb.Ping(ctx).Err(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if id, err := rdb.ClusterMyID(ctx).Result(); err != nil || id != "node-a" {
		t.Errorf("CLUSTER MYID = %q, %v", id, err)
	}
	// "foo" is in slot 12182, node-c's.
	if err := rdb.Get(ctx, "foo").Err(); err == nil || err.Error() != "MOVED 12182 127.0.0.1:7003" {
		t.Errorf("GET foo on node-a: %v, want MOVED 12182 127.0.0.1:7003", err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// freePort returns a loopback port that was free a moment ago: the
// configuration file must name the port before serve binds it.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func executeCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(ctx, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}
