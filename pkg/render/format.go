package render

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format is an output format, as --format names it.
type Format string

// The formats. A command writes some of them, listed in its Writers.
const (
	// Markdown is tables and notes (the commands' default).
	Markdown Format = "md"
	// CSV is one line per row, figures unscaled.
	CSV Format = "csv"
	// JSON is the whole result, indented.
	JSON Format = "json"
	// HTML is one self-contained page: the markdown's tables with the
	// pictures inline (WritePage).
	HTML Format = "html"
	// Text is plain lines, for a terminal or a log.
	Text Format = "text"
)

// ErrFormat is wrapped by the error of a format a command does not write.
var ErrFormat = errors.New("unknown format")

// formatError is a format a command does not write, with the ones it
// does: `format "gif" (want md, csv, json or html)`.
type formatError struct {
	format string
	want   string
}

// Error implements error.
func (e *formatError) Error() string { return fmt.Sprintf("format %q (want %s)", e.format, e.want) }

// Is makes the error match ErrFormat.
func (e *formatError) Is(target error) bool { return target == ErrFormat }

// Writer writes a T in one format.
type Writer[T any] struct {
	Format Format
	Write  func(T, io.Writer) error
}

// Writers are the formats a command writes a T in, its default first:
// one table is the command's dispatch, the check of its --format and the
// list its errors give.
type Writers[T any] []Writer[T]

// Default is the format written when none is named.
func (ws Writers[T]) Default() Format { return ws[0].Format }

// String lists the formats: "md, csv, json or html".
func (ws Writers[T]) String() string {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = string(w.Format)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Parse returns the format s names, Default for ""; an error wrapping
// ErrFormat and naming the formats for one the command does not write.
func (ws Writers[T]) Parse(s string) (Format, error) {
	if s == "" {
		return ws.Default(), nil
	}
	for _, w := range ws {
		if string(w.Format) == s {
			return w.Format, nil
		}
	}
	return "", &formatError{format: s, want: ws.String()}
}

// Write writes v to w in format f (Default for ""); an error wrapping
// ErrFormat for a format the command does not write.
func (ws Writers[T]) Write(w io.Writer, f Format, v T) error {
	if f == "" {
		f = ws.Default()
	}
	for _, x := range ws {
		if x.Format == f {
			return x.Write(v, w)
		}
	}
	return &formatError{format: string(f), want: ws.String()}
}
