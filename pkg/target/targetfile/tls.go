package targetfile

import (
	"crypto/tls"
	"path/filepath"
	"slices"

	"github.com/kvbench/kvbench/pkg/target"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"go.yaml.in/yaml/v3"
)

// tlsYAML is a target's tls: block. It overrides the command line's TLS
// settings (Defaults.TLS) field by field; present, it turns TLS on unless
// it says enabled: false.
type tlsYAML struct {
	Enabled  *bool  `yaml:"enabled"`
	CACert   string `yaml:"cacert"`
	Cert     string `yaml:"cert"`
	Key      string `yaml:"key"`
	SNI      string `yaml:"sni"`
	Insecure *bool  `yaml:"insecure"`
	Mutual   *bool  `yaml:"mutual"`
}

// The keys of a tls: block: a client's for attach and command targets;
// for a redis or redis-cluster target, whose certificates kvbench makes,
// enabled and mutual.
var (
	tlsClientKeys = []string{"enabled", "cacert", "cert", "key", "sni", "insecure"}
	tlsRedisKeys  = []string{"enabled", "mutual"}
)

// tlsBlock reads the tls: block of target entry n (if any) over the
// defaults d. kind's allowed keys are checked; for the kvstore and its
// cluster, which speak plaintext only, TLS from the block or from d is
// refused.
func (p *configParser) tlsBlock(n *yaml.Node, kind target.Kind, d tlsconf.Options) (tlsconf.Options, bool, error) {
	o, mutual := d, true // redis-server's default: tls-auth-clients yes
	b := mapValue(n, "tls")
	if kind == target.KindKvstore || kind == target.KindKvstoreCluster {
		at := n
		if b != nil {
			at = b
		}
		if b != nil || d.Enabled {
			return o, false, p.at(at, "a %s target cannot be measured over TLS (it serves plaintext only): drop --tls or the tls: block, or leave the %s target out of the run", kind, kind)
		}
		return o, false, nil
	}
	if b == nil {
		return o, mutual, nil
	}
	allowed := tlsClientKeys
	if kind == target.KindRedis || kind == target.KindRedisCluster {
		allowed = tlsRedisKeys
	}
	if err := p.keys(b, "tls", allowed...); err != nil {
		return o, false, err
	}
	var y tlsYAML
	if err := b.Decode(&y); err != nil {
		return o, false, p.yamlError(err)
	}
	o.Enabled = y.Enabled == nil || *y.Enabled
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
			if !filepath.IsAbs(v) {
				*dst = filepath.Join(p.dir, v)
			}
		}
	}
	set(&o.CAFile, y.CACert)
	set(&o.CertFile, y.Cert)
	set(&o.KeyFile, y.Key)
	if y.SNI != "" {
		o.ServerName = y.SNI
	}
	if y.Insecure != nil {
		o.Insecure = *y.Insecure
	}
	if y.Mutual != nil {
		mutual = *y.Mutual
	}
	if !o.Enabled {
		o = tlsconf.Options{}
	}
	return o, mutual, nil
}

// clientTLS returns the client configuration of o, the error at n.
func (p *configParser) clientTLS(n *yaml.Node, o tlsconf.Options) (*tls.Config, error) {
	c, err := o.Config()
	if err != nil {
		at := n
		if b := mapValue(n, "tls"); b != nil {
			at = b
		}
		return nil, p.at(at, "tls: %v", err)
	}
	return c, nil
}

// hasTLSKey reports whether kind's entries may have a tls: block.
func hasTLSKey(kind target.Kind) bool {
	return slices.Contains([]target.Kind{target.KindRedis, target.KindRedisCluster, target.KindCommand, target.KindAttach}, kind)
}
