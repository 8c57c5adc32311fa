package loadgen

import (
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// A command of a cluster run's mix with mix.PlaceholderTag goes where
// its tag says, as in redis-benchmark's cluster mode: element p of the
// group's stream goes to the master (never a replica, reads included) of
// index k mod masters, k the
// element's first key when the command has one (so that a key's reads
// find its writes under the same tag), else p. Each socket replaces the
// tag with one of its master's (cluster.FindTag), found again when its
// master no longer owns the tag's slot; the request's other keys are
// drawn from a sequence of the socket's own (extra), not the stream's,
// which every socket of the group must draw alike: they share the
// request's slot through the tag.

// tagState is a cluster socket's hash tag.
type tagState struct {
	tag  [mix.TagWidth]byte
	slot uint16
	node int32 // the node the tag was found for; -1: none yet
	keys tagKeys
	// extra are the sequences of the requests' other keys, per command,
	// made when first needed.
	extra []*keyspace.Gen
}

// tagKeys are the Keys of a tagged request: its first key, the next
// from gen (every one the first when gen is nil), and the tag.
type tagKeys struct {
	first uint64
	gen   *keyspace.Gen
	tag   *[mix.TagWidth]byte
}

func (k *tagKeys) Key(first bool) uint64 {
	if first || k.gen == nil {
		return k.first
	}
	return k.gen.Next()
}

func (k *tagKeys) Tag() *[mix.TagWidth]byte { return k.tag }

// drawTagged is drawCmd for a tagged command ci: its element and owner.
func (c *conn) drawTagged(pos uint64, ci int) (element, int32) {
	cr := c.route
	e := element{op: uint8(ci)}
	pick := pos
	if c.p.cmds[ci].RandKeyed {
		e.key = c.cmdKeys[ci].gen.Next()
		pick = e.key
	}
	masters := cr.grp.socks[:cr.grp.masters] // the first of socks; replicas follow
	return e, masters[pick%uint64(len(masters))].route.node
}

// tagExtra returns the sequence of the other keys of command ci's
// requests.
func (c *conn) tagExtra(ci uint8) *keyspace.Gen {
	ts := &c.route.tag
	if ts.extra == nil {
		ts.extra = make([]*keyspace.Gen, len(c.p.cmds))
	}
	if ts.extra[ci] == nil {
		spec := c.p.cmds[ci].Keys
		spec.Seed = int64(keyspace.Mix64(uint64(spec.Seed) ^ 0x746167)) // "tag"
		ts.extra[ci] = keyspace.NewGen(spec, c.id, c.p.cfg.Connections)
	}
	return ts.extra[ci]
}

// tagKeysFor returns the Keys of tagged request e (gen nil: as requestOf
// rebuilds it, every key e's), the socket's tag found first when it has
// none for its master.
func (c *conn) tagKeysFor(e element, gen *keyspace.Gen) *tagKeys {
	cr := c.route
	ts := &cr.tag
	if ts.node != cr.node || cr.rt.Owner(ts.slot) != cr.node {
		if tag, slot, ok := cluster.FindTag(func(s uint16) bool { return cr.rt.Owner(s) == cr.node }); ok {
			ts.tag, ts.slot = tag, slot
		}
		ts.node = cr.node
	}
	ts.keys = tagKeys{first: e.key, gen: gen, tag: &ts.tag}
	return &ts.keys
}
