package history

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/compare"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/stats"
)

// method says in one paragraph how change points are found.
func (a *Analysis) method() string {
	return fmt.Sprintf("Change points: E-Divisive means over the runs' trimmed means, each confirmed by the Mann-Whitney U test of the rounds of up to %d runs on each side (p <= %s); "+
		"the change is the Hodges-Lehmann estimate of after / before - 1 with its interval at %s or more (below it, its exact level follows it), and the interval's verdict: slower or faster when it lies on one side of no change, "+
		"no difference larger than %s when it lies within ±%s (a real shift too small to act on), undecided otherwise. A series is one scenario on one environment (machine, configuration, settings): a new environment starts a new series and is no change point.",
		DefaultWindow, strconv.FormatFloat(a.Alpha, 'g', -1, 64), stats.FormatPrecision(stats.DefaultConfidence), stats.FormatPrecision(a.Precision), stats.FormatPrecision(a.Precision))
}

// summary is the analysis in one line.
func (a *Analysis) summary() string {
	scen := map[string]bool{}
	cps := 0
	for _, sr := range a.Series {
		scen[sr.Scenario] = true
		cps += len(sr.ChangePoints)
	}
	s := fmt.Sprintf("%s of %s over %s, %s.", plural(len(a.Series), "series", "series"), plural(len(scen), "scenario", "scenarios"),
		plural(a.Runs, "run", "runs"), plural(cps, "change point", "change points"))
	if a.Skipped > 0 {
		s += fmt.Sprintf(" %d runs still running or killed are left out.", a.Skipped)
	}
	return s
}

// plural is "1 run" or "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// changeCells are a change point's change, interval and p as printed.
func (cp *ChangePoint) changeCells() (change, ci, p string) {
	return stats.FormatChange(cp.Pct), compare.FormatCI(cp.Lo, cp.Hi, cp.Confidence), compare.FormatP(cp.P)
}

// verdictText is a change point's verdict as printed, at the margin
// precision: "slower", "no difference larger than 3%".
func (cp *ChangePoint) verdictText(precision float64) string {
	return render.LabelsOf(render.LangEN).Compare.VerdictText(string(cp.Verdict), stats.FormatPrecision(precision))
}

// runCell names a run: its name and, when that is not the run id, the id.
func runCell(r *Run) string {
	if n := r.Name(); n != r.RunID {
		return n + " (" + r.RunID + ")"
	}
	return r.RunID
}

// envLine describes a series' environment and, when it follows another,
// what changed.
func (sr *Series) envLine() string {
	s := "Environment " + sr.Fingerprint + ": " + sr.Env.String() + "."
	if sr.Previous != "" {
		s += " A new environment after " + sr.Previous + " (" + strings.Join(sr.EnvChange, "; ") + "): a new series, not a change point."
	}
	return s
}

// TrendWriters are the formats of "history trend": md (a table per
// series, the default), csv (a line per series and run), json, or html
// (the markdown with a plot per series).
var TrendWriters = render.Writers[*Analysis]{
	{Format: render.Markdown, Write: (*Analysis).trendMarkdown},
	{Format: render.CSV, Write: (*Analysis).trendCSV},
	{Format: render.JSON, Write: func(a *Analysis, w io.Writer) error { return writeJSON(w, a) }},
	{Format: render.HTML, Write: (*Analysis).trendHTML},
}

// WriteTrend writes the analysis in a format of TrendWriters.
func (a *Analysis) WriteTrend(w io.Writer, format render.Format) error {
	return optionError(TrendWriters.Write(w, format, a))
}

// optionError marks an unknown format as a bad option.
func optionError(err error) error {
	if errors.Is(err, render.ErrFormat) {
		return fmt.Errorf("%w: %w", ErrOption, err)
	}
	return err
}

// trendMarkdown writes the title and method, then a table per series.
func (a *Analysis) trendMarkdown(w io.Writer) error {
	var b bytes.Buffer
	a.trendHead(&b)
	for _, sr := range a.Series {
		if err := a.trendSeries(&b, sr); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// trendHTML writes the markdown as a page, each series with its plot.
func (a *Analysis) trendHTML(w io.Writer) error {
	var head bytes.Buffer
	a.trendHead(&head)
	sections := []render.Section{{Markdown: head.Bytes()}}
	for _, sr := range a.Series {
		var md bytes.Buffer
		if err := a.trendSeries(&md, sr); err != nil {
			return err
		}
		svg, err := plotSeries(sr, a.Metric)
		if err != nil {
			return err
		}
		sections = append(sections, render.Section{Markdown: md.Bytes(),
			Pictures: []render.Picture{{Title: sr.Scenario + ": " + metricLabel(a.Metric) + " per run", SVG: svg}}})
	}
	return render.WritePage(w, render.LangEN, "kvbench history trend", sections...)
}

// trendHead is the markdown's title and method.
func (a *Analysis) trendHead(b *bytes.Buffer) {
	fmt.Fprintf(b, "# kvbench history trend: %s\n\n%s\n\n%s\n", a.Metric, a.summary(), a.method())
}

// trendSeries is one series' section: its environment and a row per run.
func (a *Analysis) trendSeries(b *bytes.Buffer, sr *Series) error {
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n", sr.Scenario, sr.envLine())
	at := map[int]*ChangePoint{}
	for i := range sr.ChangePoints {
		at[sr.ChangePoints[i].Index] = &sr.ChangePoints[i]
	}
	var rows [][]string
	for i, pt := range sr.Points {
		change := ""
		if cp := at[i]; cp != nil {
			c, ci, p := cp.changeCells()
			change = c + " " + ci + " p " + p + ", " + cp.verdictText(a.Precision)
			if cp.Newest {
				change += " (newest run alone)"
			}
		}
		rows = append(rows, []string{pt.Run.RunID, pt.Run.Started.Local().Format("2006-01-02 15:04"), pt.Run.Name(),
			stats.Format2(pt.Value), strconv.Itoa(len(pt.Rounds)), change})
	}
	return render.WriteTable(b, []string{"run", "started", "label / commit", a.Metric, "rounds", "change"}, "lllrrl", rows)
}

// trendCSV writes a line per series and run, figures unscaled.
func (a *Analysis) trendCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "environment", "run_id", "host", "started_at", "label", "commit", "branch", "metric", "value", "rounds",
		"change_pct", "ci_lo_pct", "ci_hi_pct", "p", "regression", "verdict"})
	for _, sr := range a.Series {
		at := map[int]*ChangePoint{}
		for i := range sr.ChangePoints {
			at[sr.ChangePoints[i].Index] = &sr.ChangePoints[i]
		}
		for i, pt := range sr.Points {
			r := pt.Run
			rec := []string{sr.Scenario, sr.Fingerprint, r.RunID, r.Host, r.Started.UTC().Format("2006-01-02T15:04:05Z"), r.Label, r.Commit, r.Branch,
				a.Metric, strconv.FormatFloat(pt.Value, 'f', 2, 64), strconv.Itoa(len(pt.Rounds)), "", "", "", "", "", ""}
			if cp := at[i]; cp != nil {
				rec[11], rec[12], rec[13], rec[14], rec[15], rec[16] = stats.Format2(cp.Pct), finite(cp.Lo), finite(cp.Hi), compare.FormatP(cp.P),
					strconv.FormatBool(cp.Regression), string(cp.Verdict)
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeCSV writes a header and records.
func writeCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	cw.Write(header)
	cw.WriteAll(rows)
	return cw.Error()
}

// finite formats x with 2 decimals, or "" when infinite.
func finite(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return ""
	}
	return stats.Format2(x)
}

// writeJSON writes v as indented JSON, infinite bounds as null.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// MarshalJSON writes the interval's infinite bounds as null.
func (cp ChangePoint) MarshalJSON() ([]byte, error) {
	type plain ChangePoint
	fin := func(x float64) *float64 {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		plain
		Lo *float64 `json:"ci_lo_pct"`
		Hi *float64 `json:"ci_hi_pct"`
	}{plain(cp), fin(cp.Lo), fin(cp.Hi)})
}
