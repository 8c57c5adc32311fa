// Package loadgen is kvbench's connection engine: it drives a
// Redis-protocol server (or a cluster's masters) over raw sockets from
// its own event loops, pipelined, in a closed or an open loop, over TLS
// or plaintext, and accounts for every request: exact counts, whole
// latency histograms, the measured window (a measure.Result). What the
// figures mean is documented for users in docs/bench.md.
//
// Run performs one measured run described by a Config (start from
// DefaultConfig); Prefill writes the whole keyspace of an empty server
// once, in order (with MSET when the write command is SET), so that a
// later read run finds every key; SendN and FillTo send unmeasured
// requests. Its parts are packages of their own: the keys and values
// (keyspace), the command language (mix), cluster routing (cluster),
// redis-benchmark's tests (rbtests), captures to replay (replay) and
// what "kvbench bench" prints (output); the connections that are not the
// load use package control.
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
// # One connection layer: plaintext, TLS and cluster routing
//
// Every connection of a run is a link (dial.go): a non-blocking socket
// that dial connects, and for Config.TLS the crypto/tls client running
// over that same socket inside the worker's epoll loop. The batches,
// pipelining, reply parsing and latency accounting (conn.go) never see the
// difference: a worker reads plaintext into the connection's buffer and
// writes plaintext from it, through two branches (receive, flush) that a
// plaintext connection takes straight to read(2) and write(2).
//
// crypto/tls wants a net.Conn; sockConn is one over the raw socket. Before
// the run (handshake, AUTH, and with TLS one PING, so that a TLS 1.3
// server refusing the client's certificate fails the dial, not the run)
// it waits with poll(2). In the run it never blocks: an empty socket is a
// temporary net.Error, which crypto/tls reports without keeping it as the
// connection's error, a partial record staying buffered for the next Read;
// a write takes every byte, and what the socket does not take waits in the
// link until EPOLLOUT (crypto/tls would treat a short write as fatal).
// Since records crypto/tls has already read would not wake epoll_wait, a
// TLS connection reads until the socket says EAGAIN: one more read(2) per
// burst of replies, the only system call plaintext does not make. Each
// TLS record costs its encryption and nothing else: no goroutine, no
// channel, no copy through a socketpair. The alternative considered, a
// goroutine per TLS connection bridged to the loop through a socketpair,
// would add two system calls and two goroutine hand-offs per batch in
// each direction on top of the same encryption; the in-loop design does
// no more work than plaintext beyond the crypto by construction, and it
// meets the goal against redis-benchmark --tls (BENCHMARKS.md, "TLS").
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
// flight, else the run fails naming the node. Prefill writes each key to
// its master, and DBSIZE is summed over the masters.
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
