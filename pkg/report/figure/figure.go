// Package figure is the report's numbers as values: a Figure (rounded to
// 2 decimals as displayed, NaN for none), a p-value (Prob), a ratio of one
// target's figure to the reference's with its test (Ratio), and the
// significance mark printed after a figure (Verdict).
package figure

import (
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/stats"
)

// Figure is a reported number, already rounded to 2 decimals as displayed.
// NaN means "no value"; like an infinity, which no figure should hold, it
// prints "-" and is null in JSON, never "inf" or "NaN".
type Figure float64

// Missing is the Figure with no value.
var Missing = Figure(math.NaN())

// Of rounds x to a Figure.
func Of(x float64) Figure { return Figure(stats.Round2(x)) }

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

// Ratio is a figure of one target over the same figure of the reference.
type Ratio struct {
	// Ratio is cell / reference from the trimmed figures as displayed,
	// rounded to 2 decimals; missing when either is.
	Ratio Figure `json:"ratio"`
	// P is the Mann–Whitney U p-value of the two scenarios' ok rounds;
	// missing when either has none.
	P Prob `json:"p"`
	// Significant is P <= Alpha.
	Significant bool `json:"significant"`
	// Refused says that one of the two had writes refused: nothing was
	// compared.
	Refused bool `json:"refused,omitempty"`
}

// String is the ratio cell: "0.69 (p=0.008)", "1.02 ~", "-" when there is
// nothing to compare.
func (r *Ratio) String() string {
	switch {
	case r != nil && r.Refused:
		return RefusedCell
	case r == nil || !r.Ratio.Valid():
		return "-"
	}
	return r.Ratio.String() + Verdict(r.P, r.Significant)
}

// RefusedCell is a comparison's cell when writes were refused on either
// side (the report's refused-writes warning explains it).
const RefusedCell = "refused writes"

// Verdict is the significance mark after a figure: " (p=0.008)",
// " (p<0.001)", " ~", or nothing when no test was made.
func Verdict(p Prob, significant bool) string {
	switch {
	case p != p: // NaN: no test
		return ""
	case significant:
		s := p.String()
		if !strings.HasPrefix(s, "<") {
			s = "=" + s
		}
		return " (p" + s + ")"
	}
	return " ~"
}
