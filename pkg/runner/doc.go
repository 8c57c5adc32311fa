// Package runner is "kvbench run": the whole experiment. For every round,
// target, strategy and mode it starts a fresh server under that
// persistence configuration (package target), prefills it when the mode
// reads, measures it with the load generator (package loadgen), stops it,
// and appends the attempt's row to the detail CSV; at the end it writes
// and prints the report (package report), exactly as "kvbench report"
// would from the same CSV.
//
// NewPlan resolves the matrix: the reference script's defaults (DefaultOptions, and
// the environment variables of EnvVars, which the command layer applies),
// targets × strategies × modes as Scenarios, and the order of the Steps:
// interleaved (each round runs every scenario once, shuffled with the
// seed) or sequential. Run executes a plan: a failed attempt is written as
// a "failed" row and retried on a fresh server, up to Options.Retries
// times; a scenario out of retries is skipped from then on and makes Run
// return ErrScenariosFailed after the report. Cancelling the context stops
// the measurement and the server, closes the files, prints the partial
// report and returns ErrInterrupted.
//
// Progress goes to stderr: a status line redrawn in place on a terminal
// (Options.Live), plain log lines otherwise; Options.Observe sees every
// Event.
package runner
