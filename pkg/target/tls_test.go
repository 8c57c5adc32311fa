package target

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// TestRedisTLS starts redis strategies serving TLS only, one-way and
// mutual: the instance is ready and verified over TLS, its certificates
// are in its directory, its plaintext port is closed, and with mutual TLS
// a client without the client certificate is refused.
func TestRedisTLS(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	for _, mutual := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-way", true: "mutual"}[mutual], func(t *testing.T) {
			r, err := NewRedis(RedisConfig{Bin: bin, TLS: RedisTLS{Enabled: true, Mutual: mutual}})
			if err != nil {
				t.Fatal(err)
			}
			inst, env := start(t, r, "aof_everysec")
			defer stopAndCheck(t, inst, env)
			info := inst.Info()
			if info.TLS == nil {
				t.Fatal("Info.TLS is nil")
			}
			if want := "save=;appendonly=yes;appendfsync=everysec"; info.Config != want {
				t.Errorf("config %q, want %q (read over TLS)", info.Config, want)
			}
			for _, f := range []string{"ca.crt", "server.crt", "server.key", "client.crt", "client.key"} {
				if _, err := os.Stat(filepath.Join(env.Dir, f)); err != nil {
					t.Errorf("certificate files: %v", err)
				}
			}
			if err := pingAddr(info.Addr); err == nil {
				t.Error("a plaintext PING was answered: want TLS only")
			}
			anon := info.TLS.Clone()
			anon.Certificates = nil
			c, err := dialControl(context.Background(), info.Addr, creds{Options: control.Options{TLS: anon}}, time.Second)
			if err == nil {
				err = c.Ping(context.Background())
				c.Close()
			}
			if mutual && err == nil {
				t.Error("mutual TLS: a client without a certificate got PONG")
			}
			if !mutual && err != nil {
				t.Errorf("one-way TLS: PING without a client certificate: %v", err)
			}
		})
	}
}

// TestParseConfigTLS reads tls: blocks over the command line's TLS
// settings.
func TestParseConfigTLS(t *testing.T) {
	dir := t.TempDir()
	f, err := tlsconf.WriteFiles(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.yaml")
	flags := tlsconf.Options{Enabled: true, CAFile: f.CA}
	tests := []struct {
		name     string
		yaml     string
		defaults tlsconf.Options
		tls      bool // the attach target's client is TLS
		certs    int  // its client certificates
	}{
		{"block", "    tls: {cacert: ca.crt, cert: client.crt, key: " + f.ClientKey + "}\n", tlsconf.Options{}, true, 1},
		{"flags", "", flags, true, 0},
		{"block over flags", "    tls: {cert: client.crt, key: client.key}\n", flags, true, 1},
		{"disabled over flags", "    tls: {enabled: false}\n", flags, false, 0},
		{"no TLS", "", tlsconf.Options{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "targets:\n  - name: a\n    kind: attach\n    addr: 127.0.0.1:1\n" + tt.yaml
			ts, err := ParseConfig(strings.NewReader(y), file, Defaults{TLS: tt.defaults})
			if err != nil {
				t.Fatal(err)
			}
			a := ts[0].(*Attach)
			if got := a.Config().TLS != nil; got != tt.tls {
				t.Fatalf("TLS %v, want %v", got, tt.tls)
			}
			if tt.tls && (a.Config().TLS.RootCAs == nil || len(a.Config().TLS.Certificates) != tt.certs) {
				t.Errorf("CA pool %v, %d client certificates; want a pool and %d", a.Config().TLS.RootCAs != nil, len(a.Config().TLS.Certificates), tt.certs)
			}
		})
	}
	redis := "targets:\n  - kind: redis\n    tls: {mutual: false}\n"
	if ts, err := ParseConfig(strings.NewReader(redis), file, Defaults{}); err != nil {
		t.Error(err)
	} else if c := ts[0].(*Redis).Config().TLS; !c.Enabled || c.Mutual {
		t.Errorf("redis tls: %+v, want enabled, not mutual", c)
	}
}

func TestParseConfigTLSErrors(t *testing.T) {
	on := tlsconf.Options{Enabled: true}
	tests := []struct {
		name, yaml string
		defaults   tlsconf.Options
		want       string
	}{
		{"kvstore block", "targets:\n  - kind: kvstore\n    tls: {}\n", tlsconf.Options{}, "t.yaml:3: a kvstore target cannot be measured over TLS"},
		{"kvstore with --tls", "targets:\n  - kind: kvstore\n", on, "t.yaml:2: a kvstore target cannot be measured over TLS"},
		{"cluster cacert", "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    tls: {cacert: x}\n", tlsconf.Options{}, `t.yaml:4: tls: unknown key "cacert"`},
		{"redis cacert", "targets:\n  - kind: redis\n    tls: {cacert: x}\n", tlsconf.Options{}, `t.yaml:3: tls: unknown key "cacert"`},
		{"cert without key", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {cert: c.crt}\n", tlsconf.Options{}, "t.yaml:5: tls: --cert and --key go together"},
		{"missing CA file", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {cacert: /nonexistent/ca.crt}\n", tlsconf.Options{}, "t.yaml:5: tls: --cacert: open /nonexistent/ca.crt"},
		{"unknown key", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {ca: x}\n", tlsconf.Options{}, `t.yaml:5: tls: unknown key "ca"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(strings.NewReader(tt.yaml), "t.yaml", Defaults{Kvstore: KvstoreConfig{Bin: "/bin/true"}, TLS: tt.defaults})
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v\nwant ErrConfig containing %q", err, tt.want)
			}
		})
	}
}

// TestCommandAndAttachTLS runs redis-server as a command target serving
// TLS on {port}, then attaches to it over TLS: both are ready, verified,
// counted and flushed over TLS, and hand their client configuration on.
func TestCommandAndAttachTLS(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	f, err := tlsconf.WriteFiles(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client, err := tlsconf.Options{Enabled: true, CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey}.Config()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCommand(CommandConfig{
		Name: "redis-tls",
		Command: []string{bin, "--port", "0", "--tls-port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}",
			"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CA},
		TLS:        client,
		Strategies: []Strategy{{Name: "aof", Args: []string{"--save", "", "--appendonly", "yes"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, c, "aof")
	defer stopAndCheck(t, inst, env)
	info := inst.Info()
	if info.TLS != client || !strings.Contains(info.Config, "appendonly=yes") {
		t.Fatalf("command over TLS: TLS %v, config %q", info.TLS != nil, info.Config)
	}
	a, err := NewAttach(AttachConfig{Name: "attached", Addr: info.Addr, TLS: client, AllowFlush: true})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := dialControl(context.Background(), info.Addr, creds{Options: control.Options{TLS: client}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Do(context.Background(), "SET", "someone's", "key"); err != nil {
		t.Fatal(err)
	}
	ai, _ := start(t, a, "default")
	if ai.Info().TLS != client || !ai.Info().Flushed {
		t.Errorf("attach over TLS: TLS %v, flushed %v: want the client configuration and a flush", ai.Info().TLS != nil, ai.Info().Flushed)
	}
	if n, err := keyCount(context.Background(), cl); err != nil || n != 0 {
		t.Errorf("keys after the attach's FLUSHALL: %d, %v", n, err)
	}
}
