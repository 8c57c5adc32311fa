// Package tlsconf owns kvbench's TLS settings: the options a user gives
// (--tls, --cacert, --cert/--key, --sni, --insecure, or a target's YAML
// tls: block) turned into one *tls.Config, a dial function every client of
// kvbench uses, errors that name the problem (a wrong CA, an expired
// certificate, a missing client certificate) in one line, and a small
// certificate authority that writes the files a TLS redis-server and its
// clients need (ECDSA P-256, short validity).
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"syscall"
	"time"
)

// Options are the TLS settings of a client. The zero value is plaintext.
type Options struct {
	// Enabled turns TLS on; the other fields need it.
	Enabled bool
	// CAFile is a PEM file of the CA certificates the server's
	// certificate is verified against; the system's CAs when empty.
	CAFile string
	// CertFile and KeyFile are the client's certificate and key in PEM,
	// for a server that verifies clients (mutual TLS). Both or neither.
	CertFile, KeyFile string
	// ServerName is sent as SNI and verified against the server's
	// certificate; the dialed host when empty.
	ServerName string
	// Insecure skips verifying the server's certificate.
	Insecure bool
}

// InsecureWarning is printed when Options.Insecure is used.
const InsecureWarning = "--insecure: the server's certificate is not verified: anyone on the path can read and change the traffic"

// Validate checks the options without reading files.
func (o Options) Validate() error {
	if !o.Enabled {
		if o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" || o.ServerName != "" || o.Insecure {
			return errors.New("--cacert, --cert, --key, --sni and --insecure need --tls")
		}
		return nil
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("--cert and --key go together: give both for mutual TLS, or neither")
	}
	return nil
}

// Config returns the crypto/tls configuration of o, nil when TLS is not
// enabled. It reads the CA, certificate and key files.
func (o Options) Config() (*tls.Config, error) {
	if err := o.Validate(); err != nil || !o.Enabled {
		return nil, err
	}
	c := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         o.ServerName,
		InsecureSkipVerify: o.Insecure,
		// Full-size records from the first byte: the load generator
		// writes whole pipelined batches.
		DynamicRecordSizingDisabled: true,
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in the file", o.CAFile)
		}
	}
	if o.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert %s, --key %s: %w", o.CertFile, o.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ForHost returns c for a connection to host: a copy with ServerName set
// to host when c has none (Go verifies an IP address against the
// certificate's IP SANs). It returns c itself when nothing changes.
func ForHost(c *tls.Config, host string) *tls.Config {
	if c == nil || c.ServerName != "" {
		return c
	}
	c = c.Clone()
	c.ServerName = host
	return c
}

// Handshake runs the TLS handshake of a client over conn within ctx and
// returns the TLS connection, or an error from Explain.
func Handshake(ctx context.Context, conn net.Conn, c *tls.Config, addr string) (*tls.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	tc := tls.Client(conn, ForHost(c, host))
	if err := tc.HandshakeContext(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Problem: "the server did not complete the handshake in time: is it a plaintext port?", Err: err}
		}
		return nil, Explain(err)
	}
	return tc, nil
}

// ExplainFirstReply is Explain for the first request after a handshake,
// where a TLS 1.3 server that does not accept the client (its
// certificate, or the lack of one) sends an alert and closes: a connection
// closed or reset there, the alert lost, is named as that refusal.
// withCert says the client presented a certificate.
func ExplainFirstReply(err error, withCert bool) error {
	if err == nil || remoteAlert(err) != 0 {
		return Explain(err)
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EPIPE) {
		return err
	}
	problem := "the server closed the connection after the handshake: it likely requires a client certificate: give --cert and --key"
	if withCert {
		problem = "the server closed the connection after the handshake: it refused the client certificate (--cert)"
	}
	return &Error{Problem: problem, Err: err}
}

// Dial connects to addr over TCP within timeout, and over TLS when c is
// not nil (the handshake included in timeout). Handshake errors come from
// Explain.
func Dial(ctx context.Context, addr string, c *tls.Config, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || c == nil {
		return conn, err
	}
	tc, err := Handshake(ctx, conn, c, addr)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// Error is a TLS failure with the problem named in the user's words.
type Error struct {
	// Problem says what is wrong and what to check.
	Problem string
	// Err is crypto/tls's or crypto/x509's error.
	Err error
}

func (e *Error) Error() string { return "TLS: " + e.Problem + " (" + e.Err.Error() + ")" }

func (e *Error) Unwrap() error { return e.Err }

// Explain wraps err in an *Error naming the problem when it is one of the
// common TLS failures: the server's certificate not signed by a trusted CA,
// expired or not yet valid, or not for the name dialed; the server
// refusing the client's certificate, or asking for one that was not given;
// a plaintext server. Other errors are returned as they are.
func Explain(err error) error {
	if err == nil {
		return nil
	}
	var ue x509.UnknownAuthorityError
	var ie x509.CertificateInvalidError
	var he x509.HostnameError
	var rh tls.RecordHeaderError
	var problem string
	switch {
	case errors.As(err, &ue):
		problem = "the server's certificate is not signed by a CA in --cacert (or the system's CAs): wrong --cacert?"
	case errors.As(err, &ie) && ie.Reason == x509.Expired:
		problem = "the server's certificate has expired or is not valid yet"
		if ie.Cert != nil {
			problem = fmt.Sprintf("the server's certificate is valid from %s to %s, not now",
				ie.Cert.NotBefore.UTC().Format(time.RFC3339), ie.Cert.NotAfter.UTC().Format(time.RFC3339))
		}
	case errors.As(err, &he):
		problem = fmt.Sprintf("the server's certificate is not for %q: give the name it holds with --sni", he.Host)
	case errors.As(err, &rh):
		problem = "the server did not answer in TLS: is it a plaintext port?"
	case remoteAlert(err) != 0:
		switch remoteAlert(err) {
		case 116: // certificate_required (TLS 1.3)
			problem = "the server requires a client certificate: give --cert and --key"
		case 45: // certificate_expired
			problem = "the server refused the client certificate (--cert) as expired"
		case 48: // unknown_ca
			problem = "the server does not trust the CA that signed the client certificate (--cert)"
		case 42, 43, 46: // bad, unsupported, unknown certificate
			problem = "the server refused the client certificate (--cert)"
		case 40: // handshake_failure: TLS 1.2 servers also send it for a missing certificate
			problem = "the server refused the handshake (a client certificate missing, or no common cipher)"
		default:
			return err
		}
	default:
		return err
	}
	return &Error{Problem: problem, Err: err}
}

// remoteAlert returns the TLS alert the server sent, 0 for another error.
// crypto/tls reports it as a *net.OpError "remote error" around its
// unexported alert type, a uint8 holding the alert's code (RFC 8446,
// section 6): the code is read from there, since no exported type carries
// it.
func remoteAlert(err error) uint64 {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return 0
	}
	if v := reflect.ValueOf(op.Err); v.Kind() == reflect.Uint8 {
		return v.Uint()
	}
	return 0
}
