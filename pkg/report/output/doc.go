// Package output is what "kvbench report" prints and "kvbench run" leaves
// beside its detail CSV: a report.Report assembled into documents. The
// markdown (in English or Chinese, with the reference tables' headings):
// the settings the rows record, the targets side by side, the workloads'
// tables, then per target the raw rounds, the trimmed figures, the
// overhead against the baseline, the spread and the latencies, then the
// cluster's nodes, stalls, load curves and capacity, telemetry, recovery,
// the failed attempts and the warnings (for an adaptive run: the
// comparisons per mode, then per target the slices' medians, instead of
// the per-round tables); one self-contained HTML page with those tables
// and the pictures (the chart, the side-by-side bars,
// latency by percentile, latency against throughput, each scenario's
// rounds over time); the chart alone (SVG or PNG); the summary, trimmed
// and comparisons CSVs; the whole report as JSON.
//
// It decides what each table and picture shows, from the report's
// values; package render draws them (markdown tables, the page, SVG
// plots) in the words of the report's language (render.Labels). Writers
// is the one dispatch of the formats, Run the whole of "kvbench report"
// but the flag parsing, WriteFiles the set "kvbench run" writes.
package output
