package runner

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocarina/gocsv"

	"github.com/kvbench/kvbench/pkg/report"
)

// Files are the result files of a run.
type Files struct {
	// Detail is the detail CSV: one row per attempt.
	Detail string
	// Summary and Trimmed are the report's summary and trimmed CSVs.
	Summary, Trimmed string
	// Report is the markdown report; Chart the chart it links to (empty
	// with Options.Chart "none").
	Report, Chart string
}

// newFiles names the files of a run started at ts, in dir.
func newFiles(dir, prefix, ts, chart string) Files {
	name := func(kind, ext string) string {
		return filepath.Join(dir, prefix+"_"+kind+"_"+ts+"."+ext)
	}
	f := Files{
		Detail:  name("detail", "csv"),
		Summary: name("summary", "csv"),
		Trimmed: name("trimmed", "csv"),
		Report:  name("report", "md"),
	}
	if chart != "none" {
		f.Chart = name("chart", chart)
	}
	return f
}

// detailWriter appends rows to the detail CSV, with gocsv, flushing each
// row to the file as it is written: an interrupted run keeps every
// attempt it finished. It numbers the rows' lines, so that rows kept in
// memory point at the file as rows read back from it do.
type detailWriter struct {
	f    *os.File
	csv  *gocsv.SafeCSVWriter
	path string
	line int
}

// createDetail creates the detail CSV (it must not exist) and writes its
// header.
func createDetail(path string) (*detailWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create the detail CSV: %w", err)
	}
	w := &detailWriter{f: f, csv: gocsv.NewSafeCSVWriter(csv.NewWriter(f)), path: path, line: 1}
	if err := gocsv.MarshalCSV([]report.DetailRow{}, w.csv); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.flush(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// write appends the row and sets its position.
func (w *detailWriter) write(r *report.DetailRow) error {
	r.Error = oneLine(r.Error)
	if err := gocsv.MarshalCSVWithoutHeaders([]report.DetailRow{*r}, w.csv); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.line++
	r.Pos = report.Pos{File: w.path, Line: w.line}
	return nil
}

func (w *detailWriter) flush() error {
	w.csv.Flush()
	if err := w.csv.Error(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

func (w *detailWriter) close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	return nil
}

// oneLine keeps a cell on one line of the CSV (a server's log tail is
// several), so that line numbers and rows agree.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " | ")
}

// writeReport builds the report of rows, writes the markdown, summary,
// trimmed and chart files, and prints the markdown to stdout. It is the
// code "kvbench report" runs on the detail CSV: report.Build, then the
// Report's writers, so both give the same figures.
func writeReport(rows []report.DetailRow, o Options, files Files, stdout io.Writer) (*report.Report, error) {
	baselines, err := report.ParseBaselines(o.Baselines)
	if err != nil {
		return nil, err
	}
	opts := report.Options{Lang: o.Lang, Baselines: baselines}
	if files.Chart != "" {
		opts.ChartLink = filepath.Base(files.Chart)
	}
	rep, err := report.Build(rows, opts)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		return rep, fmt.Errorf("report: %w", err)
	}
	outputs := []struct {
		path  string
		write func(io.Writer) error
	}{
		{files.Report, func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }},
		{files.Summary, rep.WriteSummaryCSV},
		{files.Trimmed, rep.WriteTrimmedCSV},
		{files.Chart, func(w io.Writer) error { return rep.WriteChart(w, o.Chart) }},
	}
	var errs []error
	for _, f := range outputs {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, f.write); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := stdout.Write(md.Bytes()); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// writeFile renders into memory, then writes the file in one go.
func writeFile(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
