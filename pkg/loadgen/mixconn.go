package loadgen

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
)

// cmdCount is what a connection counts per command.
type cmdCount struct{ requests, errors int64 }

// newCmdKeys returns a connection's key sequences, one per command.
func newCmdKeys(p *plan, id, conns int) []*keyspace.Gen {
	g := make([]*keyspace.Gen, len(p.cmds))
	for i := range p.cmds {
		g[i] = keyspace.NewGen(p.cmds[i].Keys, id, conns)
		g[i].RankBy(p.cfg.Seed) // one ranking for the whole mix
	}
	keyspace.ShareInserts(g) // one insert count per connection
	return g
}

// cmdKeys draws the keys of one command's requests on a connection, from
// its sequence (a cluster socket draws a request's one key itself, drawCmd).
type cmdKeys struct {
	gen *keyspace.Gen
}

func (k *cmdKeys) Key(bool) uint64 { return k.gen.Next() }

// initMix sets up a connection of a command mix: its key sequences, and
// for a mix with dependent commands their queue and a ring with room for
// them (a batch, its dependents and the next batch built).
func (c *conn) initMix(id, conns int) {
	gens := newCmdKeys(c.p, id, conns)
	c.cmdKeys = make([]cmdKeys, len(gens))
	for i, g := range gens {
		c.cmdKeys[i] = cmdKeys{gen: g}
	}
	for _, cp := range c.p.cmds {
		if cp.Then != nil {
			c.deps = &depQueue{}
			c.ring = make([]slot, 2*len(c.ring))
			return
		}
	}
}

// newCmdHists returns a worker's per-command histograms: none for a
// single command, whose histogram is the worker's.
func newCmdHists(p *plan) []*hdrhistogram.Histogram {
	if len(p.cmds) < 2 {
		return nil
	}
	h := make([]*hdrhistogram.Histogram, len(p.cmds))
	for i := range h {
		h[i] = newHistogram()
	}
	return h
}

// buildCmds is build for a command mix.
func (c *conn) buildCmds(dst []byte, n int, t int64) []byte {
	p := c.p
	mask := len(c.ring) - 1
	i := c.head + c.inflight + c.pre
	if c.route != nil { // a cluster socket: its elements of the group's stream
		limit := c.limit()
		built := 0
		for ; built < n; built++ {
			e, ok := c.take(limit)
			if !ok {
				break
			}
			cp := &p.cmds[e.op]
			if cr := c.route; cr.standalone { // every key drawn for it
				cr.replay = replayKeys{keys: cr.keys}
				dst, e.key = cp.Append(dst, cp.Pieces, &cr.replay, 0)
			} else if cp.Tagged {
				dst, _ = cp.Append(dst, cp.Pieces, c.tagKeysFor(e, c.tagExtra(e.op)), e.key)
			} else {
				dst, _ = cp.Append(dst, cp.Pieces, nil, e.key)
			}
			c.ring[i&mask] = slot{key: e.key, t: t, op: e.op}
			i++
		}
		c.pre += built
		return dst
	}
	for range n {
		ci := len(p.cmds) - 1 // the WAIT, when one is due
		if c.waitDue {
			c.waitDue = false
		} else {
			ci = c.pickCmd()
		}
		cp := &p.cmds[ci]
		var first uint64
		dst, first = cp.Append(dst, cp.Pieces, &c.cmdKeys[ci], 0)
		c.ring[i&mask] = slot{key: first, t: t, op: uint8(ci)}
		i++
		if w := &p.cfg.Wait; w.Enabled() && !cp.Read && !cp.Wait {
			c.writes++
			c.waitDue = w.Due(c.writes)
		}
	}
	c.pre += n
	return dst
}

// pickCmd draws the command of the next request by the mix's ratios.
func (c *conn) pickCmd() int {
	p := c.p
	ci := 0
	if len(p.cmds) > 1 {
		x := c.ops.Below(p.mixSum)
		for x >= p.mix[ci] {
			ci++
		}
	}
	return ci
}

// depQueue holds a connection's dependent requests (Command.Then) whose
// predecessors' replies have arrived, to go out with its next write.
type depQueue struct {
	buf   []byte
	slots []slot
}

// depsQueued reports whether dependent requests wait to be sent.
func (c *conn) depsQueued() bool { return c.deps != nil && len(c.deps.slots) > 0 }

// sendDeps appends the queued dependent requests to dst and puts them in
// flight after those in flight, each keeping its operation's start time.
// No built request may be waiting (pre == 0). It returns how many.
func (c *conn) sendDeps(dst []byte) ([]byte, int) {
	if !c.depsQueued() {
		return dst, 0
	}
	q := c.deps
	mask := len(c.ring) - 1
	for _, s := range q.slots {
		c.ring[(c.head+c.inflight)&mask] = s
		c.inflight++
	}
	n := len(q.slots)
	c.Sent += int64(n)
	dst = append(dst, q.buf...)
	q.buf, q.slots = q.buf[:0], q.slots[:0]
	return dst, n
}

// consumeCmds is consume for a command mix: any reply but an error is
// counted as it comes, and checked where it is known (cmdPlan.verify).
func (c *conn) consumeCmds(b []byte, now int64) (int, error) {
	p := c.p
	mask := len(c.ring) - 1
	total := len(b)
	if c.cmd == nil {
		c.cmd = make([]cmdCount, len(p.cmds))
	}
	var err error
	for c.inflight > 0 && len(b) > 0 {
		s := &c.ring[c.head&mask]
		cp := &p.cmds[s.op]
		var n int
		isErr := b[0] == '-' || b[0] == resp.TypeBlobError
		switch {
		case len(b) >= 5 && string(b[:5]) == "+OK\r\n":
			n = 5
		case b[0] == resp.TypePush:
			// Out of band, not the reply of the request at the head.
			if n, err = c.skipPush(b); n == 0 {
				break
			}
			b = b[n:]
			continue
		case isErr:
			n, isErr, err = c.cmdError(b, s)
		case cp.Verify && p.verify && !s.then:
			n, err = c.verifyRead(b, s)
		case cp.Step != 0 && p.verify:
			n, err = c.verifyCounter(b, s)
		case cp.Wait:
			n, err = c.waitReply(b)
		default:
			n, err = resp.SkipReply(b, resp.DefaultMaxBulkLen)
			if err != nil {
				err = fmt.Errorf("connection %d: %w", c.id, err)
			}
		}
		if n == 0 {
			break
		}
		b = b[n:]
		c.others++
		c.head = (c.head + 1) & mask
		c.inflight--
		if cp.Then != nil && !s.then && !isErr {
			// The read of a read-modify-write: its write goes next.
			q := c.deps
			q.buf, _ = cp.Append(q.buf, cp.Then, nil, s.key)
			q.slots = append(q.slots, slot{key: s.key, t: s.t, op: s.op, then: true})
		} else {
			lat := now - s.t
			if lat != c.runV {
				c.flushLatency()
				c.runV = lat
			}
			c.runN++
			if c.cmdHist != nil {
				_ = c.cmdHist[s.op].RecordValue(min(max(lat, histMin), histMax))
			}
			c.cmd[s.op].requests++
			if iv := c.iv; iv != nil && int(s.op) < len(iv.Cmd) {
				_ = iv.Cmd[s.op].Hist.RecordValue(min(max(lat, histMin), histMax))
				iv.Cmd[s.op].Requests++
			}
		}
		if err != nil {
			break
		}
	}
	c.flushLatency()
	if err == nil && len(b) > 0 && b[0] == resp.TypePush {
		var m int
		m, err = c.skipPushes(b)
		b = b[m:]
	}
	return total - len(b), err
}

// waitReply counts the reply to a WAIT: acknowledged by the replicas
// asked for, or by fewer within the timeout.
func (c *conn) waitReply(b []byte) (int, error) {
	r, n, err := c.parseReply(b)
	if n == 0 || err != nil {
		return 0, err
	}
	switch {
	case r.Type != resp.TypeInt:
		return n, fmt.Errorf("connection %d: WAIT answered %s, want an integer", c.id, quote(b[:n]))
	case r.Int >= int64(c.p.cfg.Wait.Replicas):
		c.WaitAcked++
	default:
		c.WaitShort++
	}
	return n, nil
}

// verifyRead checks the reply to a read of a known value: null is a miss,
// anything but the value of the request's key a verify failure.
func (c *conn) verifyRead(b []byte, s *slot) (int, error) {
	r, n, err := c.parseReply(b)
	if n == 0 || err != nil {
		return 0, err
	}
	cp := &c.p.cmds[s.op]
	switch {
	case r.IsNull() && r.Type != resp.TypeArray:
		c.Misses++
	case r.Type != resp.TypeBulk || !cp.Values.Matches(r.Data, s.key):
		c.VerifyFailures++
		if len(c.warnings) < maxWarnings {
			want := cp.Values.Append(nil, s.key)
			key := "key index " + strconv.FormatUint(s.key, 10)
			if args := c.p.cfg.Commands[s.op].Args; args[1] == mix.PlaceholderKey {
				key = string(keyspace.AppendKeyDigits([]byte(c.p.cfg.KeyPrefix), s.key, c.p.width))
			}
			c.warn(fmt.Errorf("verify: %s %s: got %s, want %s", cp.Name, key, quote(b[:n]), quote(want)))
		}
	}
	return n, nil
}

// cmdError counts an error reply to a command of a mix, and returns the
// error that ends the run unless Config.ContinueOnError.
//
// In cluster mode a redirect (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) is
// followed (resend) and the final reply taken as the request's: failed
// then says whether it is an error after all.
func (c *conn) cmdError(b []byte, s *slot) (n int, failed bool, err error) {
	r, n, err := c.parseReply(b)
	if n == 0 || err != nil {
		return 0, true, err
	}
	word := r.Data
	if i := bytes.IndexByte(word, ' '); i >= 0 {
		word = word[:i]
	}
	if c.route != nil && c.route.sides != nil && cluster.IsRedirect(word) {
		reply, err := c.resend(s, r.Data)
		if err != nil {
			return n, true, fmt.Errorf("connection %d: %w", c.id, err)
		}
		cp := &c.p.cmds[s.op]
		switch {
		case len(reply) > 0 && (reply[0] == '-' || reply[0] == resp.TypeBlobError):
			_, _, err = c.cmdError(reply, s)
			return n, true, err
		case cp.Verify && c.p.verify && !s.then:
			_, err = c.verifyRead(reply, s)
		case cp.Step != 0 && c.p.verify:
			_, err = c.verifyCounter(reply, s)
		}
		return n, false, err
	}
	if c.errors == nil {
		c.errors = map[string]int64{}
	}
	c.errors[string(word)]++
	c.cmd[s.op].errors++
	if iv := c.iv; iv != nil {
		iv.Errors++
		if int(s.op) < len(iv.Cmd) {
			iv.Cmd[s.op].Errors++
		}
	}
	if !c.p.cfg.ContinueOnError {
		return n, true, &ReplyError{Command: c.p.cmds[s.op].Text, Msg: string(r.Data)}
	}
	return n, true, nil
}

// commandResults sums the connections' per-command counts and the
// workers' per-command histograms of a finished phase.
func (r *runner) commandResults(res *measure.Result) []measure.Command {
	cmds := r.plan.cmds
	if len(cmds) == 0 {
		return nil
	}
	out := make([]measure.Command, len(cmds))
	for i, cp := range cmds {
		out[i] = measure.Command{Name: cp.Name, Args: cp.Text, Histogram: newHistogram()}
		if len(cmds) == 1 {
			out[i].Histogram.Merge(res.Histogram)
		} else {
			for _, w := range r.workers {
				out[i].Histogram.Merge(w.cmdHist[i])
			}
		}
	}
	for _, s := range r.conns {
		for i, n := range s.cmd {
			out[i].Requests += n.requests
			out[i].Errors += n.errors
		}
	}
	return out
}

// verifyCounter checks the reply to a counter command (cmdPlan.step): an
// integer, the previous reply for the same key plus the step.
func (c *conn) verifyCounter(b []byte, s *slot) (int, error) {
	r, n, err := c.parseReply(b)
	if n == 0 || err != nil {
		return 0, err
	}
	cp := &c.p.cmds[s.op]
	key := s.key
	if cp.FixedKey {
		key = 0
	}
	if c.counters == nil {
		c.counters = make(map[[2]uint64]int64)
	}
	ck := [2]uint64{uint64(s.op), key}
	last, seen := c.counters[ck]
	got := r.Int
	switch {
	case r.Type != resp.TypeInt:
		c.VerifyFailures++
		if len(c.warnings) < maxWarnings {
			c.warn(fmt.Errorf("verify: %s: got %s, want an integer", cp.Name, quote(b[:n])))
		}
		return n, nil
	case seen && got != last+cp.Step:
		c.VerifyFailures++
		if len(c.warnings) < maxWarnings {
			c.warn(fmt.Errorf("verify: %s (key index %d): got %d, want %d, the previous reply %+d", cp.Name, key, got, last+cp.Step, cp.Step))
		}
	}
	c.counters[ck] = got
	return n, nil
}
