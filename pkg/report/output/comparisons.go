package output

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/stats"
)

// ComparisonColumns are the columns of the comparisons CSV, one row per
// report.Comparison.
var ComparisonColumns = []string{
	"target", "strategy", "mode", "against_target", "against_strategy", "metric",
	"ratio", "ratio_lo", "ratio_hi", "confidence", "verdict", "measurements",
}

// ComparisonsCSV writes the comparisons CSV (ComparisonColumns): per
// comparison the ratio and its interval with 4 decimals (empty when there
// is none: never 0 or inf), the interval's exact level (empty without
// one), the verdict, and the pairs (or, unpaired, the smaller side's
// rounds) behind it. "kvbench run" writes it beside its other files.
func ComparisonsCSV(r *report.Report, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ComparisonColumns); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, c := range r.Comparisons {
		conf := ""
		if c.Confidence > 0 && !math.IsNaN(c.Ratio.Lo) {
			conf = strconv.FormatFloat(c.Confidence, 'f', 4, 64)
		}
		if err := cw.Write([]string{c.Target, c.Strategy, c.Mode, c.AgainstTarget, c.AgainstStrategy, c.Metric,
			report.FormatRatio(c.Ratio.Est), report.FormatRatio(c.Ratio.Lo), report.FormatRatio(c.Ratio.Hi), conf,
			string(c.Verdict), strconv.Itoa(c.Measurements)}); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// comparisons writes an adaptive run's comparisons: a table per mode,
// the disturbed slices under it, then the legend.
func (m *md) comparisons(r *report.Report) {
	l := &m.l.Compare
	var modes []string
	for _, c := range r.Comparisons {
		modes = append(modes, c.Mode)
	}
	for _, d := range r.Disturbed {
		modes = append(modes, d.Mode)
	}
	modes = report.OrderModes(slices.Compact(slices.Sorted(slices.Values(modes))))
	if len(modes) == 0 {
		return
	}
	m.Printf("\n## %s\n", l.Title)
	level := percentLevel(r.Options.Confidence)
	margin := stats.FormatPrecision(r.Options.Precision)
	for _, mode := range modes {
		m.Printf("\n### "+l.Mode+"\n", mode)
		var rows [][]string
		for _, c := range r.Comparisons {
			if c.Mode == mode {
				rows = append(rows, []string{m.comparisonName(c), c.Metric, m.ratioCell(c, r.Options.Confidence), m.verdictCell(c), m.measuredCell(c)})
			}
		}
		if len(rows) > 0 {
			m.Printf("\n")
			m.Table([]string{l.Comparison, l.Metric, fmt.Sprintf(l.Ratio, level), l.Verdict, l.Measured}, "llrlr", rows)
		}
		if i := slices.IndexFunc(r.Disturbed, func(d report.DisturbedSlices) bool { return d.Mode == mode }); i >= 0 {
			m.Printf("\n%s\n", m.disturbedLine(r.Disturbed[i]))
		}
	}
	m.Printf("\n"+l.Legend+"\n", level, margin, margin)
}

// comparisonName names a comparison's row: "kvstore persist_everysec vs
// nopersist", "kvstore nopersist vs redis none".
func (m *md) comparisonName(c report.Comparison) string {
	if c.Kind == report.AgainstBaseline {
		return fmt.Sprintf(m.l.Compare.VsBaseline, c.Target, c.Strategy, c.AgainstStrategy)
	}
	return fmt.Sprintf(m.l.Compare.VsReference, c.Target, c.Strategy, c.AgainstTarget, c.AgainstStrategy)
}

// ratioCell is "0.93 [0.91, 0.95]", followed by the interval's level
// when it is below the one asked for; "0.93 [-]" without an interval,
// "-" without an estimate.
func (m *md) ratioCell(c report.Comparison, confidence float64) string {
	r := c.Ratio
	switch {
	case math.IsNaN(r.Est):
		return "-"
	case math.IsNaN(r.Lo) || math.IsNaN(r.Hi):
		return stats.Format2(r.Est) + " [-]"
	}
	s := r.String()
	if c.Confidence < confidence {
		s = fmt.Sprintf(m.l.Compare.Level, s, percent(c.Confidence))
	}
	return s
}

// verdictCell is the verdict in the report's words.
func (m *md) verdictCell(c report.Comparison) string {
	return m.l.Compare.VerdictText(string(c.Verdict), stats.FormatPrecision(c.Margin))
}

// measuredCell is "24 pairs", or unpaired "5 rounds".
func (m *md) measuredCell(c report.Comparison) string {
	if c.Paired {
		return fmt.Sprintf(m.l.Compare.Pairs, c.Measurements)
	}
	return fmt.Sprintf(m.l.Compare.Rounds, c.Measurements)
}

// disturbedLine says how many of a mode's slices were disturbed, and why.
func (m *md) disturbedLine(d report.DisturbedSlices) string {
	l := &m.l.Compare
	if d.Disturbed == 0 {
		return fmt.Sprintf(l.NoneDisturbed, d.Slices)
	}
	var why string
	for i, r := range d.Reasons {
		if i > 0 {
			why += l.ReasonSep
		}
		why += fmt.Sprintf(l.Reason, r.Reason, r.Slices, r.Worst)
	}
	return render.Cell(fmt.Sprintf(l.Disturbed, d.Disturbed, d.Slices, why))
}

// slices writes a target's section in an adaptive run: per scenario its
// slices, those disturbed, its failed attempts, the median QPS of its
// slices with the median's interval, and the medians of us/op and (when
// measured) p99. A scenario of rounds merged in (rows without a block)
// has its rounds there, with the median of their QPS only.
func (m *md) slices(t *report.TargetReport) {
	l := m.l
	m.Printf("\n## %s\n", t.Target)
	m.Printf("\n### "+l.Compare.Slices+"\n\n", t.Target)
	var rows [][]string
	for _, sc := range t.Scenarios {
		s := sc.Slices
		if s == nil { // rounds
			none := report.Figure(math.NaN())
			s = &report.SliceSummary{Slices: len(sc.Rounds), MedianQPS: sc.MedianQPS, MedianLo: sc.MedianLo, MedianHi: sc.MedianHi,
				Confidence: sc.CIConfidence, MedianUsPerOp: none, MedianP99Us: none}
		}
		ci, level := "-", "-"
		if s.MedianLo.Valid() && s.MedianHi.Valid() {
			ci = "[" + s.MedianLo.String() + ", " + s.MedianHi.String() + "]"
			level = percent(s.Confidence)
		}
		row := []string{sc.Strategy, sc.Mode, strconv.Itoa(s.Slices), strconv.Itoa(s.Disturbed), strconv.Itoa(sc.FailedAttempts),
			s.MedianQPS.String(), ci, level, s.MedianUsPerOp.String()}
		if t.Latency {
			row = append(row, s.MedianP99Us.String())
		}
		rows = append(rows, row)
	}
	header := []string{l.Strategy, l.Mode, l.Compare.SlicesCol, l.Compare.DisturbedCol, l.Failed, l.Median, l.CI, l.CILevel, l.Compare.MedianUs}
	if t.Latency {
		header = append(header, l.Compare.MedianP99)
	}
	m.Table(header, "ll", rows)
	m.noBaseline(t) // markdown.go
}

// percentLevel prints a confidence level as a percentage, "95%".
func percentLevel(x float64) string { return strconv.FormatFloat(x*100, 'g', 6, 64) + "%" }
