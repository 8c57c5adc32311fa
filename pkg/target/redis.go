package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Redis defaults.
const (
	// DefaultRedisName is the redis target's name.
	DefaultRedisName = "redis"
	// DefaultRedisBin is looked up on PATH.
	DefaultRedisBin = "redis-server"
	// DefaultRedisStrategies are the strategies run by default.
	DefaultRedisStrategies = "none aof_no aof_everysec"
	// RedisDefaultSave are Redis's default RDB save rules (since 6.2),
	// written explicitly for the rdb_default strategy so that every
	// version runs the same rules.
	RedisDefaultSave = "3600 1 300 100 60 10000"
)

// redisStrategies are redis-server's strategies, each with its
// configuration lines.
var redisStrategies = []struct {
	name, persistence string
	save, aof, fsync  string
}{
	{"none", "none", "", "no", ""},
	{"rdb_default", "rdb", RedisDefaultSave, "no", ""},
	{"aof_no", "no", "", "yes", "no"},
	{"aof_everysec", "everysec", "", "yes", "everysec"},
	{"aof_always", "always", "", "yes", "always"},
}

// RedisConfig configures a Redis target. Zero fields take the defaults.
type RedisConfig struct {
	// Name is the target's name; DefaultRedisName when empty.
	Name string
	// Bin is the redis-server executable, a path or a name on PATH;
	// DefaultRedisBin when empty.
	Bin string
	// SetCmd and GetCmd are the load generator's commands; SET and GET
	// when empty.
	SetCmd, GetCmd string
	// Defaults names the strategies run by default;
	// DefaultRedisStrategies when nil.
	Defaults []string
	// Config holds more configuration lines for every instance
	// ("maxmemory 2gb").
	Config []string
	// TLS makes every instance serve TLS only.
	TLS RedisTLS
	// DB, when positive, is the database every connection selects (not
	// in a redis-cluster, which has only database 0).
	DB int
	// RESP3 makes every connection, the load's and kvbench's own, switch
	// to RESP3 with HELLO 3.
	RESP3 bool
}

// RedisTLS makes a redis target serve TLS only ("port 0" and a
// "tls-port"), with a CA and certificates kvbench generates in each
// instance's directory (tlsconf.WriteFiles); kvbench's own connections
// trust that CA and, with Mutual, present its client certificate.
type RedisTLS struct {
	// Enabled turns TLS on.
	Enabled bool
	// Mutual makes redis-server require a client certificate signed by
	// the CA ("tls-auth-clients yes", Redis's default).
	Mutual bool
}

// Redis is redis-server, run with a generated configuration file in a
// fresh directory per instance.
type Redis struct {
	cfg  RedisConfig
	desc Desc
	conf map[string][]string // strategy → its configuration lines
}

// NewRedis returns the redis target. The error wraps ErrNotFound when the
// executable cannot be found.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultRedisName
	}
	if cfg.Bin == "" {
		cfg.Bin = DefaultRedisBin
	}
	if cfg.DB < 0 {
		return nil, fmt.Errorf("%s: db %d: want a database number >= 0", cfg.Name, cfg.DB)
	}
	bin, err := exec.LookPath(cfg.Bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", cfg.Name, ErrNotFound, err)
	}
	cfg.Bin = bin
	if cfg.SetCmd == "" {
		cfg.SetCmd = "SET"
	}
	if cfg.GetCmd == "" {
		cfg.GetCmd = "GET"
	}
	if cfg.Defaults == nil {
		cfg.Defaults = strings.Fields(DefaultRedisStrategies)
	}
	r := &Redis{cfg: cfg, conf: make(map[string][]string)}
	r.desc = Desc{Name: cfg.Name, Kind: KindRedis, SetCmd: cfg.SetCmd, GetCmd: cfg.GetCmd, DB: cfg.DB, RESP3: cfg.RESP3}
	for _, st := range redisStrategies {
		save := `""`
		if st.save != "" {
			save = st.save
		}
		lines := []string{"save " + save, "appendonly " + st.aof}
		expect := map[string]string{"save": st.save, "appendonly": st.aof}
		if st.fsync != "" {
			lines = append(lines, "appendfsync "+st.fsync)
			expect["appendfsync"] = st.fsync
		}
		r.conf[st.name] = lines
		r.desc.Strategies = append(r.desc.Strategies, Strategy{Name: st.name, Persistence: st.persistence, Expect: expect})
	}
	sel, unknown := r.desc.Select(cfg.Defaults)
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: %w %s", cfg.Name, ErrUnknownStrategy, strings.Join(unknown, ", "))
	}
	for _, s := range sel {
		r.desc.Defaults = append(r.desc.Defaults, s.Name)
	}
	return r, nil
}

// Desc describes the target.
func (r *Redis) Desc() Desc { return r.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (r *Redis) Config() RedisConfig { return r.cfg }

// Start writes redis.conf for strategy s into env.Dir and runs
// redis-server with it on a free port.
func (r *Redis) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	lines, ok := r.conf[s.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", r.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	env, err := env.abs()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(env.Dir, "redis.conf")
	cr, tlsLines, err := r.tlsSetup(env.Dir)
	if err != nil {
		return nil, err
	}
	cr.DB, cr.RESP3 = r.cfg.DB, r.cfg.RESP3
	return spawnOnFreePort(ctx, r.cfg.Name, s, env, redisParams, mustOwn, true, cr, func(port int) ([]string, error) {
		listen := []string{"port " + strconv.Itoa(port)}
		if tlsLines != nil {
			listen = append([]string{"port 0", "tls-port " + strconv.Itoa(port)}, tlsLines...)
		}
		head := append(append([]string{"bind 127.0.0.1"}, listen...),
			"dir "+redisQuote(env.Dir),
			"daemonize no",
			`logfile ""`,
		)
		text := strings.Join(append(head, append(lines, r.cfg.Config...)...), "\n") + "\n"
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", r.cfg.Name, err)
		}
		return []string{r.cfg.Bin, conf}, nil
	})
}

// tlsSetup writes the certificates of a TLS instance into dir and returns
// the client side and redis.conf's TLS lines; nothing without TLS.
func (r *Redis) tlsSetup(dir string) (creds, []string, error) {
	if !r.cfg.TLS.Enabled {
		return creds{}, nil, nil
	}
	f, err := tlsconf.WriteFiles(dir, tlsconf.DefaultValidity)
	if err != nil {
		return creds{}, nil, fmt.Errorf("%s: certificates: %w", r.cfg.Name, err)
	}
	opts := tlsconf.Options{Enabled: true, CAFile: f.CA}
	auth := "no"
	if r.cfg.TLS.Mutual {
		opts.CertFile, opts.KeyFile, auth = f.ClientCert, f.ClientKey, "yes"
	}
	c, err := opts.Config()
	if err != nil {
		return creds{}, nil, fmt.Errorf("%s: %w", r.cfg.Name, err)
	}
	return creds{Options: control.Options{TLS: c}, files: opts}, []string{
		"tls-cert-file " + redisQuote(f.ServerCert),
		"tls-key-file " + redisQuote(f.ServerKey),
		"tls-ca-cert-file " + redisQuote(f.CA),
		"tls-auth-clients " + auth,
	}, nil
}

// redisQuote quotes s for redis.conf, whose parser knows \\ and \" but
// not Go's \u escapes: other bytes go as they are.
func redisQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// portTries is how many ports spawnOnFreePort tries.
const portTries = 3

// spawnOnFreePort starts a server on a port kvbench chose free (discard as
// proc.discard), and tries another port when the server exits before
// answering PING or another process answers there: the port was taken
// between choosing and binding.
func spawnOnFreePort(ctx context.Context, name string, s Strategy, env Env, params []string, own ownership, discard bool, cr creds, argv func(port int) ([]string, error)) (Instance, error) {
	inst, err := spawnOnPort(ctx, name, s, env, params, own, discard, cr, freePort, argv)
	if err != nil {
		return nil, err
	}
	return inst, nil
}

// spawnOnPort is spawnOnFreePort with the port chosen by pick.
func spawnOnPort(ctx context.Context, name string, s Strategy, env Env, params []string, own ownership, discard bool, cr creds, pick func() (int, error), argv func(port int) ([]string, error)) (*instance, error) {
	started := time.Now()
	var err error
	for range portTries {
		port, perr := pick()
		if perr != nil {
			return nil, fmt.Errorf("%s: find a free port: %w", name, perr)
		}
		args, aerr := argv(port)
		if aerr != nil {
			return nil, aerr
		}
		p, serr := startProc(ctx, name, args, env.Dir, newLogTail(nil), env.Tracker, discard)
		if serr != nil {
			return nil, serr
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		inst, rerr := ready(ctx, p, s, addr, cr, params, env, own, started)
		if rerr == nil {
			inst.info.TLS, inst.info.TLSFiles = cr.TLS, cr.files
			return inst, nil
		}
		err = rerr
		if ctx.Err() != nil || !(errors.Is(rerr, ErrExited) || errors.Is(rerr, ErrNotOurs)) {
			break
		}
	}
	return nil, err
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
