package loadgen

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/redis/go-redis/v9"
)

// aclServer is a redis-server with a Unix socket and an ACL user bench
// whose password is s3cret; the default user is off.
type aclServer struct {
	addr, socket string
}

func startACLRedis(t *testing.T) aclServer {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "redis.sock")
	r := testutil.StartRedis(t, "--unixsocket", sock, "--unixsocketperm", "700",
		"--user", "bench", "on", ">s3cret", "~*", "&*", "+@all",
		"--user", "probe", "on", "nopass", "+ping")
	return aclServer{addr: r.Addr, socket: sock}
}

// dbSize returns DBSIZE of database db, as user bench.
func (s aclServer) dbSize(t *testing.T, db int) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr, Username: "bench", Password: "s3cret", DB: db, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatalf("DBSIZE of db %d: %v", db, err)
	}
	return n
}

// TestUnixSocketUserAndDB runs a prefill and a set run over a Unix
// socket as an ACL user in database 3: the keys land there, and database
// 0 stays empty.
func TestUnixSocketUserAndDB(t *testing.T) {
	s := startACLRedis(t)
	for _, addr := range []string{control.SocketPrefix + s.socket, s.addr} {
		t.Run(addr, func(t *testing.T) {
			cfg := fill(Config{Addr: addr, User: "bench", Password: "s3cret", DB: 3, Mode: ModeSet, Load: Load{Keyspace: 200, Requests: 200, Connections: 3, Threads: 2, Pipeline: 16}})
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: s.addr, Username: "bench", Password: "s3cret", Protocol: 2, DisableIdentity: true})
			defer c.Close()
			if err := c.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := Prefill(ctx, cfg); err != nil {
				t.Fatalf("Prefill: %v", err)
			}
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Requests != 200 {
				t.Errorf("requests = %d, want 200", res.Requests)
			}
			if n := s.dbSize(t, 3); n != 200 {
				t.Errorf("DBSIZE of db 3 = %d, want 200", n)
			}
			if n := s.dbSize(t, 0); n != 0 {
				t.Errorf("DBSIZE of db 0 = %d, want 0", n)
			}
			// The checks run over the control connections, which select
			// the same database.
			cfg.Mode, cfg.VerifyGet = ModeGet, true
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatalf("verified get run in db 3: %v", err)
			}
		})
	}
}

// TestEndpointErrors: each way of not reaching the server names what is
// wrong.
func TestEndpointErrors(t *testing.T) {
	s := startACLRedis(t)
	missing := filepath.Join(t.TempDir(), "none.sock")
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
		is   error
	}{
		{"wrong password", Config{Addr: s.addr, User: "bench", Password: "wrong"}, []string{`user "bench"`, "WRONGPASS"}, control.ErrAuth},
		{"wrong password over the socket", Config{Addr: control.SocketPrefix + s.socket, User: "bench", Password: "wrong"}, []string{`user "bench"`}, control.ErrAuth},
		{"unknown user", Config{Addr: s.addr, User: "nobody", Password: "x"}, []string{`user "nobody"`}, control.ErrAuth},
		{"missing socket", Config{Addr: control.SocketPrefix + missing}, []string{"Unix socket " + missing, "no such file"}, nil},
		{"unknown database", Config{Addr: s.addr, User: "bench", Password: "s3cret", DB: 99}, []string{"SELECT 99", "database 99", "out of range"}, nil},
		{"database refused", Config{Addr: s.addr, User: "probe", DB: 1}, []string{"SELECT", "NOPERM"}, control.ErrAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Mode, tc.cfg.Requests = ModeSet, 10
			_, err := Run(context.Background(), fill(tc.cfg))
			if err == nil {
				t.Fatal("Run succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

func TestEndpointConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{DB: -1}, "database -1"},
		{Config{DB: 2, Cluster: true}, "only database 0"},
		{Config{Addr: "unix:/tmp/x.sock", Cluster: true}, "not a Unix socket"},
	} {
		if _, err := fill(tc.cfg).Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Normalize(%+v) = %v, want an error saying %q", tc.cfg, err, tc.want)
		}
	}
}
