package cluster

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/keyslot"
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

// TestSlotOf: the slot of a key number is that of its name, whether the
// route looks its digits' checksums up (keyslot.Numbered) or, with a "{"
// in the prefix or past the keyspace's width, hashes the whole name.
func TestSlotOf(t *testing.T) {
	topo := &Topology{Masters: []string{"a:1"}}
	for _, prefix := range []string{"bench:key:", "", "user:{x}:", "{", "a{b"} {
		for _, spec := range []keyspace.Spec{{Keyspace: 200_000}, {Keyspace: 1000, First: 5000}, {Keyspace: 1}} {
			rt := NewRoute(t.Context(), topo, prefix, spec)
			var buf []byte
			r := keyspace.Rand(1)
			for i := range 5000 {
				k := r.Below(uint64(spec.End()) * 2)
				if i < 10 {
					k = uint64(i) * 1_000_003 // far past the keyspace: more digits
				}
				name := spec.AppendName(nil, prefix, k)
				if got, want := rt.SlotOf(k, &buf), uint16(keyslot.Of(name)); got != want {
					t.Fatalf("prefix %q, key %d (%s): slot %d, want %d", prefix, k, name, got, want)
				}
			}
		}
	}
}

// BenchmarkSlotOf: the slot of a random key number of a keyspace of a
// million, from the tables of its digits' checksums ("digits"), and
// hashed from the whole name as a prefix with a "{" has it ("name"). A
// table of every key's slot, 2 MB here, was faster in a loop alone (a
// table look-up of a sequential key took 2 ns) but missed the cache in a
// run and cost more than the hashing.
func BenchmarkSlotOf(b *testing.B) {
	topo := &Topology{Masters: []string{"a:1"}}
	for _, tc := range []struct{ name, prefix string }{{"digits", "bench:key:"}, {"name", "bench:{key}:"}} {
		rt := NewRoute(b.Context(), topo, tc.prefix, keyspace.Spec{Keyspace: 1 << 20})
		b.Run(tc.name, func(b *testing.B) {
			var buf []byte
			var sum int
			r := keyspace.Rand(1)
			for b.Loop() {
				sum += int(rt.SlotOf(r.Below(1<<20), &buf))
			}
			_ = sum
		})
	}
}
