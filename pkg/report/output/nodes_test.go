package output

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestReportNodes: "kvbench report" on a detail CSV finds the nodes CSV
// beside it and prints the spread, the hot shard visible; a bad nodes
// CSV fails the report naming its file and line.
func TestReportNodes(t *testing.T) {
	dir := t.TempDir()
	detail, err := os.ReadFile("../../../testdata/report/seed000/kvstore_detail.csv")
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
	if err := w.Write(fixture.NodeRows()); err != nil {
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
