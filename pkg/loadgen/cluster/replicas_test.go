package cluster

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

// TestReadOwner: a read of a slot goes to the replicas of its master in
// turn by position, a write's owner stays the master, a master without
// replicas serves its reads, and the end of a phase names each replica's
// master.
func TestReadOwner(t *testing.T) {
	topo := &Topology{
		Masters:      []string{"127.0.0.1:7000", "127.0.0.1:7001"},
		Replicas:     []int{2, 0},
		ReplicaAddrs: [][]string{{"127.0.0.1:7002", "127.0.0.1:7003"}, nil},
	}
	for s := range topo.Owner {
		topo.Owner[s] = int16(s * 2 / Slots)
	}
	rt := NewRoute(t.Context(), topo, "k:", keyspace.Spec{})
	alone := rt.AddReplicas(topo)
	if !slices.Equal(alone, []string{"127.0.0.1:7001"}) {
		t.Errorf("masters without replicas %v, want [127.0.0.1:7001]", alone)
	}
	r2, r3 := rt.Node("127.0.0.1:7002"), rt.Node("127.0.0.1:7003")
	var got []int32
	for pos := range uint64(4) {
		got = append(got, rt.ReadOwner(0, pos))
	}
	if !slices.Equal(got, []int32{r2, r3, r2, r3}) {
		t.Errorf("reads of slot 0 by position: nodes %v, want %d and %d in turn", got, r2, r3)
	}
	if o := rt.Owner(0); o != 0 {
		t.Errorf("slot 0's owner %d, want master 0", o)
	}
	if o := rt.ReadOwner(Slots-1, 5); o != 1 {
		t.Errorf("a read of the last slot goes to node %d, want its master 1, which has no replica", o)
	}
	states, _, _ := rt.EndPhase()
	var masters []int32
	for _, st := range states {
		masters = append(masters, st.Master)
	}
	if !slices.Equal(masters, []int32{-1, -1, 0, 0}) || states[2].Slots != 0 {
		t.Errorf("end of phase: masters of the nodes %v, want [-1 -1 0 0]; the replica serves %d slots", masters, states[2].Slots)
	}
}
