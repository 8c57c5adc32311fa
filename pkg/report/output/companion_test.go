package output

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReportSkipsCompanions: "kvbench report dir/*.csv" over a directory
// holding a detail CSV and the summary and trimmed CSVs a report wrote
// beside it reports the detail CSV alone, as when it is named.
func TestReportSkipsCompanions(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../../testdata/report/seed000/redis_detail.csv")
	if err != nil {
		t.Fatal(err)
	}
	detail := filepath.Join(dir, "kvbench_detail_1.csv")
	if err := os.WriteFile(detail, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	opts := RunOptions{Inputs: []string{detail}, SummaryCSV: filepath.Join(dir, "kvbench_summary_1.csv"), TrimmedCSV: filepath.Join(dir, "kvbench_trimmed_1.csv")}
	if err := Run(context.Background(), opts, &want); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Run(context.Background(), RunOptions{Inputs: []string{filepath.Join(dir, "*.csv")}}, &got); err != nil {
		t.Fatalf("report dir/*.csv: %v", err)
	}
	if got.String() != want.String() {
		t.Errorf("report dir/*.csv differs from report of the detail CSV:\n%s\nwant:\n%s", got.String(), want.String())
	}
	// A summary CSV alone is read, and refused, as the file it is.
	err = Run(context.Background(), RunOptions{Inputs: []string{opts.SummaryCSV}}, &got)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(`missing required column "round"`)) {
		t.Errorf("a summary CSV alone: %v", err)
	}
}
