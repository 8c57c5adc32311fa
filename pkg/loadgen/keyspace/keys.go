package keyspace

import (
	"math"
	"math/bits"
	"slices"
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

// pow10 holds the powers of ten that fit in a uint64.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// AppendKeyDigits appends v zero-padded to w digits, or with all its
// digits when it has more: the names of keys past the keyspace (the
// inserts of KeyInsert), which never collide with the padded ones.
func AppendKeyDigits(dst []byte, v uint64, w int) []byte {
	for w < len(pow10) && v >= pow10[w] {
		w++
	}
	return AppendDigits(dst, v, w)
}

// digitPairs holds "00" to "99", for AppendDigits.
var digitPairs = func() (t [200]byte) {
	for i := range 100 {
		t[2*i], t[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return t
}()

// AppendDigits appends v in decimal, zero-padded (or truncated on the
// left) to exactly w digits. Written by hand, not strconv: it names every
// key of every request (a third of the generator's work per GET), so it
// grows dst once and writes two digits per division.
func AppendDigits(dst []byte, v uint64, w int) []byte {
	n := len(dst)
	dst = slices.Grow(dst, w)[:n+w]
	i := n + w
	for ; i-n >= 2; i -= 2 {
		q := v / 100
		d := 2 * (v - q*100)
		dst[i-2], dst[i-1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if i > n {
		dst[n] = byte('0' + v%10)
	}
	return dst
}

const golden = 0x9e3779b97f4a7c15

// Mix64 is splitmix64's finalizer: a bijective, well-mixed hash of x.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Rand is splitmix64: tiny, fast, inlinable and reproducible across Go
// versions (math/rand/v2's generators are behind an interface on the hot
// path and their streams are not promised to stay the same).
type Rand uint64

// Next returns the next value of the stream.
func (r *Rand) Next() uint64 {
	*r += golden
	return Mix64(uint64(*r))
}

// Below returns a value in [0, n) (Lemire's multiply-shift; the bias is
// below n/2^64).
func (r *Rand) Below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Next(), n)
	return hi
}

// Float returns a value in [0, 1).
func (r *Rand) Float() float64 { return float64(r.Next()>>11) / (1 << 53) }

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
		p.keys[i] = Mix64(uint64(seed) + golden*uint64(i+1))
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
			// a random-looking order and a quarter of Mix64's cost.
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
func (z *zipf) sample(r *Rand) uint64 {
	for {
		u := z.hN + r.Float()*(z.hX1-z.hN)
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
