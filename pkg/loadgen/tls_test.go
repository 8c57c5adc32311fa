package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/testutil/rediscluster"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	kvtarget "github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/redis/go-redis/v9"
)

// tlsServer is a redis-server serving TLS with certificates made by the
// test, plus the files a client needs.
type tlsServer struct {
	addr  string // its TLS port
	plain string // its plaintext port
	ca    *tlsconf.CA
	dir   string
}

// startTLSRedis starts redis-server with a TLS port whose certificate is
// server, signed by ca, verifying clients against ca when mutual.
func startTLSRedis(t *testing.T, ca *tlsconf.CA, server tlsconf.Leaf, mutual bool) tlsServer {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	auth := "no"
	if mutual {
		auth = "yes"
	}
	r := testutil.StartRedis(t, "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", write("server.crt", server.CertPEM), "--tls-key-file", write("server.key", server.KeyPEM),
		"--tls-ca-cert-file", write("ca.crt", ca.PEM), "--tls-auth-clients", auth)
	return tlsServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), plain: r.Addr, ca: ca, dir: dir}
}

// testCA returns a CA valid now and a server certificate it signed.
func testCA(t *testing.T) (*tlsconf.CA, tlsconf.Leaf) {
	t.Helper()
	now := time.Now()
	ca, err := tlsconf.NewCA("test CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue("localhost", tlsconf.Server, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return ca, server
}

// clientConfig returns the client configuration trusting trust, with
// the client certificate leaf when it has one.
func clientConfig(t *testing.T, trust *tlsconf.CA, leaf tlsconf.Leaf) *tls.Config {
	t.Helper()
	dir := t.TempDir()
	o := tlsconf.Options{Enabled: true, CAFile: filepath.Join(dir, "ca.crt")}
	if err := os.WriteFile(o.CAFile, trust.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if leaf.CertPEM != nil {
		o.CertFile, o.KeyFile = filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
		if err := os.WriteFile(o.CertFile, leaf.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(o.KeyFile, leaf.KeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLSSetGet writes and reads back, verified, over TLS: one-way and
// mutual, closed loop with deep pipelines and many connections, open loop,
// and a prefill; the server counts exactly the requests sent.
func TestTLSSetGet(t *testing.T) {
	ca, server := testCA(t)
	now := time.Now()
	client, err := ca.Issue("client", tlsconf.Client, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, mutual := range []bool{false, true} {
		t.Run("mutual="+strconv.FormatBool(mutual), func(t *testing.T) {
			srv := startTLSRedis(t, ca, server, mutual)
			var leaf tlsconf.Leaf
			if mutual {
				leaf = client
			}
			tc := clientConfig(t, ca, leaf)
			tg := newTarget(t, srv.plain)
			base := fill(Config{TLS: tc, Load: Load{Keyspace: 5000, ValueSize: 300, Pipeline: 128, Connections: 2}})
			pre := base
			pre.Addr = srv.addr
			if res, err := Prefill(context.Background(), pre); err != nil || res.Sets != 5000 {
				t.Fatalf("prefill over TLS: %d keys, %v", res.Sets, err)
			}
			for _, tc := range []struct {
				name string
				cfg  Config
			}{
				{"get P128", Config{Mode: ModeGet, Load: Load{Requests: 20000}}},
				{"mixed P1 c20", Config{Mode: ModeMixed, Load: Load{Requests: 4000, Pipeline: 1, Connections: 20, Threads: 2}}},
				{"large batches", Config{Mode: ModeMixed, Load: Load{Requests: 20000, Pipeline: 1000}}},
				{"open loop", Config{Mode: ModeGet, Load: Load{Requests: 2000, Rate: 20000, Pipeline: 8}}},
				// 4 MB batches (last: they change the values): more than
				// the socket takes at once, so ciphertext waits for EPOLLOUT.
				{"batches over the socket buffer", Config{Mode: ModeSet, Load: Load{Requests: 2000, Pipeline: 500, ValueSize: 8000}}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cfg := base
					cfg.Mode, cfg.Requests, cfg.Rate = tc.cfg.Mode, tc.cfg.Requests, tc.cfg.Rate
					if tc.cfg.ValueSize > 0 {
						cfg.ValueSize = tc.cfg.ValueSize
					}
					if tc.cfg.Pipeline > 0 {
						cfg.Pipeline = tc.cfg.Pipeline
					}
					if tc.cfg.Connections > 0 {
						cfg.Connections, cfg.Threads = tc.cfg.Connections, tc.cfg.Threads
					}
					cfg.VerifyGet = true
					cfg.Addr = srv.addr
					before := testutil.CommandsProcessed(t, tg.client)
					res, err := Run(context.Background(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					n := cfg.Requests
					if res.Requests != n || res.Histogram.TotalCount() != n || res.VerifyFailures != 0 || res.Misses != 0 {
						t.Errorf("requests %d, latencies %d, verify failures %d, misses %d: want %d, %d, 0, 0",
							res.Requests, res.Histogram.TotalCount(), res.VerifyFailures, res.Misses, n, n)
					}
					// The connections' PINGs (one each, after the handshake)
					// and the INFO reading the count come on top.
					if got := testutil.CommandsProcessed(t, tg.client) - before; got != n+int64(cfg.Connections)+1 {
						t.Errorf("server processed %d commands, want %d requests + %d PINGs + 1 INFO", got, n, cfg.Connections)
					}
					if jsonOf(t, res)["settings"].(map[string]any)["tls"] != true {
						t.Error("JSON settings: tls is false")
					}
				})
			}
		})
	}
}

// TestTLSErrors checks that each common TLS failure ends the run with one
// line naming it.
func TestTLSErrors(t *testing.T) {
	ca, server := testCA(t)
	now := time.Now()
	other, _ := testCA(t)
	expired, err := ca.Issue("localhost", tlsconf.Server, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	strangerLeaf, err := other.Issue("client", tlsconf.Client, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	staleLeaf, err := ca.Issue("client", tlsconf.Client, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	oneWay := startTLSRedis(t, ca, server, false)
	mutual := startTLSRedis(t, ca, server, true)
	stale := startTLSRedis(t, ca, expired, false)
	for _, tc := range []struct {
		name string
		addr string
		tls  *tls.Config
		want string
	}{
		{"wrong CA", oneWay.addr, clientConfig(t, other, tlsconf.Leaf{}), "not signed by a CA in --cacert"},
		{"expired server certificate", stale.addr, clientConfig(t, ca, tlsconf.Leaf{}), "the server's certificate is valid from"},
		{"missing client certificate", mutual.addr, clientConfig(t, ca, tlsconf.Leaf{}), "client certificate: give --cert and --key"},
		{"client certificate of another CA", mutual.addr, clientConfig(t, ca, strangerLeaf), "client certificate (--cert)"},
		{"expired client certificate", mutual.addr, clientConfig(t, ca, staleLeaf), "client certificate (--cert)"},
		{"plaintext server", oneWay.plain, clientConfig(t, ca, tlsconf.Leaf{}), "plaintext port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fill(Config{Addr: tc.addr, TLS: tc.tls, Mode: ModeSet, Load: Load{Requests: 10, ConnectTimeout: 500 * time.Millisecond}})
			_, err := Run(context.Background(), cfg)
			var te *tlsconf.Error
			if !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Run: %v, want one line with a *tlsconf.Error saying %q", err, tc.want)
			}
		})
	}
}

// TestClusterTLS drives a Redis Cluster over TLS (tls-cluster yes, mutual
// TLS): the topology, the prefill's connections to each master, the run's
// links and, while a slot moves, the side connections that follow MOVED
// and ASK all run over TLS.
func TestClusterTLS(t *testing.T) {
	info := rediscluster.Start(t, kvtarget.RedisClusterConfig{
		RedisConfig: kvtarget.RedisConfig{TLS: kvtarget.RedisTLS{Enabled: true, Mutual: true}}, Shards: 2})
	if info.TLS == nil || len(info.Nodes) != 2 {
		t.Fatalf("cluster: TLS %v, masters %v", info.TLS != nil, info.Nodes)
	}
	ctx := context.Background()
	const nkeys = 50_000
	cfg := DefaultConfig()
	cfg.Addr, cfg.Cluster, cfg.TLS = info.Addr, true, info.TLS
	cfg.Keyspace, cfg.Pipeline, cfg.Connections, cfg.Threads = nkeys, 32, 2, 2
	if res, err := Prefill(ctx, cfg); err != nil || res.Sets != nkeys {
		t.Fatalf("prefill: %d keys, %v", res.Sets, err)
	}
	node := func(addr string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, TLSConfig: tlsconf.ForHost(info.TLS, "127.0.0.1")})
		t.Cleanup(func() { c.Close() })
		return c
	}
	src, dst := node(info.Nodes[0]), node(info.Nodes[1])
	srcID, _ := src.Do(ctx, "CLUSTER", "MYID").Text()
	dstID, _ := dst.Do(ctx, "CLUSTER", "MYID").Text()
	slot := keyslot.Of(keyspace.Spec{Keyspace: nkeys}.AppendName(nil, cfg.KeyPrefix, uint64(0)))
	if slot >= cluster.Slots/2 { // a slot of master 0's
		slot = keyslot.Of([]byte("{a}"))
	}
	cfg.Mode, cfg.Duration, cfg.Requests, cfg.VerifyGet = ModeGet, 1500*time.Millisecond, 0, true
	done := make(chan error, 1)
	running := afterReplies(&cfg, 1000)
	go func() {
		<-running
		done <- migrateSlot(ctx, src, dst, srcID, dstID, info.Nodes[1], slot)
	}()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Moved+res.Ask == 0 || res.Misses != 0 || res.VerifyFailures != 0 || len(res.Errors) != 0 {
		t.Errorf("moved %d, ask %d, %d misses, %d verify failures, errors %v: want redirects followed over TLS and nothing wrong",
			res.Moved, res.Ask, res.Misses, res.VerifyFailures, res.Errors)
	}
}
