// Package runner is "kvbench run": the whole experiment, as a library. What
// a run does (targets, strategies, modes, order, seeds, retries, the files
// it writes, exit status) is documented for users in docs/run.md; this is
// the API.
//
// Start from DefaultOptions (the reference script's defaults; EnvVars lists
// its environment variables, which the command layer applies) and set what
// differs. NewPlan resolves Options into a Plan without starting anything:
// the targets (package target), their Scenarios (target × strategy × mode)
// and the ordered Steps, with an Estimate of the time; "kvbench run
// --dry-run" prints it (Run does, with Options.DryRun). Run resolves the
// plan and executes it, writing the detail CSV as it goes (package results;
// and the series CSV, with Options.Interval)
// and the report at the end (package report); it returns a Result with the
// rows, the report, the files and where the time went. When a scenario ran
// out of retries, or ctx was cancelled, the error wraps ErrScenariosFailed
// or ErrInterrupted and the Result holds what was measured.
//
// Each attempt runs on a fresh server as steps that return what they
// measured; its detail rows are built once, from those values, when it is
// over (attempt.go). The recovery mode's crash, restart and read-back are
// package recovery's; an attempt's intervals (the series CSV, its stalls,
// the server's events) package series's. The steps' parts that take typed
// inputs live beneath: the persistence job (persistjob), what the server
// said of a phase (telemetry), a workload's check, prefill and rows
// (workloadrun), the estimate's figures of this machine (calibration), an
// adaptive run's design (adaptive), placement, the progress display
// (status), the temporary directory (tmpdir), the result files
// (resultfiles) and the history's recording (record).
//
// Progress goes to the stderr writer, redrawn in place when Options.Live is
// set; Options.Observe sees every Event; Options.Tracker lets the caller
// kill every server at once.
package runner
