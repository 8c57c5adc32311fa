package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// DefaultValidity is how long the certificates of WriteFiles are valid: a
// run's length with room to spare, so a leaked key soon expires.
const DefaultValidity = 7 * 24 * time.Hour

// CA is a certificate authority that issues server and client
// certificates: ECDSA P-256 keys, self-signed root.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate in PEM, what a --cacert file holds.
	PEM []byte
}

// Leaf is an issued certificate and its key, both PEM.
type Leaf struct {
	CertPEM, KeyPEM []byte
}

// Usage says what a leaf certificate is for.
type Usage int

// The usages.
const (
	// Server certificates carry the loopback addresses and localhost as
	// SANs, and serve as client certificates too (between servers).
	Server Usage = iota
	// Client certificates authenticate a client to a server (mutual TLS).
	Client
)

// NewCA returns a new CA valid from notBefore to notAfter.
func NewCA(name string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"kvbench"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Issue returns a certificate for name signed by ca, valid from notBefore
// to notAfter.
func (ca *CA) Issue(name string, u Usage, notBefore, notAfter time.Time) (Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Leaf{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"kvbench"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if u == Server {
		// Client use too: redis-server presents this certificate when it
		// connects to another node's cluster bus or to its master.
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Leaf{}, fmt.Errorf("create certificate %s: %w", name, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Leaf{}, err
	}
	return Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}, nil
}

// serial is a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// Files are the paths of a CA's certificate and of a server and a client
// certificate it issued, with their keys.
type Files struct {
	CA                    string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// WriteFiles makes a new CA valid for validity from now and writes into
// dir: ca.crt, server.crt and server.key (for localhost and the loopback
// addresses), client.crt and client.key. Keys are written 0600.
func WriteFiles(dir string, validity time.Duration) (Files, error) {
	now := time.Now()
	from, to := now.Add(-time.Minute), now.Add(validity)
	ca, err := NewCA("kvbench CA", from, to)
	if err != nil {
		return Files{}, err
	}
	server, err := ca.Issue("localhost", Server, from, to)
	if err != nil {
		return Files{}, err
	}
	client, err := ca.Issue("kvbench client", Client, from, to)
	if err != nil {
		return Files{}, err
	}
	f := Files{
		CA:         filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key"),
	}
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.CA, ca.PEM, 0o644},
		{f.ServerCert, server.CertPEM, 0o644}, {f.ServerKey, server.KeyPEM, 0o600},
		{f.ClientCert, client.CertPEM, 0o644}, {f.ClientKey, client.KeyPEM, 0o600},
	} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}
