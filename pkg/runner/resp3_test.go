package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunRESP3ClientList: with RESP3, a redis target started by kvbench is
// measured over RESP3: mid-measurement, CLIENT LIST shows every load
// connection, and every other connection of kvbench's, with resp=3.
func TestRunRESP3ClientList(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes, o.RESP3 = []string{"redis"}, []string{"none"}, []string{"set"}, true
	o.Rounds, o.Requests, o.Keyspace, o.Connections, o.Pipeline = 1, 2_000_000, 100_000, 4, 16
	o.ProgressInterval = 5 * time.Millisecond
	var mu sync.Mutex
	var list string // CLIENT LIST, once the load is under way
	var probeErr error
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Observe = func(e Event) {
		if e.Kind != EventProgress || e.Progress.Phase != "run" || e.Progress.Done == 0 || e.Progress.Final {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if list != "" || probeErr != nil {
			return
		}
		// The probe speaks RESP2: it is told apart by its own command.
		opts := e.Instance.Control("")
		opts.RESP3, opts.Timeout = false, 5*time.Second
		c, err := control.Dial(ctx, e.Instance.Addr, opts)
		if err != nil {
			probeErr = err
			return
		}
		defer c.Close()
		v, err := c.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			probeErr = err
			return
		}
		list = fmt.Sprint(v)
		cancel() // what was to be seen is seen
	}
	_, _, _, err := runQuiet(t, ctx, o)
	checkClean(t, o)
	mu.Lock()
	defer mu.Unlock()
	if probeErr != nil {
		t.Fatalf("CLIENT LIST: %v", probeErr)
	}
	if list == "" {
		t.Fatalf("the measurement never got under way: %v", err)
	}
	// A load connection's last command is SET, or HELLO before its first.
	others := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		if slices.Contains(f, "cmd=client|list") {
			continue
		}
		others++
		if !slices.Contains(f, "resp=3") {
			t.Errorf("a connection of kvbench's not in RESP3: %s", line)
		}
	}
	if others < o.Connections {
		t.Errorf("%d connections besides the probe, want at least the load's %d:\n%s", others, o.Connections, list)
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
