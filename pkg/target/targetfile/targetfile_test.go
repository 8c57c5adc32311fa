package targetfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/target"
)

func TestLoadFileAllKinds(t *testing.T) {
	testutil.RequireRedisServer(t) // the file's redis and command targets look it up
	targets, err := Load("../../../testdata/run/all-kinds.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true", SetCmd: "HSET", GetCmd: "HGET"}})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name     string
		kind     target.Kind
		set      string
		defaults []string
		all      int
	}
	wants := []want{
		{"kvstore", target.KindKvstore, "HSET", []string{"persist_mypool", "nopersist_mypool", "persist_malloc", "nopersist_malloc"}, 8},
		{"redis", target.KindRedis, "SET", []string{"none", "aof_always"}, 5},
		{"valkey", target.KindCommand, "SET", []string{"none", "aof_everysec"}, 3},
		{"remote", target.KindAttach, "SET", []string{"off", "on"}, 2},
	}
	if len(targets) != len(wants) {
		t.Fatalf("%d targets, want %d", len(targets), len(wants))
	}
	for i, w := range wants {
		d := targets[i].Desc()
		if d.Name != w.name || d.Kind != w.kind || d.SetCmd != w.set || !slices.Equal(d.Defaults, w.defaults) || len(d.Strategies) != w.all {
			t.Errorf("target %d: %s %s %s defaults %v (%d strategies), want %+v", i, d.Name, d.Kind, d.SetCmd, d.Defaults, len(d.Strategies), w)
		}
	}
	tuned, _ := targets[2].Desc().Strategy("tuned")
	if tuned.Persistence != "no" || tuned.Expect["hz"] != "100" || len(tuned.Args) != 6 {
		t.Errorf("tuned: %+v", tuned)
	}
	aof, _ := targets[2].Desc().Strategy("aof_everysec")
	if aof.Persistence != "everysec" || aof.Expect["appendfsync"] != "everysec" {
		t.Errorf("aof_everysec: %+v", aof)
	}
	remote := targets[3].Desc()
	off, _ := remote.Strategy("off")
	on, _ := remote.Strategy("on")
	if off.Persistence != "none" || on.Persistence != "everysec" || on.Expect["appendonly"] != "yes" || remote.Password != "secret" {
		t.Errorf("remote: %+v", remote)
	}
}

func TestParseConfigCluster(t *testing.T) {
	y := "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    shards: 2\n    replicas: 1\n    strategies: [aof_always]\n"
	targets, err := Parse(strings.NewReader(y), "t.yaml", Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := targets[0].(*target.RedisCluster)
	if !ok {
		t.Fatalf("target %T, want *RedisCluster", targets[0])
	}
	d := c.Desc()
	if d.Name != target.DefaultRedisClusterName || d.Kind != target.KindRedisCluster || c.Shards() != 2 || c.Config().Replicas != 1 || !slices.Equal(d.Defaults, []string{"aof_always"}) {
		t.Errorf("%+v: shards %d replicas %d", d, c.Shards(), c.Config().Replicas)
	}
	s, _ := d.Strategy("aof_always")
	if s.Expect["cluster-enabled"] != "yes" || s.Expect["appendfsync"] != "always" {
		t.Errorf("aof_always expects %v", s.Expect)
	}
	y = "targets:\n  - kind: kvstore-cluster\n    bin: /bin/true\n    shards: 3\n    alloc: malloc\n    strategies: [persist_everysec]\n"
	targets, err = Parse(strings.NewReader(y), "t.yaml", Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := targets[0].(*target.KvstoreCluster)
	if !ok {
		t.Fatalf("target %T, want *KvstoreCluster", targets[0])
	}
	d = k.Desc()
	if d.Name != target.DefaultKvstoreClusterName || d.Kind != target.KindKvstoreCluster || k.Shards() != 3 || k.Config().Alloc != target.AllocMalloc || !slices.Equal(d.Defaults, []string{"persist_everysec"}) {
		t.Errorf("%+v: shards %d alloc %s", d, k.Shards(), k.Config().Alloc)
	}
}

// TestParseConfigPersistJobs: a command or attach target's persist_jobs:
// reach its description, split into words; a redis target's replicas:
// its configuration.
func TestParseConfigPersistJobs(t *testing.T) {
	y := "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    persist_jobs: {bgsave: BGSAVE SCHEDULE, rewrite: BGREWRITEAOF}\n" +
		"  - kind: redis\n    bin: /bin/true\n    replicas: 2\n"
	targets, err := Parse(strings.NewReader(y), "t.yaml", Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := targets[0].Desc().PersistJobs
	if !slices.Equal(jobs[target.JobBGSave], []string{"BGSAVE", "SCHEDULE"}) || !slices.Equal(jobs[target.JobRewrite], []string{"BGREWRITEAOF"}) {
		t.Errorf("persist jobs %q", jobs)
	}
	if r := targets[1].(*target.Redis); r.Config().Replicas != 2 || r.Desc().Replicas != 2 {
		t.Errorf("redis replicas %d", r.Config().Replicas)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty", "", "t.yaml: empty file"},
		{"no targets", "targets: []\n", "t.yaml:1: want a non-empty list under targets:"},
		{"unknown top key", "target:\n  - kind: kvstore\n", `t.yaml:1: the file: unknown key "target"`},
		{"bad kind", "targets:\n  - kind: memcached\n", `t.yaml:2: kind "memcached"`},
		{"key of another kind", "targets:\n  - kind: kvstore\n    addr: x:1\n", `t.yaml:3: a kvstore target: unknown key "addr"`},
		{"not yaml", "targets: [\n", "t.yaml:"},
		{"wrong type", "targets:\n  - kind: kvstore\n    port: abc\n", "t.yaml:3: cannot unmarshal"},
		{"unknown kvstore strategy", "targets:\n  - kind: kvstore\n    strategies: [persist_sometimes]\n", "t.yaml:2: kvstore: unknown strategy persist_sometimes"},
		{"bad alloc", "targets:\n  - kind: kvstore\n    alloc: jemalloc\n", `alloc "jemalloc"`},
		{"command without port", "targets:\n  - name: x\n    kind: command\n    command: [sh, -c, 'sleep 1']\n    strategies: {a: []}\n", "the command line has no {port}"},
		{"command without strategies", "targets:\n  - name: x\n    kind: command\n    command: [sh, '{port}']\n", "at least one strategy"},
		{"command strategies as list", "targets:\n  - name: x\n    kind: command\n    command: [sh, '{port}']\n    strategies: [a]\n", "t.yaml:5: strategies: want a mapping"},
		{"command not found", "targets:\n  - name: x\n    kind: command\n    command: [no-such-server-here, '{port}']\n    strategies: {a: []}\n", "server executable not found"},
		{"command path not found", "targets:\n  - name: x\n    kind: command\n    command: [/no/such/server, '{port}']\n    strategies: {a: []}\n", "x: server executable not found: stat /no/such/server"},
		{"command path not executable", "targets:\n  - name: x\n    kind: command\n    command: [/tmp, '{port}']\n    strategies: {a: []}\n", "/tmp is not an executable file"},
		{"bad strategy key", "targets:\n  - name: x\n    kind: command\n    command: [sh, '{port}']\n    strategies:\n      a: {argz: []}\n", `t.yaml:6: strategy a: unknown key "argz"`},
		{"baseline unknown", "targets:\n  - name: x\n    kind: command\n    command: [sh, '{port}']\n    baseline: none\n    strategies: {a: []}\n", "baseline none is not one of its strategies"},
		{"baseline not none", "targets:\n  - name: x\n    kind: attach\n    addr: h:1\n    baseline: a\n    strategies: {a: {persistence: rdb}}\n", `baseline but its persistence is "rdb"`},
		{"attach args", "targets:\n  - name: x\n    kind: attach\n    addr: h:1\n    strategies: {a: [--x]}\n", "t.yaml:5: strategy a: an attached server takes no arguments"},
		{"attach bad addr", "targets:\n  - name: x\n    kind: attach\n    addr: nowhere\n", `addr "nowhere"`},
		{"duplicate name", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n  - name: a\n    kind: attach\n    addr: h:2\n", "t.yaml:5: target a is already defined on line 2"},
		{"allow_flush not attach", "targets:\n  - kind: redis\n    allow_flush: true\n", `t.yaml:3: a redis target: unknown key "allow_flush"`},
		{"allow_flush not a bool", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    allow_flush: maybe\n", "t.yaml:5: cannot unmarshal !!str `maybe` into bool"},
		{"cluster shards zero", "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    shards: 0\n", "t.yaml:4: shards: want at least 1"},
		{"cluster negative replicas", "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    replicas: -1\n", "t.yaml:2: redis-cluster: replicas -1: want 0 or more"},
		{"cluster key of another kind", "targets:\n  - kind: redis\n    shards: 3\n", `t.yaml:3: a redis target: unknown key "shards"`},
		{"attach addrs without cluster", "targets:\n  - name: a\n    kind: attach\n    addrs: [h:1, h:2]\n", "t.yaml:2: a: addrs: several addresses are a cluster's seeds: set cluster: true, or give one addr"},
		{"attach cluster without seed", "targets:\n  - name: a\n    kind: attach\n    cluster: true\n", "a: a cluster needs a seed address: addr or addrs"},
		{"attach cluster bad seed", "targets:\n  - name: a\n    kind: attach\n    cluster: true\n    addrs: [h:1, nowhere]\n", `addr "nowhere"`},
		{"duplicate default", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    defaults: [zz]\n", "unknown strategy zz"},
		{"unknown persist job", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    persist_jobs: {snapshot: SAVE}\n", `t.yaml:5: persist job "snapshot": want bgsave or rewrite`},
		{"empty persist job", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    persist_jobs: {bgsave: ''}\n", "t.yaml:5: persist job bgsave: an empty command"},
		{"persist jobs of redis", "targets:\n  - kind: redis\n    persist_jobs: {bgsave: BGSAVE}\n", `t.yaml:3: a redis target: unknown key "persist_jobs"`},
		{"redis negative replicas", "targets:\n  - kind: redis\n    bin: /bin/true\n    replicas: -1\n", "t.yaml:4: replicas: want 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml), "t.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true"}})
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err %v: want ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %q\ndoes not contain %q", err, tt.want)
			}
		})
	}
}

// TestParseConfigEndpoint: an attach target's user, db, socket and uri,
// and the run's defaults for the targets that set none, reach its
// description; what a URI does not say, its keys may.
func TestParseConfigEndpoint(t *testing.T) {
	y := `targets:
  - name: acl
    kind: attach
    addr: 127.0.0.1:6379
    user: alice
    password: pw
    db: 3
  - name: by-uri
    kind: attach
    uri: redis://bob:secret@127.0.0.1:6380/4
  - name: sock
    kind: attach
    uri: unix:///run/redis.sock
    password: pw
  - name: seeds
    kind: attach
    cluster: true
    addrs: [127.0.0.1:7000]
  - name: cmd
    kind: command
    command: [sh, '{port}']
    strategies: {a: []}
`
	targets, err := Parse(strings.NewReader(y), "t.yaml", Defaults{User: "carol", DB: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct {
		user, password string
		db             int
		addr           string
	}{
		{"alice", "pw", 3, "127.0.0.1:6379"},
		{"bob", "secret", 4, "127.0.0.1:6380"},
		{"carol", "pw", 7, "unix:/run/redis.sock"},
		{"carol", "", 0, ""}, // a cluster keeps database 0
		{"", "", 7, ""},
	} {
		d := targets[i].Desc()
		if d.User != w.user || d.Password != w.password || d.DB != w.db {
			t.Errorf("%s: user %q password %q db %d; want %+v", d.Name, d.User, d.Password, d.DB, w)
		}
		if a, ok := targets[i].(*target.Attach); ok && w.addr != "" && a.Config().Addr != w.addr {
			t.Errorf("%s: addr %q, want %q", d.Name, a.Config().Addr, w.addr)
		}
	}
}

// TestParseConfigEndpointErrors: bad user, db, socket and uri keys are
// errors at their line, naming what is wrong.
func TestParseConfigEndpointErrors(t *testing.T) {
	attach := "targets:\n  - name: a\n    kind: attach\n"
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"user on redis", "targets:\n  - kind: redis\n    user: alice\n", "t.yaml:3: a redis target: user: an ACL user is for attach targets"},
		{"user on command", "targets:\n  - name: x\n    kind: command\n    command: [sh, '{port}']\n    user: alice\n", "t.yaml:5: a command target: user: an ACL user is for attach targets"},
		{"db on kvstore", "targets:\n  - kind: kvstore\n    db: 2\n", "t.yaml:3: a kvstore target: db: the kvstore has only database 0"},
		{"db on redis-cluster", "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    db: 2\n", "t.yaml:4: a redis-cluster target: db: a cluster has only database 0"},
		{"db on attached cluster", attach + "    cluster: true\n    addrs: [h:1]\n    db: 2\n", "t.yaml:6: db 2: a cluster has only database 0"},
		{"negative db", attach + "    addr: h:1\n    db: -1\n", "t.yaml:5: db -1: want a database number >= 0"},
		{"db not a number", attach + "    addr: h:1\n    db: three\n", "t.yaml:5: cannot unmarshal"},
		{"socket on redis", "targets:\n  - kind: redis\n    socket: /tmp/s\n", "t.yaml:3: a redis target: socket: a Unix socket is for attach targets"},
		{"socket and addr", attach + "    addr: h:1\n    socket: /tmp/s\n", "t.yaml:5: socket and addr: give one"},
		{"socket of a cluster", attach + "    cluster: true\n    socket: /tmp/s\n", "t.yaml:5: socket: a cluster's nodes are reached over TCP"},
		{"socket over tls", attach + "    socket: /tmp/s\n    tls: {insecure: true}\n", "t.yaml:4: socket: a Unix socket is plaintext"},
		{"socket addr over tls", attach + "    addr: unix:/tmp/s\n    tls: {insecure: true}\n", "t.yaml:4: addr: a Unix socket is plaintext"},
		{"uri on kvstore", "targets:\n  - kind: kvstore\n    uri: redis://h\n", "t.yaml:3: a kvstore target: uri: a URI is for attach targets"},
		{"bad uri", attach + "    uri: http://h:1\n", "t.yaml:4: uri \"http://h:1\": want a redis://"},
		{"uri and addr", attach + "    addr: h:1\n    uri: redis://h:2\n", "t.yaml:4: addr and uri say different things"},
		{"uri and password", attach + "    uri: redis://:one@h:1\n    password: two\n", "t.yaml:5: password and uri say different things"},
		{"uri and user", attach + "    uri: redis://u:p@h:1\n    user: v\n", "t.yaml:5: user and uri say different things"},
		{"uri and db", attach + "    uri: redis://h:1/2\n    db: 3\n", "t.yaml:5: db and uri say different things"},
		{"uri and tls", attach + "    uri: redis://h:1\n    tls: {insecure: true}\n", "t.yaml:5: tls and uri say different things"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml), "t.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true"}})
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v\nwant ErrConfig containing %q", err, tt.want)
			}
		})
	}
}

// TestParseConfigRESP3: a target's resp3: key, else the run's default,
// reaches its description; resp3: false wins over the default, and a
// kvstore that says resp3: false stays in a RESP3 run.
func TestParseConfigRESP3(t *testing.T) {
	y := `targets:
  - name: on
    kind: attach
    addr: 127.0.0.1:6379
    resp3: true
  - name: off
    kind: attach
    addr: 127.0.0.1:6380
    resp3: false
  - name: default
    kind: attach
    addr: 127.0.0.1:6381
  - name: r
    kind: redis
    bin: /bin/true
  - name: rc
    kind: redis-cluster
    bin: /bin/true
    resp3: true
  - name: cmd
    kind: command
    command: [sh, '{port}']
    strategies: {a: []}
  - kind: kvstore
    resp3: false
`
	for _, tt := range []struct {
		def  bool
		want map[string]bool
	}{
		{false, map[string]bool{"on": true, "off": false, "default": false, "r": false, "rc": true, "cmd": false, "kvstore": false}},
		{true, map[string]bool{"on": true, "off": false, "default": true, "r": true, "rc": true, "cmd": true, "kvstore": false}},
	} {
		targets, err := Parse(strings.NewReader(y), "t.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true"}, RESP3: tt.def})
		if err != nil {
			t.Fatalf("default %v: %v", tt.def, err)
		}
		if len(targets) != len(tt.want) {
			t.Fatalf("default %v: %d targets, want %d", tt.def, len(targets), len(tt.want))
		}
		for _, tg := range targets {
			if d := tg.Desc(); d.RESP3 != tt.want[d.Name] {
				t.Errorf("default %v: %s: resp3 %v, want %v", tt.def, d.Name, d.RESP3, tt.want[d.Name])
			}
		}
	}
}

// TestParseConfigRESP3Errors: a resp3: that is not a boolean, and RESP3
// asked of a kvstore, by its key or by the run's default, are errors at
// their line naming the target.
func TestParseConfigRESP3Errors(t *testing.T) {
	attach := "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n"
	for _, tt := range []struct {
		name, yaml string
		def        bool
		want       string
	}{
		{"not a boolean", attach + "    resp3: maybe\n", false, "t.yaml:5: cannot unmarshal !!str `maybe` into bool"},
		{"a number", attach + "    resp3: 3\n", false, "t.yaml:5: cannot unmarshal !!int `3` into bool"},
		{"kvstore resp3 true", "targets:\n  - name: kv\n    kind: kvstore\n    resp3: true\n", false, "t.yaml:4: target kv: resp3: the kvstore speaks RESP2 only"},
		{"kvstore-cluster resp3 true", "targets:\n  - kind: kvstore-cluster\n    resp3: true\n", false, "t.yaml:3: target kvstore-cluster: resp3: the kvstore speaks RESP2 only"},
		{"kvstore in a RESP3 run", attach + "  - kind: kvstore\n", true, "t.yaml:5: target kvstore: the kvstore speaks RESP2 only and cannot be measured over RESP3: set resp3: false for it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml), "t.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true"}, RESP3: tt.def})
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v\nwant ErrConfig containing %q", err, tt.want)
			}
		})
	}
}
