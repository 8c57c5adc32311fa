package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"
)

// TestWriteFiles: the files make a working chain for the loopback
// addresses and localhost, for a server and for a client, and the keys
// are private.
func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := WriteFiles(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Options{Enabled: true, CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey}.Config()
	if err != nil {
		t.Fatal(err)
	}
	server, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cert  *x509.Certificate
		name  string
		usage x509.ExtKeyUsage
	}{
		{server.Leaf, "127.0.0.1", x509.ExtKeyUsageServerAuth},
		{server.Leaf, "::1", x509.ExtKeyUsageServerAuth},
		{server.Leaf, "localhost", x509.ExtKeyUsageServerAuth},
		{c.Certificates[0].Leaf, "", x509.ExtKeyUsageClientAuth},
	} {
		if _, err := tc.cert.Verify(x509.VerifyOptions{Roots: c.RootCAs, DNSName: tc.name, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
			t.Errorf("%s (%v): %v", tc.cert.Subject.CommonName, tc.name, err)
		}
		if left := time.Until(tc.cert.NotAfter); left > time.Hour || left < 59*time.Minute {
			t.Errorf("%s expires in %v, want an hour", tc.cert.Subject.CommonName, left)
		}
	}
	for _, key := range []string{f.ServerKey, f.ClientKey} {
		if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v: want 0600", key, err, fi.Mode().Perm())
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{CAFile: "ca.crt"}, "need --tls"},
		{Options{Insecure: true}, "need --tls"},
		{Options{Enabled: true, CertFile: "c.crt"}, "--cert and --key go together"},
		{Options{Enabled: true, CAFile: "/nonexistent/ca.crt"}, "--cacert: open /nonexistent/ca.crt"},
		{Options{Enabled: true, CAFile: "tlsconf.go"}, "no PEM certificate"},
		{Options{Enabled: true, CertFile: "/nonexistent/c.crt", KeyFile: "/nonexistent/c.key"}, "--cert /nonexistent/c.crt, --key /nonexistent/c.key"},
	} {
		if _, err := tc.o.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.o, err, tc.want)
		}
	}
	if c, err := (Options{}).Config(); c != nil || err != nil {
		t.Errorf("plaintext: %v, %v: want nil, nil", c, err)
	}
}
