// Package compare answers "did my change make it faster or slower?" for
// kvbench's detail CSVs: per scenario (target, strategy, mode), the old and
// the new trimmed figures (QPS, us/op, p99), the change, the Mann–Whitney
// p-value and a confidence interval of the ratio, with "~" where the
// difference may be noise, as benchstat does for Go benchmarks, and the
// interval's verdict at a margin (stats.VerdictAt: faster, slower,
// equivalent, undecided), the report's for its comparisons. The two sides
// are unpaired (stats.UnpairedRatio): runs before and after a change were
// not measured together, so an adaptive run's slices count as rounds.
// Rows measured with other settings (the load, TLS, RESP3, the threads'
// placement) are refused. With a threshold it is a CI gate: Compare's
// result says which rows regressed significantly beyond it.
//
// The figures follow the report's conventions (package report): the same
// trimming rule (one outlying round dropped from 3 or more), means of the
// 2-decimal figures, changes from the figures as shown.
package compare
