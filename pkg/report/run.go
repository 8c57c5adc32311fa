package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// Writers are the formats "kvbench report" prints a report in, markdown
// (the default), the trimmed CSV, the whole report as JSON, or one
// self-contained HTML page: the tables and the pictures, inline.
var Writers = render.Writers[*Report]{
	{Format: render.Markdown, Write: (*Report).WriteMarkdown},
	{Format: render.CSV, Write: (*Report).WriteTrimmedCSV},
	{Format: render.JSON, Write: (*Report).WriteJSON},
	{Format: render.HTML, Write: (*Report).WriteHTML},
}

// RunOptions is what "kvbench report" was asked to do.
type RunOptions struct {
	// Inputs are detail CSV files or glob patterns (see results.ExpandPatterns).
	Inputs []string
	// Format is one of Writers' ("" means its default, markdown).
	Format render.Format
	// Baselines is the --baseline value, "target=strategy,…" (see ParseBaselines).
	Baselines string
	// SummaryCSV and TrimmedCSV, when set, are files to write the summary
	// and trimmed CSVs to.
	SummaryCSV, TrimmedCSV string
	// Chart, when set, is the chart file to write (.svg or .png); the
	// markdown links to it.
	Chart string
	// Report holds the rest of the options (language, α, confidence).
	Report Options
}

// Run reads the detail CSVs, builds the report and writes it to stdout in
// the requested format, plus the optional files. It is all of
// "kvbench report" but the flag parsing.
func Run(ctx context.Context, opts RunOptions, stdout io.Writer) error {
	format, err := Writers.Parse(string(opts.Format))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	chartFormat := ""
	if opts.Chart != "" {
		var err error
		if chartFormat, err = ChartFormat(opts.Chart); err != nil {
			return err
		}
	}
	bo := opts.Report
	if opts.Baselines != "" {
		m, err := ParseBaselines(opts.Baselines)
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
	// Rows stream from the files into the builder, which keeps only what
	// the report needs: 100,000 rows never sit in memory at once.
	b, err := newBuilder(bo)
	if err != nil {
		return err
	}
	scanErr := results.Scan(files, b.add)
	if b.n == 0 {
		if scanErr != nil {
			return scanErr
		}
		return fmt.Errorf("%w: no detail rows in %s", results.ErrEmpty, strings.Join(files, ", "))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The rows that were read are checked too (duplicates, conflicts), so
	// that the errors of the lines that do not parse and of those that do
	// are listed at once, in the files' order.
	rep, err := b.finish()
	if err != nil || scanErr != nil {
		return results.Merge(files, scanErr, err)
	}
	if err := rep.addNodesBeside(files); err != nil { // nodes.go
		return err
	}
	if err := rep.addSeriesBeside(files); err != nil { // series.go
		return err
	}

	if err := rep.WriteFiles(Files{Summary: opts.SummaryCSV, Trimmed: opts.TrimmedCSV, Chart: opts.Chart, ChartFormat: chartFormat}); err != nil {
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
	// HTML is the HTML page (WriteHTML).
	HTML string
	// Summary and Trimmed are the summary and trimmed CSVs.
	Summary, Trimmed string
	// Chart is the chart, in ChartFormat (svg or png).
	Chart, ChartFormat string
}

// WriteFiles writes the report's files. Each file is rendered in memory and
// written in one go; a file that fails does not stop the others, and every
// failure is returned.
func (r *Report) WriteFiles(f Files) error {
	outputs := []struct {
		path  string
		write func(io.Writer) error
	}{
		{f.Markdown, r.WriteMarkdown},
		{f.HTML, r.WriteHTML},
		{f.Summary, r.WriteSummaryCSV},
		{f.Trimmed, r.WriteTrimmedCSV},
		{f.Chart, func(w io.Writer) error { return r.WriteChart(w, f.ChartFormat) }},
	}
	var errs []error
	for _, o := range outputs {
		if o.path == "" || o.path == f.Chart && len(r.Targets) == 0 { // recovery rows alone: no per-round chart
			continue
		}
		var buf bytes.Buffer
		err := o.write(&buf)
		if err == nil {
			err = os.WriteFile(o.path, buf.Bytes(), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", o.path, err))
		}
	}
	return errors.Join(errs...)
}

// ParseBaselines parses a --baseline value, "kvstore=nopersist,redis=none",
// into a map from target to strategy.
func ParseBaselines(s string) (map[string]string, error) {
	m := make(map[string]string)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		target, strategy, ok := strings.Cut(part, "=")
		target, strategy = strings.TrimSpace(target), strings.TrimSpace(strategy)
		if !ok || target == "" || strategy == "" {
			return nil, fmt.Errorf("%w: baseline %q: want target=strategy", ErrFormat, part)
		}
		if prev, dup := m[target]; dup && prev != strategy {
			return nil, fmt.Errorf("%w: baseline for %s given twice (%s, %s)", ErrFormat, target, prev, strategy)
		}
		m[target] = strategy
	}
	return m, nil
}
