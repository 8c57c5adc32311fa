// Package mix is the load generator's command language: a mix of
// commands with placeholders ("SET __key__ __data__"), their ratios, key
// orders and dependent requests (a read-modify-write's write, sent once
// the read's reply is in), compiled into templates the engine appends
// requests from.
//
// Compile turns each Command into a Plan: literal bytes and placeholders,
// an argument whose length varies per request (a key past the keyspace, a
// value size from a distribution) getting its "$len" header once it is
// written. Plan.Append writes one request, drawing its keys from a Keys
// (the engine's per-connection sequence, filtered by slot in a cluster).
// The Plan also says which replies are known and can be verified: a GET
// of keys only SETs of the mix (or the prefill) write, and counters
// (INCR, LPUSH…) under a single writer.
package mix

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Placeholders of a Command's arguments. Every occurrence is a new draw
// from the command's key sequence, so "MSET __key__ __data__ __key__
// __data__" writes two keys, as redis-benchmark's MSET writes ten.
const (
	// PlaceholderKey is a key: the key prefix, then the index zero-padded
	// to keyspace.KeyWidth of the keyspace (memtier_benchmark's).
	PlaceholderKey = "__key__"
	// PlaceholderRandInt is a key index alone, zero-padded to 12 digits
	// (redis-benchmark's "-r" substitution).
	PlaceholderRandInt = "__rand_int__"
	// PlaceholderData is the value of the first key of the request: of
	// the run's value size, or of the size its distribution gives the
	// key.
	PlaceholderData = "__data__"
)

// RandIntWidth is the width of PlaceholderRandInt, as redis-benchmark's.
const RandIntWidth = 12

// PlaceholderTag, in cluster mode only, is a hash tag of a slot of the
// master the request goes to: redis-benchmark's cluster mode names its
// keys "key:{tag}:__rand_int__", so that each request goes to one master
// with all its keys, several or constant ("mylist:{tag}") alike, on
// every master. The tag's TagWidth characters replace "tag"; outside
// cluster mode "{tag}" is literal text.
const PlaceholderTag = "{tag}"

// TagWidth is the length of a tag that replaces "tag" in
// PlaceholderTag: the argument keeps its length.
const TagWidth = 3

// MaxCommands is the most commands a mix may have.
const MaxCommands = 255

// Command is one command of a mix: its arguments with placeholders, its
// share of the requests and its key order.
type Command struct {
	// Name names the command in reports; empty means CommandName.
	Name string `json:"name,omitempty"`
	// Args is the command and its arguments; PlaceholderKey,
	// PlaceholderRandInt and PlaceholderData are replaced in each request
	// (also inside a longer argument, "user:__rand_int__").
	Args []string `json:"args"`
	// Ratio is the command's weight in the mix: it gets
	// Ratio/(sum of Ratios) of the requests, chosen at random per request.
	// 0 means 1, as memtier_benchmark's default.
	Ratio int `json:"ratio,omitempty"`
	// KeyPattern is the order of the command's keys; empty means the
	// run's.
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

// Names returns the command words of a mix (GET, SET…), for a probe of
// the server's commands.
func Names(cmds []Command) []string {
	var names []string
	for _, c := range cmds {
		if len(c.Args) > 0 {
			names = append(names, c.Args[0])
		}
	}
	return names
}

// Check checks a mix: its size, each command's arguments, ratio, key
// pattern and dependent command.
func Check(cmds []Command) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(cmds) > MaxCommands {
		bad("%d commands: want at most %d", len(cmds), MaxCommands)
	}
	for i, cmd := range cmds {
		if len(cmd.Args) == 0 || cmd.Args[0] == "" {
			bad("command %d: empty", i+1)
			continue
		}
		if cmd.Ratio < 0 {
			bad("command %q: ratio %d: want >= 0", cmd.String(), cmd.Ratio)
		}
		if cmd.KeyPattern != "" && !cmd.KeyPattern.Known() {
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
	return errs
}

// CheckCluster checks that a mix can be routed in a cluster: each command
// names at most one key, with __key__ (the key is then known and routed
// to its slot's master; a command without a key goes to any master). Two
// keys may fall in different slots, which a cluster refuses (CROSSSLOT),
// and a __rand_int__ argument is not a key kvbench can route. A command
// with PlaceholderTag goes to the master of its tag, whatever its keys:
// each of them should carry the tag.
func CheckCluster(cmds []Command) []error {
	var errs []error
	for _, cmd := range cmds {
		if slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.Contains(a, PlaceholderTag) }) {
			continue
		}
		keys, ints := 0, 0
		for _, a := range cmd.Args {
			keys += strings.Count(a, PlaceholderKey)
			ints += strings.Count(a, PlaceholderRandInt)
		}
		switch {
		case ints > 0:
			errs = append(errs, fmt.Errorf("command %q: in cluster mode a key must be %s, so that it can be routed to its slot's master (%s is not routed), or carry %s",
				cmd.String(), PlaceholderKey, PlaceholderRandInt, PlaceholderTag))
		case keys > 1:
			errs = append(errs, fmt.Errorf("command %q names %d keys: in cluster mode a command may name one, since keys of different slots are refused (CROSSSLOT), or keys that all carry %s",
				cmd.String(), keys, PlaceholderTag))
		}
	}
	return errs
}

// Settings are what a mix is compiled for: the run's keys and values.
type Settings struct {
	// Prefix starts every key.
	Prefix string
	// Keys is the run's key sequence; a command's is the same with its
	// own KeyPattern, and for every command but the first its own seed.
	Keys keyspace.Spec
	// Values are the run's values.
	Values keyspace.Values
	// SingleWriter says the run has one connection and no agents: a
	// counter's replies follow each other and can be checked.
	SingleWriter bool
	// Cluster says the run drives a cluster: PlaceholderTag is a
	// placeholder, not literal text.
	Cluster bool
}

// Placeholder kinds of a piece.
const (
	phNone   uint8 = iota
	phDigits       // a key index, zero-padded to width
	phKey          // a key index, padded to width, longer past it (Insert, Latest)
	phData         // a value
	phArg          // the start of an argument whose length varies per request
	phArgEnd       // its end: its "$len" header is inserted before it
	phTag          // a hash tag of TagWidth bytes (Tagger)
)

// Piece is literal bytes followed by a placeholder.
type Piece struct {
	lit   []byte
	kind  uint8
	width int // phDigits, phKey
}

// Plan is a Command compiled: a request is its Pieces in order.
type Plan struct {
	// Name is the command's name, Text the command as typed.
	Name, Text string
	Pieces     []Piece
	// Then is Command.Then compiled, nil without it: its key
	// placeholders all take the first key of Pieces.
	Then []Piece
	// Verify: the reply is the value of the request's first key, or null
	// (a GET of keys only the mix's SETs or the prefill write).
	Verify bool
	// Step, when not 0, makes the command a counter whose replies are
	// checked: each reply for a key is the previous one plus Step.
	// FixedKey: its key has no placeholder (one counter).
	Step     int64
	FixedKey bool
	// Keys is the command's key sequence.
	Keys keyspace.Spec
	// Values are the run's values.
	Values keyspace.Values
	// Keyed says the command names a key (__key__); KeyBefore and
	// KeyAfter surround the first one in its argument ("user:" and "" for
	// "user:__key__"): a cluster routes the request by that argument.
	Keyed               bool
	KeyBefore, KeyAfter string
	// Read says the command only reads (Reads): a run that reads from
	// replicas sends it to one. Draws is how many keys a request draws.
	Read  bool
	Draws int
	// Tagged says the command has PlaceholderTag (cluster mode): a
	// cluster routes the request by its tag, and RandKeyed that it has
	// a key placeholder whose first draw picks the master.
	Tagged, RandKeyed bool
	// Wait says the command is the mix's WAIT (Wait.Command), sent after
	// writes rather than drawn: its reply counts the replicas.
	Wait bool
}

// Compile returns the plans of a mix.
func Compile(cmds []Command, s Settings) []Plan {
	var out []Plan
	for i, cmd := range cmds {
		ks := s.Keys
		if cmd.KeyPattern != "" {
			ks.Pattern = cmd.KeyPattern
		}
		if (ks.Pattern == keyspace.Zipf || ks.Pattern == keyspace.Latest) && ks.Zipf == 0 {
			ks.Zipf = keyspace.DefaultZipf
		}
		if i > 0 { // the first command's keys are those of a set/get run
			ks.Seed = int64(keyspace.Mix64(uint64(s.Keys.Seed) ^ keyspace.Mix64(uint64(i))))
		}
		p := Plan{Name: CommandName(cmd), Text: cmd.String(), Keys: ks, Values: s.Values, Verify: readVerifiable(cmds, i)}
		if s.SingleWriter {
			p.Step = counterStep(cmds, i)
			p.FixedKey = len(cmd.Args) > 1 && !strings.Contains(cmd.Args[1], PlaceholderKey) && !strings.Contains(cmd.Args[1], PlaceholderRandInt)
		}
		p.Pieces = compileArgs(s, cmd.Args, cmd.Inline, ks.Pattern.PastKeyspace())
		p.Read, p.Draws = Reads(cmd), Draws(p.Pieces)
		if len(cmd.Then) > 0 {
			p.Then = compileArgs(s, cmd.Then, false, ks.Pattern.PastKeyspace())
		}
		for _, a := range cmd.Args {
			if b, a, ok := strings.Cut(a, PlaceholderKey); ok && !p.Keyed {
				p.Keyed, p.KeyBefore, p.KeyAfter = true, b, a
			}
			p.Tagged = p.Tagged || s.Cluster && strings.Contains(a, PlaceholderTag)
			p.RandKeyed = p.RandKeyed || strings.Contains(a, PlaceholderKey) || strings.Contains(a, PlaceholderRandInt)
		}
		out = append(out, p)
	}
	return out
}

// compileArgs compiles one command's arguments; varKey: its keys may be
// longer than the keyspace's width.
func compileArgs(s Settings, args []string, inline, varKey bool) []Piece {
	var pieces []Piece
	var lit []byte
	width := s.Keys.Width()
	add := func(b []byte) { lit = append(lit, b...) }
	flush := func(kind uint8, width int) {
		pieces = append(pieces, Piece{lit: lit, kind: kind, width: width})
		lit = nil
	}
	if !inline {
		add(resp.AppendArray(nil, len(args)))
	}
	for j, a := range args {
		// An argument's length varies with its keys past the keyspace
		// or its value sizes: its header is made per request.
		vary := !inline && (varKey && strings.Contains(a, PlaceholderKey) ||
			s.Values.Sizes != nil && strings.Contains(a, PlaceholderData))
		switch {
		case inline && j > 0:
			add([]byte{' '})
		case vary:
			flush(phArg, 0)
		case !inline:
			add([]byte("$" + strconv.Itoa(argLen(a, s)) + "\r\n"))
		}
		for a != "" {
			k, ph := nextPlaceholder(a, s.Cluster)
			if k < 0 {
				add([]byte(a))
				break
			}
			add([]byte(a[:k]))
			switch ph {
			case PlaceholderKey:
				add([]byte(s.Prefix))
				if varKey {
					flush(phKey, width)
				} else {
					flush(phDigits, width)
				}
			case PlaceholderRandInt:
				flush(phDigits, RandIntWidth)
			case PlaceholderData:
				flush(phData, 0)
			case PlaceholderTag:
				add([]byte{'{'})
				flush(phTag, 0)
				add([]byte{'}'})
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

// Keys draws the keys of one request.
type Keys interface {
	// Key returns the request's next key index; first is true for its
	// first key, the one a cluster routes the request by.
	Key(first bool) uint64
}

// A Tagger is the Keys of a request with PlaceholderTag: Tag is the hash
// tag of its master.
type Tagger interface {
	Tag() *[TagWidth]byte
}

// Append appends a request made of pieces (p.Pieces or p.Then): each key
// placeholder a new draw from keys, or key when keys is nil; __data__
// the value of the first key. It returns the first key.
func (p *Plan) Append(dst []byte, pieces []Piece, keys Keys, key uint64) ([]byte, uint64) {
	drawn := keys == nil
	arg := 0
	for k := range pieces {
		pc := &pieces[k]
		dst = append(dst, pc.lit...)
		switch pc.kind {
		case phDigits, phKey:
			v := key
			if keys != nil {
				v = keys.Key(!drawn)
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
				key, drawn = keys.Key(true), true
			}
			dst = p.Values.Append(dst, key)
		case phArg:
			arg = len(dst)
		case phArgEnd:
			dst = insertBulkHeader(dst, arg)
		case phTag:
			if t, ok := keys.(Tagger); ok {
				dst = append(dst, t.Tag()[:]...)
			} else {
				dst = append(dst, "tag"...)
			}
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

// nextPlaceholder finds the first placeholder in a: its index (-1: none)
// and which.
func nextPlaceholder(a string, cluster bool) (int, string) {
	at, which := -1, ""
	for _, ph := range []string{PlaceholderKey, PlaceholderRandInt, PlaceholderData, PlaceholderTag} {
		if ph == PlaceholderTag && !cluster {
			continue
		}
		if k := strings.Index(a, ph); k >= 0 && (at < 0 || k < at) {
			at, which = k, ph
		}
	}
	return at, which
}

// argLen is the length of argument a once its placeholders are replaced.
func argLen(a string, s Settings) int {
	n := len(a)
	n += strings.Count(a, PlaceholderKey) * (len(s.Prefix) + s.Keys.Width() - len(PlaceholderKey))
	n += strings.Count(a, PlaceholderRandInt) * (RandIntWidth - len(PlaceholderRandInt))
	n += strings.Count(a, PlaceholderData) * (s.Values.Size - len(PlaceholderData))
	return n
}

// Table returns the cumulative ratios of a mix, for drawing a command
// with one random number.
func Table(cmds []Command) []uint64 {
	cum := make([]uint64, len(cmds))
	var s uint64
	for i, c := range cmds {
		s += uint64(max(c.Ratio, 1))
		cum[i] = s
	}
	return cum
}
