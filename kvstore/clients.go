package kvstore

import (
	"net/netip"
	"time"
)

// What the server does about clients it does not know: Redis's protected
// mode, its idle timeout, and limits on clients that have not
// authenticated. Their checks cost the serving loops nothing per request:
// a connection notes the time of its last read or write from a clock the
// cron keeps (Server.now), and once a second the cron has every loop look
// over its connections (loop.sweep).

// DefaultAuthTimeout is how long a client that has not authenticated
// (when a password is set) may go without sending a complete request
// before it is closed: a client that connects and sends nothing, or a
// header and then nothing, holds a connection no longer.
const DefaultAuthTimeout = 10 * time.Second

// sweepEvery is how often the loops look for clients to close.
const sweepEvery = time.Second

// errDenied is Redis's reply to a client refused by protected mode, with
// the remedies of kvbench serve.
const errDenied = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to the server from the same host it is running on, however MAKE SURE it is not publicly accessible " +
	"from internet if you do so. " +
	"2) Restart kvbench serve with the '--protected-mode no' option. " +
	"3) Set up an authentication password for the default user (kvbench serve --requirepass). " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

// denied reports whether protected mode refuses a client from addr: with
// no password set, only clients of the loopback interface are served. As
// Redis does, the loopback interface is 127.0.0.1 and ::1.
func (s *Server) denied(addr string) bool {
	if !s.protected.Load() || s.cfg.RequirePass != "" {
		return false
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return true // not an IP client: not the loopback interface
	}
	ip := ap.Addr().Unmap()
	return ip != netip.AddrFrom4([4]byte{127, 0, 0, 1}) && ip != netip.IPv6Loopback()
}

// warnExposed says at start what a listener on a non-loopback address
// without a password does.
func (s *Server) warnExposed(addr string) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Addr().IsLoopback() || s.cfg.RequirePass != "" {
		return
	}
	if s.protected.Load() {
		s.log.Warn("listening beyond the loopback interface without a password: protected mode refuses clients from other addresses (--requirepass, or --protected-mode no)", "addr", addr)
		return
	}
	s.log.Warn("listening beyond the loopback interface without a password and with protected mode off: anyone who can reach the port can read and change every key", "addr", addr)
}

// tick advances the clock the connections read; the cron calls it.
func (s *Server) tick() { s.now.Store(int64(time.Since(s.start))) }

// stale reports whether c is to be closed at now: idle past the timeout,
// or unauthenticated with no complete request for authTimeout.
func (s *Server) stale(c *conn, now int64) bool {
	if t := s.timeout.Load(); t > 0 && now-c.active > t {
		return true
	}
	return !c.authed && now-c.done > int64(s.cfg.authTimeout)
}

// sweep closes the loop's stale connections (see stale). The loop calls
// it when woken for it.
func (l *loop) sweep() {
	now := l.s.now.Load()
	closeIdle := func(c *conn) {
		// A connection with replies queued this round is left to the
		// next sweep: its socket is written at the round's end.
		if c == nil || c.queued || l.u != nil && c.ring.closing || !l.s.stale(c, now) {
			return
		}
		l.s.stats.timedOut.Add(1)
		l.s.log.Debug("closing an idle client", "client", c.addr, "id", c.id, "authenticated", c.authed)
		if l.u != nil {
			l.closeRing(c)
		} else {
			l.close(c)
		}
	}
	if l.u != nil {
		for _, c := range l.u.slots {
			closeIdle(c)
		}
		return
	}
	for _, c := range l.conns {
		closeIdle(c)
	}
}
