// Package cluster is the load generator's routing in a Redis Cluster: the
// slot map (Topology, read with CLUSTER SLOTS), which master owns each
// slot as the run goes on (Route, updated by MOVED replies for every
// connection), the redirects a request follows (MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN) and, when a master is lost, which node took its slots.
//
// Redirects are rare (a slot being moved): a redirected request is resent
// on a blocking side connection (Sides, the control client) to the node
// named, off the engine's event loop path; its latency includes the
// detour. The engine keeps one socket per master for each connection (and
// one per replica when it reads from them, replicas.go) and draws each
// key's socket from the Route.
package cluster

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Slots is the number of hash slots of a Redis Cluster.
const Slots = keyslot.Count

// Redirect handling bounds: a request redirected more often than
// maxRedirects times, or refused with TRYAGAIN or CLUSTERDOWN that often
// (backing off backoff, doubling, between tries), fails the run.
const (
	maxRedirects = 16
	backoff      = 10 * time.Millisecond
)

// Route is a cluster run's shared slot map and redirect counts. Slots
// move during a run: a MOVED reply updates the map for every connection.
type Route struct {
	mu    sync.Mutex
	addrs []string // node addresses; an index never changes
	owner [Slots]atomic.Int32
	moved atomic.Int64
	ask   atomic.Int64
	sides []*control.Conn // every side connection, closed with the run
	// ctx is the running phase's, for what a redirect or a lost node
	// makes the event loop do outside it: dial, resend, wait for a
	// failover (see Phase).
	ctx context.Context
	// prefix and keys name the keys. When the prefix holds no "{" (no
	// hash tag can begin in it), a key's slot comes from numbered, a few
	// look-ups in tables of the checksums of its digits (keyslot.Numbered),
	// instead of a table of every key's slot, whose look-ups missed the
	// cache at random keys, or the hashing of its formatted name
	// (BenchmarkSlotOf).
	prefix   string
	keys     keyspace.Spec
	numbered *keyslot.Numbered
	// redirects counts, under mu, the MOVED and ASK replies of each node
	// (by index) this phase.
	redirects [][2]int64
	// version counts the changes of owner: a copy of the slot map made
	// at one version (a group's, in the engine) is current while the
	// version is.
	version atomic.Uint64
	// reps are the replicas of each master, by node index, that reads go
	// to (replicas.go); fixed once set. masterOf is, under mu, each
	// replica's master (-1 for other nodes).
	reps     [][]int32
	masterOf []int32
}

// NewRoute returns the route of a run over t, whose keys are keys's,
// named with prefix; ctx bounds what it does until the first Phase.
func NewRoute(ctx context.Context, t *Topology, prefix string, keys keyspace.Spec) *Route {
	rt := &Route{addrs: slices.Clone(t.Masters), prefix: prefix, keys: keys, ctx: ctx,
		numbered: keyslot.NewNumbered(prefix, keys.Width())}
	for i, o := range t.Owner {
		rt.owner[i].Store(int32(o))
	}
	return rt
}

// Phase gives the route the context of the phase that starts: redirects
// and failovers within it end when it does.
func (rt *Route) Phase(ctx context.Context) { rt.ctx = ctx }

// Context is the running phase's context, for the engine's own dials.
func (rt *Route) Context() context.Context { return rt.ctx }

// SlotOf returns the slot of key number key; buf is scratch space.
func (rt *Route) SlotOf(key uint64, buf *[]byte) uint16 {
	if s, ok := rt.numbered.Slot(key); ok {
		return s
	}
	*buf = rt.keys.AppendName((*buf)[:0], rt.prefix, key)
	return uint16(keyslot.Of(*buf))
}

// Owner returns the index of the node that serves slot s.
func (rt *Route) Owner(s uint16) int32 { return rt.owner[s].Load() }

// SetOwner records that node i serves slot s.
func (rt *Route) SetOwner(s uint16, i int32) {
	if rt.owner[s].Swap(i) != i {
		rt.version.Add(1)
	}
}

// Version counts the changes of a slot's owner so far. A copy of the map
// made after reading Version is current while Version returns the same
// (a change made during the copy makes it stale at once).
func (rt *Route) Version() uint64 { return rt.version.Load() }

// Redirects is how many MOVED and ASK replies the phase has had so far.
func (rt *Route) Redirects() (moved, ask int64) { return rt.moved.Load(), rt.ask.Load() }

// redirected counts a MOVED (or, with ask, an ASK) reply of node i.
func (rt *Route) redirected(i int32, ask bool) {
	k := 0
	if ask {
		rt.ask.Add(1)
		k = 1
	} else {
		rt.moved.Add(1)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if i < 0 {
		return
	}
	for int(i) >= len(rt.redirects) {
		rt.redirects = append(rt.redirects, [2]int64{})
	}
	rt.redirects[i][k]++
}

// Node returns the index of addr, adding it when new.
func (rt *Route) Node(addr string) int32 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	i := slices.Index(rt.addrs, addr)
	if i < 0 {
		i = len(rt.addrs)
		rt.addrs = append(rt.addrs, addr)
	}
	return int32(i)
}

// Addr returns the address of node i, "" for none.
func (rt *Route) Addr(i int32) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if i < 0 || int(i) >= len(rt.addrs) {
		return ""
	}
	return rt.addrs[i]
}

// NodeState is one node's part of the route at the end of a phase.
type NodeState struct {
	Addr       string
	Slots      int   // the slots it serves
	Moved, Ask int64 // the redirects it replied this phase
	// Master is, for a replica that reads go to (AddReplicas), its
	// master's index; -1 for every other node.
	Master int32
}

// EndPhase returns every node's state, in index order, and the phase's
// MOVED and ASK counts, which it resets for the next phase.
func (rt *Route) EndPhase() (nodes []NodeState, moved, ask int64) {
	rt.mu.Lock()
	for i, a := range rt.addrs {
		n := NodeState{Addr: a, Master: -1}
		if i < len(rt.masterOf) {
			n.Master = rt.masterOf[i]
		}
		if i < len(rt.redirects) {
			n.Moved, n.Ask = rt.redirects[i][0], rt.redirects[i][1]
		}
		nodes = append(nodes, n)
	}
	rt.redirects = nil
	rt.mu.Unlock()
	for s := range rt.owner {
		if o := rt.owner[s].Load(); o >= 0 && int(o) < len(nodes) {
			nodes[o].Slots++
		}
	}
	return nodes, rt.moved.Swap(0), rt.ask.Swap(0)
}

// Close closes every side connection.
func (rt *Route) Close() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, cl := range rt.sides {
		cl.Close()
	}
	rt.sides = nil
}

// IsRedirect reports whether an error reply's first word asks for the
// request to be sent again.
func IsRedirect(word []byte) bool {
	switch string(word) {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN":
		return true
	}
	return false
}

// Sides are one connection's side connections to other nodes, dialled
// when a redirect first needs one.
type Sides struct {
	rt    *Route
	o     control.Options
	conns map[string]*control.Conn
}

// NewSides returns a connection's side connections, dialled with o.
func (rt *Route) NewSides(o control.Options) *Sides { return &Sides{rt: rt, o: o} }

// get returns the side connection to addr, dialling it the first time.
func (s *Sides) get(addr string) (*control.Conn, error) {
	if cl := s.conns[addr]; cl != nil {
		return cl, nil
	}
	cl, err := control.Dial(s.rt.ctx, addr, s.o)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	if s.conns == nil {
		s.conns = make(map[string]*control.Conn)
	}
	s.conns[addr] = cl
	s.rt.mu.Lock()
	s.rt.sides = append(s.rt.sides, cl)
	s.rt.mu.Unlock()
	return cl, nil
}

// Resend sends req again after the error reply msg (MOVED, ASK, TRYAGAIN
// or CLUSTERDOWN) from node from, on a side connection, following further
// redirects, and returns the final raw reply. what names the request in
// errors; slot is its key's, for TRYAGAIN's retry on the slot's owner.
func (s *Sides) Resend(from int32, req []byte, what string, slot uint16, msg []byte) ([]byte, error) {
	rt := s.rt
	wait := backoff
	for try := 0; ; try++ {
		if try >= maxRedirects {
			return nil, fmt.Errorf("%s: still refused after %d tries: %s", what, try, msg)
		}
		word, rest, _ := bytes.Cut(msg, []byte(" "))
		var addr string
		asking := false
		switch string(word) {
		case "MOVED", "ASK":
			slotStr, a, ok := bytes.Cut(rest, []byte(" "))
			sl, err := strconv.Atoi(string(slotStr))
			if !ok || err != nil || sl < 0 || sl >= Slots {
				return nil, fmt.Errorf("%s: malformed redirect %q", what, msg)
			}
			addr = string(a)
			rt.redirected(from, word[0] == 'A')
			if word[0] == 'M' {
				rt.SetOwner(uint16(sl), rt.Node(addr))
			} else {
				asking = true
			}
		default: // TRYAGAIN, CLUSTERDOWN
			select {
			case <-rt.ctx.Done():
				return nil, rt.ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
			if addr = rt.Addr(rt.Owner(slot)); addr == "" {
				addr = rt.Addr(from)
			}
		}
		cl, err := s.get(addr)
		if err != nil {
			return nil, err
		}
		from = rt.Node(addr)
		out := req
		if asking {
			out = append(resp.AppendCommandString(nil, "ASKING"), req...)
		}
		replies, err := cl.Raw(rt.ctx, out)
		if err != nil {
			return nil, fmt.Errorf("resend %s to %s: %w", what, addr, err)
		}
		reply := replies[len(replies)-1]
		if len(reply) > 0 && reply[0] == '-' {
			m := bytes.TrimRight(reply[1:], "\r\n")
			w, _, _ := bytes.Cut(m, []byte(" "))
			if IsRedirect(w) {
				msg = m
				continue
			}
		}
		return reply, nil
	}
}

// failoverPoll is how often a lost master's slots are looked up while a
// replica may be taking them over.
const failoverPoll = 100 * time.Millisecond

// Heir finds the node that took over the slots of node lost, whose
// connection just failed: it reads the slot map again (CLUSTER SLOTS)
// from the other nodes, every failoverPoll, until another master serves
// lost's slots (the map is then updated and the heir returned), lost is
// found to have no replica to take them (neither CLUSTER SLOTS nor
// CLUSTER NODES lists one), or timeout passes. The error says which.
func (rt *Route) Heir(lost int32, o control.Options, timeout time.Duration) (string, error) {
	lostAddr := rt.Addr(lost)
	rt.mu.Lock()
	var seeds []string
	for _, a := range rt.addrs {
		if a != lostAddr {
			seeds = append(seeds, a)
		}
	}
	rt.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		topo, err := FetchTopology(rt.ctx, seeds, o)
		if err != nil {
			return "", fmt.Errorf("no other node gives the slot map: %w", err)
		}
		heir, slots, reps := -1, 0, 0
		for sl, ow := range topo.Owner {
			if rt.owner[sl].Load() != lost {
				continue
			}
			slots++
			if ow >= 0 && topo.Masters[ow] != lostAddr {
				heir = int(ow)
			} else if ow >= 0 {
				reps = topo.Replicas[ow]
			}
		}
		if heir < 0 && reps == 0 {
			if n, ok := followers(rt.ctx, seeds, lostAddr, o); ok {
				reps = n
			}
		}
		switch {
		case slots == 0:
			return "", fmt.Errorf("it served no slot")
		case heir >= 0:
			for sl, ow := range topo.Owner {
				if ow >= 0 {
					rt.SetOwner(uint16(sl), rt.Node(topo.Masters[ow]))
				}
			}
			return topo.Masters[heir], nil
		case reps == 0:
			return "", fmt.Errorf("no other master serves its %d slots (CLUSTER SLOTS), and it has no replica to take them over", slots)
		case time.Now().After(deadline):
			return "", fmt.Errorf("no replica took over its %d slots within %v", slots, timeout)
		}
		select {
		case <-rt.ctx.Done():
			return "", rt.ctx.Err()
		case <-time.After(failoverPoll):
		}
	}
}
