// Package loadgen is kvbench's load generator: it drives a Redis-protocol
// server with pipelined SET/GET-style requests over raw sockets and reports
// exact counts, throughput and latency percentiles.
//
// Run performs one measured run described by a Config; Prefill writes the
// whole keyspace of an empty server once, sequentially (with MSET when the
// write command is SET), so that a later read run finds every key. Bench
// is Run plus a text or JSON report, the whole of the "kvbench bench"
// command.
//
// # Keys and values
//
// Key i of a keyspace of n keys is the key prefix followed by i in decimal,
// zero-padded to the width of n-1 (AppendKey): with the default prefix and
// n = 100000, key 42 is "bench:key:00042". The value written to key i is a
// pure function of (seed, i, value size) (AppendValue), so a read can be
// verified byte for byte without remembering anything.
//
// # Latency
//
// All requests of one pipelined batch are written with a single write(2)
// and stamped with the time just before it; each read(2) is stamped once
// when it returns, and every reply parsed from that chunk is charged the
// difference. Latency is therefore the time from the write of a request's
// batch to the arrival of the chunk holding its reply: with --pipeline P it
// includes the server's work on the P-1 requests around it. In open-loop
// mode (Config.Rate > 0) the start is instead each request's intended send
// time, so a slow server cannot hide its backlog (no coordinated omission).
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
// (see BenchmarkHotPath).
package loadgen
