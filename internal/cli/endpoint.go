package cli

import (
	"fmt"
	"net"
	"strconv"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/spf13/pflag"
)

// endpointFlags are how bench reaches its server besides --host and
// --port: a URI, a Unix socket, an ACL user, a database.
type endpointFlags struct {
	uri    string
	socket string
	user   string
	db     int
}

// addEndpointFlags adds --uri, --socket, --user and --db.
func addEndpointFlags(f *pflag.FlagSet, e *endpointFlags) {
	f.StringVarP(&e.uri, "uri", "u", "", "server URI instead of --host/--port/--user/--password/--db: redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or unix:///path/to/socket")
	f.StringVarP(&e.socket, "socket", "s", "", "Unix socket of the server, instead of --host and --port (e.g. /run/redis/redis.sock)")
	f.StringVar(&e.user, "user", "", "ACL user: each connection sends AUTH user password (with --password or $"+PasswordEnv+")")
	f.IntVar(&e.db, "db", 0, "database selected with SELECT on each connection, the prefill's and checks' included (not with --cluster)")
}

// resolve sets c's address, user, password and database from the flags,
// and turns TLS on for a rediss URI. Flags that say the same thing twice
// are an error naming both.
func (e *endpointFlags) resolve(f *pflag.FlagSet, host string, port int, c *loadgen.Config, t *tlsconf.Options) error {
	for _, pair := range [][2]string{
		{"uri", "host"}, {"uri", "port"}, {"uri", "socket"}, {"uri", "user"}, {"uri", "password"}, {"uri", "db"},
		{"socket", "host"}, {"socket", "port"},
	} {
		if f.Changed(pair[0]) && f.Changed(pair[1]) {
			return fmt.Errorf("--%s and --%s cannot be used together: both say how to reach the server", pair[0], pair[1])
		}
	}
	c.User, c.DB = e.user, e.db
	switch {
	case e.uri != "":
		ep, err := loadgen.ParseURI(e.uri)
		if err != nil {
			return fmt.Errorf("--uri %w", err)
		}
		if t.Enabled && !ep.TLS {
			return fmt.Errorf("--uri %s is plaintext and --tls asks for TLS: use rediss://", e.uri)
		}
		c.Addr, c.User, c.Password, c.DB = ep.Addr, ep.User, ep.Password, ep.DB
		t.Enabled = t.Enabled || ep.TLS
	case e.socket != "":
		c.Addr = control.SocketPrefix + e.socket
	default:
		if port < 1 || port > 65535 {
			return fmt.Errorf("--port %d: want a TCP port from 1 to 65535", port)
		}
		c.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	}
	if _, socket := control.SocketPath(c.Addr); socket && t.Enabled {
		return fmt.Errorf("--tls needs a TCP server: a Unix socket (%s) is plaintext", c.Addr)
	}
	if c.DB < 0 {
		return fmt.Errorf("--db %d: want a database number >= 0", c.DB)
	}
	if c.DB > 0 && c.Cluster {
		return fmt.Errorf("--db %d: a Redis Cluster has only database 0 (--cluster)", c.DB)
	}
	return nil
}
