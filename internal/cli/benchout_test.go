package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/measure"
)

// TestBenchPercentilesJSON: --percentiles adds "percentiles_us" with
// p50, p99, p99.9 and p99.99 keys beside the fixed latency_us, and the
// document still reads back; --hdr-file-prefix writes the run's files.
func TestBenchPercentilesJSON(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	prefix := filepath.Join(t.TempDir(), "h")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--requests", "2000", "--keyspace", "100",
		"--percentiles", "99.99,50,99,99.9", "--hdr-file-prefix", prefix, "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct {
		Latency     map[string]float64 `json:"latency_us"`
		Percentiles map[string]float64 `json:"percentiles_us"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p50", "p99", "p99.9", "p99.99"} {
		if doc.Percentiles[k] <= 0 {
			t.Errorf("percentiles_us[%s] = %v in %v", k, doc.Percentiles[k], doc.Percentiles)
		}
	}
	if len(doc.Percentiles) != 4 || doc.Latency["p50"] != doc.Percentiles["p50"] || doc.Latency["p999"] != doc.Percentiles["p99.9"] {
		t.Errorf("latency_us %v, percentiles_us %v", doc.Latency, doc.Percentiles)
	}
	var back measure.Result
	if err := measure.Decode([]byte(stdout), &back, []measure.Field{{Name: "seed", Value: new(int64)}, {Name: "settings", Value: new(json.RawMessage)}}); err != nil {
		t.Errorf("the document does not read back: %v", err)
	}
	for _, ext := range []string{".hgrm", ".hlog"} {
		if _, err := os.Stat(prefix + "_FULL_RUN" + ext); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stderr, "histograms: "+prefix+"_FULL_RUN.hgrm") {
		t.Errorf("stderr does not name the files: %q", stderr)
	}
}

func TestBenchOutputUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--percentiles", "50,101"}, `--percentiles percentile "101": want a number above 0 and at most 100`},
		{[]string{"--percentiles", "p99"}, `--percentiles percentile "p99"`},
		{[]string{"--hdr-file-prefix", "/nonexistent-dir/x"}, "--hdr-file-prefix /nonexistent-dir/x: directory /nonexistent-dir does not exist"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench bench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestBenchTestsPercentilesAndHDR: with redis-benchmark's tests, each
// test gets its percentile columns and its histogram files.
func TestBenchTestsPercentilesAndHDR(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	prefix := filepath.Join(t.TempDir(), "t")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--requests", "1000", "--keyspace", "100",
		"--tests", "set,get", "--percentiles", "50,99.99", "--hdr-file-prefix", prefix)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "p50 us") || !strings.Contains(stdout, "p99.99 us") || strings.Contains(stdout, "p90 us") {
		t.Errorf("columns:\n%s", stdout)
	}
	for _, name := range []string{"SET", "GET"} {
		if _, err := os.Stat(prefix + "_" + name + ".hlog"); err != nil {
			t.Error(err)
		}
	}
}
