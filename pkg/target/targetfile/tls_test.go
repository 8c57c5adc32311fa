package targetfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// TestParseConfigTLS reads tls: blocks over the command line's TLS
// settings.
func TestParseConfigTLS(t *testing.T) {
	dir := t.TempDir()
	f, err := tlsconf.WriteFiles(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.yaml")
	flags := tlsconf.Options{Enabled: true, CAFile: f.CA}
	tests := []struct {
		name     string
		yaml     string
		defaults tlsconf.Options
		tls      bool // the attach target's client is TLS
		certs    int  // its client certificates
	}{
		{"block", "    tls: {cacert: ca.crt, cert: client.crt, key: " + f.ClientKey + "}\n", tlsconf.Options{}, true, 1},
		{"flags", "", flags, true, 0},
		{"block over flags", "    tls: {cert: client.crt, key: client.key}\n", flags, true, 1},
		{"disabled over flags", "    tls: {enabled: false}\n", flags, false, 0},
		{"no TLS", "", tlsconf.Options{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "targets:\n  - name: a\n    kind: attach\n    addr: 127.0.0.1:1\n" + tt.yaml
			ts, err := Parse(strings.NewReader(y), file, Defaults{TLS: tt.defaults})
			if err != nil {
				t.Fatal(err)
			}
			a := ts[0].(*target.Attach)
			if got := a.Config().TLS != nil; got != tt.tls {
				t.Fatalf("TLS %v, want %v", got, tt.tls)
			}
			if tt.tls && (a.Config().TLS.RootCAs == nil || len(a.Config().TLS.Certificates) != tt.certs) {
				t.Errorf("CA pool %v, %d client certificates; want a pool and %d", a.Config().TLS.RootCAs != nil, len(a.Config().TLS.Certificates), tt.certs)
			}
		})
	}
	redis := "targets:\n  - kind: redis\n    tls: {mutual: false}\n"
	if ts, err := Parse(strings.NewReader(redis), file, Defaults{}); err != nil {
		t.Error(err)
	} else if c := ts[0].(*target.Redis).Config().TLS; !c.Enabled || c.Mutual {
		t.Errorf("redis tls: %+v, want enabled, not mutual", c)
	}
}

func TestParseConfigTLSErrors(t *testing.T) {
	on := tlsconf.Options{Enabled: true}
	tests := []struct {
		name, yaml string
		defaults   tlsconf.Options
		want       string
	}{
		{"kvstore block", "targets:\n  - kind: kvstore\n    tls: {}\n", tlsconf.Options{}, "t.yaml:3: a kvstore target cannot be measured over TLS"},
		{"kvstore with --tls", "targets:\n  - kind: kvstore\n", on, "t.yaml:2: a kvstore target cannot be measured over TLS"},
		{"cluster cacert", "targets:\n  - kind: redis-cluster\n    bin: /bin/true\n    tls: {cacert: x}\n", tlsconf.Options{}, `t.yaml:4: tls: unknown key "cacert"`},
		{"redis cacert", "targets:\n  - kind: redis\n    tls: {cacert: x}\n", tlsconf.Options{}, `t.yaml:3: tls: unknown key "cacert"`},
		{"cert without key", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {cert: c.crt}\n", tlsconf.Options{}, "t.yaml:5: tls: --cert and --key go together"},
		{"missing CA file", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {cacert: /nonexistent/ca.crt}\n", tlsconf.Options{}, "t.yaml:5: tls: --cacert: open /nonexistent/ca.crt"},
		{"unknown key", "targets:\n  - name: a\n    kind: attach\n    addr: h:1\n    tls: {ca: x}\n", tlsconf.Options{}, `t.yaml:5: tls: unknown key "ca"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml), "t.yaml", Defaults{Kvstore: target.KvstoreConfig{Bin: "/bin/true"}, TLS: tt.defaults})
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v\nwant ErrConfig containing %q", err, tt.want)
			}
		})
	}
}
