package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
)

// TestKillRestart: a key written to a kvstore or redis server with a log
// is there again after Kill and Restart on the same directory, served by a
// new process.
func TestKillRestart(t *testing.T) {
	targets := []struct {
		name, strategy string
		make           func(t *testing.T) (Target, error)
	}{
		{"kvstore", "persist_no", func(*testing.T) (Target, error) { return NewKvstore(KvstoreConfig{Bin: kvbenchBin}) }},
		{"redis", "aof_no", func(t *testing.T) (Target, error) {
			return NewRedis(RedisConfig{Bin: testutil.RequireRedisServer(t)})
		}},
	}
	for _, c := range targets {
		t.Run(c.name, func(t *testing.T) {
			tg, err := c.make(t)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			inst, env := start(t, tg, c.strategy)
			if _, err := control.Query(ctx, inst.Info().Addr, control.Options{}, "SET", "k", "v"); err != nil {
				t.Fatal(err)
			}
			if err := Kill(ctx, inst); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(inst.Err(), ErrExited) {
				t.Fatalf("Err after Kill: %v, want it exited", inst.Err())
			}
			s, _ := tg.Desc().Strategy(c.strategy)
			again, err := Restart(ctx, tg, s, env)
			if err != nil {
				t.Fatal(err)
			}
			if again.Info().PID == inst.Info().PID {
				t.Errorf("the same process %d after a restart", again.Info().PID)
			}
			got, err := control.Query(ctx, again.Info().Addr, control.Options{}, "GET", "k")
			if err != nil || !strings.Contains(string(got), "v") {
				t.Errorf("GET k after the restart: %q, %v: want v", got, err)
			}
			stopAndCheck(t, again, env)
		})
	}
}

// TestRestartRefused: a target kvbench does not start, or a directory that
// is not there, cannot be restarted; a kvstore whose log is damaged does
// not come back, and the error says which server exited.
func TestRestartRefused(t *testing.T) {
	ctx := context.Background()
	cmd, err := NewCommand(CommandConfig{Name: "cmd", Command: []string{"true", "{port}"}, Strategies: []Strategy{{Name: "as_configured"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restart(ctx, cmd, cmd.Desc().Strategies[0], Env{Dir: t.TempDir()}); !errors.Is(err, ErrNoRestart) {
		t.Errorf("command target: %v, want ErrNoRestart", err)
	}
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.Desc().Strategy("persist_no")
	if _, err := Restart(ctx, k, s, Env{Dir: filepath.Join(t.TempDir(), "gone")}); err == nil {
		t.Error("restart on a missing directory: no error")
	}
	inst, env := start(t, k, "persist_no")
	if err := Kill(ctx, inst); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(env.Dir, "*.incr.aof"))
	if len(logs) == 0 {
		entries, _ := os.ReadDir(env.Dir)
		t.Fatalf("no log file in %s: %v", env.Dir, entries)
	}
	if err := os.WriteFile(logs[0], []byte("*1\r\n$3\r\nSETX\r\n*2\r\nnot a record at all\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Restart(ctx, k, s, env)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "kvstore") {
		t.Errorf("restart on a damaged log: %v, want the kvstore's exit", err)
	}
}

// TestWithExit: an error on a connection to a server that was killed
// carries the server's exit; the context's error, or one said not to be a
// lost connection, on a live server is returned as it is.
func TestWithExit(t *testing.T) {
	c, err := NewCommand(CommandConfig{Name: "fake", Command: fakeCommand("plain"), Strategies: []Strategy{{Name: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Desc().Strategy("s")
	inst, err := c.Start(context.Background(), s, Env{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	notLost := errors.New("wrong value")
	for _, e := range []error{context.Canceled, fmt.Errorf("read: %w", notLost)} {
		if got := WithExit(inst, e, notLost); got != e {
			t.Errorf("live server, %v: %v", e, got)
		}
	}
	if err := Kill(context.Background(), inst); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("connection reset")
	if got := WithExit(inst, lost); !errors.Is(got, lost) || !errors.Is(got, ErrExited) {
		t.Errorf("killed server: %v, want both the error and the exit", got)
	}
}
