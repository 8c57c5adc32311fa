package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// runProc is a "kvbench run" process, or another kvbench command's.
type runProc struct {
	cmd            *exec.Cmd
	stdout, stderr testutil.SyncBuffer
	done           chan struct{}
	err            error
}

// startRun starts "kvbench run args..." with env added to the environment.
func startRun(t *testing.T, env []string, args ...string) *runProc {
	t.Helper()
	return startKvbench(t, env, append([]string{"run"}, args...)...)
}

// startKvbench starts "kvbench args..." with env added to the environment.
func startKvbench(t *testing.T, env []string, args ...string) *runProc {
	t.Helper()
	p := &runProc{done: make(chan struct{})}
	p.cmd = exec.Command(kvbenchBin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	// Its own group, as a shell would start it; the servers get theirs.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// exitCode waits for the process and returns its exit status.
func (p *runProc) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		// Where it is stuck: SIGQUIT makes a Go program print every
		// goroutine's stack on stderr and exit.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("kvbench still running after %v (stacks at SIGQUIT below)\nstderr:\n%s", within, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// waitServer waits until a server of p whose command line holds dir runs
// (p's own command line may hold dir too).
func waitServer(t *testing.T, p *runProc, dir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a figure
	for !slices.ContainsFunc(testutil.Processes(dir), func(s testutil.Process) bool { return s.PPID == p.cmd.Process.Pid }) {
		select {
		case <-p.done:
			t.Fatalf("kvbench run exited before starting a server\nstderr:\n%s", p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server started\nstderr:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLoad waits until a server of dir (a process other than p) has
// spent cpu on the processor: the run is in its measurement, whatever port
// the server chose.
func waitLoad(t *testing.T, p *runProc, dir string, cpu time.Duration) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a figure
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("kvbench run exited before its measurement\nstderr:\n%s", p.stderr.String())
		default:
		}
		for _, s := range testutil.Processes(dir) {
			if s.PID != p.cmd.Process.Pid && processCPU(s.PID) >= cpu {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no server of %s used %v of CPU within a minute\nstderr:\n%s", dir, cpu, p.stderr.String())
}

// processCPU is the CPU time a process's threads have used (the first
// field of each /proc/PID/task/TID/schedstat); 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64); err == nil {
			ns += v
		}
	}
	return time.Duration(ns)
}

// waitStderr waits until p has written want to stderr.
func waitStderr(t *testing.T, p *runProc, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a figure
	for !strings.Contains(p.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr within a minute\nstderr:\n%s", want, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servers are the processes working in dir or naming it, but the
// temporary directory's watcher removing it (rm -rf --, which on a busy
// machine may still be at work when the run's servers are gone): not a
// server left running.
func servers(dir string) []testutil.Process {
	return slices.DeleteFunc(testutil.Processes(dir), func(p testutil.Process) bool { return strings.HasPrefix(p.Cmdline, "rm -rf -- ") })
}

// checkNoServers fails when a server whose command line holds dir is left.
func checkNoServers(t *testing.T, dir string) {
	t.Helper()
	if ps := servers(dir); len(ps) > 0 {
		testutil.KillProcesses(ps)
		t.Errorf("servers left running: %+v", ps)
	}
}

// readDetailCSV parses the only detail CSV in dir.
func readDetailCSV(t *testing.T, dir string) []results.Row {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "kvbench_detail_*.csv"))
	if len(files) != 1 {
		t.Fatalf("detail CSVs in %s: %v", dir, files)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatalf("the detail CSV does not parse: %v", err)
	}
	return rows
}

// longRun is a run that would take minutes: it is interrupted. Its writes
// overwrite (SET): the keyspace is smaller than the requests.
func longRun(out, tmp string) []string {
	return []string{"--targets", "kvstore", "--strategies", "persist_everysec,nopersist", "--modes", "set",
		"--rounds", "2", "--requests", "100000000", "--keyspace", "100000", "--pipeline", "8", "--set-cmd", "SET", "--get-cmd", "GET",
		"--out", out, "--tmpdir", tmp, "--kv-port", "0"}
}

func TestRunSIGINT(t *testing.T) {
	out, tmp := t.TempDir(), t.TempDir()
	p := startRun(t, nil, longRun(out, tmp)...)
	waitServer(t, p, tmp)
	waitLoad(t, p, tmp, 100*time.Millisecond)
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, time.Minute); code != cli.ExitInterrupted {
		t.Errorf("exit status %d, want %d\nstderr:\n%s", code, cli.ExitInterrupted, p.stderr.String())
	}
	t.Logf("exited %v after the signal", time.Since(start).Round(time.Millisecond))
	checkNoServers(t, tmp)
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("temporary directories left: %v", entries)
	}
	rows := readDetailCSV(t, out)
	if len(rows) != 1 || rows[0].Status != results.StatusInterrupted {
		t.Errorf("rows %+v: want one interrupted row", rows)
	}
	if !strings.Contains(p.stdout.String(), "# kvbench report") {
		t.Errorf("no partial report on stdout:\n%s", p.stdout.String())
	}
}

// A second Ctrl-C does not wait for a server slow to stop: it kills the
// servers and exits at once.
func TestRunSecondSIGINT(t *testing.T) {
	testutil.RequireRedisServer(t)
	out, tmp := t.TempDir(), t.TempDir()
	// The group leader ignores SIGTERM and outlives redis-server: a polite
	// stop takes the whole grace period.
	cfg := filepath.Join(t.TempDir(), "slow.yaml")
	yaml := `targets:
  - name: slow
    kind: command
    command: ["sh", "-c", "trap '' TERM; redis-server --port \"$1\" --bind 127.0.0.1 --save '' --appendonly no; sleep 30", "sh", "{port}", "{dir}"]
    strategies: {none: []}
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, nil, "--config", cfg, "--modes", "set", "--rounds", "1", "--requests", "100000000",
		"--keyspace", "1000", "--pipeline", "8", "--out", out, "--tmpdir", tmp)
	waitServer(t, p, tmp)
	leader := testutil.Processes(tmp)[0].PGID
	waitLoad(t, p, tmp, 100*time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitStderr(t, p, "interrupted: stopping the servers") // the polite stop is waiting
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, time.Minute); code != cli.ExitInterrupted {
		t.Errorf("exit status %d, want %d", code, cli.ExitInterrupted)
	}
	// The message is printed on the path that kills the servers and exits
	// without waiting for them: an event, where a time bound would be too
	// close to the stop's grace period to hold on a loaded machine.
	if !strings.Contains(p.stderr.String(), "interrupted twice") {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a figure
	for syscall.Kill(-leader, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-leader, syscall.SIGKILL)
			t.Fatalf("process group %d still alive", leader)
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkNoServers(t, tmp)
	files, _ := filepath.Glob(filepath.Join(out, "kvbench_detail_*.csv"))
	if len(files) != 1 {
		t.Errorf("detail CSV: %v", files)
	}
}

func TestRunEnvironment(t *testing.T) {
	env := []string{"ROUNDS=2", "REQ=3000", "KEYSPACE=3000", "PIPE=16", "VSIZE=8", "RETRIES=0",
		"SEED=7", "ALLOC=malloc", "KV_PORT=0", "SET_CMD=HSET", "GET_CMD=HGET"}

	// The plan shows every setting; --rounds wins over ROUNDS.
	p := startRun(t, env, "--dry-run", "--targets", "kvstore", "--rounds", "3")
	if code := p.exitCode(t, time.Minute); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
	plan := p.stdout.String()
	for _, want := range []string{
		"× 3 rounds", "requests 3000, keyspace 3000, pipeline 16", "value size 8, seed 7 (+ round), retries 0",
		"target kvstore (kvstore): HSET/HGET",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}

	// A real run records them.
	out, tmp := t.TempDir(), t.TempDir()
	p = startRun(t, env, "--targets", "kvstore", "--strategies", "nopersist", "--modes", "set,get", "--out", out, "--tmpdir", tmp)
	if code := p.exitCode(t, time.Minute); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
	rows := readDetailCSV(t, out)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want ROUNDS=2 × 2 modes", len(rows))
	}
	for _, r := range rows {
		if r.Requests != 3000 || r.Keyspace != 3000 || r.Pipeline != 16 || r.ValueSize != 8 || r.Seed != 7+int64(r.Round) ||
			r.Alloc != "malloc" || !strings.Contains(r.ServerConfig, "kvstore-alloc=go") || !r.OK() {
			t.Errorf("row %v does not follow the environment: %+v", r.Pos, r)
		}
	}
	checkNoServers(t, tmp)

	// A bad value names its variable; it is a usage error.
	p = startRun(t, []string{"ROUNDS=many"}, "--dry-run")
	if code := p.exitCode(t, time.Minute); code != 2 || !strings.Contains(p.stderr.String(), `ROUNDS="many"`) {
		t.Errorf("exit status %d, stderr %s", code, p.stderr.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "scan"}, `mode "scan"`},
		{[]string{"--targets", "memcached"}, `target "memcached"`},
		{[]string{"--order", "random"}, `order "random"`},
		{[]string{"--config", "/nonexistent.yaml"}, "/nonexistent.yaml"},
		{[]string{"extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			p := startRun(t, nil, append(tt.args, "--dry-run")...)
			if code := p.exitCode(t, time.Minute); code != 2 || !strings.Contains(p.stderr.String(), tt.want) {
				t.Errorf("exit status %d, stderr %s: want 2 and %q", code, p.stderr.String(), tt.want)
			}
		})
	}
}

// Even kill -9 of kvbench takes its servers along (the parent-death
// signal).
func TestRunKilledTakesServersAlong(t *testing.T) {
	out, tmp := t.TempDir(), t.TempDir()
	p := startRun(t, nil, longRun(out, tmp)...)
	waitServer(t, p, tmp)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.exitCode(t, time.Minute)
	deadline := time.Now().Add(30 * time.Second) // a bound on a failure, not a figure
	for len(servers(tmp)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	checkNoServers(t, tmp)
}

// TestRunRemovesDeadRunsDirectories: the temporary directory (the
// servers' data) of a run killed with -9 is removed by its watcher at
// once; one left without a watcher is removed by the next run into the
// same place, which says so, but leaves alone the directory of a run
// still going.
func TestRunRemovesDeadRunsDirectories(t *testing.T) {
	out, tmp := t.TempDir(), t.TempDir()
	killed := startRun(t, nil, longRun(out, tmp)...)
	waitServer(t, killed, tmp)
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.exitCode(t, time.Minute)
	deadline := time.Now().Add(30 * time.Second) // a bound on a failure, not a figure
	for len(servers(tmp)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	checkNoServers(t, tmp)
	// Its watcher removes its directory: nothing lingers until the next
	// run. (The wait is a bound on a failure, not a figure.)
	var left []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if left, _ = filepath.Glob(filepath.Join(tmp, ".kvbench-tmp-*")); len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("directories left by kill -9: %v", left)
		}
	}

	// A directory a run left without its watcher (killed too, a reboot):
	// the next run removes it before it starts a server.
	stale := filepath.Join(tmp, ".kvbench-tmp-stale")
	if err := os.MkdirAll(filepath.Join(stale, "kvstore-nopersist-r1-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	live := startRun(t, nil, longRun(t.TempDir(), tmp)...)
	waitServer(t, live, tmp)
	if !strings.Contains(live.stderr.String(), "removed "+stale+" (") {
		t.Errorf("stderr does not say %s was removed:\n%s", stale, live.stderr.String())
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", stale, err)
	}
	// A run beside it leaves its directory alone.
	dirs, _ := filepath.Glob(filepath.Join(tmp, ".kvbench-tmp-*"))
	if len(dirs) != 1 {
		t.Fatalf("temporary directories of the live run: %v, want one", dirs)
	}
	// Not on CPU 0 (--cpus off), where the live run keeps a server and a
	// load generator busy: in CI, beside the other packages' tests, it
	// did not end within a minute there.
	short := startRun(t, nil, "--targets", "kvstore", "--strategies", "nopersist", "--modes", "set", "--rounds", "1",
		"--requests", "1000", "--keyspace", "1000", "--out", t.TempDir(), "--tmpdir", tmp, "--kv-port", "0", "--cpus", "off")
	if code := short.exitCode(t, 3*time.Minute); code != 0 {
		t.Fatalf("exit status %d\nstderr:\n%s", code, short.stderr.String())
	}
	if strings.Contains(short.stderr.String(), "removed ") {
		t.Errorf("a run removed a live run's directory:\n%s", short.stderr.String())
	}
	if _, err := os.Stat(dirs[0]); err != nil {
		t.Errorf("the live run's directory: %v", err)
	}
	select {
	case <-live.done:
		t.Errorf("the live run ended\nstderr:\n%s", live.stderr.String())
	default:
	}
	if err := live.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := live.exitCode(t, time.Minute); code != cli.ExitInterrupted {
		t.Errorf("exit status %d after SIGINT\nstderr:\n%s", code, live.stderr.String())
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, ".kvbench-tmp-*")); len(dirs) != 0 {
		t.Errorf("left after the runs: %v", dirs)
	}
}

// TestRunDefaultRoundsReport: a run with the default 5 rounds reports the
// median's interval at its exact 93.75% and no warning about rounds, and
// no file it writes, nor report or compare in any format, prints inf or
// NaN.
func TestRunDefaultRoundsReport(t *testing.T) {
	out, tmp := t.TempDir(), t.TempDir()
	p := startRun(t, nil, "--targets", "kvstore", "--strategies", "nopersist,persist_no", "--modes", "set,get",
		"--requests", "5000", "--keyspace", "5000", "--out", out, "--tmpdir", tmp, "--kv-port", "0")
	if code := p.exitCode(t, 120*time.Second); code != 0 {
		t.Fatalf("exit status %d\nstderr:\n%s", code, p.stderr.String())
	}
	checkNoServers(t, tmp)
	printed := p.stdout.String()
	if !strings.Contains(printed, "rounds per scenario: 5") || !strings.Contains(printed, "93.75%") {
		t.Errorf("the report does not give the 5 rounds' interval at 93.75%%:\n%s", printed)
	}
	// The warnings about the number of rounds (a busy machine may add
	// others: client-bound, noisy).
	aboutRounds := regexp.MustCompile(`(?m)^- (fewer than|with fewer than|the \d+% confidence interval)`)
	if _, warnings, _ := strings.Cut(printed, "## Warnings"); aboutRounds.MatchString(warnings) {
		t.Errorf("a default run warns about its rounds:\n%s", warnings)
	}
	infNaN := regexp.MustCompile(`(?i)\b[+-]?inf\b|\bnan\b|∞`)
	check := func(what, text string) {
		t.Helper()
		if m := infNaN.FindString(text); m != "" {
			t.Errorf("%s prints %q:\n%s", what, m, text)
		}
	}
	check("run's report", printed)
	files, _ := filepath.Glob(filepath.Join(out, "kvbench_*"))
	for _, f := range files {
		if strings.HasSuffix(f, ".png") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, string(data))
		if strings.Contains(f, "_trimmed_") && !strings.Contains(string(data), ",0.9375,") {
			t.Errorf("%s: ci_confidence is not 0.9375:\n%s", f, data)
		}
	}
	detail, _ := filepath.Glob(filepath.Join(out, "kvbench_detail_*.csv"))
	for _, args := range [][]string{
		{"report", "--format", "md", detail[0]}, {"report", "--format", "csv", detail[0]},
		{"report", "--format", "json", detail[0]}, {"report", "--format", "html", detail[0]},
		{"compare", "--format", "md", detail[0], detail[0]}, {"compare", "--format", "csv", detail[0], detail[0]},
		{"compare", "--format", "json", detail[0], detail[0]}, {"compare", "--format", "html", detail[0], detail[0]},
	} {
		got, err := exec.Command(kvbenchBin, args...).Output()
		if err != nil {
			t.Fatalf("kvbench %s: %v", strings.Join(args, " "), err)
		}
		check("kvbench "+strings.Join(args, " "), string(got))
	}
}
