// Package loadgen is kvbench's connection engine: it drives a
// Redis-protocol server (or a cluster's masters) over raw sockets from
// its own event loops, pipelined, in a closed or an open loop, over TLS
// or plaintext, and accounts for every request: exact counts, whole
// latency histograms, the measured window (a measure.Result). What the
// figures mean is documented for users in docs/bench.md.
//
// Run performs one measured run described by a Config (start from
// DefaultConfig). Its client package prefill writes the whole keyspace
// of an empty server once, in order (with MSET when the write command is
// SET), so that a later read run finds every key, and sends unmeasured
// requests (SendN, FillTo). This package is the engine; its layers
// beneath it are packages of their own, each importing only those below
// it (TestLayers): the description of a run (load: Config and its Load),
// the open loop's timetable (schedule), the intervals of a series
// (series), sockets, TLS and the system calls (link), cluster routing
// (cluster), the command language (mix), captures to replay (replay),
// and the keys and values (keyspace). The connections that are not the
// load use package control; redis-benchmark's tests and what "kvbench
// bench" prints are package bench's.
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
// its read(2) returns. An open loop over plaintext sockets does not wake
// for replies: it sleeps until its next round of sends, and takes each
// reply's time from the kernel, which stamps what a socket receives
// (SO_TIMESTAMPNS; a chunk of several replies gets its last segment's
// time), so that a worker wakes once per round rather than once per reply
// and the latency is still the reply's arrival.
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
// # One connection layer: plaintext, TLS and cluster routing
//
// Every connection of a run is a link (package link): a non-blocking
// socket, and for Config.TLS the crypto/tls client running over that same
// socket inside the worker's epoll loop. The batches, pipelining, reply
// parsing and latency accounting (conn.go) never see the difference: a
// worker reads plaintext into the connection's buffer and writes
// plaintext from it, through two branches (receive, flush) that a
// plaintext connection takes straight to read(2) and write(2).
//
// With Config.Cluster the slot map comes from CLUSTER SLOTS (package
// cluster), and each connection g of Connections becomes a group of
// sockets, one per master, that draw g's stream of requests together and
// each take those whose key its master serves (by CRC16 of the key or its
// hash tag): every request goes to its key's master, the masters' shares
// follow the distribution of the keys drawn, and the set mode's walk of
// the keyspace writes every key exactly once. In a closed loop the
// sockets are coupled so that they go through the stream at one pace
// (clusterconn.go says how); the epoll loop, batches and reply parsing
// are those of a single server. The redirects are rare (a slot being
// moved): a MOVED, ASK, TRYAGAIN or CLUSTERDOWN reply is resent on a
// blocking side connection to the node named (cluster.Sides), following
// further redirects up to a bound, and counted (moved, ask); MOVED also
// updates the slot map every socket routes by.
//
// A lost master (its socket closed or reset) makes the connection read
// the slot map again from the other nodes: when another master serves the
// lost node's slots (a replica took over; one with replicas gets Timeout
// for that) the link reconnects there and resends its requests in
// flight, else the run fails naming the node. The prefill (package
// prefill) writes each key to its master, and sums DBSIZE over the
// masters.
//
// # Where reads go
//
// Reads go where writes go, to a single server or to their key's master,
// unless the run reads from replicas (replicas.go). With
// Config.ReadFromReplicas a cluster run's groups get a socket to every
// replica CLUSTER SLOTS lists, which sends READONLY after AUTH, and each
// read of the stream (the read command of a --mode run, a command of a
// mix that mix.Reads names) goes to a replica of its key's slot, the
// reads of one master's slots spread over its replicas in turn; a master
// without replicas serves its reads, and a warning says so. With
// Config.Replicas a single server's run is routed as a cluster of one
// master: its writes go to Addr, its reads to the replicas in turn. The
// measurement keeps each node's share, the replicas' with role replica.
//
// A single server's lost connection fails the run, unless
// Config.Reconnect: then it is dialled again with a backoff
// (reconnect.go), its requests in flight dropped and counted as errors.
//
// Every other connection goes through package control with the same
// credentials and TLS configuration (Config.Control): the topology, the
// redirects' side connections, the probes and the prefill's checks.
//
// With Config.RESP3 every connection, the load's and package control's,
// starts with HELLO 3 (control.Handshake). The replies the load expects,
// +OK and the value's bulk string, read the same in RESP2 and RESP3, so
// the templates of the hot path are unchanged; the RESP3 types go through
// resp.ParseReply with the other unexpected replies: a null (_) is a miss,
// a blob error an error reply, an attribute skipped for the reply it
// annotates. A push is no request's reply: it is skipped wherever it
// comes, between replies or while nothing is in flight.
package loadgen
