package loadgen

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/series"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Request kinds.
const (
	opSet uint8 = 1
	opGet uint8 = 2
)

// maxWarnings bounds the per-connection and per-run warning lists.
const maxWarnings = measure.MaxWarnings

// Histogram bounds, in nanoseconds: those of every measurement.
const (
	histMin = measure.HistMin
	histMax = measure.HistMax
)

func newHistogram() *hdrhistogram.Histogram { return measure.NewHistogram() }

// plan is what every connection of a run shares, read-only: the settings
// and the pre-encoded request templates.
type plan struct {
	cfg Config
	// A write is setHead, the key digits, setMid, the value, CRLF; a read
	// is getHead, the key digits, CRLF. Only digits and value bytes are
	// produced per request.
	setHead, setMid, getHead []byte
	width                    int
	// getHdr is the bulk header of a correct read reply ("$32\r\n").
	getHdr []byte
	seed   int64
	vsize  int
	block  []byte // values' shared block (see keyspace.BlockFor)
	// windows says build may leave a value's window out of the request
	// and list it to be written from the block (see wseg).
	windows  bool
	setRatio uint64 // writes per 100 requests
	verify   bool
	// cmds is Config.Commands compiled, mix their cumulative ratios.
	cmds   []mix.Plan
	mix    []uint64
	mixSum uint64
	// random makes the values random bytes (Config.RandomData).
	random bool
	// exMin and exMax are Config.ExpiryMin and ExpiryMax: with exMax > 0
	// a write ends with EX n (data.go).
	exMin, exMax int64
	// mget is Config.MultiKeyGet: a read is mgetHead and mget times
	// keyHead, the key digits, CRLF (data.go); 0: a read is a GET.
	mget              int
	mgetHead, keyHead []byte
	// streams are a replay's command indices per connection (global
	// index); nil without Config.Replay.
	streams [][]uint32
}

// A wseg is a value's window (see AppendValue) that a request leaves out of
// the write buffer, to be written from the shared block with writev: data
// goes before the buffer's byte at. redis-benchmark sends one prepared
// buffer again and again; copying each large value into its request would
// make kvbench the slower client (memmove was 30% of its time at 256 KB,
// pipeline 16, 50 connections), and the kernel copies it once anyway.
type wseg struct {
	at   int
	data []byte
}

// windowWriteMin is the smallest value written from the block: below it,
// a copy costs less than the iovec.
const windowWriteMin = 4 << 10

// maxPresize bounds batchBytes: a larger batch grows its buffer as it is
// built.
const maxPresize = 64 << 20

// batchBytes is the length of a whole batch of set/get requests, so that
// a connection's write buffers are made at their final size once: grown by
// append, a batch of large values would be copied and its fresh pages
// faulted in at each doubling, which dominated short runs of 256 KB values
// with many connections. 0 for command mixes (their lengths vary).
func (p *plan) batchBytes() int {
	if p.cmds != nil {
		return 0
	}
	n := len(p.getHead) + p.width + 2
	if p.mget > 0 {
		n = len(p.mgetHead) + p.mget*(len(p.keyHead)+p.width+2)
	}
	if p.setRatio > 0 {
		value := p.vsize
		if p.windows {
			value = 16 // the header; the window is written from the block
		}
		if p.exMax > 0 {
			value += expiryTail
		}
		n = max(n, len(p.setHead)+p.width+len(p.setMid)+value+2)
	}
	return min(n*p.cfg.Pipeline, maxPresize)
}

func newPlan(c Config) *plan {
	p := &plan{
		cfg:      c,
		width:    c.Keys().Width(),
		seed:     c.Seed,
		vsize:    c.ValueSize,
		block:    keyspace.BlockFor(c.Seed, c.ValueSize),
		windows:  c.ValueSize >= windowWriteMin && c.TLS == nil && !c.Cluster && !c.RandomData,
		random:   c.RandomData,
		exMin:    int64(c.ExpiryMin),
		exMax:    int64(c.ExpiryMax),
		mget:     c.MultiKeyGet,
		verify:   c.VerifyGet,
		setRatio: uint64(c.SetRatio),
	}
	switch c.Mode {
	case ModeSet:
		p.setRatio = 100
	case ModeGet:
		p.setRatio = 0
	}
	keyLen := len(c.KeyPrefix) + p.width
	p.keyHead = append(strconv.AppendInt([]byte{'$'}, int64(keyLen), 10), "\r\n"...)
	p.keyHead = append(p.keyHead, c.KeyPrefix...)
	head := func(n int, cmd string) []byte {
		b := resp.AppendArray(nil, n)
		b = resp.AppendBulkString(b, cmd)
		return append(b, p.keyHead...)
	}
	p.setHead = head(3, c.SetCmd)
	if p.exMax > 0 {
		p.setHead = head(5, c.SetCmd)
	}
	if p.mget > 0 {
		p.mgetHead = resp.AppendBulkString(resp.AppendArray(nil, 1+p.mget), "MGET")
	}
	p.setMid = append([]byte("\r\n$"), strconv.Itoa(c.ValueSize)+"\r\n"...)
	p.getHead = head(2, c.GetCmd)
	p.getHdr = []byte("$" + strconv.Itoa(c.ValueSize) + "\r\n")
	if len(c.Commands) > 0 {
		cmds := c.Commands
		if c.Wait.Enabled() { // the WAIT last, out of the draw (mixconn.go)
			cmds = append(slices.Clone(cmds), c.Wait.Command())
		}
		p.cmds, p.mix = mix.Compile(cmds, c.MixSettings()), mix.Table(c.Commands)
		p.mixSum = p.mix[len(p.mix)-1]
		if c.Wait.Enabled() {
			p.cmds[len(p.cmds)-1].Wait = true
		}
	}
	if c.Replay != nil {
		p.cmds, p.streams = replayPlans(c.Replay), c.Replay.Assign(c.Connections)
	}
	return p
}

// slot is one request built or in flight: its key, kind, and the time its
// latency is measured from.
type slot struct {
	key  uint64
	t    int64
	op   uint8
	then bool // the dependent request of a read-modify-write (commands.go)
}

// counts is what a connection tallies; the run sums them.
type counts struct {
	measure.Counts       // Requests is left to the run: sets, gets and others
	others         int64 // replies to a command mix
	cmd            []cmdCount
	// counters holds the last reply of each counter command and key
	// (verifyCounter), created on the first.
	counters map[[2]uint64]int64
	errors   map[string]int64
	warnings []error
}

func (a *counts) add(b *counts) {
	a.Counts.Add(&b.Counts)
	a.others += b.others
	for k, v := range b.errors {
		if a.errors == nil {
			a.errors = map[string]int64{}
		}
		a.errors[k] += v
	}
	for _, w := range b.warnings {
		if len(a.warnings) < maxWarnings {
			a.warnings = append(a.warnings, w)
		}
	}
}

// conn is one connection's state. Its request and reply handling
// (build, consume) does no I/O and allocates nothing, so that
// BenchmarkHotPath measures exactly the per-request work.
type conn struct {
	p    *plan
	id   int
	keys *keyspace.Gen
	ops  keyspace.Rand // the write/read choice of ModeMixed

	// ring holds the requests in flight, ring[head:head+inflight], followed
	// by pre requests built but not yet written (closed loop only). Its
	// length is a power of two of at least 2*Pipeline.
	ring     []slot
	head     int
	inflight int
	pre      int

	route *connRoute // a cluster run's routing (cluster.go); nil otherwise

	// segs, when set, is where build lists the windows it leaves out of
	// the requests (plan.windows); nil: build copies every value whole.
	segs *[]wseg

	hist    *hdrhistogram.Histogram     // the worker's
	cmdHist []*hdrhistogram.Histogram   // the worker's, per command of a mix
	opHist  *[3]*hdrhistogram.Histogram // the worker's, per op of a mixed run
	cmdKeys []cmdKeys                   // per command of a mix
	deps    *depQueue                   // a mix's dependent requests (commands.go)
	// writes counts the mix's writes built, waitDue says a WAIT goes
	// next (Config.Wait; mixconn.go).
	writes  int64
	waitDue bool
	rp      *replayConn // a replay's stream (replayconn.go); nil otherwise
	// iv is the worker's interval (a series is recorded; nil otherwise),
	// ivNode the index of the connection's master in its parts (-1).
	iv     *series.Acc
	ivNode int
	runV   int64 // a run of runN equal latencies not yet recorded
	runN   int64
	runOp  uint8 // their op, in a mixed run (opHist)
	// mkeys are the keys of the MGETs in the ring, Config.MultiKeyGet per
	// slot (data.go); nil without.
	mkeys []uint64
	counts
}

func newConn(p *plan, id, conns int, hist *hdrhistogram.Histogram) *conn {
	size := 1 << bits.Len(uint(2*p.cfg.Pipeline-1))
	c := &conn{
		p:      p,
		id:     id,
		keys:   keyspace.NewGen(p.cfg.Keys(), id, conns),
		ops:    keyspace.Rand(keyspace.Mix64(uint64(p.seed)^keyspace.Mix64(uint64(id)+1)) ^ 0x6f7073), // "ops"
		ring:   make([]slot, size),
		hist:   hist,
		ivNode: -1,
	}
	switch {
	case p.cfg.Replay != nil:
		c.initReplay(id)
	case p.cmds != nil:
		c.initMix(id, conns)
	}
	if p.mget > 0 {
		c.mkeys = make([]uint64, size*p.mget)
	}
	return c
}

// build appends n requests to dst and queues their slots after those in
// flight and already built, all stamped t. A cluster socket builds fewer
// when its group's stream has no more elements for it now (clusterconn.go).
func (c *conn) build(dst []byte, n int, t int64) []byte {
	p := c.p
	if c.rp != nil {
		return c.buildReplay(dst, n, t)
	}
	if p.cmds != nil {
		return c.buildCmds(dst, n, t)
	}
	mask := len(c.ring) - 1
	i := c.head + c.inflight + c.pre
	var limit uint64
	if c.route != nil {
		limit = c.limit()
	}
	built := 0
	for ; built < n; built++ {
		var key uint64
		op := opGet
		if c.route == nil {
			key = c.keys.Next()
			if p.setRatio == 100 || (p.setRatio > 0 && c.ops.Below(100) < p.setRatio) {
				op = opSet
			}
		} else {
			e, ok := c.take(limit)
			if !ok {
				break
			}
			key, op = e.key, e.op
		}
		c.ring[i&mask] = slot{key: key, t: t, op: op}
		i++
		if op == opSet {
			dst = append(dst, p.setHead...)
			dst = keyspace.AppendDigits(dst, key, p.width)
			dst = append(dst, p.setMid...)
			if p.windows && c.segs != nil {
				var w []byte
				dst, w = keyspace.AppendValueHead(dst, p.block, p.seed, key, p.vsize)
				*c.segs = append(*c.segs, wseg{at: len(dst), data: w})
			} else if p.random { // not p.appendValue: a call more per write
				dst = keyspace.AppendRandomValue(dst, p.seed, key, p.vsize)
			} else {
				dst = keyspace.AppendValueFrom(dst, p.block, p.seed, key, p.vsize)
			}
			dst = append(dst, '\r', '\n')
			if p.exMax > 0 {
				dst = p.appendExpiry(dst, key)
			}
		} else if p.mget > 0 {
			dst = c.appendMget(dst, i-1, key)
		} else {
			dst = append(dst, p.getHead...)
			dst = keyspace.AppendDigits(dst, key, p.width)
			dst = append(dst, '\r', '\n')
		}
	}
	c.pre += built
	return dst
}

// stamp makes the n built requests in flight, measured from t.
func (c *conn) stamp(n int, t int64) {
	mask := len(c.ring) - 1
	for i := c.head + c.inflight; i < c.head+c.inflight+n; i++ {
		c.ring[i&mask].t = t
	}
	c.inflight += n
	c.pre -= n
	c.Sent += int64(n)
}

// consume parses the replies at the start of b, all received at time now,
// and returns the bytes consumed. It stops at an incomplete reply, when no
// request is in flight, or at an error: a malformed reply, or an error
// reply that must end the run (consumed and counted).
//
// The two expected replies, +OK to a write and a bulk string of the value
// size to a read, are recognized by comparing bytes with a template; all
// else goes through resp.ParseReply. A RESP3 push is skipped: it is no
// request's reply.
func (c *conn) consume(b []byte, now int64) (int, error) {
	p := c.p
	if p.cmds != nil {
		return c.consumeCmds(b, now)
	}
	mask := len(c.ring) - 1
	total := len(b)
	hdr := len(p.getHdr)
	var err error
	for c.inflight > 0 && len(b) > 0 {
		s := &c.ring[c.head&mask]
		n := 0
		if s.op == opSet {
			if len(b) >= 5 && string(b[:5]) == "+OK\r\n" {
				n = 5
			}
		} else if e := hdr + p.vsize; len(b) >= e+2 && string(b[:hdr]) == string(p.getHdr) &&
			b[e] == '\r' && b[e+1] == '\n' {
			n = e + 2
			// Not p.valueMatches: a call more per read.
			if p.verify && (p.random && !keyspace.RandomValueMatches(b[hdr:e], p.seed, s.key, p.vsize) ||
				!p.random && !keyspace.ValueMatchesFrom(b[hdr:e], p.block, p.seed, s.key, p.vsize)) {
				c.wrongValue(s.key, b[hdr:e])
			}
		}
		if n == 0 {
			if b[0] == resp.TypePush {
				if n, err = c.skipPush(b); n == 0 {
					break
				}
				b = b[n:]
				continue
			}
			if n, err = c.otherReply(b, s); n == 0 {
				break
			}
		}
		b = b[n:]
		if lat := now - s.t; lat != c.runV || c.opHist != nil && s.op != c.runOp {
			c.flushLatency()
			c.runV, c.runOp = lat, s.op
		}
		c.runN++
		if s.op == opSet {
			c.Sets++
		} else {
			c.Gets++
		}
		c.head = (c.head + 1) & mask
		c.inflight--
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

// flushLatency records the pending run of equal latencies.
func (c *conn) flushLatency() {
	if c.runN == 0 {
		return
	}
	v := c.runV
	if v < histMin {
		v = histMin
	} else if v > histMax {
		v = histMax
	}
	_ = c.hist.RecordValues(v, c.runN) // cannot fail: v is in range
	if c.opHist != nil {
		_ = c.opHist[c.runOp].RecordValues(v, c.runN)
	}
	if iv := c.iv; iv != nil {
		_ = iv.Hist.RecordValues(v, c.runN)
		if c.ivNode >= 0 && c.ivNode < len(iv.Node) {
			_ = iv.Node[c.ivNode].Hist.RecordValues(v, c.runN)
		}
	}
	c.runN = 0
}

// parseReply parses the reply at the start of b: n is 0 when b holds
// only part of it; an error names the connection.
func (c *conn) parseReply(b []byte) (r resp.Reply, n int, err error) {
	r, n, err = resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil {
		return r, 0, fmt.Errorf("connection %d: %w", c.id, err)
	}
	return r, n, nil
}

// skipPush returns the length of the RESP3 push at the start of b, 0
// when b holds only part of it.
func (c *conn) skipPush(b []byte) (int, error) {
	n, err := resp.SkipReply(b, resp.DefaultMaxBulkLen)
	if err != nil {
		return 0, fmt.Errorf("connection %d: %w", c.id, err)
	}
	return n, nil
}

// skipPushes returns the length of the complete RESP3 pushes at the
// start of b: those that come after the last reply awaited.
func (c *conn) skipPushes(b []byte) (int, error) {
	total := 0
	for len(b) > total && b[total] == resp.TypePush {
		n, err := c.skipPush(b[total:])
		if n == 0 {
			return total, err
		}
		total += n
	}
	return total, nil
}

// otherReply handles any reply but the two expected ones; it returns 0
// when b holds only part of it.
func (c *conn) otherReply(b []byte, s *slot) (int, error) {
	r, n, err := c.parseReply(b)
	if n == 0 || err != nil {
		return 0, err
	}
	isGet := s.op == opGet
	switch r.Type {
	case resp.TypeAttribute:
		// Skip the attribute's pairs, then the reply it annotates is the
		// request's.
		for range r.Elements() {
			m, err := resp.SkipReply(b[n:], resp.DefaultMaxBulkLen)
			if m == 0 || err != nil {
				return 0, err
			}
			n += m
		}
		m, err := c.otherReply(b[n:], s)
		if m == 0 {
			return 0, err
		}
		return n + m, err
	case resp.TypeError, resp.TypeBlobError:
		word := r.Data
		if i := bytes.IndexByte(word, ' '); i >= 0 {
			word = word[:i]
		}
		if c.route != nil && c.route.sides != nil && cluster.IsRedirect(word) {
			reply, err := c.resend(s, r.Data)
			if err != nil {
				return n, fmt.Errorf("connection %d: %w", c.id, err)
			}
			_, err = c.otherReply(reply, s)
			return n, err
		}
		if !isGet && string(word) == "EXIST" {
			c.Conflicts++
			return n, nil
		}
		if c.errors == nil {
			c.errors = map[string]int64{}
		}
		c.errors[string(word)]++
		if c.iv != nil {
			c.iv.Errors++
		}
		if !c.p.cfg.ContinueOnError {
			return n, &ReplyError{Command: c.cmdName(s.op), Key: c.keyName(s.key), Msg: string(r.Data)}
		}
	case resp.TypeBulk, resp.TypeNull:
		if r.IsNull() {
			if isGet {
				c.miss(s.key)
			}
		} else if isGet && c.p.verify && !c.p.valueMatches(r.Data, s.key) {
			c.wrongValue(s.key, r.Data)
		}
	case resp.TypeArray, resp.TypeMap, resp.TypeSet:
		if r.Type == resp.TypeArray && isGet && c.p.mget > 0 {
			return c.mgetReply(b, r, n)
		}
		if n, err = resp.SkipReply(b, resp.DefaultMaxBulkLen); n == 0 || err != nil {
			return 0, err
		}
		fallthrough
	default:
		if isGet && c.p.verify {
			c.wrongValue(s.key, b[:n])
		}
	}
	return n, nil
}

// miss counts a read that found no value (of key).
func (c *conn) miss(key uint64) {
	c.Misses++
	// Misses are expected in mixed mode and without verification; in a
	// verified read run they fail it.
	if c.p.verify && c.p.cfg.Mode == ModeGet && len(c.warnings) < maxWarnings {
		c.warn(fmt.Errorf("miss: %s %s: null reply", c.cmdName(opGet), c.keyName(key)))
	}
}

func (c *conn) wrongValue(key uint64, got []byte) {
	c.VerifyFailures++
	if len(c.warnings) >= maxWarnings {
		return
	}
	want := c.p.appendValue(nil, key)
	c.warn(fmt.Errorf("verify: %s %s: got %s, want %s", c.cmdName(opGet), c.keyName(key), quote(got), quote(want)))
}

func (c *conn) warn(err error) {
	if len(c.warnings) < maxWarnings {
		c.warnings = append(c.warnings, err)
	}
}

// quote quotes b, shortened to 48 bytes.
func quote(b []byte) string {
	if len(b) > 48 {
		return strconv.Quote(string(b[:48])) + "..."
	}
	return strconv.Quote(string(b))
}

func (c *conn) keyName(key uint64) string {
	return string(keyspace.AppendKeyDigits([]byte(c.p.cfg.KeyPrefix), key, c.p.width))
}

func (c *conn) cmdName(op uint8) string {
	if c.p.cmds != nil {
		return c.p.cmds[op].Name
	}
	if op == opSet {
		return c.p.cfg.SetCmd
	}
	if c.p.mget > 0 {
		return "MGET"
	}
	return c.p.cfg.GetCmd
}

// ReplyError is an error reply that ended a run: any error reply but an
// EXIST conflict to a write, unless Config.ContinueOnError.
type ReplyError struct {
	// Command and Key are the request that got the reply.
	Command, Key string
	// Msg is the server's message, its first word the error code.
	Msg string
}

func (e *ReplyError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("server replied %q to %s", e.Msg, e.Command)
	}
	return fmt.Sprintf("server replied %q to %s %s", e.Msg, e.Command, e.Key)
}
