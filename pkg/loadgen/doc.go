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
// also updates the slot map every connection filters by.
//
// The key order stays exact: with the sequential or permutation order and
// a request count, each phase walks, per connection g, g's share of the
// next positions of its stripe once (exactQuotas) and gives each of g's
// sockets the count of those keys its master serves; every socket starts
// at the walk's first position and takes exactly those keys. So the
// positions are taken once each, as without a cluster, and a ModeSet run
// of Keyspace requests writes every key exactly once (while the slot map
// holds; a slot moved mid-phase shifts keys between sockets). We chose
// this over one socket per connection feeding the masters' sockets
// because it keeps each socket's batches independent: no socket waits
// for another's pipeline. Random, zipf and gaussian orders, and command
// mixes, keep the even split of requests over the sockets.
//
// A lost master (its socket closed or reset) makes the connection read
// the slot map again from the other nodes: when another master serves the
// lost node's slots (a replica took over; one with replicas gets Timeout
// for that) the socket reconnects there and resends its requests in
// flight, else the run fails naming the node. Prefill writes each key to
// its master, and DBSIZE is summed over the masters. Dialing (dial.go for the
// sockets, dialNode for the side connections) is the one place a TLS
// handshake would plug in.
package loadgen
