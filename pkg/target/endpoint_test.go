package target

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
)

// TestRedisDB: a redis target with a database gives instances whose
// connections select it: a key written through Info.Control lands there.
func TestRedisDB(t *testing.T) {
	testutil.RequireRedisServer(t)
	r, err := NewRedis(RedisConfig{DB: 2})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, r, "none")
	defer stopAndCheck(t, inst, env)
	info := inst.Info()
	if info.DB != 2 || r.Desc().DB != 2 {
		t.Fatalf("info db %d, desc db %d; want 2", info.DB, r.Desc().DB)
	}
	if got := writeAndFind(t, info); got != "db2" {
		t.Errorf("the key landed in %q; want db2", got)
	}
}

// TestAttachUserDBSocket: an attach target entered as an ACL user, in a
// database, by TCP and by Unix socket, from a target file: Start checks
// and empties it (the second finds the first's key: the same server),
// and its Info reaches it the same way.
func TestAttachUserDBSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "redis.sock")
	r := testutil.StartRedis(t, "--unixsocket", sock, "--unixsocketperm", "700", "--requirepass", "not-alice",
		"--user", "alice", "on", ">alicepw", "~*", "&*", "+@all")
	var targets []Target
	for _, c := range []AttachConfig{
		{Name: "tcp", Addr: r.Addr, User: "alice", Password: "alicepw", DB: 4},
		{Name: "sock", Addr: control.SocketPrefix + sock, User: "alice", Password: "alicepw", DB: 6, AllowFlush: true},
	} {
		a, err := NewAttach(c)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, a)
	}
	for i, want := range []string{"db4", "db6"} {
		inst, env := start(t, targets[i], "default")
		info := inst.Info()
		if got := writeAndFind(t, info); got != want {
			t.Errorf("%s: the key landed in %q; want %s", targets[i].Desc().Name, got, want)
		}
		stopAndCheck(t, inst, env)
	}
	// Without the user, the same password is refused.
	a, err := NewAttach(AttachConfig{Name: "anon", Addr: r.Addr, Password: "alicepw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(context.Background(), Strategy{Name: "default"}, Env{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("start without the user: %v; want refused", err)
	}
}

// writeAndFind writes one key through info's control options and returns
// the only database INFO keyspace lists then.
func writeAndFind(t *testing.T, info Info) string {
	t.Helper()
	ctx := context.Background()
	c, err := control.Dial(ctx, info.Addr, info.Control(passwordOf(info)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "probe", "x"); err != nil {
		t.Fatal(err)
	}
	ks, err := c.Info(ctx, "keyspace")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 {
		t.Fatalf("INFO keyspace %v: want one database", ks)
	}
	for db := range ks {
		return db
	}
	return ""
}

// passwordOf is alice's password for the instances of the ACL tests.
func passwordOf(info Info) string {
	if info.User == "alice" {
		return "alicepw"
	}
	return ""
}
