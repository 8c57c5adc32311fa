package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// AttachConfig configures an Attach target.
type AttachConfig struct {
	// Name is the target's name (required).
	Name string
	// Addr is the server's host:port, or unix:PATH for a Unix socket
	// (required, unless Cluster is set and Addrs is not empty).
	Addr string
	// Cluster says the server is a Redis Cluster: Addr and Addrs are seed
	// nodes, the first that answers gives the masters (CLUSTER SLOTS), and
	// every master is checked, counted and emptied.
	Cluster bool
	// Addrs are more seed nodes of a cluster, host:port (Cluster only).
	Addrs []string
	// Password, if set, is sent with AUTH.
	Password string
	// User, if set, is the ACL user of AUTH.
	User string
	// DB, when positive, is the database every connection selects (not
	// in a cluster, which has only database 0).
	DB int
	// RESP3 makes every connection (to every node of a cluster) switch to
	// RESP3 with HELLO 3; a server that refuses it is refused.
	RESP3 bool
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
	// TLS, when set, reaches the server (every node of a cluster) over
	// TLS with this client configuration.
	TLS *tls.Config
	// TLSFiles are the settings TLS was made from (Info.TLSFiles).
	TLSFiles tlsconf.Options
	// AllowFlush lets Start empty a server that holds keys kvbench did
	// not write; without it such a server is refused (ErrNotEmpty).
	AllowFlush bool
	// PersistJobs are the commands that set off the server's persistence
	// jobs (ParsePersistJobs); none when nil.
	PersistJobs map[string][]string
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
	switch {
	case len(cfg.Addrs) > 0 && !cfg.Cluster:
		return nil, fmt.Errorf("%s: addrs: several addresses are a cluster's seeds: set cluster: true, or give one addr", cfg.Name)
	case cfg.Cluster && cfg.Addr == "" && len(cfg.Addrs) == 0:
		return nil, fmt.Errorf("%s: a cluster needs a seed address: addr or addrs", cfg.Name)
	}
	for _, addr := range cfg.seeds() {
		if path, socket := control.SocketPath(addr); socket {
			switch {
			case path == "":
				return nil, fmt.Errorf("%s: socket: want the path of a Unix socket", cfg.Name)
			case cfg.Cluster:
				return nil, fmt.Errorf("%s: socket %s: a cluster's nodes are reached over TCP: give their host:port", cfg.Name, path)
			case cfg.TLS != nil:
				return nil, fmt.Errorf("%s: socket %s: TLS needs a TCP server: a Unix socket is plaintext", cfg.Name, path)
			}
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%s: addr %q: want host:port: %w", cfg.Name, addr, err)
		}
	}
	switch {
	case cfg.DB < 0:
		return nil, fmt.Errorf("%s: db %d: want a database number >= 0", cfg.Name, cfg.DB)
	case cfg.DB > 0 && cfg.Cluster:
		return nil, fmt.Errorf("%s: db %d: a cluster has only database 0", cfg.Name, cfg.DB)
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
	desc.User, desc.DB, desc.RESP3, desc.PersistJobs = cfg.User, cfg.DB, cfg.RESP3, cfg.PersistJobs
	return &Attach{cfg: cfg, desc: desc}, nil
}

// Desc describes the target.
func (a *Attach) Desc() Desc { return a.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (a *Attach) Config() AttachConfig { return a.cfg }

func (a *Attach) creds() creds {
	return creds{Options: control.Options{User: a.cfg.User, Password: a.cfg.Password, DB: a.cfg.DB, RESP3: a.cfg.RESP3, TLS: a.cfg.TLS}}
}

// seeds are the addresses to try: Addr, then Addrs.
func (cfg AttachConfig) seeds() []string {
	if cfg.Addr == "" {
		return cfg.Addrs
	}
	return append([]string{cfg.Addr}, cfg.Addrs...)
}

// Start waits for the server to answer PING, checks its configuration
// against s's expectations, and empties it with FLUSHALL (an error if the
// server refuses). Before kvbench's first attempt, a server holding keys is
// refused with an error wrapping ErrNotEmpty unless AllowFlush is set; with
// it, the instance's Info.Flushed says the keys were deleted. For a
// cluster, every master is checked and emptied, and the keys counted are
// the sum over the masters; Info.Nodes lists them.
func (a *Attach) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.desc.Strategy(s.Name)
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", a.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	started := time.Now()
	addrs := []string{a.cfg.Addr}
	if a.cfg.Cluster {
		var err error
		if addrs, err = clusterMasters(ctx, a.cfg.seeds(), a.creds(), started, env.readyTimeout()); err != nil {
			return nil, fmt.Errorf("%s: %w", a.cfg.Name, err)
		}
	}
	var inst *instance
	clients := make([]*control.Conn, 0, len(addrs))
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for _, addr := range addrs {
		in, err := ready(ctx, nil, s, addr, a.creds(), configParams(redisParams, s), env, attached, started)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.cfg.Name, err)
		}
		if inst == nil {
			inst = in
			inst.info.TLS, inst.info.TLSFiles = a.cfg.TLS, a.cfg.TLSFiles
		}
		c, err := dialControl(ctx, addr, a.creds(), cmdTimeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.cfg.Name, err)
		}
		clients = append(clients, c)
	}
	where := a.cfg.Addr
	if a.cfg.Cluster {
		where = fmt.Sprintf("the cluster's %d masters (%s)", len(addrs), strings.Join(addrs, ", "))
		inst.info.Nodes = addrs
	}
	held := false // the server held keys kvbench did not write, or may have
	if !a.started {
		var n int64
		var err error
		for i, c := range clients {
			k, kerr := keyCount(ctx, c)
			if kerr != nil {
				if len(addrs) > 1 {
					kerr = fmt.Errorf("%s: %w", addrs[i], kerr)
				}
				err = kerr
				break
			}
			n += k
		}
		switch {
		case errors.Is(err, errNoKeyCount) && !a.cfg.AllowFlush:
			return nil, fmt.Errorf("%s: %w: cannot tell whether %s holds keys: %v; kvbench empties attach targets between attempts: if it holds nothing you need, pass --allow-flush or set allow_flush: true for this target",
				a.cfg.Name, ErrNotEmpty, where, err)
		case err != nil && !a.cfg.AllowFlush:
			return nil, fmt.Errorf("%s: %w: cannot tell whether %s holds keys (%v); kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target",
				a.cfg.Name, ErrNotEmpty, where, err)
		case n > 0 && !a.cfg.AllowFlush:
			keys := " keys"
			if n == 1 {
				keys = " key"
			}
			verb := " holds "
			if a.cfg.Cluster {
				verb = " hold "
			}
			return nil, fmt.Errorf("%s: %w: %s%s%s; kvbench empties attach targets between attempts: pass --allow-flush or set allow_flush: true for this target",
				a.cfg.Name, ErrNotEmpty, where, verb, thousands(n)+keys)
		}
		if errors.Is(err, errNoKeyCount) {
			inst.info.Notes = append(inst.info.Notes, NoteNoKeyCount)
		}
		held = n > 0 || err != nil
	}
	flushed := 0
	for i, c := range clients {
		_, err := c.Do(ctx, "FLUSHALL")
		switch {
		case Unsupported(err):
			continue // said below, once
		case err != nil:
			return nil, fmt.Errorf("%s: FLUSHALL on %s refused: %w", a.cfg.Name, addrs[i], err)
		}
		flushed++
	}
	if flushed < len(clients) {
		inst.info.Notes = append(inst.info.Notes, NoteNoFlush)
	}
	inst.info.Flushed = held && flushed > 0
	a.started = true
	inst.info.StartedIn = time.Since(started)
	return inst, nil
}

// clusterMasters asks the seeds in turn, until one answers or timeout
// from started has passed, for the cluster's state (it must be ok) and its
// masters, in slot order. A seed that does not answer costs one dial.
func clusterMasters(ctx context.Context, seeds []string, cr creds, started time.Time, timeout time.Duration) ([]string, error) {
	deadline := started.Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var errs []error
		refused := 0
		for _, seed := range seeds {
			masters, err := seedMasters(ctx, seed, cr, min(max(time.Until(deadline), time.Millisecond), time.Second))
			if err == nil {
				return masters, nil
			}
			// A server that refuses CLUSTER INFO (no cluster support)
			// will not change its mind.
			var re *control.ReplyError
			if errors.As(err, &re) || errors.Is(err, control.ErrAuth) || errors.Is(err, control.ErrNotRESP) {
				refused++
			}
			errs = append(errs, fmt.Errorf("seed %s: %w", seed, err))
		}
		if refused == len(seeds) {
			return nil, fmt.Errorf("%w: no seed can give the cluster's masters: %w", ErrConfigMismatch, errors.Join(errs...))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: no seed gave the cluster's masters within %v: %w", ErrNotReady, timeout, errors.Join(errs...))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// seedMasters asks seed for the cluster's masters.
func seedMasters(ctx context.Context, seed string, cr creds, dial time.Duration) ([]string, error) {
	c, err := dialControl(ctx, seed, cr, dial)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, err := clusterInfo(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("CLUSTER INFO: %w", err)
	}
	if st := info["cluster_state"]; st != "ok" {
		return nil, fmt.Errorf("cluster_state is %q, want ok", st)
	}
	slots, err := clusterSlots(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	var masters []string
	for _, e := range strings.Fields(slots) {
		_, nodes, _ := strings.Cut(e, ":")
		m, _, _ := strings.Cut(nodes, ",")
		if !slices.Contains(masters, m) {
			masters = append(masters, m)
		}
	}
	if len(masters) == 0 {
		return nil, errors.New("CLUSTER SLOTS lists no master")
	}
	return masters, nil
}

// Notes on what an attach target's server lacks, in Info.Notes: what
// kvbench could not do, and what the user can do instead.
const (
	// NoteNoKeyCount: before the first attempt, the keys could not be
	// counted; --allow-flush let the attempt go on.
	NoteNoKeyCount = "keys not counted: INFO keyspace and DBSIZE unsupported"
	// NoteNoFlush: the server was not emptied before the attempt.
	NoteNoFlush = "not emptied: FLUSHALL unsupported, the attempt found the keys of those before (restart the server before each run, or measure it as a command target, which starts a fresh server per attempt)"
)

// errNoKeyCount is keyCount's error for a server that has neither INFO
// keyspace nor DBSIZE.
var errNoKeyCount = errors.New("it has neither INFO keyspace nor DBSIZE")

// keys counts the server's keys: the sum of INFO keyspace's databases, or
// DBSIZE (the current database) if larger. A server that lacks both
// fails with an error wrapping errNoKeyCount.
func keyCount(ctx context.Context, c *control.Conn) (int64, error) {
	var n int64
	info, ierr := c.Info(ctx, "keyspace")
	for k, v := range info {
		var db, keys int64
		if _, err := fmt.Sscanf(k, "db%d", &db); err != nil {
			continue
		}
		if _, err := fmt.Sscanf(v, "keys=%d", &keys); err == nil {
			n += keys
		}
	}
	v, derr := c.Do(ctx, "DBSIZE")
	if size, ok := v.(int64); derr == nil && ok {
		return max(n, size), nil
	}
	if ierr == nil {
		return n, nil
	}
	if Unsupported(ierr) && Unsupported(derr) {
		return 0, fmt.Errorf("%w (INFO keyspace: %v; DBSIZE: %v)", errNoKeyCount, ierr, derr)
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
