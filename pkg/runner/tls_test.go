package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// TestRunRedisTLS runs the redis target over TLS (run --tls): its
// instances serve TLS only with the certificates kvbench makes, the
// prefill, the quiet wait, the samples and the measurement all reach them,
// in this process or from two agent processes given the certificates'
// files, and every row says tls.
func TestRunRedisTLS(t *testing.T) {
	testutil.RequireRedisServer(t)
	for _, agents := range []int{0, 2} {
		t.Run(fmt.Sprintf("agents=%d", agents), func(t *testing.T) {
			o := runOptions(t)
			o.Targets, o.Strategies, o.Modes = []string{"redis"}, []string{"none"}, []string{"set", "get"}
			o.Rounds, o.Requests, o.Keyspace, o.Agents = 1, 5000, 5000, agents
			o.TLS = tlsconf.Options{Enabled: true}
			res, _, stderr, err := runQuiet(t, context.Background(), o)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			checkClean(t, o)
			rows := readDetail(t, res)
			if ok := okRounds(rows); len(ok) != 2 {
				t.Errorf("ok rounds %v: want set and get", ok)
			}
			for _, r := range rows {
				if !r.TLS || r.Requests != 5000 || r.Agents != max(agents, 1) {
					t.Errorf("row %v: tls %v, %d requests, %d agents: want tls, 5000, %d", r.Pos, r.TLS, r.Requests, r.Agents, max(agents, 1))
				}
			}
		})
	}
}

// TestPlanRefusesKvstoreTLS: the kvstore serves plaintext only.
func TestPlanRefusesKvstoreTLS(t *testing.T) {
	for _, targets := range [][]string{nil, {"kvstore-cluster"}} {
		o := planOptions()
		o.TLS = tlsconf.Options{Enabled: true}
		o.Targets = targets
		_, err := NewPlan(o)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "kvstore serves plaintext only") {
			t.Errorf("targets %v: NewPlan: %v, want ErrOptions saying the kvstore serves plaintext only", targets, err)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(file, []byte("targets:\n  - kind: kvstore-cluster\n    tls:\n      enabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := planOptions()
	o.ConfigFile = file
	if _, err := NewPlan(o); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "targets.yaml:4:") || !strings.Contains(err.Error(), "plaintext only") {
		t.Errorf("a kvstore-cluster entry with tls: %v, want its file:line and the reason", err)
	}
}
