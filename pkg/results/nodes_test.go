package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodesCSVRoundTrip: rows written by NodeWriter read back equal.
func TestNodesCSVRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x_nodes.csv")
	w, err := CreateNodes(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeRow{
		{RunID: "r", Target: "redis-cluster", Strategy: "none", Mode: "set", Round: 1, Attempt: 1, Node: "127.0.0.1:7001", Slots: 5461, Requests: 100, QPS: 1e5, LatP50Us: 10.5, LatP99Us: 99, Moved: 2, Ask: 1},
		{RunID: "r", Target: "redis-cluster", Strategy: "none", Mode: "set", Round: 1, Attempt: 1, Node: "127.0.0.1:7002", Slots: 5462, Requests: 120, QPS: 1.2e5, LatP50Us: 11, LatP99Us: 120},
	}
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadNodesCSV(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

// TestReadNodesCSVErrors: every error names the file and line (and the
// column), and wraps the results package's sentinel.
func TestReadNodesCSVErrors(t *testing.T) {
	const header = "run_id,target,strategy,mode,round,attempt,node,slots,requests,qps,lat_p50_us,lat_p99_us,moved,ask\n"
	const good = "r,c,none,set,1,1,127.0.0.1:1,5461,10,100,1,2,0,0\n"
	for _, tc := range []struct {
		name, text, want string
		sentinel         error
	}{
		{"empty", "", "n.csv:1: empty file: no header line", ErrEmpty},
		{"missing column", strings.Replace(header, ",qps", "", 1), `n.csv:1: missing required column "qps"`, ErrMissingColumn},
		{"bad number", header + good + "r,c,none,set,1,1,127.0.0.1:2,5461,10,abc,1,2,0,0\n", `n.csv:3: column qps: "abc" is not a number`, ErrNotNumber},
		{"bad integer", header + "r,c,none,set,1.5,1,127.0.0.1:2,5461,10,1,1,2,0,0\n", `n.csv:2: column round: "1.5" is not an integer`, ErrNotInteger},
		{"short row", header + good + "r,c\n", "n.csv:3:", ErrNotCSV},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNodesCSV(strings.NewReader(tc.text), "n.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v, want one containing %q wrapping %v", err, tc.want, tc.sentinel)
			}
		})
	}
	// Unknown columns (a later kvbench's) are ignored.
	rows, err := ReadNodesCSV(strings.NewReader(strings.TrimSuffix(header, "\n")+",extra\n"+strings.TrimSuffix(good, "\n")+",x\n"), "n.csv")
	if err != nil || len(rows) != 1 || rows[0].Slots != 5461 {
		t.Errorf("with an extra column: %+v, %v", rows, err)
	}
}
