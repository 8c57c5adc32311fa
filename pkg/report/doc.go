// Package report is the statistics of kvbench's detail rows, as plain
// values: Build (or ReadFiles, streaming the detail CSVs) groups the rows
// into scenarios (target, strategy, mode), trims one outlying round per
// scenario, compares each strategy with its target's baseline (the change
// and a Mann–Whitney U verdict), sets the targets side by side with
// ratios to a reference target, turns both kinds of pair into
// Comparisons (a ratio with its interval and a verdict at the margin
// Options.Precision: paired block by block for the slices of an adaptive
// run, unpaired over rounds otherwise), and adds what the rows hold
// beyond that: workloads' commands, load curves and the capacity at a
// latency objective, recovery after a crash, server telemetry, the spread
// over a cluster's nodes, stalls. Every Figure is rounded to 2 decimals exactly
// as printed, so no writer rounds again; what makes a figure doubtful
// travels as Warnings beside it, one *Warning per kind, as values.
//
// The rows come from package results, which owns the detail CSV; the
// arithmetic (trimming, medians, confidence intervals, the U test, the
// ratios' intervals and verdicts) lives
// in package stats. Printing is package output's (the markdown, HTML,
// chart, CSV and JSON of a Report, and "kvbench report" itself), with
// package render's tables, page, plots and words. "kvbench run" and
// "kvbench report" both go through Build, so they print the same numbers,
// in the same order: Build orders targets, strategies and modes by what
// the rows say, never by the order they come in (Order gives that order
// to other tables, kvbench compare's).
//
// Beneath it: package figure has the numbers (Figure, Prob, Ratio),
// package persistjob the persistence jobs' tables, package attempt what
// the series and nodes CSVs say of each attempt.
//
// What the tables hold, the trimming rule, the number conventions and the
// CSV and JSON formats are documented for users in docs/report.md.
package report
