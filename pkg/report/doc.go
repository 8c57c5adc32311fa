// Package report turns kvbench's detail rows into the tables people read:
// the settings the rows record, then per target the raw rounds, the
// trimmed figures (one outlying round dropped per scenario), the overhead
// of each persistence strategy against the baseline with a significance
// verdict, the spread of the rounds and the latencies, then the failed
// attempts and the warnings, one line per kind; with two targets or more,
// first the targets side by side per mode, with ratios to a reference
// target. As markdown (in English or Chinese, with the reference tables'
// headings), CSV, JSON, a chart, and one self-contained HTML page with
// the tables and the pictures (the chart, the side-by-side bars, latency
// by percentile from the rows' HdrHistograms; with the series CSV beside
// the detail CSV, a stalls table per target and each scenario's QPS and
// p99 over time).
//
// The rows come from package results, which owns the detail CSV; the
// arithmetic (trimming, medians, confidence intervals, the U test) lives in
// package stats. Build computes a Report, whose Figures are already rounded
// as printed; its Write methods write each format, and WriteFiles the set
// "kvbench run" leaves behind. Run is the whole of "kvbench report". Both
// commands go through Build, so they print the same numbers, in the same
// order: Build orders targets, strategies and modes by what the rows say,
// never by the order they come in.
//
// What the tables hold, the trimming rule, the number conventions and the
// CSV and JSON formats are documented for users in docs/report.md.
package report
