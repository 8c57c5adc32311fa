package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRunRefusedAtOnce: an attach target whose server refuses the
// password, or whose port answers something other than RESP, fails at
// once, naming the target and the problem, and is not retried.
func TestRunRefusedAtOnce(t *testing.T) {
	r := testutil.StartRedis(t, "--requirepass", "right")
	garbage := testutil.ServeBytes(t, "$9999999999999\r\n")
	for _, tc := range []struct {
		name, addr, password, want string
	}{
		{"wrong password", r.Addr, "wrong", "refused the password (WRONGPASS"},
		{"no password", r.Addr, "", "NOAUTH"},
		{"not RESP", garbage, "", "answers, but not in RESP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "attach.yaml")
			yaml := fmt.Sprintf("targets:\n  - name: remote\n    kind: attach\n    addr: %s\n    password: %q\n    baseline: as_configured\n    strategies: [as_configured]\n", tc.addr, tc.password)
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			o := runOptions(t)
			o.ConfigFile, o.Rounds, o.Requests, o.Keyspace, o.Retries = cfg, 2, 1000, 1000, 3
			// A wait for readiness would last it: the start's time tells,
			// with a margin no load closes.
			o.ReadyTimeout = time.Minute
			res, _, _, err := runQuiet(t, context.Background(), o)
			if !errors.Is(err, ErrScenariosFailed) {
				t.Fatalf("err %v, want ErrScenariosFailed", err)
			}
			rows := readDetail(t, res)
			if len(rows) != 1 || rows[0].Status != results.StatusFailed || !strings.Contains(rows[0].Error, tc.want) || !strings.HasPrefix(rows[0].Error, "start: remote:") {
				t.Fatalf("rows %+v: want one failed row naming the target and %q", rows, tc.want)
			}
			if rows[0].StartS >= o.ReadyTimeout.Seconds() {
				t.Errorf("the start took %vs: it waited for readiness", rows[0].StartS)
			}
		})
	}
}
