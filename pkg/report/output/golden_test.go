package output

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in pkg/report/testdata/")

// The golden tests run in the report's directory, pkg/report, where the
// golden files are (testdata/) beside some of their inputs: a failed
// attempt's source names its file as it was given.
func inReportDir(t *testing.T) { t.Chdir("..") }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", path, got)
	}
}

// goldenInputs are the detail CSVs of each golden file, from the report's
// directory: seed 000; the synthetic mixed rows; a "run --workloads
// rb-six,ycsb-a --modes set" of the kvstore (which lacks rb-six's SADD and
// ZADD) and Redis, two strategies each, with a failed attempt retried;
// load curves; an adaptive run (adaptiveCSV).
var goldenInputs = map[string][]string{
	"seed000":   {"../../testdata/report/seed000/kvstore_detail.csv", "../../testdata/report/seed000/redis_detail.csv"},
	"mixed":     {"../../testdata/report/synthetic/mixed.csv"},
	"workloads": {"testdata/workloads.csv"},
	"curve":     {"testdata/curve.csv"},
	"adaptive":  {adaptiveCSV},
}

// mixedFiles and workloadFiles are the same inputs from this directory.
var (
	mixedFiles    = []string{"../../../testdata/report/synthetic/mixed.csv"}
	workloadFiles = []string{"../testdata/workloads.csv"}
)

func TestGolden(t *testing.T) {
	inReportDir(t)
	inputs := goldenInputs
	writers := []struct {
		suffix string
		lang   string
		write  func(*report.Report, io.Writer) error
	}{
		{".en.md", render.LangEN, Markdown},
		{".zh.md", render.LangZH, Markdown},
		{".summary.csv", render.LangEN, SummaryCSV},
		{".trimmed.csv", render.LangEN, TrimmedCSV},
		{".json", render.LangEN, JSON},
		{".comparisons.csv", render.LangEN, ComparisonsCSV},
	}
	for name, files := range inputs {
		rows, err := results.ReadFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range writers {
			t.Run(name+w.suffix, func(t *testing.T) {
				rep, err := report.Build(rows, report.Options{Lang: w.lang})
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := w.write(rep, &buf); err != nil {
					t.Fatal(err)
				}
				golden(t, name+w.suffix, buf.Bytes())
			})
		}
	}
}

// TestRunMatchesGolden runs the whole "kvbench report" path (a glob over
// several files, each format) and compares stdout with the golden files.
func TestRunMatchesGolden(t *testing.T) {
	inReportDir(t)
	for _, tt := range []struct {
		format       render.Format
		lang, golden string
	}{
		{render.Markdown, render.LangEN, "seed000.en.md"},
		{"", render.LangZH, "seed000.zh.md"},
		{render.CSV, "", "seed000.trimmed.csv"},
		{render.JSON, "", "seed000.json"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			if *update {
				t.Skip("golden files being rewritten")
			}
			var out bytes.Buffer
			opts := RunOptions{
				Inputs: []string{"../../testdata/report/seed000/*.csv"},
				Format: tt.format,
				Report: report.Options{Lang: tt.lang},
			}
			if err := Run(context.Background(), opts, &out); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("Run output differs from %s:\n%s", tt.golden, out.Bytes())
			}
		})
	}
}

// TestRunFiles checks the files Run writes beside stdout.
func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	inReportDir(t)
	opts := RunOptions{
		Inputs:     goldenInputs["seed000"],
		SummaryCSV: filepath.Join(dir, "summary.csv"),
		TrimmedCSV: filepath.Join(dir, "trimmed.csv"),
		Chart:      filepath.Join(dir, "chart.svg"),
	}
	var out bytes.Buffer
	if err := Run(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	for file, golden := range map[string]string{"summary.csv": "seed000.summary.csv", "trimmed.csv": "seed000.trimmed.csv"} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join("testdata", golden))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s", file, golden)
		}
	}
	svg, err := os.ReadFile(opts.Chart)
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("chart: %v, %.40q", err, svg)
	}
	if !bytes.Contains(out.Bytes(), []byte("]("+opts.Chart+")")) {
		t.Errorf("the markdown does not link to the chart:\n%s", out.Bytes())
	}
}

func TestWriteChartPNG(t *testing.T) {
	rep := seedReport(t, report.Options{})
	var buf bytes.Buffer
	if err := WriteChart(&buf, rep, render.ChartPNG); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
		t.Errorf("not a PNG: %.8q", buf.Bytes())
	}
	if err := WriteChart(io.Discard, rep, "gif"); err == nil {
		t.Error("gif: want an error")
	}
}
