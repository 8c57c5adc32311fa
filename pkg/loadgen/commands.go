package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Placeholders of a Command's arguments. Every occurrence is a new draw
// from the command's key sequence, so "MSET __key__ __data__ __key__
// __data__" writes two keys, as redis-benchmark's MSET writes ten.
const (
	// PlaceholderKey is a key: Config.KeyPrefix, then the index
	// zero-padded to keyspace.KeyWidth(Config.Keyspace) (memtier_benchmark's).
	PlaceholderKey = "__key__"
	// PlaceholderRandInt is a key index alone, zero-padded to 12 digits
	// (redis-benchmark's "-r" substitution).
	PlaceholderRandInt = "__rand_int__"
	// PlaceholderData is the value of the first key of the request: of
	// Config.ValueSize bytes, or of the size Config.ValueSizes gives the
	// key (see ValueSizeOf).
	PlaceholderData = "__data__"
)

// RandIntWidth is the width of PlaceholderRandInt, as redis-benchmark's.
const RandIntWidth = 12

// MaxCommands is the most commands a mix may have.
const MaxCommands = 255

// Command is one command of a mix (Config.Commands): its arguments with
// placeholders, its share of the requests and its key order.
type Command struct {
	// Name names the command in reports; empty means Args[0] upper-cased.
	Name string `json:"name,omitempty"`
	// Args is the command and its arguments; PlaceholderKey,
	// PlaceholderRandInt and PlaceholderData are replaced in each request
	// (also inside a longer argument, "user:__rand_int__").
	Args []string `json:"args"`
	// Ratio is the command's weight in the mix: it gets
	// Ratio/(sum of Ratios) of the requests, chosen at random per request.
	// 0 means 1, as memtier_benchmark's default.
	Ratio int `json:"ratio,omitempty"`
	// KeyPattern is the order of the command's keys; empty means
	// Config.KeyPattern.
	KeyPattern keyspace.Pattern `json:"key_pattern,omitempty"`
	// Inline sends the command as an inline request ("PING\r\n") instead
	// of a RESP array.
	Inline bool `json:"inline,omitempty"`
	// Then, when set, makes the command a read-modify-write: this
	// dependent command is sent on the same connection once the reply to
	// Args has arrived (an error reply ends the operation instead), its
	// __key__ and __rand_int__ all the first key of Args and its __data__
	// that key's value. The pair is one operation of the command: it
	// counts once in the command's requests, with the latency from the
	// send of Args to the reply of Then (both count in the run's
	// requests).
	Then []string `json:"then,omitempty"`
}

// String is the command as it would be typed.
func (c Command) String() string {
	s := strings.Join(c.Args, " ")
	if len(c.Then) > 0 {
		s += " then " + strings.Join(c.Then, " ")
	}
	return s
}

// Placeholder kinds of a piece.
const (
	phNone   uint8 = iota
	phDigits       // a key index, zero-padded to width
	phKey          // a key index, padded to width, longer past it (keyspace.Insert, keyspace.Latest)
	phData         // a value
	phArg          // the start of an argument whose length varies per request
	phArgEnd       // its end: its "$len" header is inserted before it
)

// piece is literal bytes followed by a placeholder.
type piece struct {
	lit   []byte
	kind  uint8
	width int // phDigits, phKey
}

// cmdPlan is a Command compiled: the request is its pieces in order.
type cmdPlan struct {
	name   string
	text   string
	pieces []piece
	// then is Command.Then compiled, nil without it: its key placeholders
	// all take the first key of pieces.
	then []piece
	// verify: the reply is the value of the request's first key, or
	// null (see readVerifiable).
	verify bool
	// step, when not 0, makes the command a counter whose replies are
	// checked (see counterStep); fixedKey: its key has no placeholder.
	step     int64
	fixedKey bool
	cfg      Config // the key sequence's settings (pattern, seed)
	vals     valueGen
}

// valueGen makes the values of a run: value i is a function of (seed, i,
// size), its size fixed or a function of (seed, i) (see sizer).
type valueGen struct {
	seed  int64
	size  int
	sizes *keyspace.Sizes // nil: every value is size bytes
	block []byte          // BlockFor the largest size
}

func newValues(c Config) valueGen {
	v := valueGen{seed: c.Seed, size: c.ValueSize, sizes: keyspace.NewSizes(c.ValueSizes, c.Seed)}
	largest := v.size
	if v.sizes != nil {
		largest = v.sizes.Max()
	}
	v.block = keyspace.BlockFor(c.Seed, largest)
	return v
}

// sizeOf is the size of key i's value.
func (v *valueGen) sizeOf(i uint64) int {
	if v.sizes == nil {
		return v.size
	}
	return v.sizes.Of(i)
}

// cmdCount is what a connection counts per command.
type cmdCount struct{ requests, errors int64 }

// CommandName is a command's name in reports: Name, else RMW for a
// command with Then, else its first word upper-cased.
func CommandName(c Command) string {
	if c.Name != "" {
		return c.Name
	}
	if len(c.Args) == 0 {
		return ""
	}
	if len(c.Then) > 0 {
		return "RMW"
	}
	return strings.ToUpper(c.Args[0])
}

// NameCommands names every command of a mix for its report: its Name, or
// CommandName, with "#2" on the second command of a name, "#3" on the
// third, and so on past any name already taken.
func NameCommands(cmds []Command) {
	seen := map[string]int{}
	taken := map[string]bool{}
	for i := range cmds {
		base := CommandName(cmds[i])
		name := base
		if seen[base]++; seen[base] > 1 {
			name = base + "#" + strconv.Itoa(seen[base])
		}
		for taken[name] {
			seen[base]++
			name = base + "#" + strconv.Itoa(seen[base])
		}
		taken[name] = true
		cmds[i].Name = name
	}
}

// commandErrors checks the mix of c.
func (c Config) commandErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Commands) == 0 {
		if c.KeyPattern == keyspace.Latest || c.KeyPattern == keyspace.Insert {
			bad("key pattern %s needs a command mix (--command or --workload)", c.KeyPattern)
		}
		return append(errs, keyspace.SizeErrors(c.ValueSizes)...)
	}
	if len(c.Commands) > MaxCommands {
		bad("%d commands: want at most %d", len(c.Commands), MaxCommands)
	}
	for i, cmd := range c.Commands {
		if len(cmd.Args) == 0 || cmd.Args[0] == "" {
			bad("command %d: empty", i+1)
			continue
		}
		if cmd.Ratio < 0 {
			bad("command %q: ratio %d: want >= 0", cmd.String(), cmd.Ratio)
		}
		switch cmd.KeyPattern {
		case "", keyspace.Random, keyspace.Sequential, keyspace.Permutation, keyspace.Zipf, keyspace.Gaussian, keyspace.Latest, keyspace.Insert:
		default:
			bad("command %q: key pattern %q: want %s", cmd.String(), cmd.KeyPattern, keyspace.PatternNames)
		}
		if cmd.Inline {
			for _, a := range cmd.Args {
				if a == "" || strings.ContainsAny(a, " \t\r\n\"'") {
					bad("command %q: argument %q cannot be sent inline", cmd.String(), a)
				}
			}
		}
		if len(cmd.Then) > 0 && (cmd.Then[0] == "" || cmd.Inline) {
			bad("command %q: the dependent command must be a non-empty RESP command", cmd.String())
		}
	}
	errs = append(errs, keyspace.SizeErrors(c.ValueSizes)...)
	return errs
}

// varKeys reports whether pattern p names keys past the keyspace.
func varKeys(p keyspace.Pattern) bool { return p == keyspace.Latest || p == keyspace.Insert }

// compileCommands returns the plans of c.Commands.
func compileCommands(c Config) []cmdPlan {
	var out []cmdPlan
	vals := newValues(c)
	for i, cmd := range c.Commands {
		kc := c
		if cmd.KeyPattern != "" {
			kc.KeyPattern = cmd.KeyPattern
		}
		if (kc.KeyPattern == keyspace.Zipf || kc.KeyPattern == keyspace.Latest) && kc.Zipf == 0 {
			kc.Zipf = keyspace.DefaultZipf
		}
		if i > 0 { // the first command's keys are those of a set/get run
			kc.Seed = int64(keyspace.Mix64(uint64(c.Seed) ^ keyspace.Mix64(uint64(i))))
		}
		cp := cmdPlan{name: CommandName(cmd), text: cmd.String(), cfg: kc, vals: vals,
			verify: readVerifiable(c.Commands, i)}
		if c.Connections == 1 && c.Segments <= 1 {
			cp.step = counterStep(c.Commands, i)
			cp.fixedKey = len(cmd.Args) > 1 && !strings.Contains(cmd.Args[1], PlaceholderKey) && !strings.Contains(cmd.Args[1], PlaceholderRandInt)
		}
		cp.pieces = compileArgs(c, cmd.Args, cmd.Inline, varKeys(kc.KeyPattern))
		if len(cmd.Then) > 0 {
			cp.then = compileArgs(c, cmd.Then, false, varKeys(kc.KeyPattern))
		}
		out = append(out, cp)
	}
	return out
}

// compileArgs compiles one command's arguments; varKey: its keys may be
// longer than the keyspace's width.
func compileArgs(c Config, args []string, inline, varKey bool) []piece {
	var pieces []piece
	var lit []byte
	add := func(b []byte) { lit = append(lit, b...) }
	flush := func(kind uint8, width int) {
		pieces = append(pieces, piece{lit: lit, kind: kind, width: width})
		lit = nil
	}
	if !inline {
		add(resp.AppendArray(nil, len(args)))
	}
	for j, a := range args {
		// An argument's length varies with its keys past the keyspace
		// or its value sizes: its header is made per request.
		vary := !inline && (varKey && strings.Contains(a, PlaceholderKey) ||
			len(c.ValueSizes) > 0 && strings.Contains(a, PlaceholderData))
		switch {
		case inline && j > 0:
			add([]byte{' '})
		case vary:
			flush(phArg, 0)
		case !inline:
			add([]byte("$" + strconv.Itoa(argLen(a, c)) + "\r\n"))
		}
		for a != "" {
			k, ph := nextPlaceholder(a)
			if k < 0 {
				add([]byte(a))
				break
			}
			add([]byte(a[:k]))
			switch ph {
			case PlaceholderKey:
				add([]byte(c.KeyPrefix))
				if varKey {
					flush(phKey, keyspace.KeyWidth(c.Keyspace))
				} else {
					flush(phDigits, keyspace.KeyWidth(c.Keyspace))
				}
			case PlaceholderRandInt:
				flush(phDigits, RandIntWidth)
			case PlaceholderData:
				flush(phData, 0)
			}
			a = a[k+len(ph):]
		}
		if vary {
			flush(phArgEnd, 0)
		} else if !inline {
			add([]byte("\r\n"))
		}
	}
	if inline {
		add([]byte("\r\n"))
	}
	flush(phNone, 0)
	return pieces
}

// readVerifiable reports whether command i of cmds is a read whose reply
// is known: "GET T" where the key template T is written only by
// "SET T __data__" commands (or by Then of a command) of the mix, or is
// __key__ (the keys a prefill writes). Its reply is then the value of
// its key, or null when the key was not written yet.
func readVerifiable(cmds []Command, i int) bool {
	c := cmds[i]
	if len(c.Args) != 2 || !strings.EqualFold(c.Args[0], "GET") {
		return false
	}
	t := c.Args[1]
	if !strings.Contains(t, PlaceholderKey) && !strings.Contains(t, PlaceholderRandInt) {
		return false
	}
	known := t == PlaceholderKey
	for _, o := range cmds {
		for _, args := range [][]string{o.Args, o.Then} {
			switch {
			case len(args) == 0 || !slices.Contains(args, t):
			case len(args) == 2 && strings.EqualFold(args[0], "GET"):
			case len(args) == 3 && strings.EqualFold(args[0], "SET") && args[1] == t && args[2] == PlaceholderData:
				known = true
			default:
				return false // another command touches the keys
			}
		}
	}
	return known
}

// counterStep returns how much each reply of command i of the mix grows
// over the previous reply for the same key, when that is known: INCR and
// DECR (1, -1), INCRBY and DECRBY by a literal amount, LPUSH and RPUSH
// (the list's length, by the elements pushed), provided no other command
// of the mix names the command's key template. Its replies are checked
// then with --verify under a single writer per key (one connection, no
// agents): the first reply for a key sets its base. 0: not a counter.
func counterStep(cmds []Command, i int) int64 {
	c := cmds[i]
	if len(c.Args) < 2 || len(c.Then) > 0 {
		return 0
	}
	var step int64
	switch name := strings.ToUpper(c.Args[0]); {
	case (name == "INCR" || name == "DECR") && len(c.Args) == 2:
		step = 1
		if name == "DECR" {
			step = -1
		}
	case (name == "INCRBY" || name == "DECRBY") && len(c.Args) == 3:
		n, err := strconv.ParseInt(c.Args[2], 10, 64)
		if err != nil || n == 0 {
			return 0
		}
		step = n
		if name == "DECRBY" {
			step = -n
		}
	case name == "LPUSH" || name == "RPUSH":
		step = int64(len(c.Args) - 2)
	default:
		return 0
	}
	for j, o := range cmds {
		if j != i && (slices.Contains(o.Args, c.Args[1]) || slices.Contains(o.Then, c.Args[1])) {
			return 0 // another command touches the keys
		}
	}
	return step
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
	if cp.fixedKey {
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
			c.warn(fmt.Errorf("verify: %s: got %s, want an integer", cp.name, quote(b[:n])))
		}
		return n, nil
	case seen && got != last+cp.step:
		c.VerifyFailures++
		if len(c.warnings) < maxWarnings {
			c.warn(fmt.Errorf("verify: %s (key index %d): got %d, want %d, the previous reply %+d", cp.name, key, got, last+cp.step, cp.step))
		}
	}
	c.counters[ck] = got
	return n, nil
}

// nextPlaceholder finds the first placeholder in a: its index (-1: none)
// and which.
func nextPlaceholder(a string) (int, string) {
	at, which := -1, ""
	for _, ph := range []string{PlaceholderKey, PlaceholderRandInt, PlaceholderData} {
		if k := strings.Index(a, ph); k >= 0 && (at < 0 || k < at) {
			at, which = k, ph
		}
	}
	return at, which
}

// argLen is the length of argument a once its placeholders are replaced.
func argLen(a string, c Config) int {
	n := len(a)
	n += strings.Count(a, PlaceholderKey) * (len(c.KeyPrefix) + keyspace.KeyWidth(c.Keyspace) - len(PlaceholderKey))
	n += strings.Count(a, PlaceholderRandInt) * (RandIntWidth - len(PlaceholderRandInt))
	n += strings.Count(a, PlaceholderData) * (c.ValueSize - len(PlaceholderData))
	return n
}

// mixTable returns the cumulative ratios of a mix.
func mixTable(cmds []Command) []uint64 {
	cum := make([]uint64, len(cmds))
	var s uint64
	for i, c := range cmds {
		s += uint64(max(c.Ratio, 1))
		cum[i] = s
	}
	return cum
}

// newCmdKeys returns a connection's key sequences, one per command.
func newCmdKeys(p *plan, id, conns int) []*keyspace.Gen {
	g := make([]*keyspace.Gen, len(p.cmds))
	for i := range p.cmds {
		g[i] = keyspace.NewGen(p.cmds[i].cfg.keys(), id, conns)
		g[i].RankBy(p.cfg.Seed) // one ranking for the whole mix
	}
	keyspace.ShareInserts(g) // one insert count per connection
	return g
}

// initMix sets up a connection of a command mix: its key sequences, and
// for a mix with dependent commands their queue and a ring with room for
// them (a batch, its dependents and the next batch built).
func (c *conn) initMix(id, conns int) {
	c.cmdKeys = newCmdKeys(c.p, id, conns)
	for _, cp := range c.p.cmds {
		if cp.then != nil {
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

// appendRequest appends a request made of pieces: each key placeholder a
// new draw from keys (c.nextCmdKey: on a cluster socket, the first key its
// master serves), or key when keys is nil; __data__ the value of the first
// key. It returns the first key.
func (cp *cmdPlan) appendRequest(dst []byte, pieces []piece, c *conn, keys *keyspace.Gen, key uint64) ([]byte, uint64) {
	drawn := keys == nil
	arg := 0
	for k := range pieces {
		pc := &pieces[k]
		dst = append(dst, pc.lit...)
		switch pc.kind {
		case phDigits, phKey:
			v := key
			if keys != nil {
				v = c.nextCmdKey(keys, drawn) // a cluster socket takes its master's keys (cluster.go)
				if !drawn {
					key, drawn = v, true
				}
			}
			if pc.kind == phKey {
				dst = keyspace.AppendKeyDigits(dst, v, pc.width)
			} else {
				dst = keyspace.AppendDigits(dst, v, pc.width)
			}
		case phData:
			if !drawn {
				key, drawn = keys.Next(), true
			}
			dst = keyspace.AppendValueFrom(dst, cp.vals.block, cp.vals.seed, key, cp.vals.sizeOf(key))
		case phArg:
			arg = len(dst)
		case phArgEnd:
			dst = insertBulkHeader(dst, arg)
		}
	}
	return dst, key
}

// insertBulkHeader makes dst[at:] a bulk string: its "$len" header
// inserted before it, CRLF after it.
func insertBulkHeader(dst []byte, at int) []byte {
	n := len(dst) - at
	var h [24]byte
	hdr := append(strconv.AppendInt(append(h[:0], '$'), int64(n), 10), '\r', '\n')
	dst = append(dst, hdr...)
	copy(dst[at+len(hdr):], dst[at:at+n])
	copy(dst[at:], hdr)
	return append(dst, '\r', '\n')
}

// buildCmds is build for a command mix.
func (c *conn) buildCmds(dst []byte, n int, t int64) []byte {
	p := c.p
	mask := len(c.ring) - 1
	i := c.head + c.inflight + c.pre
	for range n {
		ci := 0
		if len(p.cmds) > 1 {
			x := c.ops.Below(p.mixSum)
			for x >= p.mix[ci] {
				ci++
			}
		}
		cp := &p.cmds[ci]
		var first uint64
		dst, first = cp.appendRequest(dst, cp.pieces, c, c.cmdKeys[ci], 0)
		c.ring[i&mask] = slot{key: first, t: t, op: uint8(ci)}
		i++
	}
	c.pre += n
	return dst
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
		isErr := b[0] == '-'
		switch {
		case len(b) >= 5 && string(b[:5]) == "+OK\r\n":
			n = 5
		case isErr:
			n, isErr, err = c.cmdError(b, s)
		case cp.verify && p.verify && !s.then:
			n, err = c.verifyRead(b, s)
		case cp.step != 0 && p.verify:
			n, err = c.verifyCounter(b, s)
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
		if cp.then != nil && !s.then && !isErr {
			// The read of a read-modify-write: its write goes next.
			q := c.deps
			q.buf, _ = cp.appendRequest(q.buf, cp.then, nil, nil, s.key)
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
		}
		if err != nil {
			break
		}
	}
	c.flushLatency()
	return total - len(b), err
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
	case r.Type == resp.TypeBulk && r.IsNull():
		c.Misses++
	case r.Type != resp.TypeBulk || !keyspace.ValueMatchesFrom(r.Data, cp.vals.block, cp.vals.seed, s.key, cp.vals.sizeOf(s.key)):
		c.VerifyFailures++
		if len(c.warnings) < maxWarnings {
			want := keyspace.AppendValue(nil, cp.vals.seed, int64(s.key), cp.vals.sizeOf(s.key))
			key := "key index " + strconv.FormatUint(s.key, 10)
			if args := c.p.cfg.Commands[s.op].Args; args[1] == PlaceholderKey {
				key = string(keyspace.AppendKeyDigits([]byte(c.p.cfg.KeyPrefix), s.key, keyspace.KeyWidth(c.p.cfg.Keyspace)))
			}
			c.warn(fmt.Errorf("verify: %s %s: got %s, want %s", cp.name, key, quote(b[:n]), quote(want)))
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
	if c.route != nil && isRedirect(word) {
		reply, err := c.resend(s, r.Data)
		if err != nil {
			return n, true, fmt.Errorf("connection %d: %w", c.id, err)
		}
		cp := &c.p.cmds[s.op]
		switch {
		case len(reply) > 0 && reply[0] == '-':
			_, _, err = c.cmdError(reply, s)
			return n, true, err
		case cp.verify && c.p.verify && !s.then:
			_, err = c.verifyRead(reply, s)
		case cp.step != 0 && c.p.verify:
			_, err = c.verifyCounter(reply, s)
		}
		return n, false, err
	}
	if c.errors == nil {
		c.errors = map[string]int64{}
	}
	c.errors[string(word)]++
	c.cmd[s.op].errors++
	if !c.p.cfg.ContinueOnError {
		return n, true, &ReplyError{Command: c.p.cmds[s.op].text, Msg: string(r.Data)}
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
		out[i] = measure.Command{Name: cp.name, Args: cp.text, Histogram: newHistogram()}
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

// ErrUnsupported is wrapped by the error of a target that lacks commands
// (see CheckCommands).
var ErrUnsupported = errors.New("unsupported commands")

// CheckCommands asks the server at cfg.Addr with COMMAND INFO whether it
// has the commands named, and fails with one error naming those it lacks
// (wrapping ErrUnsupported). A server without COMMAND is not checked.
func CheckCommands(ctx context.Context, cfg Config, names []string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, n := range names {
		u := strings.ToUpper(n)
		if !seen[u] {
			seen[u] = true
			uniq = append(uniq, u)
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	b, err := control.Query(ctx, cfg.Addr, cfg.control(), append([]string{"COMMAND", "INFO"}, uniq...)...)
	if err != nil {
		return err
	}
	r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil || n == 0 {
		return fmt.Errorf("COMMAND INFO: malformed reply %s", quote(b))
	}
	if r.Type == resp.TypeError {
		return nil // no COMMAND: nothing to check against
	}
	if r.Type != resp.TypeArray || r.Int != int64(len(uniq)) {
		return fmt.Errorf("COMMAND INFO: unexpected reply %s", quote(b))
	}
	b = b[n:]
	var lack []string
	for _, name := range uniq {
		e, _, _ := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if e.IsNull() {
			lack = append(lack, name)
		}
		m, err := resp.SkipReply(b, resp.DefaultMaxBulkLen)
		if err != nil || m == 0 {
			return fmt.Errorf("COMMAND INFO: malformed reply")
		}
		b = b[m:]
	}
	if len(lack) > 0 {
		return fmt.Errorf("%w: %s has no %s", ErrUnsupported, cfg.Addr, strings.Join(lack, ", "))
	}
	return nil
}

// commandNames returns the command names of a mix.
func commandNames(cmds []Command) []string {
	var names []string
	for _, c := range cmds {
		if len(c.Args) > 0 {
			names = append(names, c.Args[0])
		}
	}
	return names
}

// writeMix writes the mix line of a text report.
func writeMix(b *strings.Builder, c Config) {
	var sum int
	for _, cmd := range c.Commands {
		sum += max(cmd.Ratio, 1)
	}
	fmt.Fprintf(b, "mix:")
	for i, cmd := range c.Commands {
		if i > 0 {
			b.WriteString(",")
		}
		p := c.KeyPattern
		if cmd.KeyPattern != "" {
			p = cmd.KeyPattern
		}
		fmt.Fprintf(b, " %q %.1f%% %s", cmd.String(), 100*float64(max(cmd.Ratio, 1))/float64(sum), p)
	}
	b.WriteString("\n")
}

// writeCommands writes the per-command table of a text report.
func writeCommands(b *strings.Builder, cmds []measure.Command) {
	if len(cmds) == 0 {
		return
	}
	w := len("command")
	for _, c := range cmds {
		w = max(w, len(c.Name))
	}
	fmt.Fprintf(b, "%-*s %10s %12s %9s %9s %9s %9s %9s %7s\n", w, "command", "requests", "QPS", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors")
	for _, c := range cmds {
		l := c.Latency
		fmt.Fprintf(b, "%-*s %10d %12.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n", w, c.Name, c.Requests, c.QPS, l.P50, l.P90, l.P99, l.P999, l.Max, c.Errors)
	}
}
