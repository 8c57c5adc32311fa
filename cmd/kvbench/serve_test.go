package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/kvstore"
)

// kvbenchBin is the kvbench binary built once for the tests that run it as
// a process.
var kvbenchBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kvbench-test-")
	if err != nil {
		panic(err)
	}
	kvbenchBin = filepath.Join(dir, "kvbench")
	build := exec.Command("go", "build", "-o", kvbenchBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building kvbench: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireTool returns the path of a Redis tool, skipping the test when it
// is missing unless KVBENCH_REQUIRE_REDIS=1 (as in CI) makes that a failure.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("KVBENCH_REQUIRE_REDIS") == "1" {
			t.Fatalf("%s not found and KVBENCH_REQUIRE_REDIS=1: %v", name, err)
		}
		t.Skipf("%s not found (apt-get install redis-tools): %v", name, err)
	}
	return p
}

// serveProc is a running "kvbench serve" process.
type serveProc struct {
	cmd  *exec.Cmd
	addr string
	port string
	log  *bytes.Buffer
	done chan error
}

var readyRE = regexp.MustCompile(`ready to accept connections"? addr=(\S+:(\d+))`)

// serveArgs is "serve" and args, with --io set to KVBENCH_TEST_IO when it
// is set (auto, epoll or uring), so that `make test` runs the serve tests
// against each event loop.
func serveArgs(args ...string) []string {
	if io := os.Getenv("KVBENCH_TEST_IO"); io != "" {
		args = append([]string{"--io", io}, args...)
	}
	return append([]string{"serve"}, args...)
}

// startServe runs "kvbench serve --port 0 args..." and waits for its ready
// line.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(kvbenchBin, serveArgs(append([]string{"--port", "0"}, args...)...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, log: &bytes.Buffer{}, done: make(chan error, 1)}
	ready := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.log.WriteString(sc.Text() + "\n")
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m
			}
		}
		io.Copy(io.Discard, stderr)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case m := <-ready:
		p.addr, p.port = m[1], m[2]
	case <-time.After(time.Minute): // a bound on a failure, not a figure
		t.Fatalf("no ready line from kvbench serve; log:\n%s", p.log)
	}
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *serveProc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(within):
		t.Fatalf("kvbench serve still running after %v", within)
	}
	return -1
}

func TestServeSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startServe(t)
			rdb := redis.NewClient(&redis.Options{Addr: p.addr})
			defer rdb.Close()
			if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			p.cmd.Process.Signal(sig)
			if code := p.wait(t, time.Minute); code != 0 {
				t.Fatalf("exit code %d after %v; log:\n%s", code, sig, p.log)
			}
		})
	}
}

// TestServeIO: --io chooses the event loop, which the log line and INFO
// name; a bad name is a usage error.
func TestServeIO(t *testing.T) {
	for _, io := range []string{"epoll", "uring"} {
		t.Run(io, func(t *testing.T) {
			if io == "uring" {
				srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0", IO: kvstore.IOUring})
				if err != nil {
					if os.Getenv("KVBENCH_REQUIRE_IO_URING") == "1" {
						t.Fatalf("io_uring unavailable and KVBENCH_REQUIRE_IO_URING=1: %v", err)
					}
					t.Skipf("io_uring unavailable: %v", err)
				}
				srv.Close()
			}
			p := startServe(t, "--io", io)
			if !strings.Contains(p.log.String(), `msg="event loop" io=`+io+" why=configured") {
				t.Errorf("no event loop line for %s in the log:\n%s", io, p.log)
			}
			rdb := redis.NewClient(&redis.Options{Addr: p.addr})
			defer rdb.Close()
			info, err := rdb.Info(context.Background(), "server").Result()
			if err != nil || !strings.Contains(info, "io_loop:"+io+"\r\n") {
				t.Fatalf("INFO server has no io_loop:%s: %q, %v", io, info, err)
			}
		})
	}
	t.Run("bad", func(t *testing.T) {
		out, err := exec.Command(kvbenchBin, "serve", "--io", "kqueue").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `--io "kqueue": want auto, epoll or uring`) {
			t.Fatalf("serve --io kqueue: %v: %s", err, out)
		}
	})
}

func TestServeRedisCLI(t *testing.T) {
	cli := requireTool(t, "redis-cli")
	p := startServe(t)
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"-p", p.port}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v: %s", args, err, out)
		}
		return out
	}
	// Every byte value, CR LF and NUL included, through -x (value from
	// stdin) and back with --raw (value plus a newline).
	var value []byte
	for i := range 256 {
		value = append(value, byte(i))
	}
	value = append(value, "\r\n\r\n\x00"...)
	for _, set := range [][]string{{"SET", "bin"}, {"RSET", "bin"}, {"HSET", "bin"}} {
		if out := run(value, append([]string{"-x"}, set...)...); strings.TrimSpace(string(out)) != "OK" {
			t.Fatalf("redis-cli -x %s: %q", set[0], out)
		}
		get := strings.Replace(set[0], "SET", "GET", 1)
		out := run(nil, "--raw", get, "bin")
		if !bytes.Equal(out, append(bytes.Clone(value), '\n')) {
			t.Fatalf("redis-cli %s returned %d bytes that differ from the %d written", get, len(out), len(value))
		}
	}
	if out := run(nil, "RSET", "bin", "again"); !strings.Contains(string(out), "EXIST") {
		t.Fatalf("redis-cli RSET existing: %q", out)
	}
	if out := run(nil, "SHUTDOWN"); len(bytes.TrimSpace(out)) != 0 && !strings.Contains(string(out), "closed") {
		t.Logf("redis-cli SHUTDOWN: %q", out)
	}
	if code := p.wait(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d after SHUTDOWN; log:\n%s", code, p.log)
	}
}

func TestServeRedisBenchmark(t *testing.T) {
	bench := requireTool(t, "redis-benchmark")
	p := startServe(t)
	cmd := exec.Command(bench, "-p", p.port, "-t", "ping,set,get,incr,mset,hset",
		"-P", "16", "-c", "50", "-n", "100000", "-r", "100000", "-q")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	text := string(out)
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
		if strings.Contains(strings.ToLower(line), "error") || strings.Contains(line, "WARNING") {
			t.Errorf("redis-benchmark: %s", line)
		}
	}
	for _, test := range []string{"PING_INLINE:", "PING_MBULK:", "SET:", "GET:", "INCR:", "HSET:", "MSET (10 keys):"} {
		if !strings.Contains(text, test+" ") {
			t.Errorf("redis-benchmark printed no result for %s\n%s", test, text)
		}
	}
	// Without -r every INCR hits one key: the count is exact.
	if out, err := exec.Command(bench, "-p", p.port, "-t", "incr", "-P", "16", "-c", "10", "-n", "10000", "-q").CombinedOutput(); err != nil {
		t.Fatalf("redis-benchmark -t incr: %v\n%s", err, out)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.addr})
	defer rdb.Close()
	if n, err := rdb.Get(context.Background(), "counter:__rand_int__").Int(); err != nil || n != 10000 {
		t.Errorf("INCR counter = %d, %v; want 10000", n, err)
	}
}

// The flags that guard the server: --protected-mode (a client of another
// address than 127.0.0.1 is refused without a password), --timeout and
// --maxmemory, which CONFIG GET reports; a bad value exits 2.
func TestServeGuards(t *testing.T) {
	dialFrom := func(addr string) (string, error) {
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			return "", err
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		nc.Write([]byte("PING\r\n"))
		return bufio.NewReader(nc).ReadString('\n')
	}
	p := startServe(t)
	if got, err := dialFrom(p.addr); err != nil || !strings.HasPrefix(got, "-DENIED Redis is running in protected mode") {
		t.Fatalf("protected mode: a client of 127.0.0.2 got %q, %v", got, err)
	}
	p = startServe(t, "--protected-mode", "no", "--timeout", "7", "--maxmemory", "100mb")
	if got, err := dialFrom(p.addr); err != nil || got != "+PONG\r\n" {
		t.Fatalf("--protected-mode no: a client of 127.0.0.2 got %q, %v", got, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.addr})
	defer rdb.Close()
	cfg := rdb.ConfigGet(context.Background(), "*").Val()
	for k, want := range map[string]string{"protected-mode": "no", "timeout": "7", "maxmemory": fmt.Sprint(100 << 20), "maxmemory-policy": "noeviction"} {
		if cfg[k] != want {
			t.Errorf("CONFIG GET %s = %q, want %q", k, cfg[k], want)
		}
	}
	for _, args := range [][]string{{"--protected-mode", "maybe"}, {"--timeout", "-1"}, {"--maxmemory", "lots"}, {"--maxmemory-policy", "allkeys-lru"}} {
		cmd := exec.Command(kvbenchBin, append([]string{"serve", "--port", "0"}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), args[0]) {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}
