package report

import (
	"errors"
	"fmt"
)

// Sentinel errors; every input error wraps one of them, so callers can test
// with errors.Is.
var (
	// ErrNoFiles: a pattern matched no file.
	ErrNoFiles = errors.New("no files match")
	// ErrEmpty: a file has no header line, or the input has no rows at all.
	ErrEmpty = errors.New("empty")
	// ErrNotCSV: a file is not comma-separated text.
	ErrNotCSV = errors.New("not CSV")
	// ErrMissingColumn: a required column is absent from the header.
	ErrMissingColumn = errors.New("missing required column")
	// ErrNotNumber: a numeric cell does not hold a finite number.
	ErrNotNumber = errors.New("is not a number")
	// ErrNotInteger: an integer cell does not hold an integer.
	ErrNotInteger = errors.New("is not an integer")
	// ErrBadValue: a required cell is empty or out of range.
	ErrBadValue = errors.New("bad value")
	// ErrDuplicate: two ok rows for the same (target, strategy, mode, round).
	ErrDuplicate = errors.New("duplicate round")
	// ErrConflict: one strategy of a target carries two persistence or alloc values.
	ErrConflict = errors.New("conflicting strategy description")
	// ErrFormat: an unknown output format, language or option value.
	ErrFormat = errors.New("bad option")
)

// InputError is an error in the input, with its position:
// "results/a.csv:14: column qps: "abc" is not a number".
type InputError struct {
	// Pos locates the offending line (or in-memory row).
	Pos Pos
	// Column names the offending column, if any.
	Column string
	// Err describes the problem; it wraps one of the sentinel errors.
	Err error
}

// Error formats the error as "position: column name: problem".
func (e *InputError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("%s: column %s: %v", e.Pos, e.Column, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Pos, e.Err)
}

// Unwrap returns the problem, for errors.Is with the sentinel errors.
func (e *InputError) Unwrap() error { return e.Err }

// maxErrors bounds how many input errors are reported at once.
const maxErrors = 20

// errorList accumulates input errors, keeping the first maxErrors.
type errorList struct {
	errs    []error
	dropped int
}

func (l *errorList) add(err error) {
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, err)
	} else {
		l.dropped++
	}
}

func (l *errorList) at(pos Pos, column string, err error) {
	l.add(&InputError{Pos: pos, Column: column, Err: err})
}

func (l *errorList) full() bool { return len(l.errs) >= maxErrors }

// err joins the errors (nil if there are none).
func (l *errorList) err() error {
	if l.dropped > 0 {
		return errors.Join(append(l.errs, fmt.Errorf("and %d more errors", l.dropped))...)
	}
	return errors.Join(l.errs...)
}
