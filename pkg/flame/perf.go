package flame

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultPerf is the perf executable looked up in PATH.
const DefaultPerf = "perf"

// ErrNoPerf is returned when perf cannot be run or may not record.
var ErrNoPerf = errors.New("perf is not available")

// Record arguments: the "cpu-clock" software event, as virtual machines
// often lack the hardware counters; 999 Hz, off the kernel's tick rate;
// --per-thread, without which perf record -p gets no sample on some
// kernels (it then follows the threads present when it attaches, not
// those started later).
var recordArgs = []string{"record", "--per-thread", "-g", "-F", "999", "-e", "cpu-clock", "-q"}

// Recording is a running "perf record" of processes.
type Recording struct {
	bin, data string
	cmd       *exec.Cmd
	stderr    bytes.Buffer
	exited    chan struct{}
	err       error
}

// Record starts perf (bin, DefaultPerf when empty) recording the CPU
// samples of pids, with their call stacks, into the file data, and
// returns once perf has opened it. The error wraps ErrNoPerf when perf is
// missing or may not record.
func Record(ctx context.Context, bin string, pids []int, data string) (*Recording, error) {
	if bin == "" {
		bin = DefaultPerf
	}
	if len(pids) == 0 {
		return nil, errors.New("no process to profile")
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoPerf, err)
	}
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	args := append(append([]string{}, recordArgs...), "-p", strings.Join(ps, ","), "-o", data)
	r := &Recording{bin: path, data: data, exited: make(chan struct{})}
	r.cmd = exec.Command(path, args...)
	r.cmd.Stderr = &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a Ctrl-C of ours is not perf's
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoPerf, err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.exited) }()
	// perf opens its output once it has attached to every thread.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(attachTimeout)
	for {
		select {
		case <-r.exited:
			return nil, fmt.Errorf("%w: perf record exited at once: %s", ErrNoPerf, r.why())
		case <-ctx.Done():
			r.kill()
			return nil, ctx.Err()
		case <-deadline:
			r.kill()
			return nil, fmt.Errorf("perf record did not start within %s", attachTimeout)
		case <-tick.C:
			if fi, err := os.Stat(data); err == nil && fi.Size() > 0 {
				return r, nil
			}
		}
	}
}

// Timeouts of a recording.
const (
	// attachTimeout bounds perf record's start.
	attachTimeout = 10 * time.Second
	// stopTimeout bounds perf record's writing of its file after SIGINT.
	stopTimeout = 30 * time.Second
	// scriptTimeout bounds perf script's symbolisation of the samples.
	scriptTimeout = 2 * time.Minute
)

// why is the last line perf wrote on stderr, or its exit status.
func (r *Recording) why() string {
	lines := strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	if r.err != nil {
		return r.err.Error()
	}
	return "no reason given"
}

func (r *Recording) kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// Stop ends the recording (SIGINT, as perf expects) and folds its
// samples: "perf script" symbolises them, ParsePerfScript folds them.
func (r *Recording) Stop(ctx context.Context) (*Profile, error) {
	select {
	case <-r.exited:
		return nil, fmt.Errorf("perf record ended early: %s", r.why())
	default:
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.exited:
	case <-time.After(stopTimeout):
		r.kill()
		return nil, fmt.Errorf("perf record did not stop within %s", stopTimeout)
	}
	if r.err != nil && !interrupted(r.err) {
		return nil, fmt.Errorf("perf record: %s", r.why())
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(sctx, r.bin, "script", "-i", r.data)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	p, err := ParsePerfScript(&out, "perf script -i "+r.data)
	if err != nil {
		return nil, err
	}
	if p.Total() == 0 {
		return nil, ErrEmpty
	}
	return p, nil
}

// interrupted reports whether a process ended by the SIGINT it was sent:
// perf record writes its file, then kills itself with the signal.
func interrupted(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}
