package target

import (
	"context"
	"fmt"
	"net"
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
}

// flushTimeout bounds FLUSHALL, which takes a while on a large keyspace.
const flushTimeout = time.Minute

// Attach is a running server kvbench does not start: every Start flushes
// its keyspace (FLUSHALL) and checks it, every Stop leaves it running.
type Attach struct {
	cfg  AttachConfig
	desc Desc
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
// server refuses).
func (a *Attach) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
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
	if _, err := c.do(flushTimeout, "FLUSHALL"); err != nil {
		return nil, fmt.Errorf("%s: FLUSHALL on %s refused: %w", a.cfg.Name, a.cfg.Addr, err)
	}
	inst.info.StartedIn = time.Since(started)
	return inst, nil
}
