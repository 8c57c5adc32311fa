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
//
// # Command mixes and dependent requests
//
// Config.Commands replaces the set/get templates with compiled commands
// (commands.go): literal bytes and placeholders, an argument whose length
// varies per request (a key past the keyspace, a value size from
// Config.ValueSizes) getting its "$len" header once it is written. A
// command with Then is a read-modify-write: the reply to its read queues
// the write on the connection (depQueue), and the worker sends the queue
// with the connection's next write, after its batch, each queued request
// keeping its operation's start time; the plain set/get path never sees
// the queue but for one nil check per batch.
//
// # Clusters: one connection layer
//
// With Config.Cluster the slot map comes from CLUSTER SLOTS, and each
// connection g of Connections becomes one socket per master, each taking
// the keys of g's stripe (the seeded permutation over the whole keyspace)
// that its master serves, by CRC16 of the key or its hash tag: so every
// request goes to its key's master, and the epoll loop, batches and reply
// parsing are those of a single server. The redirects are rare (a slot
// being moved): a MOVED, ASK, TRYAGAIN or CLUSTERDOWN reply is resent on a
// blocking side connection to the node named, following further
// redirects up to a bound, and counted (Result.Moved, Result.Ask); MOVED
// also updates the slot map every connection filters by. A socket's keys
// are a filtered share of its stripe, so a ModeSet permutation run no
// longer writes each key exactly once; Prefill writes each key to its
// master, and DBSIZE is summed over the masters. Dialing (dial.go for the
// sockets, dialNode for the side connections) is the one place a TLS
// handshake would plug in.
package loadgen
