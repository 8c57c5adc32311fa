package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/loadgen"
)

// TestRefusedWritesNoThroughput: writes of the kvstore's insert-only RSET
// to keys that exist are refused (EXIST). A run whose writes were all
// refused prints no throughput in the quiet and text reports, and the
// JSON and CSV reports carry the count and a flag beside their QPS; a
// run with some refused names them beside its rate.
func TestRefusedWritesNoThroughput(t *testing.T) {
	host, port := startKvstore(t)
	run := func(requests int64, format string, quiet bool) string {
		t.Helper()
		o := options(host, port, "mode", "set-cmd", "seed", "output", "quiet")
		o.Mode, o.SetCmd, o.Seed, o.Requests, o.Keyspace, o.Output, o.Quiet = loadgen.ModeSet, "RSET", 1, requests, 2000, format, quiet
		var out bytes.Buffer
		if _, err := Run(context.Background(), o, &out); err != nil {
			t.Fatalf("RSET -n %d: %v", requests, err)
		}
		return out.String()
	}
	// The first 1000 keys of the permutation are written, then all 2000
	// are: 1000 refused.
	if got := run(1000, output.FormatText, true); !strings.HasPrefix(got, "RSET: ") || !strings.Contains(got, "requests per second") || strings.Contains(got, "refused") {
		t.Fatalf("first run, nothing refused: %q", got)
	}
	if got := run(2000, output.FormatText, true); !strings.Contains(got, "requests per second") || !strings.Contains(got, "(1000 of 2000 writes refused (EXIST), counted as requests)") {
		t.Errorf("half refused, -q: %q: want the rate with the refusals beside it", got)
	}

	// Every key exists now: every write is refused.
	if got := run(2000, output.FormatText, true); got != "RSET: refused 2000 of 2000 writes (EXIST): no throughput\n" {
		t.Errorf("all refused, -q: %q", got)
	}
	text := run(2000, output.FormatText, false)
	qps := ""
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(line, "QPS: "); ok {
			qps = v
		}
	}
	if !strings.HasPrefix(qps, "no throughput: 2000 of 2000 writes refused (EXIST)") {
		t.Errorf("all refused, text: QPS line %q\n%s", qps, text)
	}

	var doc struct {
		QPS              float64 `json:"qps"`
		QPSCountsRefused *bool   `json:"qps_counts_refused"`
		RefusedWrites    *int64  `json:"refused_writes"`
		Conflicts        int64   `json:"conflicts"`
	}
	js := run(2000, output.FormatJSON, false)
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.QPSCountsRefused == nil || !*doc.QPSCountsRefused || doc.RefusedWrites == nil || *doc.RefusedWrites != 2000 || doc.Conflicts != 2000 || doc.QPS <= 0 {
		t.Errorf("all refused, JSON: %+v: want qps with qps_counts_refused true and refused_writes 2000 beside it", doc)
	}
	var back loadgen.Result
	if err := json.Unmarshal([]byte(js), &back); err != nil || back.Conflicts != 2000 {
		t.Errorf("the JSON document does not read back: %v, conflicts %d", err, back.Conflicts)
	}

	rows, err := csv.NewReader(strings.NewReader(run(2000, output.FormatCSV, false))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0][:9], []string{"command", "requests", "qps", "avg_us", "p50_us", "p99_us", "p999_us", "max_us", "errors"}) {
		t.Errorf("CSV header %v: the columns that were must stay first", rows[0])
	}
	col := func(name string) string {
		i := slices.Index(rows[0], name)
		if i < 0 {
			t.Fatalf("CSV header %v: no %s", rows[0], name)
		}
		return rows[1][i]
	}
	if len(rows) != 2 || col("refused_writes") != "2000" || col("qps_counts_refused") != "true" || col("qps") == "" {
		t.Errorf("all refused, CSV %v: want the QPS with refused_writes 2000 and qps_counts_refused true", rows)
	}
}

// TestCSVPercentiles: --percentiles adds a column to the CSV report per
// percentile it lacks, for a run and for redis-benchmark's tests.
func TestCSVPercentiles(t *testing.T) {
	host, port := startKvstore(t)
	for _, tests := range []string{"", "set,get"} {
		o := options(host, port, "output", "percentiles", "tests")
		o.Output, o.Percentiles, o.Tests = output.FormatCSV, "50,75,99.99", tests
		var out bytes.Buffer
		if _, err := Run(context.Background(), o, &out); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(output.CSVHeader), "p75_us", "p99.99_us")
		if !slices.Equal(rows[0], want) {
			t.Errorf("tests %q: header %v, want %v", tests, rows[0], want)
		}
		for _, row := range rows[1:] {
			var f [3]float64
			for i, cell := range []string{row[4], row[len(row)-2], row[len(row)-1]} {
				if f[i], err = strconv.ParseFloat(cell, 64); err != nil {
					t.Fatalf("tests %q: row %v: %v", tests, row, err)
				}
			}
			if !(f[0] <= f[1] && f[1] <= f[2]) {
				t.Errorf("tests %q: row %v: p50 %v, p75 %v, p99.99 %v out of order", tests, row, f[0], f[1], f[2])
			}
		}
	}
}

// TestHDRFilesPerCommandMixed: --hdr-file-prefix with --mode mixed writes
// the writes' and reads' histograms beside the whole run's.
func TestHDRFilesPerCommandMixed(t *testing.T) {
	host, port := startKvstore(t)
	o := options(host, port, "mode", "hdr-file-prefix")
	o.Mode, o.HDRPrefix = loadgen.ModeMixed, filepath.Join(t.TempDir(), "mixed")
	var log bytes.Buffer
	o.Log = &log
	if _, err := Run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{output.HDRWhole, "SET", "GET"} {
		for _, ext := range []string{".hgrm", ".hlog"} {
			if path := o.HDRPrefix + "_" + name + ext; !strings.Contains(log.String(), path) {
				t.Errorf("%s not written: %s", path, log.String())
			}
		}
	}
}
