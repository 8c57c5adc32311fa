// Package resp is the RESP codec shared by the embedded kvstore server and
// the load generator: RESP2 requests and replies, and the replies of a
// RESP3 connection (HELLO 3) parsed as well, each RESP3 type in its own
// branch so that RESP2 replies cost no more for them.
//
// Encoding is append-style (AppendBulk(dst, b) []byte): callers own their
// buffers and nothing allocates once a buffer has grown. Decoding never
// copies: a parsed request's arguments and a parsed reply's payload alias the
// buffer they were read from.
//
// The request Reader enforces its Limits before it allocates anything: a
// declared bulk or argument count is checked against the limit and never
// allocated up front; the buffer grows only with bytes that have arrived.
// These parsers are written by hand rather than taken from a library because
// they sit on the hot path of both the server and the load generator, and
// because the libraries that exist allocate per argument or enforce no limits.
package resp
