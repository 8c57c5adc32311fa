// Package kvstore is the key-value server that kvbench embeds and measures
// ("kvbench serve"): a RESP2 server with the kvstore's own command families
// (a hash engine, HSET/HGET/…, and an ordered engine, RSET/RGET/…) beside a
// Redis-compatible subset on a string keyspace, so that redis-cli,
// redis-benchmark and client libraries work against it unchanged.
//
// Each connection has one goroutine. It parses every complete request in its
// read buffer, executes the batch under one acquisition of the database lock
// (a read lock when the batch only reads) and answers the whole batch with
// one write. Limits on requests are enforced by package resp before anything
// is allocated; a protocol error closes only the connection that sent it.
package kvstore
