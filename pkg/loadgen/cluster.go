package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
	"golang.org/x/sys/unix"
)

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = keyslot.Count

// Redirect handling bounds: a request redirected more often than
// maxRedirects times, or refused with TRYAGAIN or CLUSTERDOWN that often
// (backing off clusterBackoff, doubling, between tries), fails the run.
const (
	maxRedirects   = 16
	clusterBackoff = 10 * time.Millisecond
)

// Topology is a cluster's slot map: its masters and which owns each slot.
type Topology struct {
	// Masters are the masters' addresses, host:port, in slot order.
	Masters []string
	// Owner is the index in Masters of each slot's master; -1 for a slot
	// no master serves.
	Owner [ClusterSlots]int16
	// Replicas is the number of replicas CLUSTER SLOTS lists for each of
	// Masters (the most over its slot ranges).
	Replicas []int
}

// FetchTopology reads the slot map with CLUSTER SLOTS from the first of
// seeds that answers.
func FetchTopology(ctx context.Context, seeds []string, o control.Options) (*Topology, error) {
	if len(seeds) == 0 {
		return nil, errors.New("cluster: no seed address")
	}
	var errs []error
	for _, seed := range seeds {
		t, err := fetchTopology(ctx, seed, o)
		if err == nil {
			return t, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", seed, err))
	}
	return nil, fmt.Errorf("cluster topology: %w", errors.Join(errs...))
}

func fetchTopology(ctx context.Context, addr string, o control.Options) (*Topology, error) {
	raw, err := control.Query(ctx, addr, o, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	return parseClusterSlots(raw, addr)
}

// parseClusterSlots reads a CLUSTER SLOTS reply: an array of [start, end,
// [host, port, ...] of the master, replicas...]. An empty host is seed's.
func parseClusterSlots(b []byte, seed string) (*Topology, error) {
	bad := func(what string) error { return fmt.Errorf("CLUSTER SLOTS: %s", what) }
	r, n, err := resp.ParseReply(b, 0)
	if err != nil {
		return nil, err
	}
	if r.Type == resp.TypeError {
		return nil, fmt.Errorf("CLUSTER SLOTS: %s", r.Data)
	}
	if r.Type != resp.TypeArray || r.Int <= 0 {
		return nil, bad("no slot is served (is cluster mode enabled?)")
	}
	seedHost, _, _ := net.SplitHostPort(seed)
	t := &Topology{}
	for i := range t.Owner {
		t.Owner[i] = -1
	}
	next := func() (resp.Reply, error) {
		r, m, err := resp.ParseReply(b[n:], 0)
		if err == nil && m == 0 {
			err = bad("truncated reply")
		}
		n += m
		return r, err
	}
	for range r.Int {
		e, err := next()
		if err != nil {
			return nil, err
		}
		if e.Type != resp.TypeArray || e.Int < 3 {
			return nil, bad("malformed entry")
		}
		lo, err1 := next()
		hi, err2 := next()
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if lo.Type != resp.TypeInt || hi.Type != resp.TypeInt || lo.Int < 0 || hi.Int < lo.Int || hi.Int >= ClusterSlots {
			return nil, bad("malformed slot range")
		}
		master := ""
		for k := range e.Int - 2 {
			nd, err := next()
			if err != nil {
				return nil, err
			}
			if nd.Type != resp.TypeArray || nd.Int < 2 {
				return nil, bad("malformed node")
			}
			host, err1 := next()
			port, err2 := next()
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			for range nd.Int - 2 {
				m, err := resp.SkipReply(b[n:], 0)
				if err != nil || m == 0 {
					return nil, bad("malformed node")
				}
				n += m
			}
			if k == 0 {
				h := string(host.Data)
				if h == "" || h == "?" {
					h = seedHost
				}
				master = net.JoinHostPort(h, strconv.FormatInt(port.Int, 10))
			}
		}
		idx := slices.Index(t.Masters, master)
		if idx < 0 {
			idx = len(t.Masters)
			t.Masters = append(t.Masters, master)
			t.Replicas = append(t.Replicas, 0)
		}
		t.Replicas[idx] = max(t.Replicas[idx], int(e.Int-3))
		for s := lo.Int; s <= hi.Int; s++ {
			t.Owner[s] = int16(idx)
		}
	}
	return t, nil
}

// route is a cluster run's shared slot map and redirect counts. Slots
// move during a run: a MOVED reply updates the map for every connection.
type route struct {
	mu    sync.Mutex
	addrs []string // node addresses; an index never changes
	owner [ClusterSlots]atomic.Int32
	moved atomic.Int64
	ask   atomic.Int64
	sides []*control.Conn // every side connection, closed with the run
	// ctx is the running phase's, for what a redirect or a lost node
	// makes the event loop do outside it: dial, resend, wait for a
	// failover (set by runner.phase).
	ctx context.Context
	// walks are each connection's position in its stripe, by global
	// index, for exactQuotas; nil entries for other segments'.
	walks []*keyspace.Gen
	// slots caches the slot of each key index of a keyspace of at most
	// maxSlotCache keys: with it a connection's choice of its master's
	// next key costs a table look-up per key drawn instead of naming the
	// key and hashing it, which made the client spend a quarter more CPU
	// per request than redis-benchmark --cluster (bench/cluster.sh).
	slots []uint16
	// prefix and keyspace name the keys (Config.KeyPrefix, Keyspace).
	prefix   string
	keyspace int64
	// redirects counts, under mu, the MOVED and ASK replies of each node
	// (by index) this phase.
	redirects [][2]int64
}

// maxSlotCache bounds the keyspace whose slots route caches (2 bytes
// per key).
const maxSlotCache = 1 << 22

// slotOf returns the slot of key index key; buf is scratch space.
func (rt *route) slotOf(key uint64, buf *[]byte) uint16 {
	if rt.slots != nil {
		return rt.slots[key]
	}
	*buf = keyspace.AppendKey((*buf)[:0], rt.prefix, rt.keyspace, int64(key))
	return uint16(keyslot.Of(*buf))
}

// cacheSlots fills rt.slots when the keyspace is small enough.
func (rt *route) cacheSlots() {
	if rt.keyspace > maxSlotCache {
		return
	}
	slots := make([]uint16, rt.keyspace)
	var buf []byte
	for i := range slots {
		buf = keyspace.AppendKey(buf[:0], rt.prefix, rt.keyspace, int64(i))
		slots[i] = uint16(keyslot.Of(buf))
	}
	rt.slots = slots
}

// redirected counts a MOVED (or, with ask, an ASK) reply of node i.
func (rt *route) redirected(i int32, ask bool) {
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

func newRoute(t *Topology) *route {
	rt := &route{addrs: slices.Clone(t.Masters)}
	for i, o := range t.Owner {
		rt.owner[i].Store(int32(o))
	}
	return rt
}

// node returns the index of addr, adding it when new.
func (rt *route) node(addr string) int32 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	i := slices.Index(rt.addrs, addr)
	if i < 0 {
		i = len(rt.addrs)
		rt.addrs = append(rt.addrs, addr)
	}
	return int32(i)
}

func (rt *route) addr(i int32) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if i < 0 || int(i) >= len(rt.addrs) {
		return ""
	}
	return rt.addrs[i]
}

func (rt *route) close() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, cl := range rt.sides {
		cl.Close()
	}
	rt.sides = nil
}

// connRoute is one connection's place in a cluster run: the master it is
// connected to, and its side connections to other nodes.
type connRoute struct {
	rt    *route
	node  int32
	sides map[string]*control.Conn
	buf   []byte
}

// maxSkip bounds how many keys of other masters a connection skips
// before taking one anyway (and being redirected): a master that lost all
// its slots still makes progress.
const maxSkip = 1 << 12

// nextKey returns the connection's next key that its master serves.
func (c *conn) nextKey() uint64 {
	if c.route == nil {
		return c.keys.Next()
	}
	cr := c.route
	for range maxSkip {
		key := c.keys.Next()
		if cr.rt.owner[cr.rt.slotOf(key, &cr.buf)].Load() == cr.node {
			return key
		}
	}
	return c.keys.Next()
}

// nextCmdKey returns the next first key of a command of a mix that the
// connection's master serves, as nextKey does for set/get: the key
// argument may hold more than the key ("user:__key__"), and the slot is
// that of the whole argument.
func (c *conn) nextCmdKey(k *cmdKeys) uint64 {
	cr := c.route
	for range maxSkip {
		key := k.gen.Next()
		cr.buf = append(cr.buf[:0], k.cp.KeyBefore...)
		cr.buf = append(cr.buf, c.p.cfg.KeyPrefix...)
		cr.buf = keyspace.AppendKeyDigits(cr.buf, key, keyspace.KeyWidth(c.p.cfg.Keyspace)) // keys past the keyspace too (Insert)
		cr.buf = append(cr.buf, k.cp.KeyAfter...)
		if cr.rt.owner[keyslot.Of(cr.buf)].Load() == cr.node {
			return key
		}
	}
	return k.gen.Next()
}

// isRedirect reports whether an error reply's first word asks for the
// request to be sent again.
func isRedirect(word []byte) bool {
	switch string(word) {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN":
		return true
	}
	return false
}

// resend sends request s again after the error reply msg (MOVED, ASK,
// TRYAGAIN or CLUSTERDOWN), on a blocking side connection, following
// further redirects, and returns the final raw reply. Redirects are rare
// (a slot being moved), so their cost stays off the epoll loop's path; the
// request's latency includes them.
func (c *conn) resend(s *slot, msg []byte) ([]byte, error) {
	cr := c.route
	req := c.requestOf(s)
	key := c.keyName(s.key)
	backoff := clusterBackoff
	from := cr.node // the node that replied msg
	for try := 0; ; try++ {
		if try >= maxRedirects {
			return nil, fmt.Errorf("%s %s: still refused after %d tries: %s", c.cmdName(s.op), key, try, msg)
		}
		word, rest, _ := bytes.Cut(msg, []byte(" "))
		var addr string
		asking := false
		switch string(word) {
		case "MOVED", "ASK":
			slotStr, a, ok := bytes.Cut(rest, []byte(" "))
			slot, err := strconv.Atoi(string(slotStr))
			if !ok || err != nil || slot < 0 || slot >= ClusterSlots {
				return nil, fmt.Errorf("%s %s: malformed redirect %q", c.cmdName(s.op), key, msg)
			}
			addr = string(a)
			cr.rt.redirected(from, word[0] == 'A')
			if word[0] == 'M' {
				cr.rt.owner[slot].Store(cr.rt.node(addr))
			} else {
				asking = true
			}
		default: // TRYAGAIN, CLUSTERDOWN
			select {
			case <-cr.rt.ctx.Done():
				return nil, cr.rt.ctx.Err()
			case <-time.After(backoff):
			}
			backoff *= 2
			addr = cr.rt.addr(cr.rt.owner[keyslot.Of([]byte(key))].Load())
			if addr == "" {
				addr = cr.rt.addr(cr.node)
			}
		}
		cl, err := c.side(addr)
		if err != nil {
			return nil, err
		}
		from = cr.rt.node(addr)
		out := req
		if asking {
			out = append(resp.AppendCommandString(nil, "ASKING"), req...)
		}
		replies, err := cl.Raw(cr.rt.ctx, out)
		var reply []byte
		if err == nil {
			reply = replies[len(replies)-1]
		}
		if err != nil {
			return nil, fmt.Errorf("resend %s %s to %s: %w", c.cmdName(s.op), key, addr, err)
		}
		if len(reply) > 0 && reply[0] == '-' {
			m := bytes.TrimRight(reply[1:], "\r\n")
			w, _, _ := bytes.Cut(m, []byte(" "))
			if isRedirect(w) {
				msg = m
				continue
			}
		}
		return reply, nil
	}
}

// side returns the connection's side connection to addr, dialing it
// the first time.
func (c *conn) side(addr string) (*control.Conn, error) {
	cr := c.route
	if cl := cr.sides[addr]; cl != nil {
		return cl, nil
	}
	o := c.p.cfg.control()
	o.Timeout = c.p.cfg.Timeout
	cl, err := control.Dial(cr.rt.ctx, addr, o)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	if cr.sides == nil {
		cr.sides = make(map[string]*control.Conn)
	}
	cr.sides[addr] = cl
	cr.rt.mu.Lock()
	cr.rt.sides = append(cr.rt.sides, cl)
	cr.rt.mu.Unlock()
	return cl, nil
}

// requestOf returns request s again, as build or buildCmds wrote it (in
// cluster mode a mix's command has one key, which s holds).
func (c *conn) requestOf(s *slot) []byte {
	if c.p.cmds == nil {
		return c.appendRequest(nil, s)
	}
	cp := &c.p.cmds[s.op]
	pieces := cp.Pieces
	if s.then {
		pieces = cp.Then
	}
	req, _ := cp.Append(nil, pieces, nil, s.key)
	return req
}

// appendRequest appends request s as build wrote it.
func (c *conn) appendRequest(dst []byte, s *slot) []byte {
	p := c.p
	if s.op == opSet {
		dst = append(dst, p.setHead...)
		dst = keyspace.AppendDigits(dst, s.key, p.width)
		dst = append(dst, p.setMid...)
		dst = keyspace.AppendValueFrom(dst, p.block, p.seed, s.key, p.vsize)
		return append(dst, '\r', '\n')
	}
	dst = append(dst, p.getHead...)
	dst = keyspace.AppendDigits(dst, s.key, p.width)
	return append(dst, '\r', '\n')
}

// prefillCluster is Prefill for a cluster: each key is written with the
// write command to its slot's master (an MSET may only name keys of one
// slot), cfg.Pipeline keys per round trip to a master, and the masters'
// DBSIZE must sum to 0 before and to the keyspace after.
func prefillCluster(ctx context.Context, cfg Config) (Result, error) {
	res := Result{Config: cfg}
	res.Histogram, res.Errors = newHistogram(), map[string]int64{}
	seeds := cfg.ClusterSeeds
	if len(seeds) == 0 {
		seeds = []string{cfg.Addr}
	}
	topo, err := FetchTopology(ctx, seeds, cfg.control())
	if err != nil {
		return res, fmt.Errorf("prefill: %w", err)
	}
	res.Shards = len(topo.Masters)
	nodes := make([]*control.Conn, len(topo.Masters))
	defer func() {
		for _, cl := range nodes {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	dbsize := func() (int64, error) {
		var sum int64
		for i, cl := range nodes {
			v, err := cl.Do(ctx, "DBSIZE")
			if err != nil {
				return 0, fmt.Errorf("on %s: %w", topo.Masters[i], err)
			}
			n, ok := v.(int64)
			if !ok {
				return 0, fmt.Errorf("DBSIZE on %s: got %v", topo.Masters[i], v)
			}
			sum += n
		}
		return sum, nil
	}
	for i, addr := range topo.Masters {
		o := cfg.control()
		o.Timeout = cfg.Timeout
		if nodes[i], err = control.Dial(ctx, addr, o); err != nil {
			return res, fmt.Errorf("prefill: connect to %s: %w", addr, err)
		}
	}
	lo, hi := PrefillRange(cfg)
	checked := cfg.Segments <= 1
	if checked {
		before, err := dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: %w", err)
		}
		if before != 0 {
			return res, fmt.Errorf("prefill: %w: the masters' DBSIZE sums to %d before the prefill, want 0", ErrNotEmpty, before)
		}
	}
	p := newPlan(cfg)
	c := &conn{p: p}
	bufs := make([][]byte, len(nodes))
	pending := make([]int, len(nodes))
	start := time.Now()
	send := func(i int) error {
		if pending[i] == 0 {
			return nil
		}
		replies, err := nodes[i].Raw(ctx, bufs[i])
		if err != nil {
			return fmt.Errorf("prefill: %s: %w", topo.Masters[i], err)
		}
		for _, raw := range replies {
			res.Requests++
			res.Sent++
			res.Sets++
			if len(raw) > 0 && raw[0] == '-' {
				msg := string(bytes.TrimRight(raw[1:], "\r\n"))
				word, _, _ := strings.Cut(msg, " ")
				if word == "EXIST" {
					res.Conflicts++
					continue
				}
				res.Errors[word]++
				if !cfg.ContinueOnError {
					return fmt.Errorf("prefill: %w", &ReplyError{Command: cfg.SetCmd, Key: "(on " + topo.Masters[i] + ")", Msg: msg})
				}
			}
		}
		bufs[i], pending[i] = bufs[i][:0], 0
		return nil
	}
	var key []byte
	for k := lo; k < hi; k++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		key = keyspace.AppendKey(key[:0], cfg.KeyPrefix, cfg.Keyspace, k)
		i := int(topo.Owner[keyslot.Of(key)])
		bufs[i] = c.appendRequest(bufs[i], &slot{key: uint64(k), op: opSet})
		if pending[i]++; pending[i] >= cfg.Pipeline {
			if err := send(i); err != nil {
				return res, err
			}
		}
	}
	for i := range nodes {
		if err := send(i); err != nil {
			return res, err
		}
	}
	res.Elapsed = time.Since(start)
	res.Finish()
	if cfg.Progress != nil {
		cfg.Progress(Progress{Phase: "prefill", Done: res.Requests, Total: hi - lo, Elapsed: res.Elapsed, Final: true})
	}
	if checked {
		after, err := dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: %w", err)
		}
		if after != cfg.Keyspace {
			return res, fmt.Errorf("prefill: the masters' DBSIZE sums to %d after writing %d keys, want %d", after, res.Sets, cfg.Keyspace)
		}
	}
	return res, nil
}

// dialCluster opens a cluster run's connections: for each of this run's
// connections g, one to every master, which takes the keys of g's stripe
// that its master serves. The quota, schedule and random streams are
// those of connection g*shards+m of connections*shards.
func (r *runner) dialCluster(ctx context.Context) error {
	cfg := r.cfg
	seeds := cfg.ClusterSeeds
	if len(seeds) == 0 {
		seeds = []string{cfg.Addr}
	}
	topo, err := FetchTopology(ctx, seeds, cfg.control())
	if err != nil {
		return err
	}
	if slices.Contains(topo.Owner[:], -1) {
		return errors.New("cluster: some slots are served by no master")
	}
	r.route = newRoute(topo)
	r.route.walks = make([]*keyspace.Gen, cfg.Connections)
	r.route.prefix, r.route.keyspace = cfg.KeyPrefix, cfg.Keyspace
	r.route.cacheSlots()
	r.shards = len(topo.Masters)
	S := r.shards
	i := 0
	for g := cfg.Segment; g < cfg.Connections; g += cfg.Segments {
		r.route.walks[g] = keyspace.NewGen(r.cfg.keys(), g, cfg.Connections)
		for m, addr := range topo.Masters {
			l, err := dial(ctx, addr, &cfg)
			if err != nil {
				return fmt.Errorf("connect to %s: %w", addr, err)
			}
			w := r.workers[i%len(r.workers)]
			i++
			if w.nodeHist == nil {
				w.nodeHist = make([]*hdrhistogram.Histogram, S)
				for k := range w.nodeHist {
					w.nodeHist[k] = newHistogram()
				}
			}
			// The connection records into its master's histogram; collect
			// merges them into the total.
			c := newConn(r.plan, g*S+m, cfg.Connections*S, w.nodeHist[m])
			c.keys = keyspace.NewGen(r.cfg.keys(), g, cfg.Connections)
			c.route = &connRoute{rt: r.route, node: int32(m)}
			if err := w.add(c, l); err != nil {
				l.close()
				return err
			}
			r.conns = append(r.conns, w.socks[len(w.socks)-1])
		}
	}
	// Threads beyond the sockets would idle.
	if n := len(r.conns); n < len(r.workers) {
		for _, w := range r.workers[n:] {
			w.close()
		}
		r.workers = r.workers[:n]
		r.cfg.Threads = n
	}
	return nil
}

// collectNodes returns each master's share of the phase: its
// connections' counts and the workers' histograms of it, its slots now,
// its redirects (reset for the next phase).
func (r *runner) collectNodes() []measure.Node {
	rt := r.route
	rt.mu.Lock()
	addrs := slices.Clone(rt.addrs)
	redirects := rt.redirects
	rt.redirects = nil
	rt.mu.Unlock()
	nodes := make([]measure.Node, len(addrs))
	for i, a := range addrs {
		nodes[i] = measure.Node{Addr: a, Role: "master", Histogram: newHistogram()}
		if i < len(redirects) {
			nodes[i].Moved, nodes[i].Ask = redirects[i][0], redirects[i][1]
		}
	}
	for s := range rt.owner {
		if o := rt.owner[s].Load(); o >= 0 && int(o) < len(nodes) {
			nodes[o].Slots++
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
	return nodes
}

// failoverPoll is how often a lost master's slots are looked up while a
// replica may be taking them over.
const failoverPoll = 100 * time.Millisecond

// nodeLost handles the loss of a cluster connection's master (err, its
// I/O error): the slot map is read again (CLUSTER SLOTS) from the other
// nodes of the run. When another master serves the lost node's slots (a
// replica took over; a master with replicas gets Config.Timeout for
// that), the connection reconnects to it, sends its requests in flight
// again and the run goes on; otherwise the run fails naming the node and
// what the cluster reports.
func (s *sock) nodeLost(err error) error {
	cr := s.route
	rt := cr.rt
	lost := rt.addr(cr.node)
	fail := func(why string, args ...any) error {
		return fmt.Errorf("cluster node %s lost mid-run (%w): %s", lost, err, fmt.Sprintf(why, args...))
	}
	rt.mu.Lock()
	var seeds []string
	for _, a := range rt.addrs {
		if a != lost {
			seeds = append(seeds, a)
		}
	}
	rt.mu.Unlock()
	cfg := s.p.cfg
	deadline := time.Now().Add(cfg.Timeout)
	for {
		topo, terr := FetchTopology(rt.ctx, seeds, cfg.control())
		if terr != nil {
			return fail("no other node gives the slot map: %v", terr)
		}
		heir, slots, reps := -1, 0, 0
		for sl, o := range topo.Owner {
			if rt.owner[sl].Load() != cr.node {
				continue
			}
			slots++
			if o >= 0 && topo.Masters[o] != lost {
				heir = int(o)
			} else if o >= 0 {
				reps = topo.Replicas[o]
			}
		}
		switch {
		case slots == 0:
			return fail("it served no slot")
		case heir >= 0:
			for sl, o := range topo.Owner {
				if o >= 0 {
					rt.owner[sl].Store(rt.node(topo.Masters[o]))
				}
			}
			if rerr := s.reconnect(topo.Masters[heir]); rerr != nil {
				return fail("its slots moved to %s: %v", topo.Masters[heir], rerr)
			}
			return nil
		case reps == 0:
			return fail("no other master serves its %d slots (CLUSTER SLOTS), and it has no replica to take them over", slots)
		case time.Now().After(deadline):
			return fail("no replica took over its %d slots within %v", slots, cfg.Timeout)
		}
		select {
		case <-rt.ctx.Done():
			return rt.ctx.Err()
		case <-time.After(failoverPoll):
		}
	}
}

// reconnect replaces the connection's socket with one to addr and writes
// its requests in flight there again; replies to them from the lost node
// were not all read, so none counts.
func (s *sock) reconnect(addr string) error {
	cfg := s.p.cfg
	l, err := dial(s.route.rt.ctx, addr, &cfg)
	if err != nil {
		return err
	}
	_ = unix.EpollCtl(s.w.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
	unix.Close(s.fd)
	s.fd, s.tls = l.fd, l.tls
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: s.idx}
	if err := unix.EpollCtl(s.w.epfd, unix.EPOLL_CTL_ADD, l.fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	s.wantOut, s.muted = false, false
	s.route.node = s.route.rt.node(addr)
	s.r, s.n = 0, 0
	s.wbuf, s.wsegs, s.woff = s.wbuf[:0], s.wsegs[:0], 0
	mask := len(s.ring) - 1
	for i := s.head; i < s.head+s.inflight; i++ {
		s.wbuf = append(s.wbuf, s.requestOf(&s.ring[i&mask])...)
	}
	return s.flush()
}

// exactQuotas makes a phase of requests requests in the sequential or
// permutation order (and no command mix) take each position of the key
// order exactly once, as without a cluster: connection g walks its share
// of the phase's positions of its stripe, and gives each of its sockets
// the count of those whose key its master serves, starting it at the
// walk's first position. nextKey then takes exactly those keys, so a
// ModeSet run of Keyspace requests writes every key once (while the slot
// map holds). It reports whether it set the quotas.
func (r *runner) exactQuotas(requests int64) bool {
	cfg := r.cfg
	if r.route == nil || requests <= 0 || r.plan.cmds != nil ||
		(cfg.KeyPattern != keyspace.Sequential && cfg.KeyPattern != keyspace.Permutation) {
		return false
	}
	rt, S, C := r.route, r.shards, int64(cfg.Connections)
	socks := make(map[int][]*sock)
	for _, s := range r.conns {
		socks[s.id/S] = append(socks[s.id/S], s)
	}
	count := make(map[int32]int64)
	var key []byte
	for g, ss := range socks {
		walk := rt.walks[g]
		start := walk.Pos()
		share := requests / C
		if int64(g) < requests%C {
			share++
		}
		clear(count)
		for range share {
			count[rt.owner[rt.slotOf(walk.Next(), &key)].Load()]++
		}
		for _, s := range ss {
			s.keys.SetPos(start)
			s.quota = count[s.route.node]
		}
	}
	return true
}
