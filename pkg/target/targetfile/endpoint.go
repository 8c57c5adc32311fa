package targetfile

import (
	"path/filepath"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"go.yaml.in/yaml/v3"
)

// endpoint completes attach target c from entry n's socket: and uri: keys
// and returns its TLS settings, tlsOpts as the tls: block and the command
// line made them: a rediss URI turns TLS on, a redis or unix one off. A URI
// replaces addr, password, user and db; a key that says otherwise than
// the URI is an error at its line, as is TLS over a Unix socket. What the
// URI does not say (no password, no database) the keys and defaults may.
func (p *configParser) endpoint(n *yaml.Node, t targetYAML, c *target.AttachConfig, tlsOpts tlsconf.Options) (tlsconf.Options, error) {
	block := mapValue(n, "tls")
	if t.Socket != "" {
		at := mapValue(n, "socket")
		switch {
		case t.Addr != "":
			return tlsOpts, p.at(at, "socket and addr: give one, both say where the server is")
		case t.Cluster:
			return tlsOpts, p.at(at, "socket: a cluster's nodes are reached over TCP: give their host:port in addr or addrs")
		}
		path := t.Socket
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
		c.Addr = control.SocketPrefix + path
	}
	if t.URI != "" {
		at := mapValue(n, "uri")
		ep, err := control.ParseURI(t.URI)
		if err != nil {
			return tlsOpts, p.at(at, "uri %v", err)
		}
		differ := func(key string) error {
			return p.at(mapValue(n, key), "%s and uri say different things: give one", key)
		}
		switch {
		case t.Addr != "" && t.Addr != ep.Addr:
			return tlsOpts, differ("addr")
		case t.Socket != "" && c.Addr != ep.Addr:
			return tlsOpts, differ("socket")
		case t.Password != "" && ep.Password != "" && t.Password != ep.Password:
			return tlsOpts, differ("password")
		case t.User != "" && ep.User != "" && t.User != ep.User:
			return tlsOpts, differ("user")
		case t.DB != nil && ep.DB > 0 && *t.DB != ep.DB:
			return tlsOpts, differ("db")
		case block != nil && tlsOpts.Enabled != ep.TLS:
			return tlsOpts, differ("tls")
		}
		c.Addr = ep.Addr
		if ep.Password != "" {
			c.Password = ep.Password
		}
		if ep.User != "" {
			c.User = ep.User
		}
		if ep.DB > 0 {
			c.DB = ep.DB
		}
		if ep.TLS {
			tlsOpts.Enabled = true
		} else {
			tlsOpts = tlsconf.Options{}
		}
	}
	if _, socket := control.SocketPath(c.Addr); socket && tlsOpts.Enabled {
		at, key := mapValue(n, "socket"), "socket"
		if at == nil {
			at, key = mapValue(n, "uri"), "uri"
		}
		if at == nil {
			at, key = mapValue(n, "addr"), "addr"
		}
		return tlsOpts, p.at(at, "%s: a Unix socket is plaintext and TLS needs a TCP server: drop the tls: block, or set tls: {enabled: false} over run --tls", key)
	}
	return tlsOpts, nil
}
