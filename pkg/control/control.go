// Package control is kvbench's one client for everything that is not the
// measured load: readiness (PING), INFO and CONFIG GET, COMMAND INFO
// probes, a cluster's topology and formation, prefill checks, flushes, and
// the rare requests a redirect resends. One dial with a timeout, TLS, AUTH
// (with an ACL user), HELLO 3 for RESP3 and SELECT; a context.Context on
// every call, whose cancellation ends a call blocked on the network at
// once.
//
// The measured connections are not this package's: the load generator
// drives raw sockets from its own event loops. They share its handshake
// (Handshake), so that a password, a user or a database means the same on
// both, and its URIs (ParseURI: redis://, rediss://, unix://).
//
// Replies are read as RESP2 or RESP3 alike; Decode gives the RESP3 types
// the values their RESP2 forms decode to, so that a caller reads a map as
// the flat array of pairs RESP2 sends. Push messages are not replies and
// are skipped.
//
// Errors say what kind of failure they are, so that a caller retries only
// what may pass: a refused password or user wraps ErrAuth, a peer that
// answers something other than RESP wraps ErrNotRESP, an error reply is a
// *ReplyError.
package control

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// DefaultTimeout bounds the dial and each call whose context has no
// earlier deadline.
const DefaultTimeout = 5 * time.Second

// Options say how to reach and enter a server, besides its address.
type Options struct {
	// User is an ACL user for AUTH; empty is the default user.
	User string
	// Password, when set, is sent with AUTH (with User when set).
	Password string
	// TLS, when set, runs the connection over TLS; nil is plaintext.
	TLS *tls.Config
	// DB, when positive, is selected with SELECT after AUTH.
	DB int
	// RESP3 switches the connection to RESP3 with HELLO 3 after AUTH; a
	// server that refuses it fails the handshake with a *NoRESP3Error.
	RESP3 bool
	// Timeout bounds the dial and each call; 0 means DefaultTimeout.
	Timeout time.Duration
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Errors wrapped by the package's errors.
var (
	// ErrAuth: the server refused the password or the user, or requires
	// one that was not given. Retrying does not help.
	ErrAuth = errors.New("authentication failed")
	// ErrNotRESP: the peer answered, but not in RESP. Retrying does not
	// help.
	ErrNotRESP = errors.New("the server does not speak RESP")
)

// NoRESP3Error is a server's refusal of HELLO 3 (Options.RESP3): it does
// not know HELLO, or not protocol 3.
type NoRESP3Error struct {
	// Msg is the server's error reply, or what it answered instead.
	Msg string
}

func (e *NoRESP3Error) Error() string {
	return "server does not support RESP3: HELLO 3: " + e.Msg
}

// ReplyError is an error reply of the server.
type ReplyError struct {
	// Msg is the server's message, its first word the error code.
	Msg string
}

func (e *ReplyError) Error() string { return e.Msg }

// Code is the error code, the message's first word (ERR, WRONGTYPE…).
func (e *ReplyError) Code() string {
	code, _, _ := strings.Cut(e.Msg, " ")
	return code
}

// Conn is a connection to one server. It is not safe for concurrent use.
type Conn struct {
	addr    string
	nc      net.Conn
	timeout time.Duration
	out     []byte
	in      []byte
}

// SocketPrefix starts an address that is a Unix socket's path:
// unix:/run/redis.sock.
const SocketPrefix = "unix:"

// SocketPath returns the path of addr when it names a Unix socket
// (SocketPrefix), and whether it does.
func SocketPath(addr string) (string, bool) {
	return strings.CutPrefix(addr, SocketPrefix)
}

// Dial connects to addr (host:port, or unix:PATH for a Unix socket), over
// TLS when o.TLS is set, and runs the handshake (Handshake) within o's
// timeout or ctx's deadline.
func Dial(ctx context.Context, addr string, o Options) (*Conn, error) {
	var nc net.Conn
	var err error
	if path, ok := SocketPath(addr); ok {
		nc, err = dialUnix(ctx, path, o.timeout())
	} else {
		nc, err = tlsconf.Dial(ctx, addr, o.TLS, o.timeout())
	}
	if err != nil {
		return nil, err
	}
	c := &Conn{addr: addr, nc: nc, timeout: o.timeout()}
	err = c.guard(ctx, func() error { return Handshake(nc, o) })
	if err != nil {
		nc.Close()
		if o.TLS != nil {
			err = tlsconf.ExplainFirstReply(err, len(o.TLS.Certificates) > 0)
		}
		return nil, err
	}
	return c, nil
}

// dialUnix connects to the Unix socket at path within timeout.
func dialUnix(ctx context.Context, path string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("Unix socket %s: %w", path, err)
	}
	return nc, nil
}

// Addr is the address the connection was dialled to.
func (c *Conn) Addr() string { return c.addr }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// guard runs f with the connection's deadline set from ctx and the
// timeout, and ends it at once when ctx is cancelled; the error is then
// ctx's.
func (c *Conn) guard(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	err := f()
	stop()
	if cerr := ctx.Err(); cerr != nil && err != nil {
		return cerr
	}
	return err
}

// Do sends one command and returns its reply decoded: a string (simple
// or bulk), nil (null), an int64, or a []any of those; an error reply is
// returned as a *ReplyError (inside an array, as an element).
func (c *Conn) Do(ctx context.Context, args ...string) (any, error) {
	raw, err := c.Raw(ctx, resp.AppendCommandString(c.out[:0], args...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.ToUpper(args[0]), err)
	}
	v, _, err := Decode(raw[0])
	if err != nil {
		var re *ReplyError
		if errors.As(err, &re) && isAuthCode(re.Code()) {
			why := re.Msg
			if re.Code() == "NOAUTH" {
				why = "the server requires a password (" + re.Msg + ")"
			}
			return nil, fmt.Errorf("%s: %w: %s", strings.ToUpper(args[0]), ErrAuth, why)
		}
	}
	return v, err
}

// Raw writes req, one or more RESP requests, and returns each reply raw,
// in order.
func (c *Conn) Raw(ctx context.Context, req []byte) ([][]byte, error) {
	want := 0
	for off := 0; off < len(req); want++ {
		m, err := resp.SkipReply(req[off:], 0)
		if err != nil || m == 0 {
			return nil, errors.New("malformed request")
		}
		off += m
	}
	var replies [][]byte
	err := c.guard(ctx, func() error {
		if _, err := c.nc.Write(req); err != nil {
			return err
		}
		var err error
		replies, c.in, err = readReplies(c.nc, c.in, want)
		return err
	})
	return replies, err
}

// readReplies reads want complete replies from r after those buffered in
// in, and returns them (copied) with what is left buffered.
func readReplies(r io.Reader, in []byte, want int) ([][]byte, []byte, error) {
	replies := make([][]byte, 0, want)
	var chunk [16 << 10]byte
	off := 0
	for {
		n, err := resp.SkipReply(in[off:], 0)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrNotRESP, err)
		}
		if n > 0 && in[off] == resp.TypePush {
			off += n // out of band, not a reply
			continue
		}
		if n > 0 {
			replies = append(replies, append([]byte(nil), in[off:off+n]...))
			off += n
			if len(replies) == want {
				return replies, append(in[:0], in[off:]...), nil
			}
			continue
		}
		m, err := r.Read(chunk[:])
		in = append(in, chunk[:m]...)
		if m == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the connection")
			}
			return nil, nil, err
		}
	}
}

// Handshake enters the server over rw, a fresh connection: AUTH with o's
// user and password, HELLO 3 when o.RESP3, then SELECT o.DB, in one
// round trip. A refusal wraps ErrAuth and names what was refused; a
// HELLO 3 refused is a *NoRESP3Error; a SELECT refused names the
// database.
//
// AUTH goes before HELLO rather than inside it so that a password means
// the same with and without RESP3: HELLO's AUTH takes any password for a
// user that has none, where AUTH says none is set.
func Handshake(rw io.ReadWriter, o Options) error {
	var req []byte
	var names []string
	if o.Password != "" || o.User != "" {
		if o.User != "" {
			req = resp.AppendCommandString(req, "AUTH", o.User, o.Password)
		} else {
			req = resp.AppendCommandString(req, "AUTH", o.Password)
		}
		names = append(names, "AUTH")
	}
	if o.RESP3 {
		req = resp.AppendCommandString(req, "HELLO", "3")
		names = append(names, "HELLO")
	}
	if o.DB > 0 {
		req = resp.AppendCommandString(req, "SELECT", fmt.Sprint(o.DB))
		names = append(names, "SELECT")
	}
	if len(req) == 0 {
		return nil
	}
	if _, err := rw.Write(req); err != nil {
		return err
	}
	replies, _, err := readReplies(rw, nil, len(names))
	if err != nil {
		return err
	}
	for i, raw := range replies {
		v, _, err := Decode(raw)
		var re *ReplyError
		if names[i] == "HELLO" && err == nil {
			if proto := helloProto(v); proto != 3 {
				return &NoRESP3Error{Msg: fmt.Sprintf("the reply says protocol %d", proto)}
			}
		}
		if !errors.As(err, &re) {
			continue
		}
		switch names[i] {
		case "AUTH":
			who := "the password"
			if o.User != "" {
				who = fmt.Sprintf("user %q or its password", o.User)
			}
			if strings.Contains(re.Msg, "without any password configured") {
				return fmt.Errorf("AUTH: %w: the server has no password set, but one was given (%s)", ErrAuth, re.Msg)
			}
			return fmt.Errorf("AUTH: %w: the server refused %s (%s)", ErrAuth, who, re.Msg)
		case "HELLO":
			if re.Code() == "NOAUTH" {
				return fmt.Errorf("HELLO 3: %w: the server requires a password (%s)", ErrAuth, re.Msg)
			}
			if isAuthCode(re.Code()) {
				return fmt.Errorf("HELLO 3: %w: %s", ErrAuth, re.Msg)
			}
			return &NoRESP3Error{Msg: re.Msg}
		default:
			if isAuthCode(re.Code()) {
				return fmt.Errorf("SELECT: %w: %s", ErrAuth, re.Msg)
			}
			return fmt.Errorf("SELECT %d: database %d does not exist or is refused (%s)", o.DB, o.DB, re.Msg)
		}
	}
	return nil
}

// helloProto is the "proto" field of a HELLO reply, 0 when it has none.
func helloProto(v any) int64 {
	pairs, _ := v.([]any)
	for i := 0; i+1 < len(pairs); i += 2 {
		if k, _ := pairs[i].(string); k == "proto" {
			p, _ := pairs[i+1].(int64)
			return p
		}
	}
	return 0
}

// isAuthCode reports whether an error code says the client is not
// authenticated or not allowed.
func isAuthCode(code string) bool {
	switch code {
	case "NOAUTH", "WRONGPASS", "NOPERM":
		return true
	}
	return false
}

// Decode decodes the complete reply at the start of b (see Do for the
// values) and returns its length. RESP3's types decode as their RESP2
// forms: a null as nil, a boolean as 1 or 0, a double, big number or
// verbatim string (without its format) as a string, a blob error as a
// *ReplyError, a map as the []any of its keys and values in turn, a set
// as a []any; an attribute is skipped for the reply it annotates.
func Decode(b []byte) (any, int, error) {
	r, n, err := resp.ParseReply(b, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrNotRESP, err)
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("%w: truncated reply", ErrNotRESP)
	}
	if r.IsNull() {
		return nil, n, nil
	}
	switch r.Type {
	case resp.TypeError, resp.TypeBlobError:
		return nil, n, &ReplyError{Msg: string(r.Data)}
	case resp.TypeInt, resp.TypeBool:
		return r.Int, n, nil
	case resp.TypeSimple, resp.TypeBulk, resp.TypeDouble, resp.TypeBigNumber, resp.TypeVerbatim:
		return string(resp.VerbatimText(r)), n, nil
	case resp.TypeAttribute:
		for range r.Elements() {
			m, err := resp.SkipReply(b[n:], 0)
			if err != nil || m == 0 {
				return nil, 0, fmt.Errorf("%w: truncated attribute", ErrNotRESP)
			}
			n += m
		}
		v, m, err := Decode(b[n:])
		return v, n + m, err
	}
	arr := make([]any, 0, min(r.Elements(), 1024))
	for range r.Elements() {
		v, m, err := Decode(b[n:])
		n += m
		var re *ReplyError
		switch {
		case errors.As(err, &re):
			v = re
		case err != nil:
			return nil, n, err
		}
		arr = append(arr, v)
	}
	return arr, n, nil
}

// Ping sends PING and expects PONG.
func (c *Conn) Ping(ctx context.Context) error {
	v, err := c.Do(ctx, "PING")
	if err != nil {
		return err
	}
	if s, _ := v.(string); s != "PONG" {
		return fmt.Errorf("PING: got %v", v)
	}
	return nil
}

// Info returns the fields of INFO section.
func (c *Conn) Info(ctx context.Context, section string) (map[string]string, error) {
	v, err := c.Do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("INFO %s: got %T", section, v)
	}
	return ParseInfo(s), nil
}

// ParseInfo parses the text of an INFO reply into its fields.
func ParseInfo(s string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

// ConfigGet reads each parameter with its own CONFIG GET (older servers
// take one parameter per call). Parameters the server does not know are
// absent from the map; supported is false when CONFIG GET itself is
// refused.
func (c *Conn) ConfigGet(ctx context.Context, params []string) (got map[string]string, supported bool, err error) {
	got = make(map[string]string)
	for _, p := range params {
		v, err := c.Do(ctx, "CONFIG", "GET", p)
		var re *ReplyError
		if errors.As(err, &re) {
			return got, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("CONFIG GET %s: %w", p, err)
		}
		arr, _ := v.([]any)
		for i := 0; i+1 < len(arr); i += 2 {
			k, _ := arr[i].(string)
			val, _ := arr[i+1].(string)
			if strings.EqualFold(k, p) {
				got[p] = val
			}
		}
	}
	return got, true, nil
}

// Query dials addr, sends one command and returns its reply raw.
func Query(ctx context.Context, addr string, o Options, args ...string) ([]byte, error) {
	c, err := Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.Raw(ctx, resp.AppendCommandString(nil, args...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.ToUpper(args[0]), err)
	}
	return raw[0], nil
}
