package figure

import (
	"math"
	"testing"
)

// TestFigure: figures print with 2 decimals, "-" and null when not
// finite; p-values with 3 decimals, "<0.001" below.
func TestFigure(t *testing.T) {
	tests := []struct {
		f          Figure
		str, json_ string
	}{
		{7.13, "7.13", "7.13"},
		{140206.5, "140206.50", "140206.50"},
		{Missing, "-", "null"},
		{Figure(math.Inf(1)), "-", "null"},
		{Figure(math.Inf(-1)), "-", "null"},
	}
	for _, tt := range tests {
		j, _ := tt.f.MarshalJSON()
		if tt.f.String() != tt.str || string(j) != tt.json_ {
			t.Errorf("%v: %s %s", float64(tt.f), tt.f.String(), j)
		}
	}
	for p, want := range map[Prob]string{0.0079365: "0.008", 0.0004: "<0.001", Prob(math.NaN()): "-"} {
		if p.String() != want {
			t.Errorf("Prob(%v) = %s, want %s", float64(p), p, want)
		}
	}
}

// TestRatioCell: a ratio cell is the ratio and its verdict, "-" with
// nothing to compare, and says so when writes were refused.
func TestRatioCell(t *testing.T) {
	for r, want := range map[*Ratio]string{
		{Ratio: 0.69, P: 0.008, Significant: true}: "0.69 (p=0.008)",
		{Ratio: 1.02, P: 0.4}:                      "1.02 ~",
		{Ratio: Missing}:                           "-",
		{Refused: true}:                            RefusedCell,
		nil:                                        "-",
	} {
		if got := r.String(); got != want {
			t.Errorf("%+v: %q, want %q", r, got, want)
		}
	}
}
