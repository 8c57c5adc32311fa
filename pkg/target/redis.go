package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Replicas is the number of replicas started beside every instance
	// of a redis target, each a redis-server of the strategy's
	// configuration following the master (replicaof); the load goes to
	// the master, whose WAIT counts them. (A redis-cluster's replicas
	// per master are RedisClusterConfig.Replicas.)
	Replicas int
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
	if cfg.Replicas < 0 || cfg.Replicas >= MaxClusterNodes {
		return nil, fmt.Errorf("%s: replicas %d: want 0 to %d", cfg.Name, cfg.Replicas, MaxClusterNodes-1)
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
	r.desc = Desc{Name: cfg.Name, Kind: KindRedis, SetCmd: cfg.SetCmd, GetCmd: cfg.GetCmd, DB: cfg.DB, RESP3: cfg.RESP3,
		PersistJobs: serverJobs(), Replicas: cfg.Replicas}
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
	started := time.Now()
	cr, tlsLines, err := r.tlsSetup(env.Dir)
	if err != nil {
		return nil, err
	}
	cr.DB, cr.RESP3 = r.cfg.DB, r.cfg.RESP3
	if r.cfg.Replicas == 0 {
		return spawnOnFreePort(ctx, r.cfg.Name, s, env, redisParams, mustOwn, true, cr, r.argv(r.cfg.Name, env.Dir, lines, tlsLines))
	}
	// A replica's first sync starts at once, not 5 s later.
	lines = append(slices.Clone(lines), "repl-diskless-sync-delay 0")
	if tlsLines != nil {
		tlsLines = append(tlsLines, "tls-replication yes")
	}
	master, err := spawnOnPort(ctx, r.cfg.Name, s, env, redisParams, mustOwn, true, cr, freePort, r.argv(r.cfg.Name, env.Dir, lines, tlsLines))
	if err != nil {
		return nil, err
	}
	g := &clusterInstance{cr: cr, nodes: []*clusterNode{{inst: master}}, info: master.info}
	_, port, _ := net.SplitHostPort(master.info.Addr)
	for i := range r.cfg.Replicas {
		name := fmt.Sprintf("%s replica %d", r.cfg.Name, i+1)
		renv := env
		renv.Dir = filepath.Join(env.Dir, "replica-"+strconv.Itoa(i+1))
		if err := os.Mkdir(renv.Dir, 0o755); err != nil {
			g.stopAll(ctx)
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rep, err := spawnOnPort(ctx, name, s, renv, redisParams, mustOwn, true, cr, freePort,
			r.argv(name, renv.Dir, append(slices.Clone(lines), "replicaof 127.0.0.1 "+port), tlsLines))
		if err != nil {
			g.stopAll(ctx)
			return nil, err
		}
		g.nodes = append(g.nodes, &clusterNode{inst: rep})
	}
	if err := r.awaitReplicas(ctx, g, started.Add(env.readyTimeout())); err != nil {
		g.stopAll(ctx)
		return nil, fmt.Errorf("%s: %w", r.cfg.Name, err)
	}
	g.info.StartedIn = time.Since(started)
	return g, nil
}

// argv returns the command line of a redis-server named name in dir on a
// port: its redis.conf written there with the configuration lines and
// the target's own.
func (r *Redis) argv(name, dir string, lines, tlsLines []string) func(port int) ([]string, error) {
	return func(port int) ([]string, error) {
		listen := []string{"port " + strconv.Itoa(port)}
		if tlsLines != nil {
			listen = append([]string{"port 0", "tls-port " + strconv.Itoa(port)}, tlsLines...)
		}
		head := append(append([]string{"bind 127.0.0.1"}, listen...),
			"dir "+redisQuote(dir),
			"daemonize no",
			`logfile ""`,
		)
		text := strings.Join(slices.Concat(head, lines, r.cfg.Config), "\n") + "\n"
		conf := filepath.Join(dir, "redis.conf")
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return []string{r.cfg.Bin, conf}, nil
	}
}

// awaitReplicas waits until every replica of g reports its link to the
// master up and the master counts them all, until deadline.
func (r *Redis) awaitReplicas(ctx context.Context, g *clusterInstance, deadline time.Time) error {
	var conns []*control.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, nd := range g.nodes {
		c, err := dialControl(ctx, nd.inst.info.Addr, g.cr, sampleTimeout)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	want := strconv.Itoa(len(g.nodes) - 1)
	return awaitState(ctx, deadline, ErrNotReady, "every replica in sync with its master", func() (string, bool, error) {
		for i, c := range conns {
			rep, err := c.Info(ctx, "replication")
			if err != nil {
				return "", false, fmt.Errorf("INFO replication on %s: %w", c.Addr(), err)
			}
			switch {
			case i == 0 && rep["connected_slaves"] != want:
				return fmt.Sprintf("the master counts %s replicas, want %s", rep["connected_slaves"], want), false, nil
			case i > 0 && rep["master_link_status"] != "up":
				return fmt.Sprintf("replica %s reports master_link_status:%s", c.Addr(), rep["master_link_status"]), false, nil
			}
		}
		return "", true, nil
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
