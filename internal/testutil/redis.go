// Package testutil helps tests use real servers and processes rather than
// mocks: StartRedis runs a redis-server on a free loopback port, owned by
// the test and stopped when it ends; other helpers build and inspect the
// kvbench binary.
package testutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireRedisEnv names the environment variable that turns a missing
// redis-server into a test failure instead of a skip (CI sets it to 1).
const RequireRedisEnv = "KVBENCH_REQUIRE_REDIS"

// readyTimeout bounds how long a started redis-server may take to answer
// PING; stopGrace is how long it gets to exit after SIGTERM.
const (
	readyTimeout = 10 * time.Second
	stopGrace    = 2 * time.Second
)

// Redis is a redis-server started by StartRedis.
type Redis struct {
	// Addr is its "127.0.0.1:port" address.
	Addr string
	// Dir is its working directory, a fresh temporary directory.
	Dir string

	cmd    *exec.Cmd
	argv   []string      // its command line, for Restart
	exited chan struct{} // closed once the process has been waited for
	err    error         // its exit status, valid after exited
}

// StartRedis starts redis-server with no persistence (--save ""
// --appendonly no) on a free port of 127.0.0.1, in a temporary directory,
// plus any extra arguments ("--maxmemory", "1mb"...), and waits until it
// answers PING. The server runs in its own process group and is stopped and
// reaped when the test ends.
//
// Without redis-server on PATH the test is skipped, or fails when the
// environment variable KVBENCH_REQUIRE_REDIS is 1.
func StartRedis(t testing.TB, args ...string) *Redis {
	t.Helper()
	bin := RequireRedisServer(t)
	dir := t.TempDir()
	// The port is found free and then handed to redis-server, which may
	// lose it to another process in between: retry a few times.
	for attempt := 0; ; attempt++ {
		r, err := startRedis(bin, dir, args)
		if err == nil {
			t.Cleanup(func() { _ = r.Stop() })
			return r
		}
		if attempt == 2 {
			t.Fatalf("start redis-server: %v", err)
		}
	}
}

func startRedis(bin, dir string, args []string) (*Redis, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "no", "--logfile", "",
	}, args...)
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, argv: append([]string{bin}, argv...)}
	if err := r.start(); err != nil {
		return nil, err
	}
	return r, nil
}

// start runs the server's command line and waits until it answers PING.
func (r *Redis) start() error {
	cmd := exec.CommandContext(context.Background(), r.argv[0], r.argv[1:]...)
	cmd.Dir = r.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.OpenFile(r.Dir+"/redis.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.argv[0], err)
	}
	exited := make(chan struct{})
	r.cmd, r.exited, r.err = cmd, exited, nil
	go func() {
		r.err = cmd.Wait()
		close(exited)
	}()
	if err := r.waitReady(); err != nil {
		_ = r.Stop()
		out, _ := os.ReadFile(r.Dir + "/redis.log")
		return fmt.Errorf("%w; log:\n%s", err, out)
	}
	return nil
}

// Restart starts the server again on its address, as a supervisor
// restarts a crashed server, once it has exited (Kill, Stop), and waits
// until it answers PING. It does not run concurrently with Kill or Stop.
func (r *Redis) Restart() error {
	select {
	case <-r.exited:
	default:
		return fmt.Errorf("redis-server on %s is still running", r.Addr)
	}
	return r.start()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady dials and sends PING until the server answers +PONG, the
// process exits, or readyTimeout passes.
func (r *Redis) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		// A server started with --requirepass answers -NOAUTH: up too.
		if err := Ping(r.Addr, time.Second); err == nil || errors.Is(err, ErrNoAuth) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within %v", r.Addr, readyTimeout)
		}
		select {
		case <-r.exited:
			return fmt.Errorf("redis-server exited: %v", r.err)
		case <-time.After(wait):
		}
	}
}

// ErrNoAuth is Ping's error when the server requires a password.
var ErrNoAuth = errors.New("PING: server requires AUTH")

// Ping dials addr, sends PING and expects +PONG within timeout.
func Ping(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-NOAUTH") {
		return ErrNoAuth
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING: got %q", line)
	}
	return nil
}

// Kill sends SIGKILL to the server's process group and waits for it to

// PID is the server's process id.
func (r *Redis) PID() int { return r.cmd.Process.Pid }

// exit: a server dying under load, for tests.
func (r *Redis) Kill() error {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.exited
	return nil
}

// Stop sends SIGTERM to the server's process group, SIGKILL after a grace
// period, and waits for it to exit. It is safe to call more than once.
func (r *Redis) Stop() error {
	select {
	case <-r.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
	var ee *exec.ExitError
	if r.err != nil && !errors.As(r.err, &ee) {
		return r.err
	}
	return nil
}
