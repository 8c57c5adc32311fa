// Package link is the load generator's lowest layer: a connection to a
// server as its epoll loops drive it (Link), dialled with the handshake
// the run asks for (Dial: TLS, HELLO, AUTH, SELECT, READONLY), and the
// system calls the loops make, raw or through the scheduler (SysRead,
// SysWrite, SysWritev, EpollWait, EpollWaitNs, PollFd).
//
// # TLS inside the epoll loop
//
// A Link is a non-blocking socket and, over TLS, the crypto/tls client
// running over that same socket inside the worker's epoll loop, so that
// the load generator's batches, pipelining and reply parsing never see
// the difference.
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
// TLS connection reads until the socket says EAGAIN; a read that took
// less than it asked for has already found the socket empty, so the next
// says EAGAIN without a read(2) (the socket is watched level-triggered:
// bytes that come later wake the loop), and a burst of replies costs one
// read(2) as in plaintext. Each
// TLS record costs its encryption and nothing else: no goroutine, no
// channel, no copy through a socketpair. The alternative considered, a
// goroutine per TLS connection bridged to the loop through a socketpair,
// would add two system calls and two goroutine hand-offs per batch in
// each direction on top of the same encryption; the in-loop design does
// no more work than plaintext beyond the crypto by construction, and it
// meets the goal against redis-benchmark --tls (BENCHMARKS.md, "TLS").
package link
