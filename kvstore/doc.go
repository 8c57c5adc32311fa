// Package kvstore is the key-value server that kvbench embeds and measures
// ("kvbench serve"): a RESP2 server with the kvstore's own command families
// (a hash engine, HSET/HGET/…, and an ordered engine, RSET/RGET/…) beside a
// Redis-compatible subset on a string keyspace, so that redis-cli,
// redis-benchmark and client libraries work against it unchanged. What a
// user sees (commands, limits, policies, repair) is in docs/serve.md; this
// comment is how it works, and each file's own comment has the details.
//
// # Event loops
//
// Connections are not served by a goroutine each. An accept loop (Serve)
// hands each new socket to one of Config.Loops event loops (DefaultLoops:
// half the processors, at least one), round robin. A loop reads what each
// connection has sent, parses every complete request in the read buffer
// and executes them as one batch under one acquisition of the database
// lock, a read lock when the batch only reads (conn.exec). Before a
// pipelined batch runs, the index slots and records of all its keys are
// touched (conn.prefetch) so that their cache misses overlap. At the end
// of the round the loop commits the log once for every connection it
// served (commitRound), then sends each connection's replies; under epoll
// a connection whose replies are not out stops being read, under io_uring
// once a send is under way and 64 KB more wait for the next. Limits on
// requests are enforced by package resp before anything is allocated; a
// protocol error closes only the connection that sent it.
//
// A loop is of one of two kinds (Config.IO, chosen once at start). The
// epoll loop (eventloop.go) waits in epoll_wait over its connections' raw
// non-blocking sockets, reads each readable one and writes each reply with
// one write: Redis's design, and its system calls. The io_uring loop
// (uringloop.go, on the ring code of internal/iouring) keeps a multishot
// receive armed on every connection, fed from a ring of provided buffers,
// queues a send per connection and runs the receives and submits the
// sends with an io_uring_enter each per round, whatever the number of
// connections; it sleeps in epoll_wait. IOAuto takes io_uring when the kernel offers
// what the loop needs, and epoll otherwise.
//
// A cron goroutine does the periodic work: automatic compaction, retrying
// a failed log, giving back memory once the server is idle, reading the
// memory accounting's figures (memory.go) and, once a second, waking the
// loops to close idle or unauthenticated clients (clients.go).
//
// # Memory
//
// used_memory, which maxmemory bounds, is the Go heap's objects (read by
// the cron), the large allocations since, and the memory mapped outside
// the heap, counted where the allocators map and give it back
// (offHeapBytes): a write's check is a few atomic loads. Without
// maxmemory the limit is what the machine has left, less a reserve. A
// large request is admitted against it before it is read
// (resp.Reader.Admit).
//
// # Persistence
//
// The guarantee of every policy but none: a write's record reaches the log
// file before its reply is sent, and records are in the order the writes
// were applied, so a restart replays a prefix of what clients saw
// acknowledged. Under "no" the kernel decides when the file reaches the
// disk; "everysec" adds an fsync every second from a goroutine; "always"
// fsyncs (fdatasync) the round's records before any of its replies. A
// failed write or fsync turns the round's write replies into MISCONF
// errors, and further writes are refused until a rewrite succeeds.
//
// The log is Redis 7's multi-part AOF: a manifest (manifest.go, replaced
// atomically) names a base file and the incremental files written since.
// Incremental records are RESP commands with a CRC-32C line each, appended
// under the database lock and written by one write(2) per loop round, group
// commit (aof.go, aofLog); the base is the compact binary format whose
// grammar is in basefile.go. Replay (aofload.go) checks every checksum, cuts
// off a last record cut short by a crash and refuses anything else with a
// *LogError: a file shorter than what the manifest says was fsynced
// ("synced", written as fsyncs complete), a file named and missing, log
// files without a manifest; nothing it cannot read is changed. Repair
// (repair.go) cuts a damaged log, or rebuilds or trims the manifest,
// after asking. Every change to the directory goes through logFS
// (logfs.go), under which the tests put faults or a recorder of crash
// states (crashstate_test.go).
//
// Compaction (rewrite.go) runs beside the serving loops, as Redis forks for
// BGREWRITEAOF: the slow steps (fsync of the current file, the next file
// and its manifest entry) happen off the loop; under the write lock the log
// switches files and the dataset is snapshotted; a goroutine writes the
// snapshot as the new base and replaces the manifest. A crash at any step
// leaves a manifest naming a complete log.
//
// # Allocators
//
// Config.Alloc chooses how the engines hold data. AllocPool (arena.go; the
// reference script's "mypool") packs each key and value into one record in
// 4 MiB chunks mapped outside the Go heap, the next chunk prepared ahead by
// a goroutine; records are found through hashIndex (hashindex.go), open
// addressing over plain integers in shards that grow independently, whose
// large arrays also live off the heap (offheap.go). The ordered engine adds
// a B-tree over the same records whose nodes (512-byte inner nodes, 4 KiB
// leaves whose items are in no order) are mapped off the heap too and hold
// only integers (fingerprints, record references, child numbers;
// pooltree.go); lookups go through the hash index beside it, and inserts
// wait in a buffer to go into the tree together, prefetched. So
// the collector has almost nothing to trace, and a snapshot freezes the
// arena and the index instead of copying them (copy-on-write: a record is
// never changed in place, an index shard is copied at its first change,
// while a snapshot is out). AllocGo (the reference script's "malloc")
// keeps one Go allocation per key and value in Go maps and a B-tree of Go
// values (table.go): the yardstick for what the pool saves.
package kvstore
