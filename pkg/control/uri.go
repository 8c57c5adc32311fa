package control

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultPort is the port of a URI that names none: Redis's.
const DefaultPort = 6379

// Endpoint is how to reach a server, as a URI gives it.
type Endpoint struct {
	// Addr is host:port, or unix:PATH for a Unix socket (the address
	// Dial takes).
	Addr string
	// User and Password are AUTH's; both empty when the URI has none.
	User, Password string
	// DB is the database to SELECT; 0 when the URI names none.
	DB int
	// TLS says the URI asks for TLS (rediss).
	TLS bool
}

// ParseURI parses a server URI as redis-cli -u and valkey-benchmark -u
// take it:
//
//	redis://[[user]:password@]host[:port][/db]
//	rediss://...   (the same, over TLS)
//	unix:///path/to/socket[?db=N]
//
// The port defaults to DefaultPort. A user information without a colon is
// a password, as redis-cli reads it. Percent-escapes are decoded.
func ParseURI(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%q: want a redis://, rediss:// or unix:// URI (%w)", s, err)
	}
	var e Endpoint
	switch u.Scheme {
	case "redis", "rediss", "valkey", "valkeys":
		e.TLS = u.Scheme == "rediss" || u.Scheme == "valkeys"
		if err := e.tcp(u); err != nil {
			return Endpoint{}, fmt.Errorf("%q: %w", s, err)
		}
	case "unix":
		if u.Host != "" || u.Path == "" || u.User != nil {
			return Endpoint{}, fmt.Errorf("%q: want unix:///path/to/socket, an absolute path after three slashes", s)
		}
		e.Addr = SocketPrefix + u.Path
		if q := u.Query(); q.Has("db") {
			if e.DB, err = parseDB(q.Get("db")); err != nil {
				return Endpoint{}, fmt.Errorf("%q: %w", s, err)
			}
		}
	default:
		return Endpoint{}, fmt.Errorf("%q: want a redis://, rediss:// or unix:// URI", s)
	}
	return e, nil
}

// tcp fills e from a redis or rediss URI.
func (e *Endpoint) tcp(u *url.URL) error {
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fmt.Errorf("no host")
	}
	if port == "" {
		port = strconv.Itoa(DefaultPort)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a TCP port from 1 to 65535", port)
	}
	e.Addr = net.JoinHostPort(host, port)
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			e.User, e.Password = u.User.Username(), p
		} else {
			e.Password = u.User.Username()
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		var err error
		if e.DB, err = parseDB(db); err != nil {
			return err
		}
	}
	return nil
}

func parseDB(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("database %q: want a number >= 0", s)
	}
	return n, nil
}
