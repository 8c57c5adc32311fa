package output

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// Writers are the formats "kvbench report" prints a report in, markdown
// (the default), the trimmed CSV, the whole report as JSON, or one
// self-contained HTML page: the tables and the pictures, inline.
var Writers = render.Writers[*report.Report]{
	{Format: render.Markdown, Write: Markdown},
	{Format: render.CSV, Write: TrimmedCSV},
	{Format: render.JSON, Write: JSON},
	{Format: render.HTML, Write: HTML},
}

// RunOptions is what "kvbench report" was asked to do.
type RunOptions struct {
	// Inputs are detail CSV files or glob patterns (see results.ExpandPatterns).
	Inputs []string
	// Format is one of Writers' ("" means its default, markdown).
	Format render.Format
	// Baselines is the --baseline value, "target=strategy,…" (see
	// report.ParseBaselines).
	Baselines string
	// SummaryCSV, TrimmedCSV and ComparisonsCSV, when set, are files to
	// write the summary, trimmed and comparisons CSVs to.
	SummaryCSV, TrimmedCSV, ComparisonsCSV string
	// Chart, when set, is the chart file to write (.svg or .png); the
	// markdown links to it.
	Chart string
	// Report holds the rest of the options (language, α, confidence).
	Report report.Options
}

// Run reads the detail CSVs, builds the report (report.ReadFiles) and
// writes it to stdout in the requested format, plus the optional files.
// It is all of "kvbench report" but the flag parsing.
func Run(ctx context.Context, opts RunOptions, stdout io.Writer) error {
	format, err := Writers.Parse(string(opts.Format))
	if err != nil {
		return fmt.Errorf("%w: %w", report.ErrFormat, err)
	}
	chartFormat := ""
	if opts.Chart != "" {
		if chartFormat, err = ChartFormat(opts.Chart); err != nil {
			return err
		}
	}
	bo := opts.Report
	if opts.Baselines != "" {
		m, err := report.ParseBaselines(opts.Baselines)
		if err != nil {
			return err
		}
		bo.Baselines = m
	}
	bo.ChartLink = opts.Chart

	files, err := results.ExpandPatterns(opts.Inputs)
	if err != nil {
		return err
	}
	files = results.DetailFiles(files) // "results/*.csv": the files kvbench writes beside them go
	rep, err := report.ReadFiles(ctx, files, bo)
	if err != nil {
		return err
	}
	if err := WriteFiles(rep, Files{Summary: opts.SummaryCSV, Trimmed: opts.TrimmedCSV, Comparisons: opts.ComparisonsCSV,
		Chart: opts.Chart, ChartFormat: chartFormat}); err != nil {
		return err
	}
	return Writers.Write(stdout, format, rep)
}

// Files names the files a report is written to; an empty name is skipped.
// "kvbench run" writes all of them next to its detail CSV, "kvbench report"
// those its flags ask for.
type Files struct {
	// Markdown is the markdown report.
	Markdown string
	// HTML is the HTML page (HTML).
	HTML string
	// Summary and Trimmed are the summary and trimmed CSVs.
	Summary, Trimmed string
	// Comparisons is the comparisons CSV (ComparisonsCSV).
	Comparisons string
	// Chart is the chart, in ChartFormat (svg or png).
	Chart, ChartFormat string
}

// WriteFiles writes the report's files. Each file is rendered in memory and
// written in one go; a file that fails does not stop the others, and every
// failure is returned.
func WriteFiles(r *report.Report, f Files) error {
	outputs := []struct {
		path  string
		write func(*report.Report, io.Writer) error
	}{
		{f.Markdown, Markdown},
		{f.HTML, HTML},
		{f.Summary, SummaryCSV},
		{f.Trimmed, TrimmedCSV},
		{f.Comparisons, ComparisonsCSV},
		{f.Chart, func(r *report.Report, w io.Writer) error { return WriteChart(w, r, f.ChartFormat) }},
	}
	var errs []error
	for _, o := range outputs {
		if o.path == "" || o.path == f.Chart && len(r.Targets) == 0 { // recovery rows alone: no per-round chart
			continue
		}
		var buf bytes.Buffer
		err := o.write(r, &buf)
		if err == nil {
			err = os.WriteFile(o.path, buf.Bytes(), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", o.path, err))
		}
	}
	return errors.Join(errs...)
}
