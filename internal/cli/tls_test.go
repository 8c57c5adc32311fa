package cli

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestBenchTLS runs bench against a redis-server serving mutual TLS with
// the certificates the redis target makes: writes then verified reads,
// the JSON saying tls; --insecure warns; a missing client certificate
// fails with one line naming it.
func TestBenchTLS(t *testing.T) {
	bin := testutil.RequireRedisServer(t)
	r, err := target.NewRedis(target.RedisConfig{Bin: bin, TLS: target.RedisTLS{Enabled: true, Mutual: true}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := r.Desc().Strategy("none")
	env := target.Env{Dir: t.TempDir(), Tracker: &target.Tracker{}}
	inst, err := r.Start(context.Background(), s, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = inst.Stop(ctx)
	})
	host, port, _ := net.SplitHostPort(inst.Info().Addr)
	file := func(name string) string { return filepath.Join(env.Dir, name) }
	tlsArgs := []string{"--host", host, "--port", port, "--tls", "--cacert", file("ca.crt"), "--cert", file("client.crt"), "--key", file("client.key")}
	for _, mode := range []string{"set", "get"} {
		code, stdout, stderr := execute(t, append([]string{"bench", "--mode", mode, "--keyspace", "2000", "--requests", "2000",
			"--pipeline", "128", "--connections", "4", "--seed", "1", "--verify-get", "--output", "json"}, tlsArgs...)...)
		if code != 0 {
			t.Fatalf("bench --mode %s over TLS: exit %d: %s", mode, code, stderr)
		}
		var j benchDoc
		if err := json.Unmarshal([]byte(stdout), &j); err != nil {
			t.Fatal(err)
		}
		if !j.Settings.TLS || j.Requests != 2000 || j.VerifyFailures != 0 || j.Misses != 0 {
			t.Errorf("bench --mode %s: tls %v, %d requests, %d verify failures, %d misses", mode, j.Settings.TLS, j.Requests, j.VerifyFailures, j.Misses)
		}
	}
	insecure := []string{"bench", "--host", host, "--port", port, "--tls", "--insecure", "--cert", file("client.crt"), "--key", file("client.key"), "--requests", "100"}
	if code, stdout, stderr := execute(t, insecure...); code != 0 || !strings.Contains(stderr, "warning: --insecure") || !strings.Contains(stdout, "over TLS") {
		t.Errorf("--insecure: exit %d, stderr %q, stdout %q: want success, a warning, and the report saying TLS", code, stderr, stdout)
	}
	noCert := []string{"bench", "--host", host, "--port", port, "--tls", "--cacert", file("ca.crt"), "--requests", "100"}
	if code, _, stderr := execute(t, noCert...); code != 1 || !strings.Contains(stderr, "client certificate") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("no client certificate: exit %d, stderr %q: want exit 1 and one line naming the client certificate", code, stderr)
	}
}

func TestTLSUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--cacert", "ca.crt"}, "need --tls"},
		{[]string{"bench", "--tls", "--cert", "c.crt"}, "--cert and --key go together"},
		{[]string{"bench", "--tls", "--cacert", "/nonexistent/ca.crt"}, "--cacert: open /nonexistent/ca.crt"},
		{[]string{"run", "--dry-run", "--tls", "--targets", "kvstore"}, "kvstore serves plaintext only"},
		{[]string{"run", "--dry-run", "--insecure"}, "need --tls"},
	} {
		code, _, stderr := execute(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
