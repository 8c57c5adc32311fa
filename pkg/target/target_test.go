package target

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// start starts strategy name of tg in a fresh directory.
func start(t *testing.T, tg Target, name string) (Instance, Env) {
	t.Helper()
	s, ok := tg.Desc().Strategy(name)
	if !ok {
		t.Fatalf("%s has no strategy %s", tg.Desc().Name, name)
	}
	env := Env{Dir: t.TempDir(), Tracker: &Tracker{}}
	inst, err := tg.Start(context.Background(), s, env)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return inst, env
}

// startStop starts strategy name of tg in a fresh directory, checks it
// answers, stops it and checks nothing of it is left in the process table.
func startStop(t *testing.T, tg Target, name string) Info {
	t.Helper()
	inst, env := start(t, tg, name)
	info := inst.Info()
	if err := pingAddr(info.Addr); err != nil {
		t.Errorf("%s: PING: %v", name, err)
	}
	if err := inst.Err(); err != nil {
		t.Errorf("%s: Err() on a running server: %v", name, err)
	}
	stopAndCheck(t, inst, env)
	return info
}

// stopAndCheck stops inst and checks that no process of env is left.
func stopAndCheck(t *testing.T, inst Instance, env Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := inst.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := inst.Stop(ctx); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if ps := testutil.Processes(env.Dir); len(ps) > 0 {
		testutil.KillProcesses(ps)
		t.Errorf("processes left after Stop: %+v", ps)
	}
	if n := env.Tracker.Live(); n != 0 {
		t.Errorf("tracker still has %d live groups", n)
	}
}

func pingAddr(addr string) error {
	c, err := dialControl(context.Background(), addr, creds{}, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Ping(context.Background())
}

func TestKvstoreStrategies(t *testing.T) {
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin, Alloc: AllocBoth})
	if err != nil {
		t.Fatal(err)
	}
	d := k.Desc()
	wantDefaults := []string{"persist_mypool", "everysec_mypool", "nopersist_mypool", "persist_malloc", "everysec_malloc", "nopersist_malloc"}
	if !slices.Equal(d.Defaults, wantDefaults) {
		t.Errorf("defaults with alloc both: %v, want %v", d.Defaults, wantDefaults)
	}
	tests := []struct {
		strategy, persistence, alloc, config string
	}{
		{"nopersist_mypool", "none", "mypool", `save=;appendonly=no;appendfsync=everysec;kvstore-persist=none;kvstore-alloc=pool`},
		{"persist_malloc", "no", "malloc", `save=;appendonly=yes;appendfsync=no;kvstore-persist=no;kvstore-alloc=go`},
		{"everysec_mypool", "everysec", "mypool", `save=;appendonly=yes;appendfsync=everysec;kvstore-persist=everysec;kvstore-alloc=pool`},
		{"always_malloc", "always", "malloc", `save=;appendonly=yes;appendfsync=always;kvstore-persist=always;kvstore-alloc=go`},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			s, _ := d.Strategy(tt.strategy)
			if s.Persistence != tt.persistence || s.Alloc != tt.alloc {
				t.Errorf("persistence %q alloc %q, want %q %q", s.Persistence, s.Alloc, tt.persistence, tt.alloc)
			}
			info := startStop(t, k, tt.strategy)
			if info.Config != tt.config {
				t.Errorf("config %s\nwant   %s", info.Config, tt.config)
			}
			if info.Version == "" || info.Version == "7.0.0" {
				t.Errorf("version %q: want kvstore_version", info.Version)
			}
			if info.PID == 0 {
				t.Error("no PID")
			}
		})
	}
}

func TestKvstoreAliasSelect(t *testing.T) {
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin, Alloc: AllocBoth})
	if err != nil {
		t.Fatal(err)
	}
	sel, unknown := k.Desc().Select([]string{"nopersist", "always_go", "persist_always"})
	var names []string
	for _, s := range sel {
		names = append(names, s.Name)
	}
	if want := []string{"always_mypool", "nopersist_mypool", "always_malloc", "nopersist_malloc"}; !slices.Equal(names, want) {
		t.Errorf("selected %v, want %v", names, want)
	}
	if !slices.Equal(unknown, []string{"always_go"}) {
		t.Errorf("unknown %v", unknown)
	}
}

func TestKvstorePreferredPort(t *testing.T) {
	// The preferred port taken by someone else: any free port instead.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin, Port: taken})
	if err != nil {
		t.Fatal(err)
	}
	info := startStop(t, k, "nopersist")
	if strings.HasSuffix(info.Addr, ":"+strconv.Itoa(taken)) {
		t.Errorf("started on the taken port %d", taken)
	}

	// The preferred port free: used.
	free, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	k, err = NewKvstore(KvstoreConfig{Bin: kvbenchBin, Port: free})
	if err != nil {
		t.Fatal(err)
	}
	if info := startStop(t, k, "persist_no"); info.Addr != "127.0.0.1:"+strconv.Itoa(free) {
		t.Errorf("addr %s, want the preferred port %d", info.Addr, free)
	}
}

func TestRedisStrategies(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	r, err := NewRedis(RedisConfig{Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(DefaultRedisStrategies); !slices.Equal(r.Desc().Defaults, want) {
		t.Errorf("defaults %v, want %v", r.Desc().Defaults, want)
	}
	tests := []struct{ strategy, config string }{
		{"none", `save=;appendonly=no;appendfsync=everysec`},
		{"rdb_default", `save=3600 1 300 100 60 10000;appendonly=no;appendfsync=everysec`},
		{"aof_no", `save=;appendonly=yes;appendfsync=no`},
		{"aof_everysec", `save=;appendonly=yes;appendfsync=everysec`},
		{"aof_always", `save=;appendonly=yes;appendfsync=always`},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			info := startStop(t, r, tt.strategy)
			if info.Config != tt.config {
				t.Errorf("config %s\nwant   %s", info.Config, tt.config)
			}
			if !strings.HasPrefix(info.Version, "7.") && !strings.HasPrefix(info.Version, "6.") && info.Version == "" {
				t.Errorf("version %q", info.Version)
			}
		})
	}
}

func TestRedisNotFound(t *testing.T) {
	_, err := NewRedis(RedisConfig{Bin: "/nonexistent/redis-server"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err %v, want ErrNotFound", err)
	}
}

func TestCommandRedis(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	c, err := NewCommand(CommandConfig{
		Name:     "valkeyish",
		Command:  []string{bin, "--port", "{port}", "--dir", "{dir}", "--bind", "127.0.0.1"},
		Baseline: "none",
		Strategies: []Strategy{
			{Name: "none", Args: []string{"--save", "", "--appendonly", "no"}},
			{Name: "aof_everysec", Args: []string{"--appendonly", "yes", "--appendfsync", "everysec"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Desc()
	none, _ := d.Strategy("none")
	aof, _ := d.Strategy("aof_everysec")
	if none.Persistence != "none" || aof.Persistence != "everysec" {
		t.Errorf("persistence none=%q aof_everysec=%q", none.Persistence, aof.Persistence)
	}
	if aof.Expect["appendonly"] != "yes" || aof.Expect["appendfsync"] != "everysec" {
		t.Errorf("derived expectations %v", aof.Expect)
	}
	// No --save: Redis's default rules, recorded but not checked.
	if info := startStop(t, c, "aof_everysec"); !strings.HasSuffix(info.Config, `;appendonly=yes;appendfsync=everysec`) {
		t.Errorf("config %s", info.Config)
	}
}

// failedStart runs a Start expected to fail and checks that it leaves no
// process behind.
func failedStart(t *testing.T, tg Target, name string, env Env) error {
	t.Helper()
	s, _ := tg.Desc().Strategy(name)
	if env.Dir == "" {
		env.Dir = t.TempDir()
	}
	env.Tracker = &Tracker{}
	inst, err := tg.Start(context.Background(), s, env)
	if err == nil {
		stopAndCheck(t, inst, env)
		t.Fatalf("start %s succeeded", name)
	}
	if ps := testutil.Processes(env.Dir); len(ps) > 0 {
		testutil.KillProcesses(ps)
		t.Errorf("processes left after a failed start: %+v", ps)
	}
	if n := env.Tracker.Live(); n != 0 {
		t.Errorf("tracker still has %d live groups", n)
	}
	return err
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		cfg     CommandConfig
		timeout time.Duration
		want    error
		wantMsg string
	}{
		{
			name: "exits before ready",
			cfg: CommandConfig{Command: []string{"sh", "-c", "echo starting; echo boom >&2; exit 3", "{port}"},
				Strategies: []Strategy{{Name: "s"}}},
			want: ErrExited, wantMsg: "boom",
		},
		{
			name: "never answers",
			cfg: CommandConfig{Command: []string{"sleep", "30", "{port}"},
				Strategies: []Strategy{{Name: "s"}}},
			timeout: 300 * time.Millisecond, want: ErrNotReady,
		},
		{
			name: "config differs",
			cfg: CommandConfig{Command: fakeCommand("plain"),
				Strategies: []Strategy{{Name: "s", Expect: map[string]string{"appendonly": "yes"}}}},
			want: ErrConfigMismatch, wantMsg: `appendonly: want "yes", have "fake"`,
		},
		{
			name: "not our process",
			cfg: CommandConfig{Command: fakeCommand("foreign"),
				Strategies: []Strategy{{Name: "s"}}},
			want: ErrNotOurs,
		},
		{
			name: "not found",
			cfg: CommandConfig{Command: []string{"/nonexistent/server", "{port}"},
				Strategies: []Strategy{{Name: "s"}}},
			want: ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Name = "fake"
			c, err := NewCommand(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = failedStart(t, c, "s", Env{ReadyTimeout: tt.timeout})
			if !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	c, err := NewCommand(CommandConfig{Name: "stubborn", Command: fakeCommand("ignore-term"), Strategies: []Strategy{{Name: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Desc().Strategy("s")
	env := Env{Dir: t.TempDir(), Tracker: &Tracker{}}
	inst, err := c.Start(context.Background(), s, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// The grace period is waited for (a floor, which load cannot break);
	// the SIGKILL after it shows in Err.
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("stop took %v: want the grace period, then SIGKILL", d)
	}
	if err := inst.Err(); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Err() after stop: %v", err)
	}
	stopAndCheck(t, inst, env)
}

// TestStopDiscards: a kvstore or redis instance is killed at once, its
// files about to be deleted (redis under rdb_default saves no snapshot of
// the key it holds); a command instance gets SIGTERM.
func TestStopDiscards(t *testing.T) {
	tests := []struct {
		name     string
		target   func(t *testing.T) (Target, error)
		strategy string
		exit     string
	}{
		{"kvstore", func(*testing.T) (Target, error) { return NewKvstore(KvstoreConfig{Bin: kvbenchBin}) }, "persist_no", "signal: killed"},
		{"redis", func(t *testing.T) (Target, error) {
			return NewRedis(RedisConfig{Bin: testutil.RequireRedisServer(t)})
		}, "rdb_default", "signal: killed"},
		{"command", func(*testing.T) (Target, error) {
			return NewCommand(CommandConfig{Name: "plain", Command: fakeCommand("plain"), Strategies: []Strategy{{Name: "s"}}})
		}, "s", "signal: terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := tt.target(t)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := tg.Desc().Strategy(tt.strategy)
			env := Env{Dir: t.TempDir(), Tracker: &Tracker{}}
			inst, err := tg.Start(context.Background(), s, env)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Desc().Kind != KindCommand {
				c, err := dialControl(context.Background(), inst.Info().Addr, creds{}, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Do(context.Background(), "SET", "k", "v")
				c.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			stopAndCheck(t, inst, env)
			if err := inst.Err(); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), tt.exit) {
				t.Errorf("Err() after Stop = %v, want %q", err, tt.exit)
			}
			if _, err := os.Stat(filepath.Join(env.Dir, "dump.rdb")); err == nil {
				t.Error("the server saved dump.rdb on its way out")
			}
		})
	}
}

func TestServerDiesIsReported(t *testing.T) {
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, k, "nopersist")
	env.Tracker.KillAll()
	select {
	case <-inst.Exited():
	case <-time.After(time.Minute): // a bound on a failure, not a figure
	}
	err = inst.Err()
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "ready to accept connections") {
		t.Errorf("Err() = %v: want ErrExited quoting the log", err)
	}
	stopAndCheck(t, inst, env)
}

func TestAttach(t *testing.T) {
	r := testutil.StartRedis(t)
	c, err := dialControl(context.Background(), r.Addr, creds{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(args ...string) any {
		t.Helper()
		v, err := c.Do(context.Background(), args...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	newAttach := func(allow bool) *Attach {
		a, err := NewAttach(AttachConfig{Name: "remote", Addr: r.Addr, Baseline: "as_is", AllowFlush: allow,
			Strategies: []Strategy{{Name: "as_is"}, {Name: "checked", Expect: map[string]string{"appendonly": "no"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// start starts strategy name of a with key k set (or not), and checks
	// the server is empty after and whether Start said it flushed.
	start := func(a *Attach, name string, setKey, wantFlushed bool) {
		t.Helper()
		if setKey {
			do("SET", "k", "v")
		}
		s, _ := a.Desc().Strategy(name)
		inst, err := a.Start(context.Background(), s, Env{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := do("DBSIZE"); n != int64(0) {
			t.Errorf("%s: DBSIZE after Start = %v: want 0 (flushed)", name, n)
		}
		if got := inst.Info().Flushed; got != wantFlushed {
			t.Errorf("%s: Flushed %v, want %v", name, got, wantFlushed)
		}
		if err := inst.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if err := pingAddr(r.Addr); err != nil {
			t.Errorf("the attached server stopped: %v", err)
		}
	}

	// Not allowed: a server holding a key is refused before the first
	// attempt, and keeps it; once empty, it is started, and the keys of
	// the attempt before are deleted.
	a := newAttach(false)
	do("SET", "k", "v")
	s, _ := a.Desc().Strategy("as_is")
	_, err = a.Start(context.Background(), s, Env{})
	want := "remote: server not empty: " + r.Addr + " holds 1 key; kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target"
	if !errors.Is(err, ErrNotEmpty) || err.Error() != want {
		t.Fatalf("err %v\nwant ErrNotEmpty: %s", err, want)
	}
	if n := do("DBSIZE"); n != int64(1) {
		t.Errorf("DBSIZE after the refusal = %v: want the key kept", n)
	}
	do("DEL", "k")
	start(a, "as_is", false, false)
	start(a, "checked", true, false)

	// Allowed: the first Start deletes the key, and says so.
	a = newAttach(true)
	start(a, "as_is", true, true)
	start(a, "checked", true, false)

	s, _ = a.Desc().Strategy("as_is")
	if s.Persistence != "none" {
		t.Errorf("baseline persistence %q", s.Persistence)
	}

	// Without FLUSHALL (renamed away), the server is measured as it is,
	// and its notes say it was not emptied and what to do instead.
	r2 := testutil.StartRedis(t, "--rename-command", "FLUSHALL", "")
	a2, err := NewAttach(AttachConfig{Name: "locked", Addr: r2.Addr})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = a2.Desc().Strategy("default")
	if inst, err := a2.Start(context.Background(), s, Env{}); err != nil || !slices.Contains(inst.Info().Notes, NoteNoFlush) || inst.Info().Flushed {
		t.Errorf("Start without FLUSHALL: %v: want the note %q", err, NoteNoFlush)
	}
}

func TestLogTail(t *testing.T) {
	var seen []string
	l := newLogTail(func(line string) bool {
		seen = append(seen, line)
		return strings.HasPrefix(line, "ready")
	})
	for _, chunk := range []string{"one\ntw", "o\r\nready now\n", "after\n", "last"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"one", "two\r", "ready now"}; !slices.Equal(seen, want) {
		t.Errorf("watched %q, want %q", seen, want)
	}
	if got, want := l.Tail(2), []string{"after", "last"}; !slices.Equal(got, want) {
		t.Errorf("tail %q, want %q", got, want)
	}
	l.max = 8
	_, _ = l.Write([]byte("0123456789\nabc"))
	if got := l.Tail(5); !slices.Equal(got, []string{"6789", "abc"}) {
		t.Errorf("tail after trimming %q", got)
	}
}

func TestRedisOddDirectory(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	r, err := NewRedis(RedisConfig{Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), `a b "c" \d é`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, _ := r.Desc().Strategy("aof_everysec")
	env := Env{Dir: dir, Tracker: &Tracker{}}
	inst, err := r.Start(context.Background(), s, env)
	if err != nil {
		t.Fatal(err)
	}
	stopAndCheck(t, inst, env)
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); err != nil {
		t.Errorf("the AOF is not in the instance directory: %v", err)
	}
}
