package keyspace

import "math"

// Pattern is the order in which a connection picks keys.
type Pattern string

// The key patterns.
const (
	// Random picks keys uniformly at random.
	Random Pattern = "random"
	// Sequential walks the keyspace in order: 0, 1, 2, ..., wrapping.
	Sequential Pattern = "sequential"
	// Permutation walks a seeded pseudo-random permutation of the
	// keyspace: random-looking order, every key exactly once per pass, so a
	// run of at most Keyspace writes never writes a key twice.
	Permutation Pattern = "permutation"
	// Zipf picks keys with a Zipf distribution of exponent Spec.Zipf: the
	// rank-r key (r from 1) has probability proportional to 1/r^s. Ranks
	// are spread over the keyspace by the seeded permutation.
	Zipf Pattern = "zipf"
	// Gaussian picks keys with a normal distribution of mean Spec.Median
	// and standard deviation Spec.Stddev, rounded, drawn again when
	// outside the keyspace (memtier_benchmark's G pattern). Keys are not
	// permuted: the hot keys are the indices near the median.
	Gaussian Pattern = "gaussian"
	// Insert writes new keys past the keyspace, each once: connection c
	// of C (global index) takes Keyspace+c, Keyspace+c+C, ... Its key
	// names have more digits than the keyspace's once they pass its width.
	Insert Pattern = "insert"
	// Latest reads the newest keys most (YCSB's "latest"): a Zipf draw of
	// exponent Spec.Zipf over the connection's keys in the order they were
	// written, newest first: its own Insert keys, then the keyspace from
	// its end (see docs/bench.md).
	Latest Pattern = "latest"
)

// PatternNames lists the key patterns for error messages.
const PatternNames = "random, sequential, permutation, zipf, gaussian, latest or insert"

// Known reports whether p is one of the patterns.
func (p Pattern) Known() bool {
	switch p {
	case Random, Sequential, Permutation, Zipf, Gaussian, Insert, Latest:
		return true
	}
	return false
}

// PastKeyspace reports whether p names keys past the keyspace (Insert,
// and Latest, which reads them).
func (p Pattern) PastKeyspace() bool { return p == Latest || p == Insert }

// DefaultZipf is the exponent of Zipf and Latest when none is given.
const DefaultZipf = 0.99

// MaxStddev bounds Spec.Stddev in keyspaces: a draw lands in the keyspace
// at least once in 300 tries on average.
const MaxStddev = 100

// Spec is what a key sequence is drawn from: the keyspace, its keys'
// numbers (Key, End) and how they are named (Width, AppendName), and the
// order they are drawn in. Every part of the load generator numbers and
// names its keys through it.
type Spec struct {
	// Keyspace is the number of keys, at positions 0 to Keyspace-1.
	Keyspace int64
	// First is the number of the key at position 0: the keys are
	// numbered First to First+Keyspace-1 (memtier_benchmark's
	// --key-minimum to --key-maximum).
	First uint64
	// Pattern is the order of the keys.
	Pattern Pattern
	// Zipf is the exponent of Zipf and Latest.
	Zipf float64
	// Median and Stddev shape Gaussian.
	Median, Stddev float64
	// Seed drives every random choice.
	Seed int64
}

// Key is the number of the key at position i of the keyspace: the
// number its name and its value are made of.
func (s Spec) Key(i int64) uint64 { return s.First + uint64(i) }

// End is one past the largest key number of the keyspace; the keys of
// the Insert pattern are numbered from it.
func (s Spec) End() uint64 { return s.First + uint64(s.Keyspace) }

// Width is the number of digits of a key number in its name: the
// largest key number's (KeyWidth of End), at least 1.
func (s Spec) Width() int { return KeyWidth(int64(s.End())) }

// AppendName appends the name of key number key: prefix, then the
// number zero-padded to Width digits (or with all its digits, past End).
func (s Spec) AppendName(dst []byte, prefix string, key uint64) []byte {
	return AppendKeyDigits(append(dst, prefix...), key, s.Width())
}

// Gen is one connection's key sequence. Sequential and permutation
// positions are striped over the connections (connection c of C takes
// positions c, c+C, c+2C, ...), so that together the connections walk each
// pass of the keyspace exactly once; random, zipf and gaussian draw from a
// stream seeded by (seed, c).
type Gen struct {
	pattern Pattern
	first   uint64 // the number of the key at position 0 (Spec.First)
	n       uint64
	pos     uint64 // next position, < n
	stride  uint64 // connections mod n
	r       Rand
	perm    *perm
	zipf    *zipf
	// median and stddev shape Gaussian.
	median, stddev float64
	// inserted counts the connection's Insert draws, shared by the key
	// sequences of its mix's commands (Latest reads it); conn and conns
	// are its global index and the connections.
	inserted    *uint64
	conn, conns uint64
}

// NewGen returns connection conn's (of conns) key sequence of s.
func NewGen(s Spec, conn, conns int) *Gen {
	n := uint64(s.Keyspace)
	g := &Gen{
		pattern: s.Pattern,
		first:   s.First,
		n:       n,
		pos:     uint64(conn) % n,
		stride:  uint64(conns) % n,
		r:       Rand(Mix64(uint64(s.Seed)^Mix64(uint64(conn)+1)) ^ 0x6b657973), // "keys"
		conn:    uint64(conn),
		conns:   uint64(conns),
	}
	switch g.pattern {
	case Permutation, Zipf:
		g.perm = newPerm(n, s.Seed)
	}
	switch g.pattern {
	case Zipf:
		g.zipf = newZipf(n, s.Zipf)
	case Latest:
		g.zipf = newZipf(n, s.Zipf)
		fallthrough
	case Insert:
		g.inserted = new(uint64)
	}
	g.median, g.stddev = s.Median, s.Stddev
	return g
}

// Pattern is the sequence's pattern.
func (g *Gen) Pattern() Pattern { return g.pattern }

// Pos is the position of the next key in the walk of a sequential or
// permutation sequence; SetPos moves it.
func (g *Gen) Pos() uint64       { return g.pos }
func (g *Gen) SetPos(pos uint64) { g.pos = pos }

// RankBy ranks a Zipf sequence's keys by the permutation of seed, so
// that the sequences of a mix's commands share their hot keys: the keys a
// mix reads most are those it writes most, as in YCSB's workloads.
func (g *Gen) RankBy(seed int64) {
	if g.pattern == Zipf {
		g.perm = newPerm(g.n, seed)
	}
}

// ShareInserts makes the Insert and Latest sequences of gens, one
// connection's, count one set of inserted keys: Latest reads what the
// Insert sequences wrote.
func ShareInserts(gens []*Gen) {
	inserted := new(uint64)
	for _, g := range gens {
		if g.inserted != nil {
			g.inserted = inserted
		}
	}
}

// gaussian returns a key index drawn from the normal distribution of
// mean g.median and deviation g.stddev, rounded, drawn again until it is
// in the keyspace (Box-Muller, one of the pair).
func (g *Gen) gaussian() uint64 {
	for {
		u1 := 1 - g.r.Float() // (0, 1]: the log is finite
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*g.r.Float())
		x := math.Round(g.median + g.stddev*z)
		if x >= 0 && x < float64(g.n) {
			return uint64(x)
		}
	}
}

// Next returns the next key's number.
func (g *Gen) Next() uint64 { return g.first + g.next() }

// next returns the position of the next key.
func (g *Gen) next() uint64 {
	switch g.pattern {
	case Random:
		return g.r.Below(g.n)
	case Zipf:
		return g.perm.at(g.zipf.sample(&g.r) - 1)
	case Gaussian:
		return g.gaussian()
	}
	if g.inserted != nil { // Insert or Latest: kept out of the switch, which the plain patterns walk
		if g.pattern == Latest {
			return g.latest()
		}
		k := g.n + *g.inserted*g.conns + g.conn
		*g.inserted++
		return k
	}
	p := g.pos
	g.pos += g.stride
	if g.pos >= g.n {
		g.pos -= g.n
	}
	if g.pattern == Permutation {
		return g.perm.at(p)
	}
	return p
}

// latest returns a key index drawn from the connection's keys in the
// order they were written, newest first, ranked by the Zipf distribution
// (YCSB's "latest"): rank 1 is the connection's last insert, rank
// inserted its first, then the keyspace from Keyspace-1 down to 0 (a
// prefill writes it in that order). A connection reads only keys it
// inserted itself or the keyspace, so a read never overtakes the insert
// it follows: both travel on the same connection, in order.
func (g *Gen) latest() uint64 {
	ins := *g.inserted
	g.zipf.resize(g.n + ins)
	r := g.zipf.sample(&g.r)
	if r <= ins {
		return g.n + (ins-r)*g.conns + g.conn
	}
	return g.n - 1 - (r - ins - 1)
}
