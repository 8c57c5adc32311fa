package report

import "io"

// WriteTable writes one markdown table as the report writes its own, for
// other commands' tables (kvbench compare): align has one letter per
// column, 'l' for text or 'r' for figures.
func WriteTable(w io.Writer, header []string, align string, rows [][]string) error {
	m := &mdWriter{w: w}
	m.table(header, align, rows)
	return m.err
}
