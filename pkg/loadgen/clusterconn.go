package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/measure"
	"golang.org/x/sys/unix"
)

// connRoute is one connection's place in a cluster run: the master it is
// connected to, and its side connections to other nodes.
type connRoute struct {
	rt    *cluster.Route
	node  int32
	sides *cluster.Sides
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
		if cr.rt.Owner(cr.rt.SlotOf(key, &cr.buf)) == cr.node {
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
		if cr.rt.Owner(uint16(keyslot.Of(cr.buf))) == cr.node {
			return key
		}
	}
	return k.gen.Next()
}

// resend sends request s again after the error reply msg (a redirect),
// and returns the final raw reply (cluster.Sides.Resend).
func (c *conn) resend(s *slot, msg []byte) ([]byte, error) {
	cr := c.route
	what := c.cmdName(s.op) + " " + c.keyName(s.key)
	return cr.sides.Resend(cr.node, c.requestOf(s), what, cr.rt.SlotOf(s.key, &cr.buf), msg)
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
	topo, err := cluster.FetchTopology(ctx, seeds, cfg.Control())
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
		o := cfg.Control()
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
	topo, err := cluster.FetchTopology(ctx, seeds, cfg.Control())
	if err != nil {
		return err
	}
	if slices.Contains(topo.Owner[:], -1) {
		return errors.New("cluster: some slots are served by no master")
	}
	r.route = cluster.NewRoute(ctx, topo, cfg.KeyPrefix, cfg.Keyspace)
	r.walks = make([]*keyspace.Gen, cfg.Connections)
	r.shards = len(topo.Masters)
	S := r.shards
	sides := cfg.Control()
	sides.Timeout = cfg.Timeout
	i := 0
	for g := cfg.Segment; g < cfg.Connections; g += cfg.Segments {
		r.walks[g] = keyspace.NewGen(r.cfg.keys(), g, cfg.Connections)
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
			c.route = &connRoute{rt: r.route, node: int32(m), sides: r.route.NewSides(sides)}
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
// its redirects (reset for the next phase); and the phase's redirects.
func (r *runner) collectNodes() (nodes []measure.Node, moved, ask int64) {
	states, moved, ask := r.route.EndPhase()
	nodes = make([]measure.Node, len(states))
	for i, st := range states {
		nodes[i] = measure.Node{Addr: st.Addr, Role: "master", Slots: st.Slots, Moved: st.Moved, Ask: st.Ask, Histogram: newHistogram()}
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
	l, err := dial(s.route.rt.Context(), addr, &cfg)
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
	s.route.node = s.route.rt.Node(addr)
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
		walk := r.walks[g]
		start := walk.Pos()
		share := requests / C
		if int64(g) < requests%C {
			share++
		}
		clear(count)
		for range share {
			count[rt.Owner(rt.SlotOf(walk.Next(), &key))]++
		}
		for _, s := range ss {
			s.keys.SetPos(start)
			s.quota = count[s.route.node]
		}
	}
	return true
}
