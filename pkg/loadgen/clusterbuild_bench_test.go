package loadgen

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
)

// BenchmarkClusterBuild measures a cluster socket's work to build its
// requests from its group's stream, system calls excluded: drawing every
// element of the stream, routing it by its key's slot, encoding its own.
// The group has a socket per master of three; ns/op is per request built.
func BenchmarkClusterBuild(b *testing.B) {
	topo := &cluster.Topology{Masters: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}}
	for s := range topo.Owner {
		topo.Owner[s] = int16(s * len(topo.Masters) / cluster.Slots)
	}
	for _, mode := range []Mode{ModeGet, ModeMixed} {
		b.Run(string(mode), func(b *testing.B) {
			cfg, err := fill(Config{Cluster: true, Mode: mode, Load: Load{Pipeline: 128, Keyspace: 1_000_000}}).Normalize()
			if err != nil {
				b.Fatal(err)
			}
			p := newPlan(cfg)
			rt := cluster.NewRoute(b.Context(), topo, cfg.KeyPrefix, cfg.Keys())
			grp := &group{end: math.MaxUint64}
			for m := range topo.Masters {
				c := newConn(p, 0, 1, newHistogram())
				c.route = &connRoute{rt: rt, node: int32(m), grp: grp}
				grp.socks = append(grp.socks, &sock{conn: c})
			}
			c := grp.socks[0].conn
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += cfg.Pipeline {
				buf = c.build(buf[:0], cfg.Pipeline, 0)
				c.pre = 0 // dropped: the ring stays in bounds
			}
		})
	}
}
