package results

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
)

// TestOptionalCells: an optional figure or count that is zero is written
// as an empty cell, never 0; a measured one as a number; both read back.
func TestOptionalCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "detail.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := []Row{
		{Target: "kvstore", Strategy: "none", Mode: "set", Round: 1, Status: StatusOK, QPS: 1000},
		{Target: "kvstore", Strategy: "none", Mode: "get", Round: 1, Status: StatusOK, QPS: 1000,
			ServerCPUS: 0.000123, QPSPerServerCPUS: 8130081.3, ServerRSSBytes: 1 << 30, ServerUsedMemoryBytes: 12345,
			ServerUsecPerCall: 0.25, ServerCalls: 20000},
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"server_cpu_s", "qps_per_server_cpu_s", "server_rss_bytes", "server_used_memory_bytes", "server_usec_per_call", "server_calls"}
	want := [][]string{{"", "", "", "", "", ""}, {"0.000123", "8130081.3", "1073741824", "12345", "0.25", "20000"}}
	for i, c := range cols {
		at := -1
		for j, h := range recs[0] {
			if h == c {
				at = j
			}
		}
		if at < 0 {
			t.Fatalf("no column %s", c)
		}
		for r := range want {
			if got := recs[r+1][at]; got != want[r][i] {
				t.Errorf("row %d, %s: %q, want %q", r+1, c, got, want[r][i])
			}
		}
	}
	back, err := ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	back[1].Pos, rows[1].Pos = Pos{}, Pos{}
	if back[0].ServerCPUS != 0 || back[1] != rows[1] {
		t.Errorf("read back %+v\nwant %+v", back[1], rows[1])
	}
}
