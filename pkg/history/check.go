package history

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/compare"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/stats"
)

// ErrRegression: with a threshold, the newest runs of some series sit in
// a regression beyond it. "kvbench history check" exits 3 with it.
var ErrRegression = errors.New("regression")

// Finding is a line of the check: a change point of a series.
type Finding struct {
	// Scenario and Environment name the series.
	Scenario    string `json:"scenario"`
	Environment string `json:"environment"`
	ChangePoint
	// Gate is set when the change is the newest of the scenario's current
	// series and a regression beyond the threshold: the newest runs sit
	// in it.
	Gate bool `json:"gate,omitempty"`
}

// EnvBreak is a series that follows another environment of its scenario.
type EnvBreak struct {
	Scenario string `json:"scenario"`
	// From is the fingerprint of the environment before, To the new one's;
	// First is the first run in the new one, Changes what differs.
	From    string   `json:"from"`
	To      string   `json:"to"`
	First   *Run     `json:"first_run"`
	Changes []string `json:"changes"`
}

// CheckResult is what "history check" found.
type CheckResult struct {
	// Metric, Alpha and Threshold are what was checked (Threshold 0: no
	// gate); Precision the margin of the verdicts.
	Metric    string  `json:"metric"`
	Alpha     float64 `json:"alpha"`
	Threshold float64 `json:"threshold,omitempty"`
	Precision float64 `json:"precision"`
	// Series and Runs count what was analyzed.
	Series int `json:"series"`
	Runs   int `json:"runs"`
	// Findings are the change points, by scenario and time.
	Findings []Finding `json:"change_points"`
	// Breaks are the changes of environment.
	Breaks []EnvBreak `json:"environment_changes,omitempty"`
}

// Check lists the analysis's change points; with threshold > 0, a series
// whose newest change point is a regression of more than threshold
// percent fails the gate: the error then wraps ErrRegression (the result
// is complete).
func (a *Analysis) Check(threshold float64) (*CheckResult, error) {
	if threshold < 0 {
		return nil, fmt.Errorf("%w: threshold %v: want a percentage >= 0", ErrOption, threshold)
	}
	res := &CheckResult{Metric: a.Metric, Alpha: a.Alpha, Threshold: threshold, Precision: a.Precision, Series: len(a.Series), Runs: a.Runs}
	failed := 0
	// Only a scenario's current series can gate: one whose newest run is
	// the scenario's newest (an environment left behind no longer says
	// anything of the newest runs).
	newest := map[string]time.Time{}
	for _, sr := range a.Series {
		if t := sr.Points[len(sr.Points)-1].Run.Started; t.After(newest[sr.Scenario]) {
			newest[sr.Scenario] = t
		}
	}
	for _, sr := range a.Series {
		current := !sr.Points[len(sr.Points)-1].Run.Started.Before(newest[sr.Scenario])
		if sr.Previous != "" {
			res.Breaks = append(res.Breaks, EnvBreak{Scenario: sr.Scenario, From: sr.Previous, To: sr.Fingerprint,
				First: sr.Points[0].Run, Changes: sr.EnvChange})
		}
		for i, cp := range sr.ChangePoints {
			f := Finding{Scenario: sr.Scenario, Environment: sr.Fingerprint, ChangePoint: cp}
			if threshold > 0 && current && i == len(sr.ChangePoints)-1 && cp.Regression && -float64(Better(a.Metric))*cp.Pct > threshold {
				f.Gate = true
				failed++
			}
			res.Findings = append(res.Findings, f)
		}
	}
	if failed > 0 {
		return res, fmt.Errorf("%w: the newest runs of %d series sit in a %s regression beyond %s%%", ErrRegression, failed, a.Metric, stats.Format2(threshold))
	}
	return res, nil
}

// line is a finding as one line of text.
func (f *Finding) line(metric string, precision float64) string {
	change, ci, p := f.changeCells()
	s := fmt.Sprintf("%s: %s %s %s from %s to %s, p %s, %s", f.Scenario, metric, change, ci, runCell(f.Before), runCell(f.After), p, f.verdictText(precision))
	if f.Newest {
		s += ", newest run alone"
	}
	if f.Regression {
		s += ", regression"
	}
	if f.Gate {
		s += " !"
	}
	return s
}

// line is an environment change as one line of text.
func (b *EnvBreak) line() string {
	return fmt.Sprintf("%s: new environment %s from %s on (%s): a new series, not a change point", b.Scenario, b.To, runCell(b.First), strings.Join(b.Changes, "; "))
}

// verdict is the gate's sentence, "" without a gate.
func (c *CheckResult) verdict() string {
	if c.Threshold <= 0 {
		return ""
	}
	n := 0
	for _, f := range c.Findings {
		if f.Gate {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("Gate: no series' newest runs sit in a %s regression beyond %s%%.", c.Metric, stats.Format2(c.Threshold))
	}
	return fmt.Sprintf("Gate: the newest runs of %d series sit in a %s regression beyond %s%% (marked !).", n, c.Metric, stats.Format2(c.Threshold))
}

// CheckWriters are the formats of "history check": text (a line per
// change point and per change of environment, the default), md (a table,
// compact enough for a pull-request comment), csv or json.
var CheckWriters = render.Writers[*CheckResult]{
	{Format: render.Text, Write: (*CheckResult).writeText},
	{Format: render.Markdown, Write: (*CheckResult).writeMarkdown},
	{Format: render.CSV, Write: (*CheckResult).writeCSV},
	{Format: render.JSON, Write: func(c *CheckResult, w io.Writer) error { return writeJSON(w, c) }},
}

// Write writes the result in a format of CheckWriters.
func (c *CheckResult) Write(w io.Writer, format render.Format) error {
	return optionError(CheckWriters.Write(w, format, c))
}

// writeText writes a line per change point and per change of
// environment, then the gate's verdict.
func (c *CheckResult) writeText(w io.Writer) error {
	var b bytes.Buffer
	for _, f := range c.Findings {
		b.WriteString(f.line(c.Metric, c.Precision) + "\n")
	}
	for _, br := range c.Breaks {
		b.WriteString(br.line() + "\n")
	}
	if len(c.Findings) == 0 {
		fmt.Fprintf(&b, "no change point in %d series over %d runs\n", c.Series, c.Runs)
	}
	if v := c.verdict(); v != "" {
		b.WriteString(v + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeMarkdown writes a table of the change points, the changes of
// environment and the gate's verdict.
func (c *CheckResult) writeMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### kvbench history check: %s\n\n", c.Metric)
	if len(c.Findings) == 0 {
		fmt.Fprintf(&b, "No change point in %d series over %d runs.\n", c.Series, c.Runs)
	} else {
		var levels []float64
		for _, f := range c.Findings {
			levels = append(levels, f.Confidence)
		}
		col := compare.NewCIColumn(levels)
		var rows [][]string
		for _, f := range c.Findings {
			change, _, p := f.changeCells()
			if f.Gate {
				change += " !"
			}
			after := runCell(f.After)
			if f.Newest {
				after += " (newest alone)"
			}
			rows = append(rows, []string{f.Scenario, runCell(f.Before), after, change, col.Cell(f.Lo, f.Hi, f.Confidence), p, f.verdictText(c.Precision)})
		}
		if err := render.WriteTable(&b, []string{"scenario", "last before", "first after", "change", col.Heading, "p", "verdict"}, "lllrrrl", rows); err != nil {
			return err
		}
	}
	if len(c.Breaks) > 0 {
		b.WriteString("\n")
		for _, br := range c.Breaks {
			b.WriteString("- " + br.line() + "\n")
		}
	}
	if v := c.verdict(); v != "" {
		b.WriteString("\n" + v + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeCSV writes a line per change point, figures unscaled.
func (c *CheckResult) writeCSV(w io.Writer) error {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write([]string{"scenario", "environment", "before_run_id", "before", "after_run_id", "after", "metric", "change_pct", "ci_lo_pct", "ci_hi_pct", "p",
		"before_runs", "after_runs", "regression", "newest_only", "gate", "verdict"})
	for _, f := range c.Findings {
		cw.Write([]string{f.Scenario, f.Environment, f.Before.RunID, f.Before.Name(), f.After.RunID, f.After.Name(), c.Metric,
			stats.Format2(f.Pct), finite(f.Lo), finite(f.Hi), compare.FormatP(f.P), strconv.Itoa(f.BeforeRuns), strconv.Itoa(f.AfterRuns),
			strconv.FormatBool(f.Regression), strconv.FormatBool(f.Newest), strconv.FormatBool(f.Gate), string(f.Verdict)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// MarshalJSON writes the finding's change point with the series' names
// and the gate beside its fields (ChangePoint's own MarshalJSON would
// otherwise stand for the whole finding).
func (f Finding) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(f.ChangePoint)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k, v := range map[string]any{"scenario": f.Scenario, "environment": f.Environment, "gate": f.Gate} {
		b, _ := json.Marshal(v)
		m[k] = b
	}
	return json.Marshal(m)
}
