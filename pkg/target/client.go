package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// client is a minimal RESP client for the few commands kvbench sends to a
// server outside a measurement: PING, AUTH, INFO, CONFIG GET, FLUSHALL.
type client struct {
	conn net.Conn
	out  []byte
	in   []byte
}

// replyError is an error reply from the server.
type replyError struct{ msg string }

func (e *replyError) Error() string { return e.msg }

// creds are what a connection to a server needs besides its address.
type creds struct {
	password string      // sent with AUTH when set
	tls      *tls.Config // nil: plaintext
	// files are the settings tls was made from, for other processes
	// (Info.TLSFiles).
	files tlsconf.Options
}

// dialClient connects to addr, over TLS when cr.tls is set, and
// authenticates with cr.password, if set.
func dialClient(ctx context.Context, addr string, cr creds, timeout time.Duration) (*client, error) {
	conn, err := tlsconf.Dial(ctx, addr, cr.tls, timeout)
	if err != nil {
		return nil, err
	}
	c := &client{conn: conn}
	if cr.password != "" {
		if _, err := c.do(timeout, "AUTH", cr.password); err != nil {
			conn.Close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	return c, nil
}

func (c *client) close() { c.conn.Close() }

// do sends one command and returns its reply: a string (simple or bulk),
// nil (null), an int64, or a []any; an error reply is a *replyError.
func (c *client) do(timeout time.Duration, args ...string) (any, error) {
	if err := c.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	c.out = resp.AppendCommandString(c.out[:0], args...)
	if _, err := c.conn.Write(c.out); err != nil {
		return nil, err
	}
	var chunk [16 << 10]byte
	for {
		n, err := resp.SkipReply(c.in, 0)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			v, _, err := decodeReply(c.in[:n])
			c.in = append(c.in[:0], c.in[n:]...)
			return v, err
		}
		m, err := c.conn.Read(chunk[:])
		if m > 0 {
			c.in = append(c.in, chunk[:m]...)
			continue
		}
		if err != nil {
			return nil, err
		}
	}
}

// decodeReply decodes the complete reply at the start of b.
func decodeReply(b []byte) (any, int, error) {
	r, n, err := resp.ParseReply(b, 0)
	if err != nil {
		return nil, 0, err
	}
	switch r.Type {
	case resp.TypeError:
		return nil, n, &replyError{string(r.Data)}
	case resp.TypeInt:
		return r.Int, n, nil
	case resp.TypeSimple:
		return string(r.Data), n, nil
	case resp.TypeBulk:
		if r.IsNull() {
			return nil, n, nil
		}
		return string(r.Data), n, nil
	}
	if r.IsNull() {
		return nil, n, nil
	}
	arr := make([]any, 0, r.Int)
	for range r.Int {
		v, m, err := decodeReply(b[n:])
		n += m
		var re *replyError
		if err != nil && !errors.As(err, &re) {
			return nil, n, err
		}
		if err != nil {
			v = err
		}
		arr = append(arr, v)
	}
	return arr, n, nil
}

// ping sends PING and expects PONG.
func (c *client) ping(timeout time.Duration) error {
	v, err := c.do(timeout, "PING")
	if err != nil {
		return err
	}
	if s, _ := v.(string); s != "PONG" {
		return fmt.Errorf("PING: got %v", v)
	}
	return nil
}

// info returns the fields of INFO section.
func (c *client) info(timeout time.Duration, section string) (map[string]string, error) {
	v, err := c.do(timeout, "INFO", section)
	if err != nil {
		return nil, fmt.Errorf("INFO %s: %w", section, err)
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("INFO %s: got %T", section, v)
	}
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m, nil
}

// configGet reads each parameter with its own CONFIG GET (older servers
// take one parameter per call). Parameters the server does not know are
// absent from the map; supported is false when CONFIG GET itself fails.
func (c *client) configGet(timeout time.Duration, params []string) (got map[string]string, supported bool, err error) {
	got = make(map[string]string)
	for _, p := range params {
		v, err := c.do(timeout, "CONFIG", "GET", p)
		var re *replyError
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
