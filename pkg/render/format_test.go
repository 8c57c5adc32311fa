package render

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestWriters: one table parses --format (the default for ""), writes in
// the format named, and refuses another, naming the formats it writes.
func TestWriters(t *testing.T) {
	ws := Writers[string]{
		{Format: Markdown, Write: func(v string, w io.Writer) error { _, err := io.WriteString(w, "# "+v); return err }},
		{Format: CSV, Write: func(v string, w io.Writer) error { _, err := io.WriteString(w, "v\n"+v); return err }},
		{Format: JSON, Write: func(v string, w io.Writer) error { _, err := io.WriteString(w, `"`+v+`"`); return err }},
	}
	if ws.Default() != Markdown || ws.String() != "md, csv or json" {
		t.Errorf("default %q, list %q", ws.Default(), ws.String())
	}
	for in, want := range map[string]Format{"": Markdown, "md": Markdown, "csv": CSV, "json": JSON} {
		if got, err := ws.Parse(in); got != want || err != nil {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"html", "MD", "text"} {
		_, err := ws.Parse(bad)
		if !errors.Is(err, ErrFormat) || err.Error() != `format "`+bad+`" (want md, csv or json)` {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
	for f, want := range map[Format]string{"": "# x", CSV: "v\nx", JSON: `"x"`} {
		var b bytes.Buffer
		if err := ws.Write(&b, f, "x"); err != nil || b.String() != want {
			t.Errorf("Write(%q) = %q, %v; want %q", f, b.String(), err, want)
		}
	}
	if err := ws.Write(io.Discard, HTML, "x"); !errors.Is(err, ErrFormat) {
		t.Errorf("Write(html): %v", err)
	}
	if one := (Writers[string]{{Format: Text}}); one.String() != "text" {
		t.Errorf("one format: %q", one.String())
	}
}
