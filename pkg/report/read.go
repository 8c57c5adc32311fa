package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reader uses encoding/csv rather than gocsv: gocsv's unmarshalling
// reports neither the line of a bad cell nor which required column is
// missing, and every input error here must name its file and line.
// DetailRow's csv tags still drive the mapping from column to field, so the
// orchestrator's gocsv writer and this reader cannot disagree.

// field is how one column is stored into a DetailRow: the field's index
// and kind.
type field struct {
	index int
	kind  reflect.Kind
}

// detailFields maps a csv tag to its DetailRow field.
var detailFields = func() map[string]field {
	m := make(map[string]field)
	t := reflect.TypeFor[DetailRow]()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("csv")
		if tag == "" || tag == "-" {
			continue
		}
		m[tag] = field{index: i, kind: f.Type.Kind()}
	}
	return m
}()

// ExpandPatterns turns command-line arguments into file names: an argument
// holding glob metacharacters is expanded with filepath.Glob and must match
// at least one file (ErrNoFiles otherwise); other arguments are kept as
// they are. A file named twice is read once.
func ExpandPatterns(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%w: no detail CSV given", ErrNoFiles)
	}
	var files []string
	seen := make(map[string]bool)
	for _, p := range patterns {
		matches := []string{p}
		if strings.ContainsAny(p, `*?[\`) {
			var err error
			matches, err = filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%w %q", ErrNoFiles, p)
			}
		}
		for _, m := range matches {
			if c := filepath.Clean(m); !seen[c] {
				seen[c] = true
				files = append(files, m)
			}
		}
	}
	return files, nil
}

// ReadFiles reads and merges detail CSV files, in the order given. Every
// error names its file and line; all the files are read so that all their
// errors are reported at once (up to a limit).
func ReadFiles(paths []string) ([]DetailRow, error) {
	var chunks rowChunks
	if err := readFiles(paths, chunks.add); err != nil {
		return nil, err
	}
	return chunks.rows(), nil
}

// readFiles reads the files, passing each row to emit.
func readFiles(paths []string, emit func(*DetailRow)) error {
	var errs errorList
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			errs.add(fmt.Errorf("read detail CSV: %w", err))
			continue
		}
		err = readCSV(f, p, emit)
		f.Close()
		if err != nil {
			errs.add(err)
		}
	}
	return errs.err()
}

// rowChunks collects rows in fixed-size chunks and copies them into one
// slice at the end: growing one slice of large, pointer-holding structs by
// append costs more than reading the CSV itself.
type rowChunks struct {
	full [][]DetailRow
	cur  []DetailRow
	n    int
}

const chunkRows = 4096

// add appends a copy of the row.
func (c *rowChunks) add(r *DetailRow) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]DetailRow, 0, chunkRows)
	}
	c.cur = append(c.cur, *r)
	c.n++
}

// rows returns all the rows in one slice.
func (c *rowChunks) rows() []DetailRow {
	if len(c.full) == 0 {
		return c.cur
	}
	out := make([]DetailRow, 0, c.n)
	for _, ch := range c.full {
		out = append(out, ch...)
	}
	return append(out, c.cur...)
}

// ReadCSV reads one detail CSV; name is used in error positions. The header
// must hold the RequiredColumns, in any order; unknown columns are ignored.
// Empty numeric cells read as zero. Each returned row's Pos is its file and
// line. ReadCSV checks the syntax of each cell; Build checks the rows
// against each other (duplicates, conflicts).
func ReadCSV(r io.Reader, name string) ([]DetailRow, error) {
	var chunks rowChunks
	if err := readCSV(r, name, chunks.add); err != nil {
		return nil, err
	}
	return chunks.rows(), nil
}

// readCSV reads one detail CSV, passing each row to emit (which must copy
// what it keeps: the row is reused). On error, rows already emitted are
// to be discarded.
func readCSV(r io.Reader, name string, emit func(*DetailRow)) error {
	hdrPos := Pos{File: name, Line: 1}
	br := &sniffReader{r: r}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w file: no header line", ErrEmpty)}
	}
	if err != nil {
		return csvError(name, err)
	}
	if br.binary {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	cols, err := mapHeader(slices.Clone(header), hdrPos)
	if err != nil {
		return err
	}

	var errs errorList
	var row DetailRow
	v := reflect.ValueOf(&row).Elem()
	for !errs.full() {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs.add(csvError(name, err))
			break
		}
		line, _ := cr.FieldPos(0)
		row = DetailRow{Pos: Pos{File: name, Line: line}}
		bad := false
		for i, c := range cols {
			if c.name == "" {
				continue
			}
			if err := setField(v.Field(c.field.index), c.field.kind, rec[i]); err != nil {
				errs.at(row.Pos, c.name, err)
				bad = true
			}
		}
		if !bad {
			emit(&row)
		}
	}
	if br.binary {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	return errs.err()
}

// column is one header cell: its name and field, or no name if the column
// is unknown.
type column struct {
	name  string
	field field
}

// mapHeader checks the header line and maps each column to its field.
func mapHeader(header []string, pos Pos) ([]column, error) {
	cols := make([]column, len(header))
	seen := make(map[string]bool)
	var errs errorList
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a spreadsheet's byte order mark
		}
		h = strings.TrimSpace(h)
		if !utf8.ValidString(h) {
			return nil, &InputError{Pos: pos, Err: fmt.Errorf("%w: the header is not UTF-8 text", ErrNotCSV)}
		}
		f, ok := detailFields[h]
		if !ok {
			continue
		}
		if seen[h] {
			errs.at(pos, h, fmt.Errorf("%w: the column appears twice", ErrBadValue))
			continue
		}
		seen[h] = true
		cols[i] = column{name: h, field: f}
	}
	var missing []string
	for _, c := range RequiredColumns {
		if !seen[c] {
			missing = append(missing, c)
		}
	}
	if len(seen) == 0 {
		return nil, &InputError{Pos: pos, Err: fmt.Errorf("%w: the first line %q is not a detail CSV header (want columns %s)",
			ErrNotCSV, truncate(strings.Join(header, ","), 40), strings.Join(RequiredColumns, ", "))}
	}
	for _, c := range missing {
		errs.at(pos, "", fmt.Errorf("%w %q", ErrMissingColumn, c))
	}
	return cols, errs.err()
}

// setField parses s into a field of the given kind.
func setField(v reflect.Value, kind reflect.Kind, s string) error {
	if s != "" && (s[0] <= ' ' || s[len(s)-1] <= ' ') {
		s = strings.TrimSpace(s)
	}
	switch kind {
	case reflect.String:
		v.SetString(s)
	case reflect.Float64:
		if s == "" {
			return nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%q %w", truncate(s, 40), ErrNotNumber)
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int64:
		if s == "" {
			return nil
		}
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(x) {
			return fmt.Errorf("%q %w", truncate(s, 40), ErrNotInteger)
		}
		v.SetInt(x)
	default:
		panic("report: unsupported DetailRow field kind " + kind.String())
	}
	return nil
}

// csvError turns an encoding/csv error into an InputError with its line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{Pos: Pos{File: name, Line: pe.Line}, Err: fmt.Errorf("%w: %w", ErrNotCSV, pe.Err)}
	}
	return &InputError{Pos: Pos{File: name}, Err: fmt.Errorf("read: %w", err)}
}

// truncate shortens s to at most n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// sniffReader passes bytes through, noting whether any is a NUL: text CSV
// never holds one, binary files nearly always do.
type sniffReader struct {
	r      io.Reader
	binary bool
}

// Read reads from the underlying reader, watching for NUL bytes.
func (s *sniffReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.binary && bytes.IndexByte(p[:n], 0) >= 0 {
		s.binary = true
	}
	return n, err
}
