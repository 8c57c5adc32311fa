package runner

import "github.com/kvbench/kvbench/pkg/runner/record"

// Recorder is told of a run as it goes, beside the detail CSV: package
// history implements it to keep every run in its store (record.Recorder).
type Recorder = record.Recorder

// ImportArgs is implemented by a Recorder that can say which "kvbench
// history import" flags record a run as it would have (record.ImportArgs).
type ImportArgs = record.ImportArgs

// ErrNotRecorded is wrapped by Run's error when the run was measured and
// reported but its Recorder failed: the run is missing from the history
// until "kvbench history import" adds it from the detail CSV
// (record.ErrNotRecorded).
var ErrNotRecorded = record.ErrNotRecorded
