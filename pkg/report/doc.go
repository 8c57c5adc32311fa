// Package report turns kvbench's detail CSVs into the tables people read:
// per target the raw rounds, the trimmed figures (one outlying round
// dropped per scenario), the overhead of each persistence strategy against
// the baseline with a significance verdict, the spread of the rounds and
// the latencies; as markdown (English or the reference tables' Chinese
// headings), CSV, JSON and a chart.
//
// The rows come from package results, which owns the detail CSV.
// "kvbench report" calls Run; "kvbench run" holds its rows in memory and
// calls Build, then Report.WriteFiles, so both print the same numbers and
// write the same files.
// The arithmetic lives in package stats; the number conventions (2
// decimals, means of displayed figures, overheads from displayed figures)
// are documented there and in the README.
package report
