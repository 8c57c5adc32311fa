package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestRunRESP3ClientList: with RESP3, a redis target started by kvbench is
// measured over RESP3, in this process and by agents, and so is a
// redis-cluster: mid-measurement, CLIENT LIST (of the first master) shows
// every load connection, and every other connection of kvbench's, with
// resp=3.
func TestRunRESP3ClientList(t *testing.T) {
	testutil.RequireRedisServer(t)
	for _, tc := range []struct {
		target string
		agents int
	}{{"redis", 1}, {"redis", 2}, {"redis-cluster", 1}} {
		t.Run(fmt.Sprintf("%s/agents=%d", tc.target, tc.agents), func(t *testing.T) {
			o := runOptions(t)
			o.Targets, o.Strategies, o.Modes, o.RESP3 = []string{tc.target}, []string{"none"}, []string{"set"}, true
			o.Rounds, o.Requests, o.Keyspace, o.Connections, o.Pipeline, o.Agents = 1, 5_000_000, 100_000, 4, 16, tc.agents
			ready := make(chan target.Info, 1)
			o.Observe = func(e Event) {
				if e.Kind == EventReady && e.Attempt == 1 {
					select {
					case ready <- e.Instance:
					default:
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			var res *Result
			go func() {
				r, _, _, err := runQuiet(t, ctx, o)
				res = r
				done <- err
			}()
			var info target.Info
			select {
			case info = <-ready:
			case err := <-done:
				t.Fatalf("the run ended before its server was ready: %v", err)
			case <-time.After(time.Minute): // a bound on a failure, not a figure
				t.Fatal("no server ready within 30 s")
			}
			list, err := loadClientList(ctx, info, o.Connections) // the agents share them; a cluster has them per master
			cancel()
			<-done
			checkClean(t, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
				if f := strings.Fields(line); !slices.Contains(f, "cmd=client|list") && !slices.Contains(f, "resp=3") {
					t.Errorf("a connection of kvbench's not in RESP3: %s", line)
				}
			}
			if res == nil {
				t.Fatal("the interrupted run left no result")
			}
			rows := readDetail(t, res)
			if len(rows) == 0 {
				t.Fatal("the interrupted run wrote no row")
			}
			for _, r := range rows {
				if !r.RESP3 {
					t.Errorf("row %s/%s round %d: resp3 false, want the protocol recorded", r.Target, r.Mode, r.Round)
				}
			}
		})
	}
}

// loadClientList polls CLIENT LIST of the server info describes, over
// RESP2 (the probe is told apart by its command, client|list), until
// loads connections have sent SET, and returns that list.
func loadClientList(ctx context.Context, info target.Info, loads int) (string, error) {
	opts := info.Control("")
	opts.RESP3, opts.Timeout = false, 5*time.Second
	c, err := control.Dial(ctx, info.Addr, opts)
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := c.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			return "", fmt.Errorf("CLIENT LIST: %w", err)
		}
		list := fmt.Sprint(v)
		if strings.Count(list, " cmd=set ") >= loads {
			return list, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("fewer than %d load connections within 30 s:\n%s", loads, list)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestRunRESP3Refused: an attach target whose server has no HELLO fails
// with RESP3 at once, the failed row naming the target and the refusal,
// and is measured without it.
func TestRunRESP3Refused(t *testing.T) {
	r := testutil.StartRedis(t, "--rename-command", "HELLO", "")
	cfg := filepath.Join(t.TempDir(), "attach.yaml")
	yaml := fmt.Sprintf("targets:\n  - name: old\n    kind: attach\n    addr: %s\n    baseline: as_configured\n    strategies: [as_configured]\n", r.Addr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, resp3 := range []bool{true, false} {
		t.Run(fmt.Sprintf("resp3=%v", resp3), func(t *testing.T) {
			o := runOptions(t)
			o.ConfigFile, o.Rounds, o.Modes, o.Requests, o.Keyspace, o.Retries, o.RESP3 = cfg, 1, []string{"set"}, 1000, 1000, 3, resp3
			res, _, _, err := runQuiet(t, context.Background(), o)
			if !resp3 {
				if err != nil {
					t.Fatalf("without RESP3: %v", err)
				}
				if rows := readDetail(t, res); len(rows) != 1 || rows[0].Status != results.StatusOK {
					t.Fatalf("rows %+v, want one ok row", rows)
				}
				return
			}
			if !errors.Is(err, ErrScenariosFailed) {
				t.Fatalf("err %v, want ErrScenariosFailed", err)
			}
			rows := readDetail(t, res)
			if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.HasPrefix(rows[0].Error, "start: old:") ||
				!strings.Contains(rows[0].Error, "does not support RESP3") {
				t.Fatalf("rows %+v: want one failed row naming the target and the RESP3 refusal", rows)
			}
		})
	}
}
