package target

import (
	"context"
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
