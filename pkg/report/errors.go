package report

import "errors"

// Sentinel errors of the report's own checks; errors in reading the input
// wrap package results' sentinels (results.results.ErrNotCSV, …).
var (
	// ErrDuplicate: two ok rows for the same (target, strategy, mode, round).
	ErrDuplicate = errors.New("duplicate round")
	// ErrConflict: one strategy of a target carries two persistence or alloc values.
	ErrConflict = errors.New("conflicting strategy description")
	// ErrFormat: an unknown output format, language or option value.
	ErrFormat = errors.New("bad option")
)
