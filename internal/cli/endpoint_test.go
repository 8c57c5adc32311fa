package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/internal/testutil"
)

// benchOptionsOf parses args as bench's flags and returns the options,
// without running anything.
func benchOptionsOf(t *testing.T, args ...string) *benchOptions {
	t.Helper()
	var got *benchOptions
	cmd := newBenchCmd(func(_ context.Context, o *benchOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench %s: %v", strings.Join(args, " "), err)
	}
	return got
}

// TestBenchEndpointOptions: --uri, --socket, --user and --db reach the
// load generator's Config.
func TestBenchEndpointOptions(t *testing.T) {
	t.Setenv(PasswordEnv, "from-env")
	for _, tc := range []struct {
		args                 []string
		addr, user, password string
		db                   int
		tls                  bool
	}{
		{[]string{"--uri", "redis://bench:pw@10.0.0.1:7000/3"}, "10.0.0.1:7000", "bench", "pw", 3, false},
		{[]string{"-u", "redis://127.0.0.1"}, "127.0.0.1:6379", "", "from-env", 0, false},
		{[]string{"--uri", "rediss://:pw@127.0.0.1:6380", "--insecure"}, "127.0.0.1:6380", "", "pw", 0, true},
		{[]string{"--uri", "unix:///run/redis.sock?db=2"}, "unix:/run/redis.sock", "", "from-env", 2, false},
		{[]string{"--socket", "/run/redis.sock", "--user", "bench", "--db", "5"}, "unix:/run/redis.sock", "bench", "from-env", 5, false},
		{[]string{"-s", "/run/redis.sock"}, "unix:/run/redis.sock", "", "from-env", 0, false},
		{[]string{"--port", "7001", "--user", "bench", "--password", "pw", "--db", "1"}, "127.0.0.1:7001", "bench", "pw", 1, false},
	} {
		c := benchOptionsOf(t, tc.args...).Config
		if c.Addr != tc.addr || c.User != tc.user || c.Password != tc.password || c.DB != tc.db || (c.TLS != nil) != tc.tls {
			t.Errorf("bench %s: addr %q user %q password %q db %d tls %v; want %q %q %q %d %v", strings.Join(tc.args, " "),
				c.Addr, c.User, c.Password, c.DB, c.TLS != nil, tc.addr, tc.user, tc.password, tc.db, tc.tls)
		}
	}
}

// TestBenchEndpointUsageErrors: flags that say twice how to reach the
// server, and bad URIs, are usage errors naming the flags.
func TestBenchEndpointUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--uri", "redis://127.0.0.1", "--host", "10.0.0.1"}, "--uri and --host cannot be used together"},
		{[]string{"--uri", "redis://127.0.0.1", "--port", "7000"}, "--uri and --port"},
		{[]string{"--uri", "redis://127.0.0.1", "--password", "x"}, "--uri and --password"},
		{[]string{"--uri", "redis://127.0.0.1", "--db", "2"}, "--uri and --db"},
		{[]string{"--uri", "redis://127.0.0.1", "--user", "u"}, "--uri and --user"},
		{[]string{"--uri", "redis://127.0.0.1", "--socket", "/s"}, "--uri and --socket"},
		{[]string{"--socket", "/s", "--port", "7000"}, "--socket and --port"},
		{[]string{"--socket", "/s", "--tls"}, "--tls needs a TCP server"},
		{[]string{"--uri", "redis://127.0.0.1", "--tls"}, "use rediss://"},
		{[]string{"--uri", "http://127.0.0.1"}, `--uri "http://127.0.0.1": want a redis://`},
		{[]string{"--uri", "redis://127.0.0.1/x"}, `database "x"`},
		{[]string{"--db", "-1"}, "--db -1"},
		{[]string{"--db", "2", "--cluster"}, "--db 2: a Redis Cluster has only database 0"},
		{[]string{"--port", "0"}, "--port 0"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench bench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestBenchReachesServer runs bench against a redis-server with an ACL
// user and a Unix socket, in database 3, reached each way; and fails
// naming the problem when the password is wrong, the socket missing or
// the database unknown.
func TestBenchReachesServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "redis.sock")
	r := testutil.StartRedis(t, "--unixsocket", sock, "--unixsocketperm", "700",
		"--user", "bench", "on", ">s3cret", "~*", "&*", "+@all")
	_, port, _ := strings.Cut(r.Addr, ":")
	ctx := context.Background()
	dbSize := func(db int) int64 {
		c := redis.NewClient(&redis.Options{Addr: r.Addr, Username: "bench", Password: "s3cret", DB: db, Protocol: 2, DisableIdentity: true})
		defer c.Close()
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatalf("DBSIZE of db %d: %v", db, err)
		}
		return n
	}
	flush := redis.NewClient(&redis.Options{Addr: r.Addr, Username: "bench", Password: "s3cret", Protocol: 2, DisableIdentity: true})
	defer flush.Close()
	run := []string{"--mode", "set", "--requests", "300", "--keyspace", "300", "--connections", "2", "--output", "json"}
	for _, how := range [][]string{
		{"--socket", sock, "--user", "bench", "--password", "s3cret", "--db", "3"},
		{"--port", port, "--user", "bench", "--password", "s3cret", "--db", "3"},
		{"--uri", "redis://bench:s3cret@127.0.0.1:" + port + "/3"},
		{"--uri", "unix://" + sock + "?db=3"}, // as the default user
	} {
		if err := flush.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"bench"}, how...), run...)
		code, _, stderr := execute(t, args...)
		if code != 0 {
			t.Fatalf("kvbench %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		if n3, n0 := dbSize(3), dbSize(0); n3 != 300 || n0 != 0 {
			t.Errorf("kvbench %s: DBSIZE %d in db 3 and %d in db 0, want 300 and 0", strings.Join(args, " "), n3, n0)
		}
	}
	for _, tc := range []struct {
		how  []string
		want string
	}{
		{[]string{"--port", port, "--user", "bench", "--password", "wrong"}, `authentication failed: the server refused user "bench" or its password`},
		{[]string{"--socket", sock + ".missing"}, "Unix socket " + sock + ".missing: no such file or directory"},
		{[]string{"--uri", "redis://bench:s3cret@127.0.0.1:" + port + "/99"}, "SELECT 99: database 99 does not exist or is refused"},
	} {
		args := append(append([]string{"bench"}, tc.how...), run...)
		code, _, stderr := execute(t, args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %s: exit %d, stderr %q; want exit 1 naming %q", strings.Join(args, " "), code, stderr, tc.want)
		}
	}
}
