package output

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// FormatCSV is the CSV report: a header, then one row per command (per
// test of --tests), as redis-benchmark --csv prints one per test.
const FormatCSV = "csv"

// CSVHeader is the CSV report's header; latencies are in µs.
// refused_writes is the count of writes the server refused (EXIST) among
// the row's requests and qps_counts_refused says that its qps counts
// them (true or false). With --percentiles, a column per percentile
// chosen that is not one of these follows (p75_us, p99.99_us…).
var CSVHeader = []string{"command", "requests", "qps", "avg_us", "p50_us", "p99_us", "p999_us", "max_us", "errors",
	"refused_writes", "qps_counts_refused"}

// summaryRow is one line of the CSV and quiet reports: a command, a test
// or a whole run.
type summaryRow struct {
	name     string
	requests int64
	qps      float64
	latency  measure.Latency
	errors   int64
	// hist is the row's latency histogram, for the chosen percentiles.
	hist *hdrhistogram.Histogram
	// writes is the row's writes and refused those the server refused
	// (EXIST): its qps counts them, though nothing was written. A row of
	// a command mix has refused 0: the mix's refusals are the whole
	// run's, on a row of their own (refusedRow).
	writes, refused int64
}

// allRefused reports whether every request of the row was a write the
// server refused: its rate is no throughput at all.
func (r summaryRow) allRefused() bool { return r.refused > 0 && r.refused == r.requests }

// refusedNote is what a row with refused writes says beside its figure:
// "5000 of 20000 writes refused (EXIST)".
func (r summaryRow) refusedNote() string {
	return fmt.Sprintf("%d of %d writes refused (EXIST)", r.refused, r.writes)
}

// summaryRows are the rows of r: one per command of a mix; for a run of
// one command (set or get mode) one named after it; for a mixed run one
// named HDRWhole.
func summaryRows(r loadgen.Result) []summaryRow {
	if len(r.Commands) > 0 {
		rows := make([]summaryRow, 0, len(r.Commands)+1)
		for _, c := range r.Commands {
			rows = append(rows, summaryRow{name: c.Name, requests: c.Requests, qps: c.QPS, latency: c.Latency, errors: c.Errors, hist: c.Histogram})
		}
		if r.Conflicts > 0 {
			rows = append(rows, refusedRow(r))
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
	return []summaryRow{{name: name, requests: r.Requests, qps: r.QPS, latency: r.Latency, errors: r.ErrorCount(),
		hist: r.Histogram, writes: writesOf(r), refused: r.Conflicts}}
}

// refusedRow is the row of a command mix's whole run when the server
// refused writes: the mix counts refusals for the run, not per command,
// so the whole carries them (named HDRWhole, as a mixed mode's row).
func refusedRow(r loadgen.Result) summaryRow {
	return summaryRow{name: HDRWhole, requests: r.Requests, qps: r.QPS, latency: r.Latency, errors: r.ErrorCount(),
		hist: r.Histogram, writes: writesOf(r), refused: r.Conflicts}
}

// writesOf is the number of writes of r: its sets, or, for a command mix
// or a test, which count no sets, its requests.
func writesOf(r loadgen.Result) int64 {
	if r.Sets < r.Conflicts {
		return r.Requests
	}
	return r.Sets
}

// testRows are the rows of redis-benchmark's tests, named in upper case.
func testRows(results []rbtests.TestResult) []summaryRow {
	rows := make([]summaryRow, 0, len(results))
	for _, t := range results {
		rows = append(rows, summaryRow{name: strings.ToUpper(t.Test), requests: t.Requests, qps: t.QPS, latency: t.Latency,
			errors: t.ErrorCount(), hist: t.Histogram, writes: writesOf(t.Result), refused: t.Conflicts})
	}
	return rows
}

// fixedCSVPercentiles are the percentiles CSVHeader has a column for.
var fixedCSVPercentiles = []float64{50, 99, 99.9}

// writeCSV writes the header (CSVHeader, then a column per percentile
// of ps that it lacks) and rows. A row without requests has its QPS and
// latencies empty: they were not measured.
func writeCSV(w io.Writer, rows []summaryRow, ps []float64) error {
	cw := csv.NewWriter(w)
	header := slices.Clone(CSVHeader)
	ps = slices.DeleteFunc(slices.Clone(ps), func(p float64) bool { return slices.Contains(fixedCSVPercentiles, p) })
	for _, p := range ps {
		header = append(header, measure.PercentileKey(p)+"_us")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, r := range rows {
		rec := []string{r.name, strconv.FormatInt(r.requests, 10), "", "", "", "", "", "", strconv.FormatInt(r.errors, 10),
			strconv.FormatInt(r.refused, 10), strconv.FormatBool(r.refused > 0)}
		if r.requests > 0 {
			l := r.latency
			copy(rec[2:8], []string{f(r.qps), f(l.Mean), f(l.P50), f(l.P99), f(l.P999), f(l.Max)})
		}
		at := measure.PercentilesOf(r.hist, ps)
		for _, p := range ps {
			cell := ""
			if r.requests > 0 {
				cell = f(at[measure.PercentileKey(p)])
			}
			rec = append(rec, cell)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSV writes the CSV report of a run, with a column per percentile
// of ps.
func WriteCSV(w io.Writer, r loadgen.Result, ps []float64) error {
	return writeCSV(w, summaryRows(r), ps)
}

// WriteTestsCSV writes the CSV report of redis-benchmark's tests, with a
// column per percentile of ps.
func WriteTestsCSV(w io.Writer, results []rbtests.TestResult, ps []float64) error {
	return writeCSV(w, testRows(results), ps)
}

// writeQuiet writes one line per row, as redis-benchmark -q does:
// "SET: 181488.20 requests per second, p50=135.00 us". A row without
// requests says so instead of a rate; a row whose every request was a
// refused write says that instead of a rate ("RSET: refused 20000 of
// 20000 writes (EXIST): no throughput"), and one with some refused
// writes names them after its rate.
func writeQuiet(w io.Writer, rows []summaryRow) error {
	var b strings.Builder
	for _, r := range rows {
		switch {
		case r.requests == 0:
			fmt.Fprintf(&b, "%s: no requests measured\n", r.name)
		case r.allRefused():
			fmt.Fprintf(&b, "%s: refused %d of %d writes (EXIST): no throughput\n", r.name, r.refused, r.writes)
		case r.refused > 0:
			fmt.Fprintf(&b, "%s: %.2f requests per second, p50=%.2f us (%s, counted as requests)\n", r.name, r.qps, r.latency.P50, r.refusedNote())
		default:
			fmt.Fprintf(&b, "%s: %.2f requests per second, p50=%.2f us\n", r.name, r.qps, r.latency.P50)
		}
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
