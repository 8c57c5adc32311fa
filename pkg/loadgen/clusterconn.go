package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
)

// A cluster run's requests follow the keys drawn. Connection g of the
// run is a group of sockets, one per master (group), on one worker; the
// group draws one stream of elements, each a request's key (and in a
// mixed run its kind, in a mix its command), and each socket takes the
// elements whose key its master serves: element p of the stream goes to
// exactly one master, the one its key hashes to. In the set, get and
// mixed modes the group draws each element once and queues it on its
// socket (group.draw); a command mix's or a replay's sockets each draw
// the whole stream from the same seeded sequences and take their own. So a
// Zipf workload loads the master of the hot keys most, as a client
// routing each request would, and the set mode's walk of the keyspace
// writes every key exactly once. A phase takes the stream's positions
// [base, end) of each group: its share of the requests, or all positions
// until its deadline.
//
// The sockets keep their own batches and pipelines, and in an open loop
// their own schedules: element p is due at p's time in the group's
// schedule. In a closed loop they are coupled so that they go through the
// stream together: a socket takes element p only while p is less than
// window positions past the group's frontier, the position the slowest
// socket has reached. Without it the master of the cold keys would get as
// many requests per second as the hot one, each socket's pipeline setting
// its own pace; with it the hot master's pace is the group's. A socket
// stopped at the window waits (stalled) until a sibling moves the
// frontier on, and that sibling has their worker pump it again.
//
// A run that reads from replicas (replicas.go) adds a socket per replica
// to each group: a read of the stream belongs to a replica of its key's
// slot, the p-th read of a slot's master's replicas going to replica p
// mod their number, and a write to the master, as above.

// connRoute is one socket's place in a cluster run: the master it is
// connected to, its side connections to other nodes, and where it is in
// its group's stream.
type connRoute struct {
	rt     *cluster.Route
	node   int32          // the node it sends to: a master (another after a failover) or a replica
	master int            // its master's index among the run's masters
	sides  *cluster.Sides // nil for a single server's (standalone)
	buf    []byte
	grp    *group
	// scanned counts the elements of the stream the socket has drawn;
	// peek is the next one of its own, when peeked.
	scanned uint64
	peek    element
	peeked  bool
	// exhausted: no element of its own is left in the phase's share.
	exhausted bool
	// front is published for the siblings: the position the socket has
	// reached (its peeked element's, or scanned). stalled says it waits
	// for the frontier to move.
	front   atomic.Uint64
	stalled atomic.Bool
	// replica says the socket is to a replica (replicas.go); standalone
	// that the run is a single server's with replicas, whose socket
	// draws every key of its own mix elements into keys (drawCmd).
	replica, standalone bool
	keys                []uint64
	replay              replayKeys
	// queue holds the elements its group drew for it (group.draw).
	queue elemQueue
	// tag is the socket's hash tag for commands with {tag} (clustertag.go).
	tag tagState
}

// element is one request of a group's stream: its position, its key, and
// its kind (opSet or opGet, or the index of a mix's command).
type element struct {
	pos, key uint64
	op       uint8
}

// group is one connection of a cluster run: a socket per master, drawing
// one stream.
type group struct {
	socks []*sock
	// masters is the number of master sockets, the first of socks;
	// reads says the reads go to the replicas (ReadOwner).
	masters int
	reads   bool
	// base and end bound the phase's positions; end is math.MaxUint64 in
	// a phase bounded by time.
	base, end uint64
	// window is how far past the frontier a socket may take elements
	// (closed loop; 0 in an open loop, which needs no coupling).
	window uint64
	// In the set, get and mixed modes the group draws its stream once
	// (draw, with lead's generators) and queues each element on the
	// socket of its key's node (byNode, by node index), where that socket
	// takes it; drawn counts the elements drawn. Drawing each key once,
	// instead of once per socket with every socket skipping the others',
	// took a third of the client's CPU per request off at three masters.
	// Command mixes and replays have no lead: each of their sockets draws
	// the whole stream and takes its own (scanned). A group's sockets are
	// one worker's, so none of this is shared between threads.
	lead   *conn
	drawn  uint64
	byNode []*sock
	// bySlot is, for a write (or any request when reads go to the
	// masters), the index in socks of the socket of each slot's master,
	// copied from the route at its version ver (stale: to be copied
	// again): a byte a slot, 16 KB a group, where the route's shared map
	// of int32s, 64 KB, missed the cache on most draws at random keys.
	// nil with more than maxBySlot sockets.
	bySlot *[cluster.Slots]uint8
	ver    uint64
	stale  bool
}

// maxBySlot is the most sockets group.bySlot indexes.
const maxBySlot = 256

// drawOnce makes the group draw its stream once, for all its sockets (the
// set, get and mixed modes): the first socket's generators draw, and each
// element is queued on the socket of its node. slots says the nodes are
// a cluster's, whose slots bySlot maps.
func (g *group) drawOnce(slots bool) {
	g.lead = g.socks[0].conn
	if slots && len(g.socks) <= maxBySlot {
		g.bySlot = new([cluster.Slots]uint8)
	}
	for _, s := range g.socks {
		g.setNode(s.route.node, s)
	}
}

// sockOf returns the socket a write of slot sl goes to: its master's, or
// the first when none of the group's serves it.
func (g *group) sockOf(rt *cluster.Route, sl uint16) *sock {
	if g.bySlot != nil {
		if v := rt.Version(); v != g.ver || g.stale {
			g.copySlots(rt, v)
		}
		return g.socks[g.bySlot[sl]]
	}
	if o := rt.Owner(sl); int(o) < len(g.byNode) && o >= 0 && g.byNode[o] != nil {
		return g.byNode[o]
	}
	return g.socks[0]
}

// copySlots makes bySlot the route's map as of version v, read before.
func (g *group) copySlots(rt *cluster.Route, v uint64) {
	idx := make([]uint8, len(g.byNode)) // by node: 0, the first socket, for none
	for n, s := range g.byNode {
		for i, o := range g.socks {
			if o == s && s != nil {
				idx[n] = uint8(i)
			}
		}
	}
	for sl := range g.bySlot {
		if o := rt.Owner(uint16(sl)); o >= 0 && int(o) < len(idx) {
			g.bySlot[sl] = idx[o]
		} else {
			g.bySlot[sl] = 0
		}
	}
	g.ver, g.stale = v, false
}

// draw draws the group's next element and queues it on the socket of the
// node its key goes to; an element of a node no socket of the group
// serves (its slot moved there) goes to the first, whose master's MOVED
// reply sends it on.
func (g *group) draw() {
	c := g.lead
	cr := c.route
	pos := g.drawn
	g.drawn++
	e := element{pos: pos, key: c.keys.Next(), op: opGet}
	if p := c.p; p.setRatio == 100 || (p.setRatio > 0 && c.ops.Below(100) < p.setRatio) {
		e.op = opSet
	}
	if !cr.standalone && (!g.reads || e.op != opGet) {
		g.sockOf(cr.rt, cr.rt.SlotOf(e.key, &cr.buf)).route.queue.push(e)
		return
	}
	var owner int32
	if cr.standalone {
		if e.op == opGet {
			owner = cr.rt.ReadOwner(0, pos)
		}
	} else {
		owner = cr.rt.ReadOwner(cr.rt.SlotOf(e.key, &cr.buf), pos)
	}
	s := g.socks[0]
	if int(owner) < len(g.byNode) && g.byNode[owner] != nil {
		s = g.byNode[owner]
	}
	s.route.queue.push(e)
}

// setNode records that s sends to node i (its group draws for it).
func (g *group) setNode(i int32, s *sock) {
	if g.lead == nil {
		return
	}
	for int(i) >= len(g.byNode) {
		g.byNode = append(g.byNode, nil)
	}
	g.byNode[i] = s
	g.stale = true
}

// elemQueue is a socket's queue of the elements its group drew for it, in
// order: a ring that doubles when full.
type elemQueue struct {
	buf     []element
	head, n int
}

func (q *elemQueue) push(e element) {
	if q.n == len(q.buf) {
		buf := make([]element, max(2*len(q.buf), 64))
		for i := range q.n {
			buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

func (q *elemQueue) pop() element {
	e := q.buf[q.head]
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return e
}

// first is the position of the oldest element queued; the queue holds one.
func (q *elemQueue) first() uint64 { return q.buf[q.head].pos }

// maxScan bounds the elements a socket draws in one look for one of its
// own: a master that lost every slot still lets the loop go on.
const maxScan = 1 << 12

// scan draws elements until one of the socket's own (peeked), the end of
// the phase's share (exhausted), or maxScan elements.
func (c *conn) scan() bool {
	cr := c.route
	g := cr.grp
	if g.lead != nil {
		for range maxScan {
			if cr.queue.n > 0 {
				cr.peek, cr.peeked = cr.queue.pop(), true
				return true
			}
			if g.drawn >= g.end {
				cr.exhausted = true
				return false
			}
			g.draw()
		}
		return false
	}
	for range maxScan {
		if cr.scanned >= g.end {
			cr.exhausted = true
			cr.front.Store(math.MaxUint64) // it takes nothing more: no one waits for it
			return false
		}
		pos := cr.scanned
		cr.scanned++
		e, owner := c.drawCmd(pos)
		if pos < g.base || owner != cr.node {
			continue
		}
		e.pos = pos
		cr.peek, cr.peeked = e, true
		cr.front.Store(pos)
		return true
	}
	cr.front.Store(cr.scanned)
	return false
}

// drawCmd draws element pos of a mix's stream: a command, by the mix's
// ratios, and its key, whose master (by the slot of the key's whole
// argument, "user:__key__") is the owner, or for a read that goes to a
// replica one of its replicas; a command without a key goes to the
// masters in turn. A single server's with replicas draws every key of
// the command, keeping them (keys) when the element is the socket's.
func (c *conn) drawCmd(pos uint64) (element, int32) {
	p, cr := c.p, c.route
	ci := c.pickCmd()
	cp := &p.cmds[ci]
	if cp.Tagged {
		return c.drawTagged(pos, ci)
	}
	e := element{op: uint8(ci)}
	if cr.standalone {
		owner := int32(0)
		if cp.Read {
			owner = cr.rt.ReadOwner(0, pos)
		}
		mine := owner == cr.node
		cr.keys = cr.keys[:0]
		for range cp.Draws {
			if k := c.cmdKeys[ci].gen.Next(); mine {
				cr.keys = append(cr.keys, k)
			}
		}
		if len(cr.keys) > 0 {
			e.key = cr.keys[0]
		}
		return e, owner
	}
	if !cp.Keyed {
		return e, int32(pos % uint64(cr.grp.masters))
	}
	e.key = c.cmdKeys[ci].gen.Next()
	cr.buf = append(cr.buf[:0], cp.KeyBefore...)
	cr.buf = append(cr.buf, p.cfg.KeyPrefix...)
	cr.buf = keyspace.AppendKeyDigits(cr.buf, e.key, p.width) // keys past the keyspace too (Insert)
	cr.buf = append(cr.buf, cp.KeyAfter...)
	sl := uint16(keyslot.Of(cr.buf))
	if cp.Read && cr.grp.reads {
		return e, cr.rt.ReadOwner(sl, pos)
	}
	return e, cr.rt.Owner(sl)
}

// replayKeys gives a request the keys its socket drew for it (drawCmd).
type replayKeys struct {
	keys []uint64
	i    int
}

func (k *replayKeys) Key(bool) uint64 {
	v := k.keys[k.i]
	k.i++
	return v
}

// limit is the first position the socket may not take now: the phase's
// end, or in a closed loop window past the group's frontier, the oldest
// position a socket has yet to take.
func (c *conn) limit() uint64 {
	g := c.route.grp
	if g.window == 0 {
		return g.end
	}
	frontier := uint64(math.MaxUint64)
	for _, s := range g.socks {
		if g.lead == nil {
			frontier = min(frontier, s.route.front.Load())
			continue
		}
		switch cr := s.route; {
		case s.done || cr.exhausted:
		case cr.peeked:
			frontier = min(frontier, cr.peek.pos)
		case cr.queue.n > 0:
			frontier = min(frontier, cr.queue.first())
		default:
			frontier = min(frontier, g.drawn)
		}
	}
	if frontier > g.end-min(g.end, g.window) {
		return g.end
	}
	return frontier + g.window
}

// take returns the socket's next element, if it has one below limit.
func (c *conn) take(limit uint64) (element, bool) {
	cr := c.route
	if !cr.peeked && !c.scan() {
		return element{}, false
	}
	if cr.peek.pos >= limit {
		return element{}, false
	}
	cr.peeked = false
	return cr.peek, true
}

// advanced is called once a socket has taken elements: its front moves
// on to what it has drawn, and siblings that wait for it are woken.
func (s *sock) advanced() {
	cr := s.route
	if cr.peeked {
		cr.front.Store(cr.peek.pos)
	} else if !cr.exhausted {
		cr.front.Store(cr.scanned)
	}
	s.wakeSiblings()
}

// wakeSiblings wakes the stalled sockets of the group.
func (s *sock) wakeSiblings() {
	for _, o := range s.route.grp.socks {
		if o != s && o.route.stalled.Load() {
			o.w.stalledWake(o.w != s.w)
		}
	}
}

// beginGroups sets each group's positions for a phase of requests
// requests (0: bounded by time): connection g's share of them, after
// every position a socket of the group has drawn.
func (r *runner) beginGroups(requests int64) {
	C := int64(r.cfg.Connections)
	for gi, g := range r.groups {
		if g == nil {
			continue
		}
		base := g.drawn
		for _, s := range g.socks {
			base = max(base, s.route.scanned)
		}
		g.base, g.end = base, math.MaxUint64
		if requests > 0 {
			share := requests / C
			if int64(gi) < requests%C {
				share++
			}
			g.end = base + uint64(share)
		}
		g.window = 0
		if r.cfg.Rate == 0 {
			g.window = 2 * uint64(r.cfg.Pipeline) * uint64(len(g.socks))
		}
		for _, s := range g.socks {
			cr := s.route
			cr.queue = elemQueue{buf: cr.queue.buf} // the positions before base are no socket's now
			cr.exhausted = false
			cr.stalled.Store(false)
			if cr.peeked && cr.peek.pos < base {
				cr.peeked = false
			}
			cr.front.Store(base)
		}
	}
}

// resend sends request s again after the error reply msg (a redirect),
// and returns the final raw reply (cluster.Sides.Resend).
func (c *conn) resend(s *slot, msg []byte) ([]byte, error) {
	cr := c.route
	what := c.cmdName(s.op) + " " + c.keyName(s.key)
	slot := cr.rt.SlotOf(s.key, &cr.buf)
	if c.p.cmds != nil && c.p.cmds[s.op].Tagged {
		slot = cr.tag.slot
	}
	return cr.sides.Resend(cr.node, c.requestOf(s), what, slot, msg)
}

// requestOf returns request s again, as build or buildCmds wrote it (in
// cluster mode a mix's command has one key, which s holds; a command
// with {tag} is rebuilt with every key s's).
func (c *conn) requestOf(s *slot) []byte {
	if c.p.cmds == nil {
		return c.appendRequest(nil, s)
	}
	cp := &c.p.cmds[s.op]
	pieces := cp.Pieces
	if s.then {
		pieces = cp.Then
	}
	var keys mix.Keys
	if cp.Tagged {
		keys = c.tagKeysFor(element{key: s.key}, nil)
	}
	req, _ := cp.Append(nil, pieces, keys, s.key)
	return req
}

// appendRequest appends request s as build wrote it.
func (c *conn) appendRequest(dst []byte, s *slot) []byte {
	p := c.p
	if s.op == opSet {
		dst = append(dst, p.setHead...)
		dst = keyspace.AppendDigits(dst, s.key, p.width)
		dst = append(dst, p.setMid...)
		dst = p.appendValue(dst, s.key)
		dst = append(dst, '\r', '\n')
		if p.exMax > 0 {
			dst = p.appendExpiry(dst, s.key)
		}
		return dst
	}
	dst = append(dst, p.getHead...)
	dst = keyspace.AppendDigits(dst, s.key, p.width)
	return append(dst, '\r', '\n')
}

// SetWriter appends the write requests of Config's run in ModeSet, as
// a cluster run's connections build them: the write command, the key,
// its value and, with Config.ExpiryMax, its EX argument.
type SetWriter struct{ c conn }

// NewSetWriter returns the SetWriter of cfg.
func NewSetWriter(cfg Config) *SetWriter { return &SetWriter{conn{p: newPlan(cfg)}} }

// Append appends the write of key number k.
func (w *SetWriter) Append(dst []byte, k uint64) []byte {
	return w.c.appendRequest(dst, &slot{key: k, op: opSet})
}

// dialCluster opens a cluster run's connections: for each of this run's
// connections g, a group of sockets, one to every master (and with
// ReadFromReplicas to every replica), which draw g's stream (the keys,
// kinds and commands of connection g of Connections) and take the
// elements their node serves. A single server with Replicas is dialled
// the same way, as a cluster of one master that serves every slot.
func (r *runner) dialCluster(ctx context.Context) error {
	cfg := r.cfg
	var topo *cluster.Topology
	if cfg.Cluster {
		var err error
		if topo, err = cluster.FetchTopology(ctx, cfg.Seeds(), cfg.Control()); err != nil {
			return err
		}
		if slices.Contains(topo.Owner[:], -1) {
			return errors.New("cluster: some slots are served by no master")
		}
		r.route = cluster.NewRoute(ctx, topo, cfg.KeyPrefix, cfg.Keys())
		r.shards = len(topo.Masters)
	} else {
		topo = standaloneTopology(&cfg)
		r.route = cluster.NewRoute(ctx, topo, cfg.KeyPrefix, keyspace.Spec{}) // no slot is looked up
	}
	// The nodes each group has a socket to: the masters (node m is
	// master m), then the replicas reads go to.
	type node struct {
		idx     int32
		master  int
		replica bool
	}
	var nodes []node
	for m := range topo.Masters {
		nodes = append(nodes, node{idx: int32(m), master: m})
	}
	reads := cfg.ReadsReplicas()
	if reads {
		r.alone = r.route.AddReplicas(topo)
		for m := range topo.Masters {
			for _, ri := range r.route.Replicas(int32(m)) {
				nodes = append(nodes, node{idx: ri, master: m, replica: true})
			}
		}
	}
	S := 0
	for _, nd := range nodes {
		S = max(S, int(nd.idx)+1)
	}
	sides := cfg.Control()
	sides.Timeout = cfg.Timeout
	r.groups = make([]*group, cfg.Connections)
	i := 0 // this segment's groups so far
	for g := cfg.Segment; g < cfg.Connections; g += cfg.Segments {
		grp := &group{masters: len(topo.Masters), reads: reads}
		r.groups[g] = grp
		// A group's sockets share a worker: its draw queues elements on
		// them, and a socket held at the window is pumped again by its
		// worker's loop when a sibling moves on, with no thread to wake
		// (a wake-up per stall across threads doubled the context
		// switches per request at three masters).
		w := r.workers[i%len(r.workers)]
		i++
		for _, nd := range nodes {
			addr := r.route.Addr(nd.idx)
			// A cluster's replica gets READONLY after the handshake, so
			// that it serves reads of its master's slots instead of
			// redirecting them.
			l, err := link.Dial(ctx, addr, cfg.Control(), nd.replica && cfg.Cluster)
			if err != nil {
				if nd.replica {
					return fmt.Errorf("connect to replica %s: %w", addr, err)
				}
				return fmt.Errorf("connect to %s: %w", addr, err)
			}
			if w.nodeHist == nil {
				w.nodeHist = make([]*hdrhistogram.Histogram, S)
				for k := range w.nodeHist {
					w.nodeHist[k] = newHistogram()
				}
			}
			// The socket records into its node's histogram; collect
			// merges them into the total. Its streams are connection g's.
			c := newConn(r.plan, g, cfg.Connections, w.nodeHist[nd.idx])
			c.route = &connRoute{rt: r.route, node: nd.idx, master: nd.master, grp: grp, replica: nd.replica, standalone: !cfg.Cluster, tag: tagState{node: -1}}
			if cfg.Cluster {
				c.route.sides = r.route.NewSides(sides)
			}
			if err := w.add(c, l); err != nil {
				l.Close()
				return err
			}
			s := w.socks[len(w.socks)-1]
			grp.socks = append(grp.socks, s)
			r.conns = append(r.conns, s)
		}
		if r.plan.cmds == nil {
			grp.drawOnce(cfg.Cluster)
		}
	}
	// Threads beyond the groups would idle.
	if n := i; n < len(r.workers) {
		for _, w := range r.workers[n:] {
			w.close()
		}
		r.workers = r.workers[:n]
		r.cfg.Threads = n
	}
	return nil
}

// collectNodes returns each node's share of the phase (a master's, or a
// replica's that reads went to, with its master's slots): its
// connections' counts and the workers' histograms of it, its slots now,
// its redirects (reset for the next phase); and the phase's redirects.
func (r *runner) collectNodes() (nodes []measure.Node, moved, ask int64) {
	states, moved, ask := r.route.EndPhase()
	nodes = make([]measure.Node, len(states))
	for i, st := range states {
		nodes[i] = measure.Node{Addr: st.Addr, Role: RoleMaster, Slots: st.Slots, Moved: st.Moved, Ask: st.Ask, Histogram: newHistogram()}
		if st.Master >= 0 && st.Slots == 0 { // a replica (one that took over slots is a master)
			nodes[i].Role, nodes[i].Slots = RoleReplica, states[st.Master].Slots
		}
		if !r.cfg.Cluster {
			nodes[i].Slots = 0 // a single server has no slots
		}
	}
	for _, w := range r.workers {
		for m, h := range w.nodeHist {
			nodes[m].Histogram.Merge(h)
		}
	}
	for _, s := range r.conns {
		n := &nodes[s.route.node]
		n.Requests += s.Sets + s.Gets + s.others
	}
	return nodes, moved, ask
}

// nodeLost handles the loss of a cluster connection's master (err, its
// I/O error): when another master took over its slots (a replica, within
// Config.Timeout; cluster.Route.Heir), the connection reconnects to it,
// sends its requests in flight again and the run goes on; otherwise the
// run fails naming the node and what the cluster reports.
func (s *sock) nodeLost(err error) error {
	cr := s.route
	lost := cr.rt.Addr(cr.node)
	switch {
	case cr.replica:
		return fmt.Errorf("replica %s lost mid-run: %w", lost, err)
	case cr.standalone:
		return fmt.Errorf("server %s lost mid-run: %w", lost, err)
	}
	heir, herr := cr.rt.Heir(cr.node, s.p.cfg.Control(), s.p.cfg.Timeout)
	if herr == nil {
		if herr = s.reconnect(heir); herr != nil {
			herr = fmt.Errorf("its slots moved to %s: %w", heir, herr)
		}
	}
	if herr != nil {
		if errors.Is(herr, context.Canceled) {
			return herr
		}
		return fmt.Errorf("cluster node %s lost mid-run (%w): %v", lost, err, herr)
	}
	s.Reconnects++
	return nil
}

// reconnect replaces the connection's socket with one to addr and writes
// its requests in flight there again; replies to them from the lost node
// were not all read, so none counts.
func (s *sock) reconnect(addr string) error {
	cfg := s.p.cfg
	l, err := link.Dial(s.route.rt.Context(), addr, cfg.Control(), false)
	if err != nil {
		return err
	}
	if err := s.replace(l); err != nil {
		return err
	}
	s.route.node = s.route.rt.Node(addr)
	s.route.grp.setNode(s.route.node, s)
	mask := len(s.ring) - 1
	for i := s.head; i < s.head+s.inflight; i++ {
		s.wbuf = append(s.wbuf, s.requestOf(&s.ring[i&mask])...)
	}
	return s.flush()
}
