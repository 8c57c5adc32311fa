package target

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AttachConfig configures an Attach target.
type AttachConfig struct {
	// Name is the target's name (required).
	Name string
	// Addr is the server's host:port (required).
	Addr string
	// Password, if set, is sent with AUTH.
	Password string
	// SetCmd and GetCmd are the load generator's commands; SET and GET
	// when empty.
	SetCmd, GetCmd string
	// Baseline names the strategy whose persistence is "none".
	Baseline string
	// Strategies are labels for the server's configuration, which the
	// user sets; an Expect, when given, is still verified. One strategy
	// named "default" when empty.
	Strategies []Strategy
	// Defaults names the strategies run by default; all of them when nil.
	Defaults []string
	// AllowFlush lets Start empty a server that holds keys kvbench did
	// not write; without it such a server is refused (ErrNotEmpty).
	AllowFlush bool
}

// flushTimeout bounds FLUSHALL, which takes a while on a large keyspace.
const flushTimeout = time.Minute

// Attach is a running server kvbench does not start: every Start checks
// it and empties it (FLUSHALL), every Stop leaves it running. Keys found
// before kvbench's first attempt on it are someone's data: the first Start
// refuses to delete them unless AllowFlush is set. Later Starts take the
// keys they find for the attempt before's and delete them.
type Attach struct {
	cfg  AttachConfig
	desc Desc

	mu      sync.Mutex
	started bool // a Start succeeded: the server may hold kvbench's keys
}

// NewAttach returns the attach target.
func NewAttach(cfg AttachConfig) (*Attach, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("attach target: a name is required")
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("%s: addr %q: want host:port: %w", cfg.Name, cfg.Addr, err)
	}
	in := cfg.Strategies
	if len(in) == 0 {
		in = []Strategy{{Name: "default"}}
	}
	strategies, err := labelStrategies(cfg.Name, cfg.Baseline, in, false)
	if err != nil {
		return nil, err
	}
	desc, err := describe(cfg.Name, KindAttach, cfg.SetCmd, cfg.GetCmd, cfg.Password, strategies, cfg.Defaults)
	if err != nil {
		return nil, err
	}
	return &Attach{cfg: cfg, desc: desc}, nil
}

// Desc describes the target.
func (a *Attach) Desc() Desc { return a.desc }

// Start waits for the server to answer PING, checks its configuration
// against s's expectations, and empties it with FLUSHALL (an error if the
// server refuses). Before kvbench's first attempt, a server holding keys is
// refused with an error wrapping ErrNotEmpty unless AllowFlush is set; with
// it, the instance's Info.Flushed says the keys were deleted.
func (a *Attach) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.desc.Strategy(s.Name)
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", a.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	started := time.Now()
	inst, err := ready(ctx, nil, s, a.cfg.Addr, a.cfg.Password, configParams(redisParams, s), env, attached, started)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.cfg.Name, err)
	}
	c, err := dialClient(ctx, a.cfg.Addr, a.cfg.Password, cmdTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.cfg.Name, err)
	}
	defer c.close()
	if !a.started {
		n, err := c.keys()
		switch {
		case err != nil && !a.cfg.AllowFlush:
			return nil, fmt.Errorf("%s: %w: cannot tell whether %s holds keys (%v); kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target",
				a.cfg.Name, ErrNotEmpty, a.cfg.Addr, err)
		case n > 0 && !a.cfg.AllowFlush:
			keys := " keys"
			if n == 1 {
				keys = " key"
			}
			return nil, fmt.Errorf("%s: %w: %s holds %s; kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target",
				a.cfg.Name, ErrNotEmpty, a.cfg.Addr, thousands(n)+keys)
		}
		inst.info.Flushed = n > 0 || err != nil
	}
	if _, err := c.do(flushTimeout, "FLUSHALL"); err != nil {
		return nil, fmt.Errorf("%s: FLUSHALL on %s refused: %w", a.cfg.Name, a.cfg.Addr, err)
	}
	a.started = true
	inst.info.StartedIn = time.Since(started)
	return inst, nil
}

// keys counts the server's keys: the sum of INFO keyspace's databases, or
// DBSIZE (the current database) if larger.
func (c *client) keys() (int64, error) {
	var n int64
	info, ierr := c.info(cmdTimeout, "keyspace")
	for k, v := range info {
		var db, keys int64
		if _, err := fmt.Sscanf(k, "db%d", &db); err != nil {
			continue
		}
		if _, err := fmt.Sscanf(v, "keys=%d", &keys); err == nil {
			n += keys
		}
	}
	v, derr := c.do(cmdTimeout, "DBSIZE")
	if size, ok := v.(int64); derr == nil && ok {
		return max(n, size), nil
	}
	if ierr == nil {
		return n, nil
	}
	return 0, fmt.Errorf("INFO keyspace: %w; DBSIZE: %w", ierr, derr)
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
