package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// nodeRows are two attempts of one scenario on three masters, the second
// master hot (half the requests, the worst p99), and one attempt of
// another scenario spread evenly.
func nodeRows() []results.NodeRow {
	row := func(mode string, attempt int, node string, requests int64, p99 float64) results.NodeRow {
		return results.NodeRow{RunID: "r", Target: "kvstore-cluster", Strategy: "nopersist", Mode: mode, Round: 1, Attempt: attempt,
			Node: node, Slots: 5461, Requests: requests, QPS: float64(requests), LatP50Us: p99 / 2, LatP99Us: p99}
	}
	return []results.NodeRow{
		row("set", 1, "a:1", 250, 100), row("set", 1, "a:2", 500, 300), row("set", 1, "a:3", 250, 120),
		row("set", 2, "b:1", 250, 110), row("set", 2, "b:2", 500, 310), row("set", 2, "b:3", 250, 100),
		row("get", 1, "c:1", 100, 50), row("get", 1, "c:2", 100, 50), row("get", 1, "c:3", 100, 50),
		row("get", 2, "d:1", 0, 0), row("get", 2, "d:2", 0, 0), row("get", 2, "d:3", 0, 0), // no request: left out
	}
}

func TestNodeSpreads(t *testing.T) {
	got := NodeSpreads(nodeRows())
	if len(got) != 2 {
		t.Fatalf("%d spreads, want 2: %+v", len(got), got)
	}
	for _, tc := range []struct {
		s        NodeSpread
		mode     string
		attempts int
		share    []float64
		p99      []float64
		hot      int
		ratio    float64
	}{
		{got[0], "get", 1, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, []float64{50, 50, 50}, 0, 1},
		{got[1], "set", 2, []float64{0.25, 0.5, 0.25}, []float64{105, 305, 110}, 1, 1.5},
	} {
		s := tc.s
		near := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 })
		}
		if s.Mode != tc.mode || s.Shards != 3 || s.Attempts != tc.attempts || !near(s.Share, tc.share) || !near(s.P99, tc.p99) ||
			s.Hot != tc.hot || s.HotRatio-tc.ratio > 1e-9 || tc.ratio-s.HotRatio > 1e-9 {
			t.Errorf("%+v, want mode %s, %d attempts, share %v, p99 %v, hot %d (%.2f×)", s, tc.mode, tc.attempts, tc.share, tc.p99, tc.hot, tc.ratio)
		}
	}
}

// TestReportNodes: "kvbench report" on a detail CSV finds the nodes CSV
// beside it and prints the spread, the hot shard visible; a bad nodes
// CSV fails the report naming its file and line.
func TestReportNodes(t *testing.T) {
	dir := t.TempDir()
	detail, err := os.ReadFile("../../testdata/report/seed000/kvstore_detail.csv")
	if err != nil {
		t.Fatal(err)
	}
	dpath := filepath.Join(dir, "x_detail_1.csv")
	if err := os.WriteFile(dpath, detail, 0o644); err != nil {
		t.Fatal(err)
	}
	npath := filepath.Join(dir, "x_nodes_1.csv")
	w, err := results.CreateNodes(npath)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(nodeRows()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), RunOptions{Inputs: []string{dpath}}, &out); err != nil {
		t.Fatal(err)
	}
	want := "| kvstore-cluster | nopersist | set  |      3 |        25.0% / 25.0% / 50.0% |  105.00 / 110.00 / 305.00 | 1: 50.0% (1.50×) |"
	if !strings.Contains(out.String(), "## Cluster nodes") || !strings.Contains(out.String(), want) {
		t.Errorf("the report lacks the spread line %q:\n%s", want, out.String())
	}
	text, _ := os.ReadFile(npath)
	if err := os.WriteFile(npath, append(text, "r,x,y,set,1,1,n:1,1,ten,1,1,1,0,0\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), RunOptions{Inputs: []string{dpath}}, &out)
	if err == nil || !strings.Contains(err.Error(), npath+":14: column requests") {
		t.Errorf("error %v, want one naming %s:14 and the column", err, npath)
	}
}
