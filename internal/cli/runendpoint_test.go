package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/redis/go-redis/v9"
)

// aclRedis starts a redis-server whose default user needs another
// password than alice's: a connection that does not name alice is
// refused. Extra arguments follow.
func aclRedis(t *testing.T, args ...string) *testutil.Redis {
	return testutil.StartRedis(t, append([]string{"--requirepass", "not-alice", "--user", "alice", "on", ">alicepw", "~*", "&*", "+@all"}, args...)...)
}

// dbSizes returns the keys of databases 0 to 15 of the server at addr
// (or unix socket), as alice.
func dbSizes(t *testing.T, network, addr string) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	for db := range 16 {
		c := redis.NewClient(&redis.Options{Network: network, Addr: addr, Username: "alice", Password: "alicepw", DB: db, Protocol: 2, DisableIdentity: true})
		n, err := c.DBSize(context.Background()).Result()
		c.Close()
		if err != nil {
			t.Fatalf("DBSIZE of db %d: %v", db, err)
		}
		if n > 0 {
			out[db] = n
		}
	}
	return out
}

// TestRunAttachUserDBSocket: run measures attach targets that need an ACL
// user (from --user), in a database (db: 3 in the file, 5 from --db), one
// by TCP and one by its Unix socket: the load, the prefill and the
// checks all reach them, and the keys land in those databases only.
func TestRunAttachUserDBSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "redis.sock")
	tcp := aclRedis(t)
	aclRedis(t, "--unixsocket", sock, "--unixsocketperm", "700")
	cfg := filepath.Join(t.TempDir(), "attach.yaml")
	y := fmt.Sprintf(`targets:
  - name: acl-tcp
    kind: attach
    addr: %s
    password: alicepw
    db: 3
  - name: acl-socket
    kind: attach
    socket: %s
    password: alicepw
`, tcp.Addr, sock)
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := execute(t, "run", "--config", cfg, "--user", "alice", "--db", "5", "--modes", "set,get", "--rounds", "1",
		"--requests", "3000", "--keyspace", "2000", "--chart", "none", "--estimate", "fixed", "--out", t.TempDir(), "--tmpdir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		network, addr string
		db            int
	}{{"tcp", tcp.Addr, 3}, {"unix", sock, 5}} {
		sizes := dbSizes(t, tc.network, tc.addr)
		if len(sizes) != 1 || sizes[tc.db] != 2000 {
			t.Errorf("%s: keys by database %v; want 2000 in db %d alone (the get attempt's prefill)", tc.addr, sizes, tc.db)
		}
	}
	if !strings.Contains(stdout+stderr, "acl-socket") || !strings.Contains(stdout+stderr, "acl-tcp") {
		t.Errorf("the report names neither target:\n%s\n%s", stdout, stderr)
	}
}

// TestRunEndpointUsageErrors: a --user, --db or --resp3 no target of the
// run can take, and a bad --db, are usage errors naming the flag or the
// target.
func TestRunEndpointUsageErrors(t *testing.T) {
	resp2File := filepath.Join(t.TempDir(), "resp2.yaml")
	if err := os.WriteFile(resp2File, []byte("targets:\n  - {name: kv, kind: kvstore, resp3: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--targets", "kvstore", "--user", "alice"}, "--user alice: no target of the run takes it"},
		{[]string{"--targets", "kvstore", "--db", "2"}, "--db 2: no target of the run takes it"},
		{[]string{"--targets", "kvstore", "--db", "-1"}, "--db -1: want a database number >= 0"},
		{[]string{"--targets", "kvstore", "--resp3"}, "target kvstore: the kvstore speaks RESP2 only and cannot be measured over RESP3"},
		{[]string{"--targets", "redis,kvstore-cluster", "--resp3"}, "target kvstore-cluster: the kvstore speaks RESP2 only"},
		{[]string{"--config", resp2File, "--resp3"}, "--resp3: no target of the run takes it: every one says resp3: false (kv)"},
	} {
		args := append([]string{"run", "--dry-run", "--estimate", "fixed", "--out", t.TempDir()}, tc.args...)
		code, _, stderr := execute(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestLoadJSONEndpointRoundTrip: an agent reaches a target as run does:
// by its Unix socket, as its ACL user, in its database.
func TestLoadJSONEndpointRoundTrip(t *testing.T) {
	for _, addr := range []string{"unix:/run/redis/redis.sock", "10.1.2.3:7001"} {
		want, err := loadgen.Config{Addr: addr, User: "alice", DB: 4, Mode: loadgen.ModeGet, SetCmd: "SET", GetCmd: "GET", ProgressInterval: time.Second, Load: loadgen.Load{Requests: 100, Pipeline: 1, Connections: 2, Threads: 1, Keyspace: 100}}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		got, args := agentBench(t, want, tlsconf.Options{})
		if c := got.Config; c.Addr != addr || c.User != "alice" || c.DB != 4 {
			t.Errorf("bench %q: addr %q user %q db %d; want %q alice 4", args, c.Addr, c.User, c.DB, addr)
		}
	}
}
