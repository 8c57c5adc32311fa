package results

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Sentinel errors of the detail CSV reader; every input error wraps one of
// them, so callers can test with errors.Is.
var (
	// ErrNoFiles: a pattern matched no file, or none was given.
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
	// ErrBadValue: a cell is empty where it must not be, or out of range.
	ErrBadValue = errors.New("bad value")
	// ErrRunExists: a run of that id is already recorded (in a history
	// store, from the same load machine).
	ErrRunExists = errors.New("already in the history")
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

// MaxErrors bounds how many input errors an ErrorList keeps.
const MaxErrors = 20

// ErrorList accumulates input errors, keeping the first MaxErrors, so that
// a reader reports every problem of a file at once rather than one per run.
// The zero value is ready to use.
type ErrorList struct {
	errs    []error
	dropped int
}

// Add records err.
func (l *ErrorList) Add(err error) {
	if len(l.errs) < MaxErrors {
		l.errs = append(l.errs, err)
	} else {
		l.dropped++
	}
}

// At records an InputError at pos, in column (may be empty).
func (l *ErrorList) At(pos Pos, column string, err error) {
	l.Add(&InputError{Pos: pos, Column: column, Err: err})
}

// Full reports whether the list holds MaxErrors errors: reading on would
// only count more.
func (l *ErrorList) Full() bool { return len(l.errs) >= MaxErrors }

// Err joins the errors; nil if there are none.
func (l *ErrorList) Err() error {
	if l.dropped > 0 {
		return errors.Join(append(l.errs, moreErrors(l.dropped))...)
	}
	return errors.Join(l.errs...)
}

// moreErrors counts the errors an ErrorList did not keep.
type moreErrors int

func (n moreErrors) Error() string { return fmt.Sprintf("and %d more errors", int(n)) }

// Merge joins the errors of several readers of the same files (the CSV
// reader's, then the checks of the rows it read) into one list in the
// files' order: by file as files lists them, then by line; errors without
// a line first. At most MaxErrors are kept, the rest counted, as an
// ErrorList does. Nil errors are skipped; nil if there are none.
func Merge(files []string, errs ...error) error {
	var all []error
	dropped := 0
	var flatten func(err error)
	flatten = func(err error) {
		var more moreErrors
		switch j, ok := err.(interface{ Unwrap() []error }); {
		case err == nil:
		case ok && !isInput(err):
			for _, e := range j.Unwrap() {
				flatten(e)
			}
		case errors.As(err, &more) && !isInput(err):
			dropped += int(more)
		default:
			all = append(all, err)
		}
	}
	for _, err := range errs {
		flatten(err)
	}
	rank := func(err error) (file, line int) {
		var ie *InputError
		if !errors.As(err, &ie) || ie.Pos.Line == 0 {
			return -1, 0
		}
		if i := slices.Index(files, ie.Pos.File); i >= 0 {
			return i, ie.Pos.Line
		}
		return len(files), ie.Pos.Line
	}
	slices.SortStableFunc(all, func(a, b error) int {
		fa, la := rank(a)
		fb, lb := rank(b)
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(la, lb))
	})
	var l ErrorList
	for _, err := range all {
		l.Add(err)
	}
	l.dropped += dropped
	return l.Err()
}

// isInput reports whether err is an InputError itself (which a join must
// not be split out of).
func isInput(err error) bool {
	_, ok := err.(*InputError)
	return ok
}
