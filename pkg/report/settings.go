package report

import (
	"cmp"
	"maps"
	"slices"

	"github.com/kvbench/kvbench/pkg/results"
)

// maxDistinct bounds the values kept per setting: a report says "mixed"
// and lists a few, so rows that all differ need not all be kept.
const maxDistinct = 64

// distinct collects the distinct non-zero values of a setting.
type distinct[T cmp.Ordered] struct {
	seen map[T]struct{}
}

func (d *distinct[T]) add(v T) {
	var zero T
	if v == zero {
		return
	}
	if _, ok := d.seen[v]; ok || len(d.seen) >= maxDistinct {
		return
	}
	if d.seen == nil {
		d.seen = make(map[T]struct{})
	}
	d.seen[v] = struct{}{}
}

// values are the values, ascending; nil when none.
func (d *distinct[T]) values() []T {
	if len(d.seen) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(d.seen))
}

// settingsSeen collects the settings of the rows as they are added.
type settingsSeen struct {
	requests, keyspace                      distinct[int64]
	pipeline, connections, valueSize, cores distinct[int]
	host, cpu, kernel, placement            distinct[string]
}

func (s *settingsSeen) add(r *results.Row) {
	if r.OK() && (r.Workload == "" || r.Command == results.CommandTotal) { // a command has its share
		s.requests.add(r.Requests)
	}
	s.pipeline.add(r.Pipeline)
	s.connections.add(r.Connections)
	s.keyspace.add(r.Keyspace)
	s.valueSize.add(r.ValueSize)
	s.host.add(r.ClientHost)
	s.cpu.add(r.CPUModel)
	s.cores.add(r.Cores)
	s.kernel.add(r.Kernel)
	s.placement.add(r.Placement)
}

// settings fills the report's Settings.
func (b *builder) settings() {
	var rounds distinct[int]
	for _, t := range b.rep.Targets {
		for _, sc := range t.Scenarios {
			rounds.add(sc.lastRound)
		}
	}
	s := &b.set
	b.rep.Settings = Settings{
		Requests: s.requests.values(), Rounds: rounds.values(),
		Pipeline: s.pipeline.values(), Connections: s.connections.values(),
		Keyspace: s.keyspace.values(), ValueSize: s.valueSize.values(),
		ClientHost: s.host.values(), CPUModel: s.cpu.values(),
		Cores: s.cores.values(), Kernel: s.kernel.values(),
		Placement: s.placement.values(),
	}
}
