package report

import "github.com/kvbench/kvbench/pkg/report/figure"

// Figure is a reported number, already rounded to 2 decimals as displayed
// (figure.Figure).
type Figure = figure.Figure

// Prob is a p-value; NaN when no test was made (figure.Prob).
type Prob = figure.Prob

// Ratio is a figure of one target over the same figure of the reference
// (figure.Ratio).
type Ratio = figure.Ratio

// missing is the Figure with no value.
var missing = figure.Missing

// fig rounds x to a Figure.
func fig(x float64) Figure { return figure.Of(x) }

// String is the overhead cell: the change and its verdict,
// "-6.58% (p=0.008)" or "+0.48% ~"; "-" when there is nothing to compare.
func (c *Change) String() string {
	switch {
	case c != nil && c.Refused:
		return figure.RefusedCell
	case c != nil && !c.Pct.Valid() && c.Why != "":
		return "- (" + c.Why + ")"
	case c == nil || !c.Pct.Valid():
		return "-"
	}
	return c.Pct.Change() + figure.Verdict(c.P, c.Significant)
}
