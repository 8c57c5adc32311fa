package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/redis/go-redis/v9"
)

// waitKeys waits until the server at addr holds some keys: a run's
// writes have arrived.
func waitKeys(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	for deadline := time.Now().Add(time.Minute); ; {
		if n, err := c.DBSize(context.Background()).Result(); err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no key written in a minute")
		}
		time.Sleep(10 * time.Millisecond) // bounded poll for the run's first writes
	}
}

// TestBenchReconnect: "kvbench bench --reconnect" survives its server's
// restart on the same port (exit 0, reconnects and the lost requests in
// its JSON); without --reconnect the same restart fails the run.
func TestBenchReconnect(t *testing.T) {
	for _, reconnect := range []bool{true, false} {
		r := testutil.StartRedis(t)
		_, port, _ := strings.Cut(r.Addr, ":")
		args := []string{"bench", "-p", port, "--mode", "set", "-c", "2", "-P", "16", "--duration", "2s", "--output", "json"}
		if reconnect {
			args = append(args, "--reconnect", "--reconnect-attempts", "20", "--reconnect-backoff", "50ms")
		}
		type outcome struct {
			code           int
			stdout, stderr string
		}
		done := make(chan outcome, 1)
		go func() {
			code, stdout, stderr := executeCtx(context.Background(), args...)
			done <- outcome{code, stdout, stderr}
		}()
		waitKeys(t, r.Addr)
		if err := r.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := r.Restart(); err != nil {
			t.Fatal(err)
		}
		var o outcome
		select {
		case o = <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("bench still going 60s after the restart")
		}
		if !reconnect {
			if o.code != 1 {
				t.Errorf("without --reconnect: exit %d, want 1\n%s", o.code, o.stderr)
			}
			continue
		}
		if o.code != 0 {
			t.Fatalf("with --reconnect: exit %d\n%s", o.code, o.stderr)
		}
		var doc struct {
			Reconnects int64            `json:"reconnects"`
			Errors     map[string]int64 `json:"errors"`
		}
		if err := json.Unmarshal([]byte(o.stdout), &doc); err != nil {
			t.Fatalf("JSON: %v\n%s", err, o.stdout)
		}
		if doc.Reconnects < 1 || doc.Errors["reconnect"] < 1 {
			t.Errorf("reconnects %d, errors %v: want a reconnect and its lost requests", doc.Reconnects, doc.Errors)
		}
	}
}

// TestBenchDataOptions: the data flags reach the load generator's
// Config.
func TestBenchDataOptions(t *testing.T) {
	c := benchOptionsOf(t, "--random-data", "--expiry-range", "60-600", "--multi-key-get", "8").Config
	if !c.RandomData || c.ExpiryMin != 60 || c.ExpiryMax != 600 || c.MultiKeyGet != 8 {
		t.Errorf("options %+v", c)
	}
	c = benchOptionsOf(t, "--reconnect", "--reconnect-attempts", "3", "--reconnect-backoff", "1s").Config
	if !c.Reconnect || c.ReconnectAttempts != 3 || c.ReconnectBackoff != time.Second {
		t.Errorf("options %+v", c)
	}
}

func TestBenchClientUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--reconnect-attempts", "3"}, "--reconnect-attempts needs --reconnect"},
		{[]string{"--reconnect-backoff", "1s"}, "--reconnect-backoff needs --reconnect"},
		{[]string{"--reconnect", "--reconnect-attempts", "0"}, "--reconnect-attempts 0"},
		{[]string{"--reconnect", "--reconnect-backoff", "0s"}, "--reconnect-backoff 0s"},
		{[]string{"--expiry-range", "60"}, `--expiry-range "60": want MIN-MAX`},
		{[]string{"--expiry-range", "9-3"}, `--expiry-range "9-3"`},
		{[]string{"--expiry-range", "1-3", "--set-cmd", "RSET"}, "needs the write command SET (not RSET"},
		{[]string{"--expiry-range", "1-3", "-t", "set"}, "--expiry-range applies to --mode runs"},
		{[]string{"--multi-key-get", "4", "--mode", "set"}, "a set run reads nothing"},
		{[]string{"--multi-key-get", "4", "--command", "GET __key__"}, "--multi-key-get applies to --mode runs"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench bench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestLoadJSONDataRoundTrip: the client settings of the load an agent
// gets as JSON are the Config's, so agents run what one bench would.
func TestLoadJSONDataRoundTrip(t *testing.T) {
	want, err := loadgen.Config{Addr: "10.1.2.3:7001", Mode: loadgen.ModeMixed, SetCmd: "SET", GetCmd: "GET", Load: loadgen.Load{Requests: 1000, Pipeline: 9, Connections: 5, Threads: 2, Keyspace: 999, KeyPrefix: "p:", ValueSize: 64, SetRatio: 30, Seed: 5, RandomData: true, ExpiryMin: 60, ExpiryMax: 600, MultiKeyGet: 7, Reconnect: true, ReconnectAttempts: 3, ReconnectBackoff: 250 * time.Millisecond}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	got, args := agentBench(t, want, tlsconf.Options{})
	c := got.Config
	if !c.RandomData || c.ExpiryMin != 60 || c.ExpiryMax != 600 || c.MultiKeyGet != 7 || !c.Reconnect ||
		c.ReconnectAttempts != 3 || c.ReconnectBackoff != 250*time.Millisecond {
		t.Errorf("bench %q gives %+v", args, c)
	}
}
