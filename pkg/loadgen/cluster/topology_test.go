package cluster

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/resp"
)

// slotsReply encodes a CLUSTER SLOTS reply of entries [lo, hi, [host,
// port, id], replicas...].
func slotsReply(entries ...[]any) []byte {
	var b []byte
	b = resp.AppendArray(b, len(entries))
	for _, e := range entries {
		b = resp.AppendArray(b, len(e))
		b = resp.AppendInt(b, int64(e[0].(int)))
		b = resp.AppendInt(b, int64(e[1].(int)))
		for _, n := range e[2:] {
			hp := n.([2]any)
			b = resp.AppendArray(b, 3)
			b = resp.AppendBulkString(b, hp[0].(string))
			b = resp.AppendInt(b, int64(hp[1].(int)))
			b = resp.AppendBulkString(b, "0123456789abcdef")
		}
	}
	return b
}

func TestParseSlots(t *testing.T) {
	b := slotsReply(
		[]any{0, 8191, [2]any{"127.0.0.1", 7000}, [2]any{"127.0.0.1", 7003}},
		[]any{8192, 16383, [2]any{"", 7001}},
	)
	topo, err := parseSlots(b, "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(topo.Masters, ",") != "127.0.0.1:7000,127.0.0.1:7001" || topo.Owner[0] != 0 || topo.Owner[16383] != 1 || topo.Replicas[0] != 1 || topo.Replicas[1] != 0 {
		t.Errorf("topology %v, owners %d %d, replicas %v", topo.Masters, topo.Owner[0], topo.Owner[16383], topo.Replicas)
	}
	if len(topo.ReplicaAddrs) != 2 || strings.Join(topo.ReplicaAddrs[0], ",") != "127.0.0.1:7003" || len(topo.ReplicaAddrs[1]) != 0 {
		t.Errorf("replica addresses %v, want [[127.0.0.1:7003] []]", topo.ReplicaAddrs)
	}
	for _, tc := range []struct{ reply, want string }{
		{"-ERR This instance has cluster support disabled\r\n", "cluster support disabled"},
		{"*0\r\n", "no slot is served"},
		{"*1\r\n*2\r\n:0\r\n:1\r\n", "malformed entry"},
		{"*1\r\n*3\r\n:5\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n", "malformed slot range"},
		{"*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n", "malformed slot range"},
		{"*1\r\n*3\r\n:0\r\n:1\r\n*1\r\n$1\r\nh\r\n", "malformed node"},
		{"*2\r\n*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n", "truncated"},
	} {
		if _, err := parseSlots([]byte(tc.reply), "h:1"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.reply, err, tc.want)
		}
	}
}

// FuzzParseSlots: no reply, however malformed, makes the topology parser
// panic or give a slot to a master it does not list.
func FuzzParseSlots(f *testing.F) {
	f.Add(slotsReply([]any{0, 16383, [2]any{"127.0.0.1", 7000}}))
	f.Add(slotsReply([]any{0, 100, [2]any{"a", 1}, [2]any{"b", 2}}, []any{101, 16383, [2]any{"?", 3}}))
	f.Add([]byte("*1\r\n*3\r\n:0\r\n:99999999999\r\n*2\r\n$1\r\nh\r\n:1\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		topo, err := parseSlots(b, "127.0.0.1:1")
		if err != nil {
			return
		}
		for s, o := range topo.Owner {
			if int(o) >= len(topo.Masters) || o < -1 {
				t.Fatalf("slot %d owned by master %d of %d", s, o, len(topo.Masters))
			}
		}
		if len(topo.Replicas) != len(topo.Masters) || len(topo.ReplicaAddrs) != len(topo.Masters) {
			t.Fatalf("%d replica counts and %d replica lists for %d masters", len(topo.Replicas), len(topo.ReplicaAddrs), len(topo.Masters))
		}
		for i, reps := range topo.ReplicaAddrs {
			if (len(reps) == 0) != (topo.Replicas[i] == 0) {
				t.Fatalf("master %d: replica addresses %v, %d replicas counted", i, reps, topo.Replicas[i])
			}
		}
	})
}

// BenchmarkSlotOf: the slot of a key index from the route's table against
// naming the key and hashing it, as a route over a keyspace too large
// for the table does.
func BenchmarkSlotOf(b *testing.B) {
	topo := &Topology{Masters: []string{"a:1"}}
	for _, n := range []int64{1 << 20, maxSlotCache + 1} {
		rt := NewRoute(b.Context(), topo, "bench:key:", keyspace.Spec{Keyspace: n})
		name := "table"
		if rt.slots == nil {
			name = "hash"
		}
		b.Run(name, func(b *testing.B) {
			var buf []byte
			var sum int
			for i := 0; b.Loop(); i++ {
				sum += int(rt.SlotOf(uint64(i)&(1<<20-1), &buf))
			}
			_ = sum
		})
	}
}
