package output

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// SummaryColumns are the columns of the summary CSV, one row per scenario.
var SummaryColumns = []string{
	"target", "alloc", "strategy", "persistence", "mode",
	"rounds", "failed_attempts", "mean_qps", "mean_us_per_op", "mean_elapsed_s",
	"mean_qps_per_server_cpu_s", "client_bound_rounds",
}

// TrimmedColumns are the columns of the trimmed CSV, one row per scenario.
var TrimmedColumns = []string{
	"target", "alloc", "strategy", "persistence", "mode", "rounds",
	"dropped_round", "dropped_qps", "trimmed_qps", "trimmed_us_per_op",
	"trimmed_p50_us", "trimmed_p99_us", "trimmed_p999_us",
	"cv_pct", "min_qps", "max_qps", "median_qps", "median_ci_lo", "median_ci_hi", "ci_confidence",
	"baseline", "qps_change_pct", "qps_p", "us_per_op_change_pct", "us_per_op_p", "p99_change_pct", "p99_p",
	"trimmed_qps_per_server_cpu_s", "client_bound_rounds", "capacity_qps",
}

// SummaryCSV writes the summary CSV (SummaryColumns): per scenario
// the number of ok rounds and failed attempts and the means over all ok
// rounds, with the figures of the raw table.
func SummaryCSV(r *report.Report, w io.Writer) error {
	return writeCSV(r, w, SummaryColumns, func(sc *report.Scenario) []string {
		return []string{sc.Target, sc.Alloc, sc.Strategy, sc.Persistence, sc.Mode,
			strconv.Itoa(len(sc.Rounds)), strconv.Itoa(sc.FailedAttempts),
			sc.MeanQPS.CSV(), sc.MeanUsPerOp.CSV(), sc.MeanElapsedS.CSV(),
			sc.MeanQPSPerCPU.CSV(), strconv.Itoa(sc.ClientBoundRounds)}
	})
}

// TrimmedCSV writes the trimmed CSV (TrimmedColumns): per scenario
// the trimming, the spread, and the comparison with the baseline, with the
// figures of the markdown tables.
func TrimmedCSV(r *report.Report, w io.Writer) error {
	return writeCSV(r, w, TrimmedColumns, func(sc *report.Scenario) []string {
		dropped := ""
		if sc.DroppedRound > 0 {
			dropped = strconv.Itoa(sc.DroppedRound)
		}
		conf := ""
		if sc.MedianLo.Valid() && sc.MedianHi.Valid() {
			conf = strconv.FormatFloat(sc.CIConfidence, 'f', 4, 64)
		}
		row := []string{sc.Target, sc.Alloc, sc.Strategy, sc.Persistence, sc.Mode, strconv.Itoa(len(sc.Rounds)),
			dropped, sc.DroppedQPS.CSV(), sc.TrimmedQPS.CSV(), sc.TrimmedUsPerOp.CSV(),
			sc.TrimmedP50Us.CSV(), sc.TrimmedP99Us.CSV(), sc.TrimmedP999Us.CSV(),
			sc.CV.CSV(), sc.MinQPS.CSV(), sc.MaxQPS.CSV(), sc.MedianQPS.CSV(), sc.MedianLo.CSV(), sc.MedianHi.CSV(), conf,
			sc.Baseline}
		for _, m := range []string{report.MetricQPS, report.MetricUsPerOp, report.MetricP99} {
			if c := sc.Change(m); c != nil {
				row = append(row, c.Pct.CSV(), c.P.CSV())
			} else {
				row = append(row, "", "")
			}
		}
		return append(row, sc.TrimmedQPSPerCPU.CSV(), strconv.Itoa(sc.ClientBoundRounds), r.Capacity(sc).CSV())
	})
}

// writeCSV writes a header and one row per scenario.
func writeCSV(r *report.Report, w io.Writer, header []string, row func(*report.Scenario) []string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			if err := cw.Write(row(sc)); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// JSON writes the whole report as indented JSON: figures as numbers
// with their 2 decimals (null when missing), p-values at full precision,
// warnings as strings.
func JSON(r *report.Report, w io.Writer) error {
	warnings := make([]string, len(r.Warnings))
	for i, e := range r.Warnings {
		warnings[i] = e.Error()
	}
	failed := r.Failed
	if failed == nil {
		failed = []results.Row{}
	}
	v := struct {
		*report.Report
		Failed     []results.Row `json:"failed_attempts"`
		Alpha      float64       `json:"alpha"`
		Confidence float64       `json:"confidence"`
		Warnings   []string      `json:"warnings"`
	}{r, failed, r.Options.Alpha, r.Options.Confidence, warnings}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
