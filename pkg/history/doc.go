// Package history keeps every kvbench run in a database and finds where
// the figures changed: the store (SQLite by default, PostgreSQL for a
// team), its versioned schema, the recorder "kvbench run" feeds attempt by
// attempt, the import of detail CSVs, and the analyses of "kvbench
// history": the list of runs, one run, the trend of a metric per scenario
// and the change points found in it.
//
// # The store
//
// One schema serves both databases (schema.go): runs, environments, the
// detail rows of every attempt (every column of results.Row, the latency
// histogram included) and its series rows (every column of
// results.SeriesRow, the series CSV's). A schema_version table holds the
// schema's version: an older store is migrated when it is opened, a newer
// one (written by a later kvbench) is refused with ErrNewerStore. A
// SQLite store runs in WAL mode with a busy timeout and begins its write
// transactions IMMEDIATE, so that two processes writing one file at once
// both land; each attempt is one transaction, so a run
// killed mid-way leaves whole attempts behind and its run marked running,
// which the readers show as incomplete.
//
// # Series and environments
//
// A series is one scenario (target/strategy/mode, as the report names it)
// measured in one environment: the load machine (host, CPU model, cores,
// kernel), the server's configuration, TLS, shards, agents and the
// settings (requests, keyspace, pipeline, connections, value size). Its
// fingerprint (Environment.Fingerprint) keeps machines apart: a series
// never mixes two, and a change of environment starts a new series rather
// than showing as a regression. The server's version is not part of it:
// the version of the server under test is what a history follows.
//
// # Change points
//
// Detect finds change points in each series with E-Divisive means
// (Matteson and James, "A Nonparametric Approach for Multiple Change
// Point Analysis of Multivariate Data", 2014; the method of MongoDB's
// signal-processing-algorithms and of Hunter/Apache Otava) over the runs'
// trimmed means, each candidate tested by permutation, and then confirms
// every candidate with the Mann-Whitney U test of the per-round samples
// of the runs before and after it, giving the shift with its
// Hodges-Lehmann confidence interval (edivisive.go, detect.go).
package history
