package history

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequirePostgresEnv names the environment variable that turns a missing
// PostgreSQL into a test failure instead of a skip (make test sets it).
const RequirePostgresEnv = "KVBENCH_REQUIRE_POSTGRES"

// helperEnv makes the test binary a helper process instead of running
// the tests (see TestMain).
const helperEnv = "KVBENCH_HISTORY_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helper(os.Getenv(helperEnv)))
	}
	code := m.Run()
	pg.stop()
	os.Exit(code)
}

// postgres is the PostgreSQL server the tests share, started by the first
// test that needs one, in a temporary directory on a free port.
type postgres struct {
	once sync.Once
	url  string // the postgres database's
	base string // the server's, without a database
	err  error
	skip string
	cmd  *exec.Cmd
	dir  string
	dbs  int
	mu   sync.Mutex
}

var pg postgres

// pgBin finds a PostgreSQL program: on PATH, else where Debian's
// postgresql package puts it.
func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found (install Debian's postgresql)", name)
}

// start runs initdb and postgres, as the postgres user when this is root
// (PostgreSQL refuses to run as root).
func (p *postgres) start() {
	initdb, err := pgBin("initdb")
	if err != nil {
		p.skip = err.Error()
		return
	}
	server := filepath.Join(filepath.Dir(initdb), "postgres")
	p.dir, err = os.MkdirTemp("", "kvbench-pg-")
	if err != nil {
		p.err = err
		return
	}
	os.Chmod(p.dir, 0o755)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			p.err = fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
			return
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(p.dir, uid, gid); err != nil {
			p.err = err
			return
		}
	}
	data := filepath.Join(p.dir, "data")
	initCmd := exec.Command(initdb, "-D", data, "-U", "kvbench", "--auth=trust", "-E", "UTF8", "--no-sync")
	initCmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initCmd.CombinedOutput(); err != nil {
		p.err = fmt.Errorf("initdb: %w\n%s", err, out)
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.err = err
		return
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	p.cmd = exec.Command(server, "-D", data, "-p", strconv.Itoa(port), "-k", p.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "max_connections=50")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	logf, _ := os.Create(filepath.Join(p.dir, "log"))
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.err = fmt.Errorf("postgres: %w", err)
		return
	}
	p.base = fmt.Sprintf("postgres://kvbench@127.0.0.1:%d", port)
	p.url = p.base + "/postgres?sslmode=disable"
	db, _ := sql.Open("pgx", p.url)
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
			p.err = fmt.Errorf("postgres did not answer within 30s: %w\n%s", err, log)
			return
		}
		time.Sleep(100 * time.Millisecond) // bounded by the deadline
	}
}

// stop stops the server (SIGINT: PostgreSQL's fast shutdown, then
// SIGKILL) and removes its directory.
func (p *postgres) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute): // a bound on a failure, not a figure
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// postgresURL returns the URL of a new, empty database on the shared
// server, skipping the test when PostgreSQL is not installed (failing it
// when KVBENCH_REQUIRE_POSTGRES is set).
func postgresURL(t testing.TB) string {
	t.Helper()
	pg.once.Do(pg.start)
	if pg.skip != "" {
		if os.Getenv(RequirePostgresEnv) != "" {
			t.Fatalf("%s and %s is set", pg.skip, RequirePostgresEnv)
		}
		t.Skip(pg.skip + "; set " + RequirePostgresEnv + "=1 to fail instead")
	}
	if pg.err != nil {
		t.Fatal(pg.err)
	}
	pg.mu.Lock()
	pg.dbs++
	name := fmt.Sprintf("kvbench_test_%d", pg.dbs)
	pg.mu.Unlock()
	db, err := sql.Open("pgx", pg.url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return pg.base + "/" + name + "?sslmode=disable"
}

// backends are the two kinds of store, each giving a new empty store's
// location.
var backends = []struct {
	name string
	new  func(t testing.TB) string
}{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "history.db") }},
	{"postgres", postgresURL},
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, location string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.new(t)) })
	}
}

// helper runs a helper process's job: "writer STORE RUNID N" records a
// run of N attempts as fast as it can; "slow STORE RUNID" records one
// attempt every 50 ms until killed.
func helper(job string) int {
	args := os.Args[1:]
	ctx := context.Background()
	s, err := Open(ctx, args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	rec := s.NewRecorder(RunInfo{Label: args[1]})
	if err := rec.BeginRun(ctx, args[1], time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n := 1 << 30
	if job == "writer" {
		n, _ = strconv.Atoi(args[2])
	}
	for i := range n {
		if err := rec.Attempt(ctx, testAttempt(args[1], i+1, 100000), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("attempt", i+1)
		if job == "slow" {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := rec.Finish(ctx, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
