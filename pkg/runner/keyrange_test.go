package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunKeyRange: a run's key range (Load.KeyMinimum) reaches every
// attempt, in this process and through agents given the load as JSON:
// against an attached Redis, the set and get rounds (the get verified
// after its prefill) leave only keys 5000 to 5999.
func TestRunKeyRange(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := filepath.Join(t.TempDir(), "attach.yaml")
	yaml := fmt.Sprintf("targets:\n  - name: remote\n    kind: attach\n    addr: %s\n    allow_flush: true\n    baseline: as_configured\n    strategies: [as_configured]\n", r.Addr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	for _, agents := range []int{0, 2} {
		o := runOptions(t)
		o.ConfigFile, o.Rounds, o.Retries, o.Modes, o.Agents = cfg, 1, 0, []string{"set", "get"}, agents
		o.Requests, o.Keyspace, o.KeyMinimum, o.Connections = 3000, 1000, 5000, 2
		res, _, stderr, err := runQuiet(t, context.Background(), o)
		if err != nil {
			t.Fatalf("agents %d: %v\n%s", agents, err, stderr)
		}
		for _, row := range readDetail(t, res) {
			if row.Status != results.StatusOK || row.Misses != 0 || row.VerifyFailures != 0 || row.Keyspace != 1000 {
				t.Errorf("agents %d: %s row: status %s, %d misses, %d wrong, keyspace %d", agents, row.Mode, row.Status, row.Misses, row.VerifyFailures, row.Keyspace)
			}
		}
		keys, err := rc.Keys(context.Background(), "*").Result()
		if err != nil || len(keys) != 1000 {
			t.Fatalf("agents %d: KEYS: %d keys, %v; want the 1000 of the range", agents, len(keys), err)
		}
		for _, k := range keys {
			var n int
			if _, err := fmt.Sscanf(strings.TrimPrefix(k, "bench:key:"), "%d", &n); err != nil || n < 5000 || n > 5999 {
				t.Errorf("agents %d: key %q is not in the range 5000 to 5999", agents, k)
			}
		}
	}
}
