package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunRestartedAttach: an attached server restarted in the middle of a
// measurement (as a supervisor restarts a crashed server) fails the
// attempt with the restart as its reason, and the round is measured again
// on the server that came back.
func TestRunRestartedAttach(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	cfg := filepath.Join(t.TempDir(), "attach.yaml")
	yaml := fmt.Sprintf("targets:\n  - name: remote\n    kind: attach\n    addr: %s\n    baseline: as_configured\n    strategies: [as_configured]\n", r.Addr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		once  sync.Once
		again *exec.Cmd
		done  = make(chan error, 1)
	)
	t.Cleanup(func() {
		if again != nil {
			_ = syscall.Kill(-again.Process.Pid, syscall.SIGKILL)
			_ = again.Wait()
		}
	})
	o := runOptions(t)
	o.ConfigFile, o.Rounds, o.Retries, o.Modes = cfg, 1, 1, []string{"set"}
	o.Requests, o.Keyspace, o.Pipeline = 50_000_000, 1_000_000, 16 // far longer than the restart
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Observe = func(e Event) {
		if e.Attempt == 2 && e.Kind == EventStart {
			cancel() // the retry is all this test needs to see begin
			return
		}
		if e.Kind != EventProgress || e.Attempt != 1 || e.Progress.Done == 0 {
			return
		}
		once.Do(func() {
			// The old server dies, a new one takes its port.
			if err := r.Kill(); err != nil {
				done <- err
				return
			}
			again = exec.Command(testutil.RequireRedisServer(t), "--port", port, "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--dir", t.TempDir())
			again.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			done <- again.Start()
		})
	}
	o.ProgressInterval = 50 * time.Millisecond
	go func() {
		if err := <-done; err != nil {
			t.Errorf("restart: %v", err)
		}
	}()
	res, _, _, _ := runQuiet(t, ctx, o)
	rows := readDetail(t, res)
	if len(rows) == 0 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, "restarted during the measurement") {
		t.Fatalf("rows %+v: want a first attempt failed by the restart", rows)
	}
	if len(rows) < 2 || rows[1].Attempt != 2 {
		t.Errorf("rows %+v: want the round retried", rows)
	}
}

// TestRunRestartedCommand: a command target whose server restarts itself
// in the middle of the measurement (a wrapper that kills and starts
// redis-server again on the same port, once per test) fails the attempt
// with the restart as its reason, and the round is retried.
func TestRunRestartedCommand(t *testing.T) {
	redisBin := testutil.RequireRedisServer(t)
	marker := filepath.Join(t.TempDir(), "restarted")
	script := `args="$*"
redis-server $args &
if [ -e "$MARKER" ]; then wait; exit; fi
touch "$MARKER"
sleep 2
kill -9 $!
wait
exec redis-server $args`
	cfg := filepath.Join(t.TempDir(), "restart.yaml")
	yaml := fmt.Sprintf(`targets:
  - name: flaky
    kind: command
    command: ["env", "MARKER=%s", "PATH=%s:/usr/bin:/bin", "sh", "-c", %q, "flaky", "--port", "{port}", "--dir", "{dir}", "--bind", "127.0.0.1", "--daemonize", "no"]
    baseline: none
    strategies:
      none: ["--save", "", "--appendonly", "no"]
`, marker, filepath.Dir(redisBin), script)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := runOptions(t)
	o.ConfigFile, o.Rounds, o.Retries, o.Modes = cfg, 1, 1, []string{"set"}
	o.Requests, o.Keyspace, o.Pipeline = 50_000_000, 1_000_000, 16 // far longer than the restart
	o.Observe = func(e Event) {
		if e.Attempt == 2 && e.Kind == EventStart {
			cancel() // the retry is all this test needs to see begin
		}
	}
	res, _, _, _ := runQuiet(t, ctx, o)
	rows := readDetail(t, res)
	if len(rows) == 0 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, "restarted during the measurement") {
		t.Fatalf("rows %+v: want a first attempt failed by the restart", rows)
	}
	if len(rows) < 2 || rows[1].Attempt != 2 {
		t.Errorf("rows %+v: want the round retried", rows)
	}
}
