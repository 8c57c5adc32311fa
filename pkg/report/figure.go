package report

import (
	"math"
	"strconv"

	"github.com/kvbench/kvbench/pkg/stats"
)

// Figure is a reported number, already rounded to 2 decimals as displayed.
// NaN means "no value"; like an infinity, which no figure should hold, it
// prints "-" and is null in JSON, never "inf" or "NaN".
type Figure float64

// missing is the Figure with no value.
var missing = Figure(math.NaN())

// fig rounds x to a Figure.
func fig(x float64) Figure { return Figure(stats.Round2(x)) }

// Valid reports whether the figure holds a finite value.
func (f Figure) Valid() bool {
	return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0)
}

// String prints the figure with 2 decimals, "-" when missing (or not
// finite).
func (f Figure) String() string {
	if !f.Valid() {
		return "-"
	}
	return stats.Format2(float64(f))
}

// Change prints the figure as a signed percentage: "-6.58%", "+6.90%".
func (f Figure) Change() string {
	if !f.Valid() {
		return "-"
	}
	return stats.FormatChange(float64(f))
}

// CSV prints the figure for a CSV cell: 2 decimals, empty when not finite.
func (f Figure) CSV() string {
	if !f.Valid() {
		return ""
	}
	return f.String()
}

// MarshalJSON writes the figure with its 2 decimals, or null.
func (f Figure) MarshalJSON() ([]byte, error) {
	if !f.Valid() {
		return []byte("null"), nil
	}
	return []byte(f.String()), nil
}

// Prob is a p-value; NaN when no test was made.
type Prob float64

// String prints the p-value with 3 decimals ("0.008", "<0.001"), "-" when
// missing.
func (p Prob) String() string {
	x := float64(p)
	switch {
	case math.IsNaN(x):
		return "-"
	case x < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// CSV prints the p-value for a CSV cell: 3 significant digits, so that
// small values stay numbers ("0.00794"), empty when missing.
func (p Prob) CSV() string {
	if math.IsNaN(float64(p)) {
		return ""
	}
	return strconv.FormatFloat(float64(p), 'g', 3, 64)
}

// MarshalJSON writes the p-value at full precision, or null.
func (p Prob) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(p)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(p), 'g', -1, 64), nil
}

// String is the overhead cell: the change and its verdict,
// "-6.58% (p=0.008)" or "+0.48% ~"; "-" when there is nothing to compare.
func (c *Change) String() string {
	switch {
	case c != nil && c.Refused:
		return refusedCell
	case c != nil && !c.Pct.Valid() && c.Why != "":
		return "- (" + c.Why + ")"
	case c == nil || !c.Pct.Valid():
		return "-"
	}
	return c.Pct.Change() + verdict(c.P, c.Significant)
}
