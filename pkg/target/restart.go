package target

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ErrNoRestart: the instance or target cannot be killed and started again
// on its files (a cluster, a command or an attached server).
var ErrNoRestart = errors.New("cannot be restarted on its files")

// CanRestart reports whether Kill and Restart work for the target's
// instances: those of a kvstore or redis target, which kvbench starts
// itself in a directory of its own.
func CanRestart(d Desc) bool { return d.Kind == KindKvstore || d.Kind == KindRedis }

// Kill crashes a started instance: SIGKILL to its process group, then it
// waits for the process to be reaped. The server gets no chance to save or
// sync anything; what it wrote to its files stays in the OS's page cache
// and reaches the disk as after any process crash. The files in its Env.Dir
// are left for Restart.
func Kill(ctx context.Context, inst Instance) error {
	i, ok := inst.(*instance)
	if !ok || i.proc == nil {
		return fmt.Errorf("kill: %w: not a server kvbench started", ErrNoRestart)
	}
	p := i.proc
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.kill()
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill %s: waiting for the process to exit: %w", p.name, ctx.Err())
	}
}

// Restart starts target t's server for strategy s again on the files a
// killed instance left in env.Dir (which must exist): the kvstore replays
// its log from there, redis-server its AOF or snapshot. It returns once the
// new process answers PING and its configuration is verified, like Start;
// the server may still be loading then (Redis answers LOADING to reads).
func Restart(ctx context.Context, t Target, s Strategy, env Env) (Instance, error) {
	d := t.Desc()
	if !CanRestart(d) {
		return nil, fmt.Errorf("%s: %w: a %s target", d.Name, ErrNoRestart, d.Kind)
	}
	if env.Dir == "" {
		return nil, fmt.Errorf("%s: restart: no directory given", d.Name)
	}
	st, err := os.Stat(env.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: restart: %w", d.Name, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: restart: %s is not a directory", d.Name, env.Dir)
	}
	// Both kinds keep their data files in Env.Dir and only (re)write their
	// configuration there when they start: the same Start serves.
	return t.Start(ctx, s, env)
}
