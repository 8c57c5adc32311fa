package render

import "testing"

// TestCell: a table cell's pipes are escaped and its whitespace folded.
func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"two words":        "two words",
		"a|b":              `a\|b`,
		" padded ":         "padded",
		"double  space":    "double space",
		"line\nbreak\tand": "line break and",
		"":                 "",
		"\x00ctl":          "\x00ctl",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}
