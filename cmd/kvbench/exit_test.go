package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/testutil"
)

// kvbench runs the binary to its end and returns its exit status and
// outputs.
func kvbench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(kvbenchBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestBenchInterrupted: Ctrl-C during a bench run prints the report of
// what was done, then one sentence, and exits 130 as every command does.
func TestBenchInterrupted(t *testing.T) {
	srv := startServe(t)
	var out, errOut testutil.SyncBuffer
	cmd := exec.Command(kvbenchBin, "bench", "--port", srv.port, "--mode", "set", "--set-cmd", "SET", "--duration", "60s")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	// Interrupt once the load is on: the server has counted some writes.
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	for deadline := time.Now().Add(time.Minute); ; {
		if n, _ := rdb.DBSize(context.Background()).Result(); n > 1000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bench run wrote nothing within a minute\nstderr:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
		done <- err
	case <-time.After(time.Minute): // a bound on a failure, not a figure
		t.Fatal("bench still running a minute after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Errorf("exit %v, want status %d\nstderr:\n%s", err, cli.ExitInterrupted, errOut.String())
	}
	stderr := errOut.String()
	if strings.Contains(stderr, "context canceled") || !strings.Contains(stderr, "kvbench: interrupted: the load stopped before its end") {
		t.Errorf("stderr does not say it was interrupted, in words:\n%s", stderr)
	}
	if !strings.Contains(out.String(), "QPS: ") {
		t.Errorf("no report of the requests done:\n%s", out.String())
	}
}

// TestUsageMessages: a bad port is a usage error naming the flag and its
// range; a bad mode is one error, not two.
func TestUsageMessages(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		want     string
		mustNot  []string
		wantCode int
	}{
		{[]string{"bench", "--port", "70000"}, "kvbench: --port 70000: want a TCP port from 1 to 65535", []string{"strconv", "ParseUint"}, 2},
		{[]string{"bench", "--port", "0"}, "kvbench: --port 0: want a TCP port from 1 to 65535", nil, 2},
		{[]string{"run", "--modes", "sett", "--dry-run"}, `kvbench: invalid option: mode "sett": want set, get, mixed or recovery`, []string{"no mode given"}, 2},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := kvbench(t, tt.args...)
			if code != tt.wantCode || strings.TrimSpace(stderr) != tt.want {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.wantCode, tt.want)
			}
			for _, bad := range tt.mustNot {
				if strings.Contains(stderr, bad) {
					t.Errorf("stderr holds %q: %s", bad, stderr)
				}
			}
		})
	}
}

// TestReportListsEveryError: report lists every bad line of its CSVs,
// each with file:line and column, then exits 1 as docs/report.md says.
func TestReportListsEveryError(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "report", "seed000", "redis_detail.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	setCol := func(i, col int, v string) {
		f := strings.Split(lines[i], ",")
		f[col] = v
		lines[i] = strings.Join(f, ",")
	}
	setCol(3, 18, "abc") // line 4: qps
	lines[7] += ",extra" // line 8: a field too many
	setCol(9, 7, "zz")   // line 10: round
	setCol(13, 18, "-5") // line 14: an ok row's qps
	file := filepath.Join(t.TempDir(), "bad_detail.csv")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kvbench(t, "report", file)
	want := "kvbench: " + file + `:4: column qps: "abc" is not a number` + "\n" +
		file + ":8: not CSV: 32 fields, the header has 31\n" +
		file + `:10: column round: "zz" is not an integer` + "\n" +
		file + ":14: column qps: bad value: an ok row needs a positive QPS, got -5\n"
	if code != 1 || stderr != want || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr\n%s\nwant exit 1 and\n%s", code, stdout, stderr, want)
	}
}

// TestVersionOfPlainBuild: a binary built by "go build" in the checkout,
// without make's link flags, reports the commit the toolchain recorded;
// one built with VCS stamping off says so and how to get it, instead of
// a bare "unknown".
func TestVersionOfPlainBuild(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		vcs, want string
	}{{"true", "(commit "}, {"false", "note: this binary carries no commit"}} {
		bin := filepath.Join(dir, "kvbench-vcs-"+c.vcs)
		build := exec.Command("go", "build", "-buildvcs="+c.vcs, "-o", bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build -buildvcs=%s: %v\n%s", c.vcs, err, out)
		}
		if info, _ := exec.Command("go", "version", "-m", bin).Output(); c.vcs == "true" && !strings.Contains(string(info), "vcs.revision") {
			t.Logf("the toolchain recorded no commit here (a git worktree?): %s", "go version -m shows no vcs.revision")
			continue
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("-buildvcs=%s: kvbench version = %q, %v; want %q", c.vcs, out, err, c.want)
		}
		if c.vcs == "true" && strings.Contains(string(out), "unknown") {
			t.Errorf("-buildvcs=true: kvbench version = %q, want the commit", out)
		}
	}
}
