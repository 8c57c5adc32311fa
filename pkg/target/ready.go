package target

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
)

// instance is a started (or attached) server.
type instance struct {
	info Info
	proc *proc // nil for an attached server
}

func (i *instance) Info() Info { return i.info }

func (i *instance) Err() error {
	if i.proc == nil {
		return nil
	}
	return i.proc.Err()
}

func (i *instance) Exited() <-chan struct{} {
	if i.proc == nil {
		return nil
	}
	return i.proc.exited
}

// ExitWait bounds how long WithExit waits for a server's exit.
const ExitWait = 200 * time.Millisecond

// WithExit adds inst's exit, if it has exited, to err, an error seen on a
// connection to it. A dead server shows as a lost connection first and
// its exit a moment later: unless err is the context's, or one of
// notLost (errors that say the connection was not lost), WithExit waits
// up to ExitWait for the exit.
func WithExit(inst Instance, err error, notLost ...error) error {
	lost := !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	for _, e := range notLost {
		lost = lost && !errors.Is(err, e)
	}
	if lost {
		select {
		case <-inst.Exited():
		case <-time.After(ExitWait):
		}
	}
	if serr := inst.Err(); serr != nil {
		return fmt.Errorf("%w; %w", err, serr)
	}
	return err
}

func (i *instance) Stop(ctx context.Context) error {
	if i.proc == nil {
		return nil
	}
	return i.proc.Stop(ctx)
}

// cmdTimeout bounds each command sent while starting an instance.
const cmdTimeout = 5 * time.Second

// waitPing dials addr and sends PING until the server answers, the
// process p (if any) exits, ctx is done or the deadline passes. Any RESP
// reply shows the server up, an error reply too (a server without PING
// answers "ERR unknown command"), but for a server that says it is not
// serving yet (notServingCodes).
func waitPing(ctx context.Context, addr string, cr creds, started time.Time, timeout time.Duration, p *proc) error {
	deadline := started.Add(timeout)
	var last error
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		if p != nil {
			if err := p.Err(); err != nil {
				return err
			}
		}
		left := time.Until(deadline)
		c, err := dialControl(ctx, addr, cr, min(max(left, time.Millisecond), time.Second))
		if err == nil {
			_, err = c.Do(ctx, "PING")
			c.Close()
			if err == nil || answered(err) {
				return nil
			}
		}
		// A server that refuses the credentials, or that is not a RESP
		// server, will not change its mind: no retry.
		if errors.Is(err, control.ErrAuth) {
			return fmt.Errorf("%w: %s: %w", ErrRefused, addr, err)
		}
		if e := (*control.NoRESP3Error)(nil); errors.As(err, &e) {
			return fmt.Errorf("%w: %s: %w", ErrRefused, addr, err)
		}
		if errors.Is(err, control.ErrNotRESP) {
			return fmt.Errorf("%w: %s answers, but not in RESP (is it a Redis-protocol server?): %w", ErrRefused, addr, err)
		}
		last = err
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("%w: no PING reply from %s within %v: %v", ErrNotReady, addr, timeout, last)
			if p != nil {
				err = fmt.Errorf("%w%s", err, p.log.quote())
			}
			return err
		}
		var exited chan struct{}
		if p != nil {
			exited = p.exited
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
		case <-time.After(wait):
		}
	}
}

// answered reports whether err, a PING's, is still an answer that shows
// the server up: an error reply ("ERR unknown command 'PING'" from a
// server that implements only what it is measured on) other than those
// of a server not serving yet (notServingCodes).
func answered(err error) bool {
	var re *control.ReplyError
	return errors.As(err, &re) && !notServingCodes[re.Code()]
}

// notServingCodes are the error replies of a server that is up but not
// serving yet: loading its data (LOADING), running a script (BUSY), a
// replica whose master is down (MASTERDOWN).
var notServingCodes = map[string]bool{"LOADING": true, "BUSY": true, "MASTERDOWN": true}

// Unsupported reports whether err is a server's refusal of a command it
// does not have: an ERR reply ("ERR unknown command 'INFO'"), or one
// that says the command is unknown, unsupported or not implemented; not
// a failure to reach it, a refused permission, nor a refusal of another
// kind (READONLY, LOADING). What a server lacks is skipped and said,
// never retried.
func Unsupported(err error) bool {
	var re *control.ReplyError
	if !errors.As(err, &re) {
		return false
	}
	msg := strings.ToLower(re.Msg)
	return re.Code() == "ERR" || strings.Contains(msg, "unknown") || strings.Contains(msg, "support") || strings.Contains(msg, "implement")
}

// versionFields are the INFO server fields that name a server's own
// version, tried before redis_version (which compatible servers report as
// the Redis version they emulate).
var versionFields = []string{"kvstore_version", "valkey_version", "dragonfly_version", "redis_version"}

// probeResult is what probe read of a server: its version, process id
// and effective configuration (supported false when it has no CONFIG
// GET), and notes on what it could not read (Info.Notes).
type probeResult struct {
	version   string
	pid       int
	config    map[string]string
	supported bool
	notes     []string
}

// Notes on what a server lacks, in Info.Notes.
const (
	NoteNoInfo   = "version unknown, restarts not detected: INFO unsupported"
	NoteNoConfig = "config not verified: CONFIG unsupported"
)

// probe reads the version, process id and effective configuration of the
// server at addr. A server without INFO or CONFIG GET is probed for what
// it has, its notes saying what it lacks.
func probe(ctx context.Context, addr string, cr creds, params []string) (probeResult, error) {
	var r probeResult
	c, err := dialControl(ctx, addr, cr, cmdTimeout)
	if err != nil {
		return r, err
	}
	defer c.Close()
	info, err := c.Info(ctx, "server")
	switch {
	case Unsupported(err):
		r.notes = append(r.notes, NoteNoInfo)
	case err != nil:
		return r, err
	}
	for _, f := range versionFields {
		if v := info[f]; v != "" {
			r.version = v
			break
		}
	}
	r.pid, _ = strconv.Atoi(info["process_id"])
	r.config, r.supported, err = c.ConfigGet(ctx, params)
	if err == nil && !r.supported {
		r.notes = append(r.notes, NoteNoConfig)
	}
	return r, err
}

// ownership says how strictly the process answering must be ours.
type ownership int

const (
	// mustOwn: the server reports its pid, and it must be in our group.
	mustOwn ownership = iota
	// mayOwn: a reported pid that exists here must be in our group; one
	// that does not (a container's pid namespace) is accepted.
	mayOwn
	// attached: anything goes.
	attached
)

// ready waits for PING, probes the server and checks that it is ours and
// configured as s asks. On error the process is stopped.
func ready(ctx context.Context, p *proc, s Strategy, addr string, cr creds, params []string, env Env, own ownership, started time.Time) (*instance, error) {
	inst, err := readyCheck(ctx, p, s, addr, cr, params, env, own, started)
	if err != nil && p != nil {
		p.stopWithin(ctx, failedStartGrace)
	}
	return inst, err
}

// failedStartGrace is how long a server that failed to start gets to exit
// after SIGTERM (a command target's).
const failedStartGrace = time.Second

func readyCheck(ctx context.Context, p *proc, s Strategy, addr string, cr creds, params []string, env Env, own ownership, started time.Time) (*instance, error) {
	if err := waitPing(ctx, addr, cr, started, env.readyTimeout(), p); err != nil {
		return nil, err
	}
	pr, err := probe(ctx, addr, cr, params)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", addr, err)
	}
	if p != nil && own != attached {
		if err := checkOwner(p, pr.pid, own); err != nil {
			return nil, fmt.Errorf("%s on %s: %w", p.name, addr, err)
		}
	}
	if err := checkExpect(s, pr.config, pr.supported); err != nil {
		return nil, err
	}
	info := Info{Addr: addr, Version: pr.version, StartedIn: time.Since(started), User: cr.User, DB: cr.DB, RESP3: cr.RESP3, Notes: pr.notes}
	if pr.supported {
		info.Config = formatConfig(params, pr.config)
	}
	if p != nil {
		info.PID = p.pgid
	}
	return &instance{info: info, proc: p}, nil
}

// checkOwner checks that pid, as reported by the server, is in p's
// process group.
func checkOwner(p *proc, pid int, own ownership) error {
	if pid == 0 {
		if own == mustOwn {
			return fmt.Errorf("%w: INFO server reports no process_id", ErrNotOurs)
		}
		return nil
	}
	pgid, err := syscall.Getpgid(pid)
	if errors.Is(err, syscall.ESRCH) && own == mayOwn {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: process %d: %w", ErrNotOurs, pid, err)
	}
	if pgid != p.pgid {
		return fmt.Errorf("%w: the answering process %d is not in process group %d", ErrNotOurs, pid, p.pgid)
	}
	return nil
}
