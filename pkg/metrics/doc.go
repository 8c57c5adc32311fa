// Package metrics serves kvbench's live Prometheus metrics: the load
// generator's requests, errors and latencies while "kvbench bench" or
// "kvbench run" measure (Load), and an HTTP server for a registry
// (Serve). The names and labels are documented for users in
// docs/metrics.md.
//
// The load's metrics are fed at interval granularity, never per request:
// each worker's finished interval (loadgen.Config.Observe) adds its
// counts and its latency histogram's buckets under one lock, so the load
// generator's hot path pays nothing more than the series it already
// records, and a scrape sees counters and histogram from the same
// intervals. By the end of an attempt (Attempt.Done) they hold every
// request of its measured phase.
package metrics
