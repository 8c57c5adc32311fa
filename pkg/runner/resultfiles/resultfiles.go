// Package resultfiles is the result files of a "kvbench run": their names
// (New) and the report written into them (Files.WriteReport), with the
// same code "kvbench report" runs on the detail CSV.
package resultfiles

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/results"
)

// Files are the result files of a run.
type Files struct {
	// Detail is the detail CSV: one row per attempt.
	Detail string
	// Nodes is the nodes CSV: one row per attempt and master of a cluster
	// target (results.NodeRow); written only when a cluster target ran.
	Nodes string
	// Series is the series CSV: one row per attempt, command and interval
	// (results.SeriesRow); written only with --interval.
	Series string
	// Summary and Trimmed are the report's summary and trimmed CSVs.
	Summary, Trimmed string
	// Report is the markdown report; Chart the chart it links to (empty
	// with the chart format "none").
	Report, Chart string
	// HTML is the report as one self-contained HTML page, with its charts.
	HTML string
	// Comparisons is the comparisons CSV: one row per comparison the
	// report makes, its ratio, interval and verdict.
	Comparisons string
	// Flames are the flame graphs of --profile, which the HTML page
	// links to.
	Flames []report.Profile
}

// New names the files of a run started at ts (its run id), in dir, their
// names starting with prefix; chart is the chart's format, "none" for no
// chart.
func New(dir, prefix, ts, chart string) Files {
	name := func(kind, ext string) string {
		return filepath.Join(dir, prefix+"_"+kind+"_"+ts+"."+ext)
	}
	f := Files{
		Detail:  name("detail", "csv"),
		Nodes:   name("nodes", "csv"),
		Series:  name("series", "csv"),
		Summary: name("summary", "csv"),
		Trimmed: name("trimmed", "csv"),
		Report:  name("report", "md"),
		HTML:    name("report", "html"),

		Comparisons: name("comparisons", "csv"),
	}
	if chart != "none" {
		f.Chart = name("chart", chart)
	}
	return f
}

// WriteReport builds the report of rows with opts, writes the markdown,
// HTML, summary, trimmed and chart (in chartFormat) files, and prints the
// markdown to stdout. It is the
// code "kvbench report" runs on the detail CSV: report.Build, then
// package output's writers, so both give the same figures. The markdown file links
// to the chart beside it; the printed markdown does not (the link is
// relative to the results' directory, not to wherever stdout goes), so it
// is what "kvbench report" prints on the detail CSV, byte for byte.
func (files Files) WriteReport(rows []results.Row, opts report.Options, chartFormat string, stdout io.Writer) (*report.Report, error) {
	opts.Profiles = files.Flames
	if files.Chart != "" {
		opts.ChartLink = filepath.Base(files.Chart)
	}
	rep, err := report.Build(rows, opts)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := rep.AddNodesFile(files.Nodes); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := rep.AddSeriesFile(files.Series); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	err = output.WriteFiles(rep, output.Files{
		Markdown: files.Report, HTML: files.HTML, Summary: files.Summary, Trimmed: files.Trimmed,
		Chart: files.Chart, ChartFormat: chartFormat, Comparisons: files.Comparisons,
	})
	printed := *rep
	printed.Options.ChartLink = ""
	return rep, errors.Join(err, output.Markdown(&printed, stdout))
}
