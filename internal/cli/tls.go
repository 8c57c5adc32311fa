package cli

import (
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/spf13/pflag"
)

// addTLSFlags adds --tls, --cacert, --cert, --key, --sni and --insecure,
// filling o.
func addTLSFlags(f *pflag.FlagSet, o *tlsconf.Options, what string) {
	f.BoolVar(&o.Enabled, "tls", false, "connect over TLS"+what)
	f.StringVar(&o.CAFile, "cacert", "", "PEM file of the CA certificates that verify the server's certificate (default: the system's)")
	f.StringVar(&o.CertFile, "cert", "", "client certificate, PEM, for a server that verifies clients (mutual TLS; with --key)")
	f.StringVar(&o.KeyFile, "key", "", "the client certificate's private key, PEM")
	f.StringVar(&o.ServerName, "sni", "", "server name sent in the handshake and verified in its certificate (default: the host)")
	f.BoolVar(&o.Insecure, "insecure", false, "do not verify the server's certificate (prints a warning)")
}
