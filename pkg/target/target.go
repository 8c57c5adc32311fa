package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Kind is the kind of a target.
type Kind string

// The kinds of target.
const (
	// KindKvstore is the embedded kvstore ("kvbench serve").
	KindKvstore Kind = "kvstore"
	// KindRedis is redis-server.
	KindRedis Kind = "redis"
	// KindCommand is any server started from a command line.
	KindCommand Kind = "command"
	// KindAttach is a running server kvbench does not start.
	KindAttach Kind = "attach"
	// KindRedisCluster is a Redis Cluster of redis-server nodes.
	KindRedisCluster Kind = "redis-cluster"
)

// DefaultReadyTimeout bounds how long a started server may take to answer
// PING.
const DefaultReadyTimeout = 10 * time.Second

// Sentinel errors, tested with errors.Is.
var (
	// ErrConfigMismatch: the server's effective configuration is not what
	// the strategy asked for. Retrying does not help.
	ErrConfigMismatch = errors.New("effective configuration differs from the strategy")
	// ErrExited: the server process exited.
	ErrExited = errors.New("server exited")
	// ErrNotReady: the server did not answer PING in time.
	ErrNotReady = errors.New("server not ready")
	// ErrNotOurs: the address answered, but from a process kvbench did not
	// start.
	ErrNotOurs = errors.New("server at the address is not the one started")
	// ErrNotFound: the server's executable could not be found.
	ErrNotFound = errors.New("server executable not found")
	// ErrUnknownStrategy: a strategy the target does not know.
	ErrUnknownStrategy = errors.New("unknown strategy")
	// ErrNotEmpty: an attached server holds keys kvbench did not write,
	// and emptying it was not allowed. Retrying does not help.
	ErrNotEmpty = errors.New("server not empty")
	// ErrRefused: the server refused the credentials (wrapping
	// control.ErrAuth), or what answers is not a RESP server (wrapping
	// control.ErrNotRESP). Retrying does not help.
	ErrRefused = errors.New("server refused the connection")
)

// Target is a server kvbench measures: a description and a way to get a
// fresh, verified instance of it for a strategy.
type Target interface {
	// Desc describes the target. It is plain data and does not change.
	Desc() Desc
	// Start starts (or, for an attached server, prepares) a fresh instance
	// configured for strategy s and returns it once it answers PING and
	// its effective configuration matches s. On error nothing is left
	// running.
	Start(ctx context.Context, s Strategy, env Env) (Instance, error)
}

// Instance is one running server.
type Instance interface {
	// Info describes the instance: address, process, version, config.
	Info() Info
	// Err returns nil while the server runs, and an error wrapping
	// ErrExited (with the last lines of its output) once it has exited.
	Err() error
	// Exited is closed once the server has exited (any node of a
	// cluster): Err then says how. An attached server's never closes.
	Exited() <-chan struct{}
	// Stop stops the server and waits for it. A kvstore or redis
	// instance, whose files the caller removes (Env.Dir), is killed at
	// once (SIGKILL to its process group): its own shutdown would only
	// save or sync them. A command instance gets SIGTERM, then SIGKILL
	// once ctx is done. An attached server is left running. It is safe to
	// call more than once.
	Stop(ctx context.Context) error
}

// Env is what the caller provides to one Start.
type Env struct {
	// Dir is an empty directory for the instance's files, created before
	// Start and removed by the caller after Stop; for Restart, the
	// directory a killed instance left.
	Dir string
	// Tracker, if set, records the processes started, so that they can be
	// killed at once.
	Tracker *Tracker
	// ReadyTimeout bounds the wait for PING; 0 means DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// abs returns e with an absolute Dir: servers run in it, and relative
// paths would be taken from there.
func (e Env) abs() (Env, error) {
	if e.Dir == "" {
		return e, nil
	}
	d, err := filepath.Abs(e.Dir)
	if err != nil {
		return e, fmt.Errorf("instance directory: %w", err)
	}
	e.Dir = d
	return e, nil
}

func (e Env) readyTimeout() time.Duration {
	if e.ReadyTimeout > 0 {
		return e.ReadyTimeout
	}
	return DefaultReadyTimeout
}

// Desc describes a target.
type Desc struct {
	// Name labels the target's rows (the detail CSV's target column).
	Name string
	// Kind is the kind of target.
	Kind Kind
	// SetCmd and GetCmd are the write and read commands the load generator
	// sends to it.
	SetCmd, GetCmd string
	// Password, if set, is sent with AUTH on every connection.
	Password string
	// User, if set, is the ACL user of that AUTH (attach targets).
	User string
	// DB, when positive, is the database every connection selects.
	DB int
	// RESP3 says every connection switches to RESP3 with HELLO 3.
	RESP3 bool
	// Strategies lists every strategy the target knows, in a fixed order.
	Strategies []Strategy
	// Defaults names the strategies run when none are asked for.
	Defaults []string
	// PersistJobs are the commands that set off the persistence jobs
	// (JobBGSave, JobRewrite) on each of its masters; PersistJob says
	// which strategies have each.
	PersistJobs map[string][]string
	// Replicas is the number of replicas per master kvbench starts for
	// every instance (a redis or redis-cluster target's replicas:); 0
	// for none, or for a server kvbench does not start.
	Replicas int
}

// Strategy returns the strategy named name.
func (d Desc) Strategy(name string) (Strategy, bool) {
	for _, s := range d.Strategies {
		if s.Name == name {
			return s, true
		}
	}
	return Strategy{}, false
}

// Select returns the strategies with the given names, in the target's
// order; a name may also be an Alias, selecting every strategy that has it.
// Names the target does not know are returned in unknown.
func (d Desc) Select(names []string) (selected []Strategy, unknown []string) {
	want := make(map[string]bool)
	for _, n := range names {
		found := false
		for _, s := range d.Strategies {
			if s.Name == n || (s.Alias != "" && s.Alias == n) {
				want[s.Name], found = true, true
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	for _, s := range d.Strategies {
		if want[s.Name] {
			selected = append(selected, s)
		}
	}
	return selected, unknown
}

// Strategy is one server configuration to measure.
type Strategy struct {
	// Name labels the strategy's rows (the strategy column).
	Name string
	// Alias is a second name selecting this strategy, possibly with
	// others: the kvstore's allocator variants (nopersist_mypool,
	// nopersist_malloc) have their persistence strategy's name (nopersist).
	Alias string
	// Persistence is the durability class: none, no, everysec, always,
	// rdb, or a name for other servers. "none" marks the baseline.
	Persistence string
	// Alloc is the allocator, for servers that have a choice (mypool,
	// malloc); empty otherwise.
	Alloc string
	// Args are extra command-line arguments (command targets).
	Args []string
	// Expect maps CONFIG GET parameters to the values the strategy
	// requires; the instance is refused when the server reports otherwise.
	Expect map[string]string
}

// Info describes a running instance.
type Info struct {
	// Addr is the server's host:port (a cluster's: its first master's).
	Addr string
	// Nodes lists a cluster's masters, host:port, in slot order; empty
	// for a single server.
	Nodes []string
	// PID is the process started (0 for an attached server).
	PID int
	// NodePIDs are the processes of Nodes' servers, in Nodes' order (0
	// for a server kvbench did not start); empty for a single server.
	NodePIDs []int
	// Version is the server's version from INFO server (kvstore_version
	// or another server's own version field when present, else
	// redis_version).
	Version string
	// Config is the effective configuration read with CONFIG GET, as
	// "param=value" pairs separated by semicolons
	// ("save=;appendonly=yes;appendfsync=everysec"); empty when the
	// server does not support CONFIG GET.
	Config string
	// StartedIn is the time from Start to ready.
	StartedIn time.Duration
	// Flushed is set when Start emptied a server that held keys kvbench
	// had not written (an attach target allowed to).
	Flushed bool
	// TLS is the client configuration that reaches the server over TLS;
	// nil when it is reached in plaintext.
	TLS *tls.Config
	// TLSFiles are the settings TLS was made from (its CA, certificate
	// and key files), which another process, a load agent, can use.
	TLSFiles tlsconf.Options
	// User is the ACL user every connection authenticates as (with the
	// target's password); empty: the default user.
	User string
	// DB, when positive, is the database every connection selects.
	DB int
	// RESP3 says every connection switches to RESP3 with HELLO 3.
	RESP3 bool
	// Notes say what kvbench could not read or do on the server because
	// it lacks the command (NoteNoConfig, NoteNoInfo, an attach target's
	// flush or key count), each once.
	Notes []string
}

// Control returns how a connection reaches the instance: its ACL user,
// password, database, protocol and TLS.
func (i Info) Control(password string) control.Options {
	return control.Options{User: i.User, Password: password, DB: i.DB, RESP3: i.RESP3, TLS: i.TLS}
}

// Masters returns the addresses of the servers holding the keys: a
// cluster's masters (Nodes), else Addr alone.
func (i Info) Masters() []string {
	if len(i.Nodes) > 0 {
		return slices.Clone(i.Nodes)
	}
	return []string{i.Addr}
}

// formatConfig formats CONFIG GET results in the order of params, as
// "param=value" pairs separated by semicolons.
func formatConfig(params []string, got map[string]string) string {
	var pairs []string
	for _, p := range params {
		if v, ok := got[p]; ok {
			pairs = append(pairs, p+"="+v)
		}
	}
	return strings.Join(pairs, ";")
}

// checkExpect compares the effective configuration with the strategy's
// expectations.
func checkExpect(s Strategy, got map[string]string, supported bool) error {
	if len(s.Expect) == 0 {
		return nil
	}
	if !supported {
		return fmt.Errorf("%w: strategy %s: the server does not answer CONFIG GET, so its configuration cannot be verified", ErrConfigMismatch, s.Name)
	}
	var diffs []string
	for _, p := range slices.Sorted(maps.Keys(s.Expect)) {
		want := s.Expect[p]
		have, ok := got[p]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: want %q, the server does not report it", p, want))
		case have != want:
			diffs = append(diffs, fmt.Sprintf("%s: want %q, have %q", p, want, have))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: strategy %s: %s", ErrConfigMismatch, s.Name, strings.Join(diffs, "; "))
	}
	return nil
}

// configParams are the CONFIG GET parameters recorded for every server,
// followed by any the strategy expects.
func configParams(base []string, s Strategy) []string {
	params := slices.Clone(base)
	for _, p := range slices.Sorted(maps.Keys(s.Expect)) {
		if !slices.Contains(params, p) {
			params = append(params, p)
		}
	}
	return params
}

// redisParams are the persistence settings of Redis and its relatives.
var redisParams = []string{"save", "appendonly", "appendfsync"}
