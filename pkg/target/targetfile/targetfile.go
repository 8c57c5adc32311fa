// Package targetfile reads the YAML file of "kvbench run --config" that
// describes the targets to measure (Load, Parse): each entry a target of
// package target, made by its kind's constructor from the entry's keys
// over the command line's settings (Defaults). Every error in a file is an
// *Error naming the file and line.
package targetfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"go.yaml.in/yaml/v3"
)

// ErrConfig is wrapped by every error in a target file (an *Error).
var ErrConfig = errors.New("bad target configuration")

// Error is an error in a target file, with its position:
// "kvbench.yaml:12: strategy a: unknown key "argz"".
type Error struct {
	// File is the file name as given.
	File string
	// Line is the 1-based line, 0 when the error concerns the whole file.
	Line int
	// Msg describes the problem.
	Msg string
}

// Error formats the error as "file:line: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Unwrap returns ErrConfig.
func (e *Error) Unwrap() error { return ErrConfig }

// Defaults are what a --config file's kvstore and redis entries start from
// (the command line's settings); the file's own keys override them.
type Defaults struct {
	Kvstore target.KvstoreConfig
	Redis   target.RedisConfig
	// AllowFlush lets every attach target empty a server holding keys
	// (run --allow-flush); a target's allow_flush: true does it for one.
	AllowFlush bool
	// TLS is the command line's TLS settings (run --tls ...), the
	// default of every redis, redis-cluster, command and attach target; a
	// target's tls:
	// block overrides them. A redis or redis-cluster target takes only
	// Enabled from them. With TLS enabled, kvstore entries are refused.
	TLS tlsconf.Options
	// User is the ACL user of the attach targets that set none (run
	// --user).
	User string
	// DB is the database of the redis, command and single-server attach
	// targets that set none (run --db); the kvstore and clusters have
	// only database 0 and keep it.
	DB int
	// RESP3 switches the redis, redis-cluster, command and attach
	// targets that set no resp3: to RESP3 (run --resp3). The kvstore
	// speaks RESP2 only: with RESP3, a kvstore entry must say resp3: false.
	RESP3 bool
}

// Load reads the YAML file at path and returns its targets, in order.
// The format:
//
//	targets:
//	  - name: valkey            # the target column; required for command and attach
//	    kind: command           # kvstore, kvstore-cluster, redis, redis-cluster, command or attach
//	    command: ["valkey-server", "--port", "{port}", "--dir", "{dir}"]
//	    set_cmd: SET            # default SET (kvstore: RSET)
//	    get_cmd: GET            # default GET (kvstore: RGET)
//	    baseline: none          # the strategy whose persistence is "none"
//	    strategies:             # name: arguments appended to the command
//	      none: ["--save", "", "--appendonly", "no"]
//	      aof_everysec: ["--appendonly", "yes", "--appendfsync", "everysec"]
//	      custom:               # or the long form
//	        args: ["--appendonly", "yes"]
//	        persistence: everysec
//	        expect: {appendonly: "yes"}   # CONFIG GET values to verify
//	    defaults: [none, aof_everysec]    # run by default (all when absent)
//	    persist_jobs: {bgsave: BGSAVE, rewrite: BGREWRITEAOF}  # run --persist-job's commands (command, attach)
//	  - kind: kvstore           # bin, alloc (mypool|malloc|both), port, args
//	    alloc: both
//	    strategies: [persist_no, nopersist]   # run by default
//	  - kind: redis             # bin, config (more redis.conf lines), replicas (default 0)
//	    strategies: [none, aof_always]
//	    replicas: 1             # a replica started beside every instance (for WAIT)
//	  - kind: redis-cluster     # bin, config, shards (default 3), replicas (default 0)
//	    shards: 3
//	    replicas: 1
//	  - kind: kvstore-cluster   # bin, alloc, args, shards (default 3)
//	    shards: 3
//	  - name: remote
//	    kind: attach            # addr, addrs, cluster, password, user, db, socket, uri, allow_flush
//	    addr: 10.0.0.5:6379
//	    user: bench             # ACL user of AUTH, with password
//	    db: 3                   # SELECT 3 on every connection (redis and command targets take db too)
//	    resp3: true             # HELLO 3 on every connection (every kind but the kvstore's; default run --resp3)
//	    # socket: /run/redis/redis.sock    # a Unix socket instead of addr
//	    # uri: redis://bench:secret@10.0.0.5:6379/3   # instead of addr, password, user, db (rediss: TLS)
//	    allow_flush: true       # may delete the keys it holds (default false)
//	    cluster: false          # true: a Redis Cluster, addr and addrs its seeds
//	    strategies: [as_configured]           # labels, or name: {persistence, expect}
//	    tls:                    # redis, redis-cluster, command, attach: over TLS (overrides run --tls ...)
//	      cacert: ca.crt        # enabled (default true), cacert, cert, key, sni, insecure;
//	      cert: client.crt      # redis, redis-cluster: enabled, mutual (default true),
//	      key: client.key       # with certificates kvbench makes per instance
//
// A relative executable path (command's first word with a slash, bin) is
// taken from the file's directory. Command servers run in their instance
// directory, {dir}.
func Load(path string, d Defaults) ([]target.Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	defer f.Close()
	return Parse(f, path, d)
}

// Parse reads a target file from r (see Load); name is used in
// error messages and relative paths are taken from its directory.
func Parse(r io.Reader, name string, d Defaults) ([]target.Target, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxConfigSize+1))
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(data) > maxConfigSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("larger than %d MiB: not a target file", maxConfigSize>>20)}
	}
	p := &configParser{name: name, dir: filepath.Dir(name), lines: lineCount(data)}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode && len(doc.Content) == 0 || doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return nil, &Error{File: name, Msg: "empty file"}
	}
	if err := p.keys(doc, "the file", "targets"); err != nil {
		return nil, err
	}
	list := mapValue(doc, "targets")
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, p.at(doc, "want a non-empty list under targets:")
	}
	var targets []target.Target
	names := make(map[string]int)
	for _, n := range list.Content {
		t, err := p.target(n, d)
		if err != nil {
			return nil, err
		}
		name := t.Desc().Name
		if line, dup := names[name]; dup {
			return nil, p.at(n, "target %s is already defined on line %d", name, line)
		}
		names[name] = n.Line
		targets = append(targets, t)
	}
	return targets, nil
}

// targetYAML is one entry of targets:.
type targetYAML struct {
	Name     string    `yaml:"name"`
	Kind     string    `yaml:"kind"`
	Command  []string  `yaml:"command"`
	Addr     string    `yaml:"addr"`
	Addrs    []string  `yaml:"addrs"`
	Cluster  bool      `yaml:"cluster"`
	Password string    `yaml:"password"`
	User     string    `yaml:"user"`
	DB       *int      `yaml:"db"`
	RESP3    *bool     `yaml:"resp3"`
	Socket   string    `yaml:"socket"`
	URI      string    `yaml:"uri"`
	Bin      string    `yaml:"bin"`
	Alloc    string    `yaml:"alloc"`
	Port     *int      `yaml:"port"`
	SetCmd   string    `yaml:"set_cmd"`
	GetCmd   string    `yaml:"get_cmd"`
	Baseline string    `yaml:"baseline"`
	Config   []string  `yaml:"config"`
	Args     []string  `yaml:"args"`
	Defaults []string  `yaml:"defaults"`
	Strats   yaml.Node `yaml:"strategies"`
	Flush    bool      `yaml:"allow_flush"`
	Shards   int       `yaml:"shards"`
	Replicas int       `yaml:"replicas"`
	// PersistJobs names the commands of a command or attach target's
	// persistence jobs (target.ParsePersistJobs).
	PersistJobs map[string]string `yaml:"persist_jobs"`
}

// strategyYAML is the long form of a command or attach strategy.
type strategyYAML struct {
	Args        []string          `yaml:"args"`
	Persistence string            `yaml:"persistence"`
	Expect      map[string]string `yaml:"expect"`
}

// The keys each kind accepts.
var (
	commonKeys = []string{"name", "kind", "set_cmd", "get_cmd", "strategies", "resp3"}
	kindKeys   = map[target.Kind][]string{
		target.KindKvstore:        {"bin", "alloc", "port", "args"},
		target.KindRedis:          {"bin", "config", "db", "replicas"},
		target.KindRedisCluster:   {"bin", "config", "shards", "replicas"},
		target.KindKvstoreCluster: {"bin", "alloc", "args", "shards"},
		target.KindCommand:        {"command", "password", "db", "baseline", "defaults", "persist_jobs"},
		target.KindAttach:         {"addr", "addrs", "cluster", "password", "user", "db", "socket", "uri", "baseline", "defaults", "allow_flush", "persist_jobs"},
	}
	// refusedKeys say why a kind refuses a key that others take.
	refusedKeys = map[string]func(target.Kind) string{
		"user": func(target.Kind) string {
			return "user: an ACL user is for attach targets: kvbench sets up no ACL user on the servers it starts"
		},
		"db": func(k target.Kind) string {
			if k == target.KindKvstore {
				return "db: the kvstore has only database 0"
			}
			return "db: a cluster has only database 0"
		},
		"socket": func(target.Kind) string {
			return "socket: a Unix socket is for attach targets: kvbench starts its servers on TCP ports of its choosing"
		},
		"uri": func(target.Kind) string {
			return "uri: a URI is for attach targets: kvbench chooses the address of the servers it starts"
		},
	}
)

type configParser struct {
	name, dir string
	lines     int // the file's lines: an error's line is never past them
}

// maxConfigSize bounds a target file.
const maxConfigSize = 16 << 20

// lineCount is the number of lines of a YAML file: one more than its line
// breaks (CR LF, CR, LF, and NEL, LS, PS as the YAML parser reads them).
func lineCount(b []byte) int {
	n := 1 + bytes.Count(b, []byte("\n")) + bytes.Count(b, []byte("\r")) - bytes.Count(b, []byte("\r\n"))
	for _, br := range []string{"\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(b, []byte(br))
	}
	return n
}

// line is a line the parser names, within the file: the YAML parser names
// the line after the last for what ends with the file.
func (p *configParser) line(l int) int { return min(l, p.lines) }

func (p *configParser) at(n *yaml.Node, format string, args ...any) error {
	return &Error{File: p.name, Line: p.line(n.Line), Msg: fmt.Sprintf(format, args...)}
}

// yamlError turns the yaml package's "line N: msg" errors into
// "file:N: msg".
func (p *configParser) yamlError(err error) error {
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	// The first error's line is the error's; the others keep theirs.
	e := &Error{File: p.name}
	for i, m := range msgs {
		var line int
		if _, err := fmt.Sscanf(m, "line %d:", &line); err == nil {
			_, m, _ = strings.Cut(m, ": ")
			if i == 0 {
				e.Line = p.line(line)
			} else {
				m = fmt.Sprintf("line %d: %s", line, m)
			}
		}
		msgs[i] = m
	}
	e.Msg = strings.Join(msgs, "; ")
	return e
}

// keys checks that mapping n has only the allowed keys.
func (p *configParser) keys(n *yaml.Node, what string, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return p.at(n, "%s: want a mapping", what)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !slices.Contains(allowed, k) {
			return p.at(n.Content[i], "%s: unknown key %q (want one of %s)", what, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// target builds one target from its entry.
func (p *configParser) target(n *yaml.Node, d Defaults) (target.Target, error) {
	var t targetYAML
	if n.Kind != yaml.MappingNode {
		return nil, p.at(n, "a target: want a mapping")
	}
	if err := n.Decode(&t); err != nil {
		return nil, p.yamlError(err)
	}
	kind := target.Kind(t.Kind)
	extra, ok := kindKeys[kind]
	if !ok {
		return nil, p.at(n, "kind %q: want kvstore, kvstore-cluster, redis, redis-cluster, command or attach", t.Kind)
	}
	allowed := append(slices.Clone(commonKeys), extra...)
	if hasTLSKey(kind) || mapValue(n, "tls") != nil {
		allowed = append(allowed, "tls") // kvstore and redis-cluster: refused below, with the reason
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if why, ok := refusedKeys[n.Content[i].Value]; ok && !slices.Contains(allowed, n.Content[i].Value) {
			return nil, p.at(n.Content[i], "a %s target: %s", t.Kind, why(kind))
		}
	}
	if err := p.keys(n, "a "+t.Kind+" target", allowed...); err != nil {
		return nil, err
	}
	db := d.DB
	if t.DB != nil {
		if db = *t.DB; db < 0 {
			return nil, p.at(mapValue(n, "db"), "db %d: want a database number >= 0", db)
		}
	}
	resp3, err := p.resp3(n, t, kind, d.RESP3)
	if err != nil {
		return nil, err
	}
	tlsOpts, mutual, err := p.tlsBlock(n, kind, d.TLS)
	if err != nil {
		return nil, err
	}
	wrap := func(err error) error {
		if err != nil {
			return p.at(n, "%v", err)
		}
		return nil
	}
	jobs, err := target.ParsePersistJobs(t.PersistJobs)
	if err != nil {
		return nil, p.at(mapValue(n, "persist_jobs"), "%v", err)
	}
	strats := &t.Strats
	switch kind {
	case target.KindKvstore:
		c := d.Kvstore
		c.Name = or(t.Name, target.DefaultKvstoreName)
		c.Bin, c.Alloc = or(p.path(t.Bin), c.Bin), or(t.Alloc, c.Alloc)
		c.SetCmd, c.GetCmd = or(t.SetCmd, c.SetCmd), or(t.GetCmd, c.GetCmd)
		if t.Port != nil {
			c.Port = *t.Port
		}
		c.Args = append(slices.Clone(c.Args), t.Args...)
		if err := p.defaults(strats, &c.Defaults); err != nil {
			return nil, err
		}
		k, err := target.NewKvstore(c)
		return k, wrap(err)
	case target.KindRedis:
		c := d.Redis
		c.Name = or(t.Name, target.DefaultRedisName)
		c.Bin = or(p.path(t.Bin), c.Bin)
		c.SetCmd, c.GetCmd = or(t.SetCmd, c.SetCmd), or(t.GetCmd, c.GetCmd)
		c.Config = append(slices.Clone(c.Config), t.Config...)
		c.TLS = target.RedisTLS{Enabled: tlsOpts.Enabled, Mutual: mutual}
		c.DB, c.RESP3, c.Replicas = db, resp3, t.Replicas
		if err := p.defaults(strats, &c.Defaults); err != nil {
			return nil, err
		}
		if n := mapValue(n, "replicas"); n != nil && t.Replicas < 0 {
			return nil, p.at(n, "replicas: want 0 or more")
		}
		r, err := target.NewRedis(c)
		return r, wrap(err)
	case target.KindKvstoreCluster:
		c := target.KvstoreClusterConfig{KvstoreConfig: d.Kvstore, Shards: t.Shards}
		c.Name = or(t.Name, target.DefaultKvstoreClusterName)
		c.Bin, c.Alloc = or(p.path(t.Bin), c.Bin), or(t.Alloc, c.Alloc)
		c.SetCmd, c.GetCmd = or(t.SetCmd, c.SetCmd), or(t.GetCmd, c.GetCmd)
		c.Args = append(slices.Clone(c.Args), t.Args...)
		if err := p.defaults(strats, &c.Defaults); err != nil {
			return nil, err
		}
		if n := mapValue(n, "shards"); n != nil && t.Shards < 1 {
			return nil, p.at(n, "shards: want at least 1")
		}
		k, err := target.NewKvstoreCluster(c)
		return k, wrap(err)
	case target.KindRedisCluster:
		c := target.RedisClusterConfig{RedisConfig: d.Redis, Shards: t.Shards, Replicas: t.Replicas}
		c.Name = or(t.Name, target.DefaultRedisClusterName)
		c.Bin = or(p.path(t.Bin), c.Bin)
		c.SetCmd, c.GetCmd = or(t.SetCmd, c.SetCmd), or(t.GetCmd, c.GetCmd)
		c.Config = append(slices.Clone(c.Config), t.Config...)
		c.TLS = target.RedisTLS{Enabled: tlsOpts.Enabled, Mutual: mutual}
		if err := p.defaults(strats, &c.Defaults); err != nil {
			return nil, err
		}
		c.DB = 0 // a cluster has only database 0 (its db: key is refused)
		c.RESP3 = resp3
		if n := mapValue(n, "shards"); n != nil && t.Shards < 1 {
			return nil, p.at(n, "shards: want at least 1")
		}
		r, err := target.NewRedisCluster(c)
		return r, wrap(err)
	case target.KindCommand:
		list, err := p.strategies(strats, true)
		if err != nil {
			return nil, err
		}
		cmd := slices.Clone(t.Command)
		if len(cmd) > 0 {
			if strings.Contains(cmd[0], "/") {
				cmd[0] = p.path(cmd[0])
				if fi, err := os.Stat(cmd[0]); err != nil {
					return nil, p.at(n, "%s: %v: %v", or(t.Name, "command"), target.ErrNotFound, err)
				} else if fi.IsDir() || fi.Mode()&0o111 == 0 {
					return nil, p.at(n, "%s: %v: %s is not an executable file", or(t.Name, "command"), target.ErrNotFound, cmd[0])
				}
			} else if _, err := exec.LookPath(cmd[0]); err != nil {
				return nil, p.at(n, "%s: %v: %v", or(t.Name, "command"), target.ErrNotFound, err)
			}
		}
		tc, err := p.clientTLS(n, tlsOpts)
		if err != nil {
			return nil, err
		}
		c, err := target.NewCommand(target.CommandConfig{Name: t.Name, Command: cmd, SetCmd: t.SetCmd, GetCmd: t.GetCmd,
			Password: t.Password, DB: db, RESP3: resp3, TLS: tc, TLSFiles: tlsOpts, Baseline: t.Baseline, Strategies: list, Defaults: t.Defaults, PersistJobs: jobs})
		return c, wrap(err)
	default: // target.KindAttach
		list, err := p.strategies(strats, false)
		if err != nil {
			return nil, err
		}
		c := target.AttachConfig{Name: t.Name, Addr: t.Addr, Cluster: t.Cluster, Addrs: t.Addrs, Password: t.Password, User: or(t.User, d.User), RESP3: resp3,
			SetCmd: t.SetCmd, GetCmd: t.GetCmd, Baseline: t.Baseline, Strategies: list, Defaults: t.Defaults, AllowFlush: t.Flush || d.AllowFlush, PersistJobs: jobs}
		switch {
		case t.DB != nil && db > 0 && t.Cluster:
			return nil, p.at(mapValue(n, "db"), "db %d: a cluster has only database 0", db)
		case !t.Cluster:
			c.DB = db
		}
		if tlsOpts, err = p.endpoint(n, t, &c, tlsOpts); err != nil {
			return nil, err
		}
		if c.TLS, err = p.clientTLS(n, tlsOpts); err != nil {
			return nil, err
		}
		c.TLSFiles = tlsOpts
		a, err := target.NewAttach(c)
		return a, wrap(err)
	}
}

// resp3 is whether target entry t (node n) speaks RESP3: its resp3: key,
// else the run's default. The kvstore speaks RESP2 only (HELLO 3 answers
// NOPROTO): resp3: true is an error at the key, and so is the run's RESP3
// on a kvstore entry that does not say resp3: false.
func (p *configParser) resp3(n *yaml.Node, t targetYAML, kind target.Kind, def bool) (bool, error) {
	on := def
	if t.RESP3 != nil {
		on = *t.RESP3
	}
	if !on || kind != target.KindKvstore && kind != target.KindKvstoreCluster {
		return on, nil
	}
	name := or(t.Name, target.DefaultKvstoreName)
	if kind == target.KindKvstoreCluster {
		name = or(t.Name, target.DefaultKvstoreClusterName)
	}
	if t.RESP3 != nil {
		return false, p.at(mapValue(n, "resp3"), "target %s: resp3: the kvstore speaks RESP2 only", name)
	}
	return false, p.at(n, "target %s: the kvstore speaks RESP2 only and cannot be measured over RESP3: set resp3: false for it, drop --resp3, or leave the target out of the file", name)
}

// defaults sets *dst to the list of strategy names in n, if n is present.
func (p *configParser) defaults(n *yaml.Node, dst *[]string) error {
	names, err := p.names(n)
	if names != nil {
		*dst = names
	}
	return err
}

// names reads a list of strategy names (nil when absent).
func (p *configParser) names(n *yaml.Node) ([]string, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	var names []string
	if n.Kind != yaml.SequenceNode {
		return nil, p.at(n, "strategies: want a list of strategy names")
	}
	if err := n.Decode(&names); err != nil {
		return nil, p.yamlError(err)
	}
	return names, nil
}

// strategies reads the strategies of a command or attach target: a list of
// names (attach), or a mapping from name to arguments or to the long form.
func (p *configParser) strategies(n *yaml.Node, needArgs bool) ([]target.Strategy, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		if needArgs {
			return nil, p.at(n, "strategies: want a mapping from strategy name to its arguments")
		}
		names, err := p.names(n)
		var out []target.Strategy
		for _, name := range names {
			out = append(out, target.Strategy{Name: name})
		}
		return out, err
	case yaml.MappingNode:
	default:
		return nil, p.at(n, "strategies: want a mapping from strategy name to its arguments")
	}
	var out []target.Strategy
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s := target.Strategy{Name: k.Value}
		switch {
		case v.Kind == yaml.SequenceNode:
			if err := v.Decode(&s.Args); err != nil {
				return nil, p.yamlError(err)
			}
		case v.Kind == yaml.MappingNode:
			if err := p.keys(v, "strategy "+k.Value, "args", "persistence", "expect"); err != nil {
				return nil, err
			}
			var sy strategyYAML
			if err := v.Decode(&sy); err != nil {
				return nil, p.yamlError(err)
			}
			s.Args, s.Persistence, s.Expect = sy.Args, sy.Persistence, sy.Expect
		case v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == ""):
		default:
			return nil, p.at(v, "strategy %s: want a list of arguments or a mapping (args, persistence, expect)", k.Value)
		}
		if !needArgs && len(s.Args) > 0 {
			return nil, p.at(v, "strategy %s: an attached server takes no arguments", k.Value)
		}
		out = append(out, s)
	}
	return out, nil
}

// path makes a relative path with a slash absolute, from the file's
// directory (servers run in their instance directory).
func (p *configParser) path(s string) string {
	if s == "" || filepath.IsAbs(s) || !strings.Contains(s, "/") {
		return s
	}
	if abs, err := filepath.Abs(filepath.Join(p.dir, s)); err == nil {
		return abs
	}
	return s
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
