package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// runLosingServer runs cfg against r in the background, kills r once
// replies come, restarts it on the same port when restart is set, and
// returns the run's outcome.
func runLosingServer(t *testing.T, r *testutil.Redis, cfg Config, restart bool) (Result, error) {
	t.Helper()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	started := make(chan struct{}, 1)
	cfg.Addr = r.Addr
	cfg.ProgressInterval = 10 * time.Millisecond
	cfg.Progress = func(p Progress) {
		if p.Phase == "run" && p.Done > 0 {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	}
	go func() {
		res, err := Run(context.Background(), cfg)
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case o := <-done:
		t.Fatalf("run ended before the server was killed: %v", o.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no progress in 10s")
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	if restart {
		if err := r.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(60 * time.Second):
		t.Fatal("run still going 60s after the server was killed")
	}
	return Result{}, nil
}

// TestReconnectRestart: with Reconnect, a run whose server is killed and
// restarted on the same port mid-run goes on against the new server, in
// a closed and an open loop: it completes, counts its redials, and
// counts the requests lost in flight as errors, not as replies or
// latencies.
func TestReconnectRestart(t *testing.T) {
	for _, rate := range []float64{0, 50_000} {
		t.Run(fmt.Sprintf("rate %g", rate), func(t *testing.T) {
			r := testutil.StartRedis(t)
			cfg := fill(Config{Mode: ModeSet, Load: Load{Duration: 3 * time.Second, Connections: 3, Threads: 2, Pipeline: 16, Keyspace: 100000, Rate: rate, Reconnect: true}})
			res, err := runLosingServer(t, r, cfg, true)
			if err != nil {
				t.Fatalf("run with reconnect: %v", err)
			}
			if res.Reconnects < 1 {
				t.Errorf("reconnects %d: want >= 1", res.Reconnects)
			}
			lost := res.Errors[ErrorReconnect]
			t.Logf("replies %d, sent %d, reconnects %d, errors %v", res.Requests, res.Sent, res.Reconnects, res.Errors)
			if lost < 1 {
				t.Errorf("errors %v: want the requests in flight counted as %q", res.Errors, ErrorReconnect)
			}
			if res.Histogram.TotalCount() != res.Requests || res.Requests+lost > res.Sent {
				t.Errorf("latencies %d, replies %d, lost %d, sent %d: want latencies = replies, replies + lost <= sent",
					res.Histogram.TotalCount(), res.Requests, lost, res.Sent)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			if err := json.Unmarshal(b, &back); err != nil || !back.Config.Reconnect || back.Config.ReconnectBackoff != DefaultReconnectBackoff ||
				back.Config.ReconnectAttempts != DefaultReconnectAttempts || back.Errors[ErrorReconnect] != lost || back.Reconnects != res.Reconnects {
				t.Errorf("JSON decoded: %v, settings %+v, reconnects %d, errors %v", err, back.Config, back.Reconnects, back.Errors)
			}
			tg := newTarget(t, r.Addr)
			if n, err := tg.client.DBSize(context.Background()).Result(); err != nil || n == 0 {
				t.Errorf("the restarted server holds %d keys (%v): the run did not go on against it", n, err)
			}
		})
	}
}

// TestNoReconnectFails: without Reconnect the same restart fails the run.
func TestNoReconnectFails(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := fill(Config{Mode: ModeSet, Load: Load{Duration: 10 * time.Second, Connections: 2, Pipeline: 16}})
	res, err := runLosingServer(t, r, cfg, true)
	if err == nil {
		t.Fatal("the run went on without --reconnect")
	}
	if res.Reconnects != 0 {
		t.Errorf("reconnects %d without Reconnect", res.Reconnects)
	}
}

// TestReconnectGivesUp: a server that does not come back fails the run
// once the attempts are spent, the error naming the server and the
// attempts.
func TestReconnectGivesUp(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := fill(Config{Mode: ModeSet, Load: Load{Duration: 30 * time.Second, Pipeline: 16, Reconnect: true, ReconnectAttempts: 3, ReconnectBackoff: 10 * time.Millisecond}})
	_, err := runLosingServer(t, r, cfg, false)
	if err == nil {
		t.Fatal("the run went on without its server")
	}
	if !strings.Contains(err.Error(), r.Addr) || !strings.Contains(err.Error(), "3 attempts") || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %q: want the server %s, its 3 attempts and the refusal", err, r.Addr)
	}
}

// TestReconnectConfigErrors: reconnecting is not for a cluster run, and
// its attempts and backoff default when not given.
func TestReconnectConfigErrors(t *testing.T) {
	cfg := fill(Config{Cluster: true, Load: Load{Reconnect: true}})
	if _, err := cfg.Normalize(); err == nil || !strings.Contains(err.Error(), "failovers by itself") {
		t.Errorf("Normalize(cluster, reconnect): %v", err)
	}
	cfg.Cluster = false
	if c, err := cfg.Normalize(); err != nil || c.ReconnectAttempts != DefaultReconnectAttempts || c.ReconnectBackoff != DefaultReconnectBackoff {
		t.Errorf("Normalize: %v, attempts %d, backoff %v", err, c.ReconnectAttempts, c.ReconnectBackoff)
	}
}
