// Package loadgen is kvbench's load generator: it drives a Redis-protocol
// server with pipelined SET/GET-style requests over raw sockets and reports
// exact counts, throughput and latency percentiles. What the figures mean
// (latency, keys, values, accounting) is documented for users in
// docs/bench.md.
//
// Run performs one measured run described by a Config (start from
// DefaultConfig); Prefill writes the whole keyspace of an empty server
// once, in order (with MSET when the write command is SET), so that a later
// read run finds every key. Bench is Run plus a text or JSON report, the
// whole of the "kvbench bench" command. AppendKey and AppendValue give key
// i and its value, a pure function of (seed, i, value size), so a read is
// verified byte for byte without remembering anything.
//
// # Why the I/O is hand-written
//
// Each worker thread runs its own epoll loop over non-blocking sockets
// (golang.org/x/sys/unix) rather than using package net: with one connection
// the client and the server take turns, so every microsecond the client
// spends per batch is lost throughput, and with many connections at
// pipeline 1 the Go netpoller adds a park/unpark and an extra read per
// request. Requests are appended from pre-encoded templates into reused
// buffers and replies are parsed in place: the hot path allocates nothing
// (see BenchmarkHotPath). The latency clock follows from this: a batch is
// stamped once before its write(2), and every reply in a chunk once when
// its read(2) returns.
package loadgen
