package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// waitDelay bounds how long Wait keeps reading a server's output after the
// server has exited (a grandchild may hold the pipe open).
const waitDelay = 2 * time.Second

// spawner starts every child process from one goroutine locked to its OS
// thread for the life of the process. The parent-death signal (Pdeathsig)
// is sent when the thread that forked the child exits, not the process:
// forking from an arbitrary thread would kill a server whenever the Go
// runtime retired that thread (it does when a goroutine exits while locked
// to its thread).
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startCmd runs cmd.Start on the spawner's thread.
func startCmd(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must outlive every child
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd, done}
	return <-done
}

// proc is a server process in its own process group.
type proc struct {
	name    string
	cmd     *exec.Cmd
	pgid    int
	log     *logTail
	kill    context.CancelFunc // cancels the command's context: SIGKILL to the group
	exited  chan struct{}      // closed once Wait has returned
	waitErr error              // Wait's result, valid once exited is closed
	stopped bool               // Stop sent the signals (the exit status is ours)
	mu      sync.Mutex

	// discard: the server's files are thrown away once it stops (kvbench
	// wrote its configuration, and the caller removes its directory), so
	// Stop kills it at once. Its own shutdown would only save or sync
	// files about to be deleted: SIGTERM waits for Redis's next cron
	// tick and an fsync of its AOF (the kvstore syncs and closes its
	// log), rdb_default saves its snapshot, where SIGKILL takes a fraction
	// of that (BenchmarkStop); and the deletion of a log that was never
	// synced drops its dirty pages instead of writing them.
	discard bool
}

// startProc starts argv in dir, in a new process group, with its output in
// log, and registers it with tr (if set). discard sets proc.discard. The
// process outlives ctx, the starting call's: Stop and kill end it.
func startProc(ctx context.Context, name string, argv []string, dir string, log *logTail, tr *Tracker, discard bool) (*proc, error) {
	ctx, kill := context.WithCancel(context.WithoutCancel(ctx))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	if err := startCmd(cmd); err != nil {
		kill()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("start %s: %w: %w", name, ErrNotFound, err)
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, pgid: cmd.Process.Pid, log: log, kill: kill, exited: make(chan struct{}), discard: discard}
	tr.add(p.pgid)
	go func() {
		err := cmd.Wait()
		// Whatever the leader left in its group goes with it.
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		tr.remove(p.pgid)
		p.waitErr = err
		close(p.exited)
		kill()
	}()
	return p, nil
}

// Err returns nil while the process runs, else an error wrapping ErrExited
// with its exit status and the last lines of its output.
func (p *proc) Err() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	status := "exit status 0"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return fmt.Errorf("%w: %s (%s)%s", ErrExited, p.name, status, p.log.quote())
}

// Stop sends SIGTERM to the process group, SIGKILL once ctx is done (at
// once when p.discard), and waits for the process. A process that had
// already exited, or exits on the signals, is not an error.
func (p *proc) Stop(ctx context.Context) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	if p.discard {
		p.kill()
	} else if err := syscall.Kill(-p.pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.kill()
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		p.kill()
		<-p.exited
	}
	return nil
}

// stopWithin is Stop with a grace period, whether or not ctx (the caller's,
// perhaps cancelled: what failed) is done.
func (p *proc) stopWithin(ctx context.Context, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	_ = p.Stop(ctx)
}

// Tracker records the process groups of live servers so that they can be
// killed at once, and directories to remove with them: what kvbench does on
// a second Ctrl-C, when there is no time to stop servers politely. The zero
// value is ready to use; a nil *Tracker records nothing.
type Tracker struct {
	mu    sync.Mutex
	pgids map[int]bool
	dirs  []string
}

func (t *Tracker) add(pgid int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pgids == nil {
		t.pgids = make(map[int]bool)
	}
	t.pgids[pgid] = true
}

func (t *Tracker) remove(pgid int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pgids, pgid)
}

// Live returns the number of process groups whose leader has not exited.
func (t *Tracker) Live() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pgids)
}

// AddDir records a directory for KillAll to remove.
func (t *Tracker) AddDir(dir string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirs = append(t.dirs, dir)
}

// KillAll sends SIGKILL to every live process group, without waiting,
// and removes the recorded directories.
func (t *Tracker) KillAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pgid := range t.pgids {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for _, d := range t.dirs {
		_ = os.RemoveAll(d)
	}
}

// logTail keeps the last bytes a server wrote, and passes each line to a
// watcher until the watcher is satisfied.
type logTail struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	partial []byte
	watch   func(line string) bool // returns true when it has seen enough
}

// logTailSize is how much of a server's output is kept.
const logTailSize = 16 << 10

func newLogTail(watch func(line string) bool) *logTail {
	return &logTail{max: logTailSize, watch: watch}
}

// Write keeps the end of the output and feeds the watcher.
func (l *logTail) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	if len(l.buf) > l.max {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-l.max:]...)
	}
	if l.watch != nil {
		l.partial = append(l.partial, b...)
		for l.watch != nil {
			i := strings.IndexByte(string(l.partial), '\n')
			if i < 0 {
				break
			}
			line := string(l.partial[:i])
			l.partial = l.partial[i+1:]
			if l.watch(line) {
				l.watch, l.partial = nil, nil
			}
		}
		if len(l.partial) > l.max {
			l.partial = l.partial[len(l.partial)-l.max:]
		}
	}
	return len(b), nil
}

// logTailLines is how many lines errors quote.
const logTailLines = 8

// Tail returns the last n lines of the output.
func (l *logTail) Tail(n int) []string {
	l.mu.Lock()
	s := strings.TrimRight(string(l.buf), "\r\n")
	l.mu.Unlock()
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, "\r")
	}
	return lines
}

// quote formats the end of the output for an error message.
func (l *logTail) quote() string {
	lines := l.Tail(logTailLines)
	if len(lines) == 0 {
		return "; it wrote nothing"
	}
	return "; last lines of its output:\n  " + strings.Join(lines, "\n  ")
}
