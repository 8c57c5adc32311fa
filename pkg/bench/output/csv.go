package output

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// FormatCSV is the CSV report: a header, then one row per command (per
// test of --tests), as redis-benchmark --csv prints one per test.
const FormatCSV = "csv"

// CSVHeader is the CSV report's header; latencies are in µs.
var CSVHeader = []string{"command", "requests", "qps", "avg_us", "p50_us", "p99_us", "p999_us", "max_us", "errors"}

// summaryRow is one line of the CSV and quiet reports: a command, a test
// or a whole run.
type summaryRow struct {
	name     string
	requests int64
	qps      float64
	latency  measure.Latency
	errors   int64
}

// summaryRows are the rows of r: one per command of a mix; for a run of
// one command (set or get mode) one named after it; for a mixed run one
// named HDRWhole.
func summaryRows(r loadgen.Result) []summaryRow {
	if len(r.Commands) > 0 {
		rows := make([]summaryRow, 0, len(r.Commands))
		for _, c := range r.Commands {
			rows = append(rows, summaryRow{c.Name, c.Requests, c.QPS, c.Latency, c.Errors})
		}
		return rows
	}
	name := HDRWhole
	switch r.Config.Mode {
	case loadgen.ModeSet:
		name = strings.ToUpper(r.Config.SetCmd)
	case loadgen.ModeGet:
		name = strings.ToUpper(r.Config.GetCmd)
	}
	return []summaryRow{{name, r.Requests, r.QPS, r.Latency, r.ErrorCount()}}
}

// testRows are the rows of redis-benchmark's tests, named in upper case.
func testRows(results []rbtests.TestResult) []summaryRow {
	rows := make([]summaryRow, 0, len(results))
	for _, t := range results {
		rows = append(rows, summaryRow{strings.ToUpper(t.Test), t.Requests, t.QPS, t.Latency, t.ErrorCount()})
	}
	return rows
}

// writeCSV writes the header and rows. A row without requests has its
// QPS and latencies empty: they were not measured.
func writeCSV(w io.Writer, rows []summaryRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, r := range rows {
		rec := []string{r.name, strconv.FormatInt(r.requests, 10), "", "", "", "", "", "", strconv.FormatInt(r.errors, 10)}
		if r.requests > 0 {
			l := r.latency
			copy(rec[2:8], []string{f(r.qps), f(l.Mean), f(l.P50), f(l.P99), f(l.P999), f(l.Max)})
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSV writes the CSV report of a run.
func WriteCSV(w io.Writer, r loadgen.Result) error { return writeCSV(w, summaryRows(r)) }

// WriteTestsCSV writes the CSV report of redis-benchmark's tests.
func WriteTestsCSV(w io.Writer, results []rbtests.TestResult) error {
	return writeCSV(w, testRows(results))
}

// writeQuiet writes one line per row, as redis-benchmark -q does:
// "SET: 181488.20 requests per second, p50=135.00 us". A row without
// requests says so instead of a rate.
func writeQuiet(w io.Writer, rows []summaryRow) error {
	var b strings.Builder
	for _, r := range rows {
		if r.requests == 0 {
			fmt.Fprintf(&b, "%s: no requests measured\n", r.name)
			continue
		}
		fmt.Fprintf(&b, "%s: %.2f requests per second, p50=%.2f us\n", r.name, r.qps, r.latency.P50)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteQuiet writes the quiet report of a run (-q): one line per command.
func WriteQuiet(w io.Writer, r loadgen.Result) error { return writeQuiet(w, summaryRows(r)) }

// WriteTestsQuiet writes the quiet report of redis-benchmark's tests: one
// line per test.
func WriteTestsQuiet(w io.Writer, results []rbtests.TestResult) error {
	return writeQuiet(w, testRows(results))
}
