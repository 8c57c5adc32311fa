package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Writers are the formats a comparison is written in: markdown (the
// default), CSV, JSON, or the markdown as one HTML page.
var Writers = render.Writers[*Result]{
	{Format: render.Markdown, Write: (*Result).WriteMarkdown},
	{Format: render.CSV, Write: (*Result).WriteCSV},
	{Format: render.JSON, Write: (*Result).WriteJSON},
	{Format: render.HTML, Write: (*Result).WriteHTML},
}

// Write writes the comparison in a format of Writers ("": markdown).
func (r *Result) Write(w io.Writer, format render.Format) error {
	err := Writers.Write(w, format, r)
	if errors.Is(err, render.ErrFormat) {
		return fmt.Errorf("%w: %w", ErrOption, err)
	}
	return err
}

// WriteJSON writes the comparison as indented JSON, missing bounds as
// null.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonResult(r))
}

// WriteHTML writes the markdown as one self-contained HTML page.
func (r *Result) WriteHTML(w io.Writer) error {
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	return render.WritePage(w, render.LangEN, "kvbench compare", render.Section{Markdown: md.Bytes()})
}

// ciHeader is the interval column's header when every interval of the
// table is at DefaultConfidence or more; a table with one below (too few
// rounds for it) heads the column "CI", and that cell names its level.
var ciHeader = strconv.Itoa(int(DefaultConfidence*100)) + "% CI"

// cells are a row's figures as every format prints them.
func (row Row) cells() (change, p, ci string) {
	change = stats.FormatChange(row.Pct)
	if !row.Significant {
		change += " ~"
	}
	return change, FormatP(row.P), FormatCI(row.Lo, row.Hi, row.Confidence)
}

// WriteMarkdown writes one table per metric, then the geomean, the
// scenarios measured on one side only and the gate's verdict.
func (r *Result) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "# kvbench compare\n\nChange = new / old - 1 of the trimmed means; p: Mann-Whitney U test over all ok rounds, ~ when p > %s; "+
		"CI: the change's %d%% Hodges-Lehmann interval (with too few rounds for %d%%, the widest one, at the exact confidence shown).\n",
		strconv.FormatFloat(r.Alpha, 'g', -1, 64), int(DefaultConfidence*100), int(DefaultConfidence*100)); err != nil {
		return err
	}
	for _, m := range Metrics {
		var rows [][]string
		ciHead := ciHeader
		for _, row := range r.Rows {
			if row.Metric != m {
				continue
			}
			if row.Confidence > 0 && row.Confidence < DefaultConfidence {
				ciHead = "CI" // a cell says its own level, below the header's
			}
			change, p, ci := row.cells()
			if row.Regression {
				change += " !"
			}
			rows = append(rows, []string{row.ScenarioKey.String(), stats.Format2(row.Old), stats.Format2(row.New), change, p, ci,
				strconv.Itoa(row.OldN) + "/" + strconv.Itoa(row.NewN)})
		}
		if len(rows) == 0 {
			continue
		}
		if g, ok := r.Geomean[m]; ok {
			rows = append(rows, []string{"geomean", "", "", stats.FormatChange(g), "", "", ""})
		}
		if _, err := fmt.Fprintf(w, "\n## %s\n\n", m); err != nil {
			return err
		}
		if err := render.WriteTable(w, []string{"scenario", "old", "new", "change", "p", ciHead, "rounds"}, "l", rows); err != nil {
			return err
		}
	}
	for _, only := range []struct {
		what string
		scs  []string
	}{{"old", r.OnlyOld}, {"new", r.OnlyNew}} {
		for _, sc := range only.scs {
			if _, err := fmt.Fprintf(w, "\n- only in %s: %s", only.what, sc); err != nil {
				return err
			}
		}
	}
	if len(r.OnlyOld)+len(r.OnlyNew) > 0 {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	if r.Threshold > 0 {
		regs := r.Regressions()
		verdict := fmt.Sprintf("\nGate: no %s change beyond %s%% in the bad direction is significant.\n", r.Metric, stats.Format2(r.Threshold))
		if len(regs) > 0 {
			verdict = fmt.Sprintf("\nGate: %d %s changes beyond %s%% in the bad direction are significant (marked !).\n", len(regs), r.Metric, stats.Format2(r.Threshold))
		}
		if _, err := io.WriteString(w, verdict); err != nil {
			return err
		}
	}
	return nil
}

// csvHeader is the CSV's columns.
var csvHeader = []string{"target", "strategy", "mode", "metric", "old_rounds", "new_rounds", "old", "new",
	"change_pct", "p", "significant", "ci_lo_pct", "ci_hi_pct", "ci_confidence", "regression"}

// WriteCSV writes one line per row, figures unscaled.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, row := range r.Rows {
		rec := []string{row.Target, row.Strategy, row.Mode, row.Metric, strconv.Itoa(row.OldN), strconv.Itoa(row.NewN),
			stats.Format2(row.Old), stats.Format2(row.New), stats.Format2(row.Pct), FormatP(row.P),
			strconv.FormatBool(row.Significant), finite(row.Lo), finite(row.Hi),
			strconv.FormatFloat(row.Confidence, 'g', 4, 64), strconv.FormatBool(row.Regression)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// finite formats x with 2 decimals, or leaves the cell empty when x is
// not a number (no interval).
func finite(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return ""
	}
	return stats.Format2(x)
}

// jsonResult replaces the missing bounds JSON cannot hold with nulls.
func jsonResult(r *Result) any {
	type row struct {
		Row
		Lo *float64 `json:"ci_lo_pct"`
		Hi *float64 `json:"ci_hi_pct"`
	}
	fin := func(x float64) *float64 {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		return &x
	}
	out := struct {
		*Result
		Rows []row `json:"rows"`
	}{Result: r}
	for _, rr := range r.Rows {
		out.Rows = append(out.Rows, row{Row: rr, Lo: fin(rr.Lo), Hi: fin(rr.Hi)})
	}
	return out
}
