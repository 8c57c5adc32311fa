package loadgen

import (
	"math"
	"math/bits"
)

// KeyWidth is the number of decimal digits of every key index in a
// keyspace of n keys: the width of n-1, at least 1.
func KeyWidth(n int64) int {
	w := 1
	for v := n - 1; v >= 10; v /= 10 {
		w++
	}
	return w
}

// AppendKey appends the name of key i of a keyspace of n keys: prefix, then
// i zero-padded to KeyWidth(n) digits.
func AppendKey(dst []byte, prefix string, n, i int64) []byte {
	dst = append(dst, prefix...)
	return appendDigits(dst, uint64(i), KeyWidth(n))
}

// pow10 holds the powers of ten that fit in a uint64.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// appendKeyDigits appends v zero-padded to w digits, or with all its
// digits when it has more: the names of keys past the keyspace (the
// inserts of KeyInsert), which never collide with the padded ones.
func appendKeyDigits(dst []byte, v uint64, w int) []byte {
	for w < len(pow10) && v >= pow10[w] {
		w++
	}
	return appendDigits(dst, v, w)
}

// appendDigits appends v in decimal, zero-padded (or truncated on the
// left) to exactly w digits.
func appendDigits(dst []byte, v uint64, w int) []byte {
	n := len(dst)
	for range w {
		dst = append(dst, '0')
	}
	for i := n + w - 1; i >= n; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finalizer: a bijective, well-mixed hash of x.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// rng is splitmix64: tiny, fast, inlinable and reproducible across Go
// versions (math/rand/v2's generators are behind an interface on the hot
// path and their streams are not promised to stay the same).
type rng uint64

func (r *rng) next() uint64 {
	*r += golden
	return mix64(uint64(*r))
}

// below returns a value in [0, n) (Lemire's multiply-shift; the bias is
// below n/2^64).
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float returns a value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// feistelRounds is enough rounds of a good round function for a
// statistically random-looking permutation (not a cryptographic one).
const feistelRounds = 4

// perm is a seeded pseudo-random permutation of [0, n): a balanced Feistel
// network over the smallest even number of bits covering n, with cycle
// walking to stay below n (fewer than 4 steps on average).
type perm struct {
	n     uint64
	half  uint
	shift uint // 64 - half
	mask  uint64
	keys  [feistelRounds]uint64
}

func newPerm(n uint64, seed int64) *perm {
	b := uint(bits.Len64(n - 1))
	if b < 2 {
		b = 2
	}
	b += b & 1
	p := &perm{n: n, half: b / 2, shift: 64 - b/2, mask: 1<<(b/2) - 1}
	for i := range p.keys {
		p.keys[i] = mix64(uint64(seed) + golden*uint64(i+1))
	}
	return p
}

// at returns the i-th element of the permutation, i < n.
func (p *perm) at(i uint64) uint64 {
	for {
		l, r := i>>p.half, i&p.mask
		for _, k := range p.keys {
			// Round function: the top bits of a 64-bit product depend
			// on every input bit; one multiply per round is enough for
			// a random-looking order and a quarter of mix64's cost.
			l, r = r, l^((r^k)*golden>>p.shift)
		}
		i = l<<p.half | r
		if i < p.n {
			return i
		}
	}
}

// zipf samples ranks 1..n with P(k) proportional to k^-s, s > 0, by
// rejection-inversion (Hörmann and Derflinger 1996, as in Apache Commons
// RNG's RejectionInversionZipfSampler): O(1) time and memory per sample,
// unlike the table-based methods, and valid for s <= 1 unlike
// math/rand.Zipf.
type zipf struct {
	n, s          float64
	hX1, hN, sDiv float64
}

func newZipf(n uint64, s float64) *zipf {
	z := &zipf{n: float64(n), s: s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.sDiv = 2 - z.hIntegralInv(z.hIntegral(2.5)-z.h(2))
	return z
}

func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-z.s)*lx) * lx
}

func (z *zipf) hIntegralInv(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1
	}
	return math.Exp(log1pOverX(t) * x)
}

// log1pOverX is log1p(x)/x, expm1OverX is expm1(x)/x, both continuous at 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// resize makes the sampler's ranks 1..n (only hN depends on n), for
// KeyLatest's growing keyspace.
func (z *zipf) resize(n uint64) {
	if float64(n) != z.n {
		z.n = float64(n)
		z.hN = z.hIntegral(z.n + 0.5)
	}
}

// sample returns a rank in [1, n].
func (z *zipf) sample(r *rng) uint64 {
	for {
		u := z.hN + r.float()*(z.hX1-z.hN)
		x := z.hIntegralInv(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.sDiv || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}

// keyGen is one connection's key sequence. Sequential and permutation
// positions are striped over the connections (connection c of C takes
// positions c, c+C, c+2C, ...), so that together the connections walk each
// pass of the keyspace exactly once; random, zipf and gaussian draw from a stream
// seeded by (seed, c).
type keyGen struct {
	pattern KeyPattern
	n       uint64
	pos     uint64 // next position, < n
	stride  uint64 // connections mod n
	r       rng
	perm    *perm
	zipf    *zipf
	// median and stddev shape KeyGaussian.
	median, stddev float64
	// inserted counts the connection's KeyInsert draws, shared by the
	// key sequences of its mix's commands (KeyLatest reads it); conn
	// and conns are its global index and the connections.
	inserted    *uint64
	conn, conns uint64
}

// newKeyGen returns connection conn's (of conns) key sequence.
func newKeyGen(c *Config, conn, conns int) *keyGen {
	n := uint64(c.Keyspace)
	g := &keyGen{
		pattern: c.KeyPattern,
		n:       n,
		pos:     uint64(conn) % n,
		stride:  uint64(conns) % n,
		r:       rng(mix64(uint64(c.Seed)^mix64(uint64(conn)+1)) ^ 0x6b657973), // "keys"
		conn:    uint64(conn),
		conns:   uint64(conns),
	}
	switch g.pattern {
	case KeyPermutation, KeyZipf:
		g.perm = newPerm(n, c.Seed)
	}
	switch g.pattern {
	case KeyZipf:
		g.zipf = newZipf(n, c.Zipf)
	case KeyLatest:
		g.zipf = newZipf(n, c.Zipf)
		fallthrough
	case KeyInsert:
		g.inserted = new(uint64)
	}
	g.median, g.stddev = c.KeyMedian, c.KeyStddev
	return g
}

// gaussian returns a key index drawn from the normal distribution of
// mean g.median and deviation g.stddev, rounded, drawn again until it is
// in the keyspace (Box-Muller, one of the pair).
func (g *keyGen) gaussian() uint64 {
	for {
		u1 := 1 - g.r.float() // (0, 1]: the log is finite
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*g.r.float())
		x := math.Round(g.median + g.stddev*z)
		if x >= 0 && x < float64(g.n) {
			return uint64(x)
		}
	}
}

// next returns the next key index.
func (g *keyGen) next() uint64 {
	switch g.pattern {
	case KeyRandom:
		return g.r.below(g.n)
	case KeyZipf:
		return g.perm.at(g.zipf.sample(&g.r) - 1)
	case KeyGaussian:
		return g.gaussian()
	}
	if g.inserted != nil { // KeyInsert or KeyLatest: kept out of the switch, which the plain patterns walk
		if g.pattern == KeyLatest {
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
	if g.pattern == KeyPermutation {
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
func (g *keyGen) latest() uint64 {
	ins := *g.inserted
	g.zipf.resize(g.n + ins)
	r := g.zipf.sample(&g.r)
	if r <= ins {
		return g.n + (ins-r)*g.conns + g.conn
	}
	return g.n - 1 - (r - ins - 1)
}
