package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Doc writes markdown: lines and tables, keeping the first error, so that
// a document is written straight through and its error asked for once.
type Doc struct {
	w   io.Writer
	err error
}

// NewDoc is a markdown document written to w.
func NewDoc(w io.Writer) *Doc { return &Doc{w: w} }

// SetWriter sends what follows to w (the report's HTML page renders its
// head and its body apart).
func (d *Doc) SetWriter(w io.Writer) { d.w = w }

// Err is the first error in writing, nil when none.
func (d *Doc) Err() error { return d.err }

// Printf writes a formatted line (or part of one).
func (d *Doc) Printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

// Table writes one markdown table with tablewriter's markdown renderer.
// align has one letter per column, 'l' for left (text) or 'r' for right
// (figures); columns beyond it are right-aligned. Cells are made safe
// (Cell) in place. Cells hold ASCII and CJK text only, never characters
// of ambiguous width ("…", "∞"), so the padding does not depend on
// tablewriter's locale-driven East Asian width setting.
func (d *Doc) Table(header []string, align string, rows [][]string) {
	if d.err != nil {
		return
	}
	alignment := make(tw.Alignment, len(header))
	for i := range alignment {
		alignment[i] = tw.AlignRight
		if i < len(align) && align[i] == 'l' {
			alignment[i] = tw.AlignLeft
		}
	}
	tb := tablewriter.NewTable(d.w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithAlignment(alignment),
	)
	tb.Header(header)
	for _, row := range rows {
		for i := range row {
			row[i] = Cell(row[i])
		}
		if d.err = tb.Append(row); d.err != nil {
			return
		}
	}
	d.err = tb.Render()
}

// WriteTable writes one markdown table to w (Doc.Table), for a command
// whose output is a table or two.
func WriteTable(w io.Writer, header []string, align string, rows [][]string) error {
	d := NewDoc(w)
	d.Table(header, align, rows)
	return d.err
}

// Cell makes text safe inside a markdown table cell or list item: pipes
// escaped, whitespace runs (newlines included) folded into one space.
func Cell(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = c != '|' && (c > ' ' || c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ')
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// DisableWidthCache turns off tablewriter's process-wide cache of string
// display widths. The cache, an LRU of 8,192 entries behind a mutex, only
// thrashes on report tables, where nearly every cell is a number never seen
// before: without it the markdown of a 100,000-row report renders about 40%
// faster, and measuring a width directly costs less than the cache
// bookkeeping. It changes state shared by the whole process, so programs
// call it once from the command layer ("kvbench report" does), never from
// library code.
func DisableWidthCache() { twwidth.SetCacheCapacity(0) }
