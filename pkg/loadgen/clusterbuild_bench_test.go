package loadgen

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
)

// BenchmarkClusterBuild measures a cluster connection's work to build its
// requests from its group's stream, system calls excluded: drawing each
// element, routing it by its key's slot to its master's socket, encoding
// it. The group has a socket per master of three; its sockets build in
// turn, a pipeline each, as the worker's loop has them; ns/op is per
// request built. The stream is drawn once for the group
// (group.drawOnce), as a run of these modes does.
func BenchmarkClusterBuild(b *testing.B) {
	topo := &cluster.Topology{Masters: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}}
	for s := range topo.Owner {
		topo.Owner[s] = int16(s * len(topo.Masters) / cluster.Slots)
	}
	for _, mode := range []Mode{ModeGet, ModeSet, ModeMixed} {
		b.Run(string(mode), func(b *testing.B) {
			cfg, err := fill(Config{Cluster: true, Mode: mode, Load: Load{Pipeline: 128, Keyspace: 1_000_000}}).Normalize()
			if err != nil {
				b.Fatal(err)
			}
			p := newPlan(cfg)
			rt := cluster.NewRoute(b.Context(), topo, cfg.KeyPrefix, cfg.Keys())
			grp := &group{end: math.MaxUint64, masters: len(topo.Masters)}
			for m := range topo.Masters {
				c := newConn(p, 0, 1, newHistogram())
				c.route = &connRoute{rt: rt, node: int32(m), grp: grp}
				grp.socks = append(grp.socks, &sock{conn: c})
			}
			grp.drawOnce(true)
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			b.ResetTimer()
			built := 0
			for built < b.N {
				for _, s := range grp.socks {
					before := s.pre
					buf = s.build(buf[:0], cfg.Pipeline, 0)
					built += s.pre - before
					s.pre = 0 // dropped: the ring stays in bounds
				}
			}
		})
	}
}
