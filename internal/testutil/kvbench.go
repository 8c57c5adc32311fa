package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BuildKvbench builds the kvbench command into a new temporary directory
// and returns the binary's path and a function removing the directory. It
// is meant for TestMain, before any test runs; the build cache makes every
// build after the first quick.
func BuildKvbench() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "kvbench-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "kvbench")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kvbench/kvbench/cmd/kvbench")
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build kvbench: %w\n%s", err, out)
	}
	return bin, cleanup, nil
}

// RunWithKvbench is a TestMain body: it builds kvbench, stores the
// binary's path in *bin, runs the tests, removes the binary and returns
// the exit code for os.Exit. A failed build is reported and fails the
// tests.
func RunWithKvbench(m *testing.M, bin *string) int {
	path, cleanup, err := BuildKvbench()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	*bin = path
	return m.Run()
}

// RequireRedisServer returns the path of redis-server, skipping the test
// when it is not on PATH (failing it when KVBENCH_REQUIRE_REDIS is 1).
func RequireRedisServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireRedisEnv) == "1" {
			t.Fatalf("redis-server is not on PATH and %s=1", RequireRedisEnv)
		}
		t.Skip("redis-server is not on PATH (install redis-server; set " + RequireRedisEnv + "=1 to fail instead)")
	}
	return bin
}

// Process is an entry of the process table.
type Process struct {
	PID, PPID, PGID int
	// Cmdline is the command line, arguments separated by spaces.
	Cmdline string
}

// Processes lists the processes of the process table (Linux /proc) whose
// command line or working directory contains substr; zombies are left
// out. The working directory matters: redis-server rewrites its command
// line ("redis-server 127.0.0.1:6379") but runs in its directory.
func Processes(substr string) []Process {
	entries, _ := os.ReadDir("/proc")
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if !strings.Contains(cmdline, substr) && !strings.Contains(cwd, substr) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		pgid, _ := strconv.Atoi(fields[2])
		out = append(out, Process{PID: pid, PPID: ppid, PGID: pgid, Cmdline: cmdline})
	}
	return out
}

// KillProcesses sends SIGKILL to the processes (cleanup after a failed
// test).
func KillProcesses(ps []Process) {
	for _, p := range ps {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
}
