package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
)

// exactUPairs bounds the pairs (n1 × n2) for which RatioCI picks its
// bounds with the exact U distribution; above it the normal
// approximation is used, whose error is then below the 2-decimal
// rounding of the bounds, and the exact one would cost seconds.
const exactUPairs = 400

// RatioCI is the Hodges–Lehmann estimate of new/old as a change in
// percent, and its confidence interval: the median and the order
// statistics of the pairwise differences between log(new) and log(old),
// chosen with the Mann–Whitney U distribution (go-moremath's UDist), so it
// agrees with Compare's p-value. Every value must be positive. With too
// few values for the level it is the widest interval, at its exact
// confidence; NaN bounds with confidence 0 when that is no interval (one
// value on each side) or a side is empty. Neither slice is modified.
func RatioCI(old, new []float64, confidence float64) (est, lo, hi, actual float64) {
	est, lo, hi, actual = ratioCI(old, new, confidence)
	pct := func(v float64) float64 {
		if math.IsNaN(v) {
			return v
		}
		return Round2((math.Exp(v) - 1) * 100)
	}
	return pct(est), pct(lo), pct(hi), actual
}

// ratioCI is RatioCI in log space: the Hodges–Lehmann estimate of
// log(new) - log(old) and its interval's bounds, unrounded.
func ratioCI(old, new []float64, confidence float64) (est, lo, hi, actual float64) {
	n1, n2 := len(new), len(old)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	m := n1 * n2
	// k is the largest count with P(U <= k-1) <= (1-confidence)/2: the
	// interval runs from the k-th smallest difference to the k-th largest.
	half := (1 - confidence) / 2
	cdf := moremath.UDist{N1: n1, N2: n2}.CDF
	if n1*n2 > exactUPairs {
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		cdf = func(u float64) float64 { return moremath.StdNormal.CDF((u + 0.5 - mu) / sigma) }
	}
	// The cdf ascends: a binary search finds the k a count from 0 would
	// (millions of steps for thousands of rounds a side).
	k := sort.Search(m/2, func(k int) bool { return cdf(float64(k)) > half })
	if k == 0 {
		// Too few values for the level: the widest interval, from the
		// smallest difference to the largest, at its exact confidence
		// (66.67% for 2 against 2), as the report does for the median.
		k = 1
	}
	// The median of the differences log(new) - log(old) (the mean of the
	// two middle ones for an even count) and the k-th smallest and largest.
	mid := m / 2
	d := orderStats(new, old, []int{k - 1, max(mid-1, 0), mid, m - k})
	est = d[2]
	if m%2 == 0 {
		est = (d[1] + d[2]) / 2
	}
	if actual = 1 - 2*cdf(float64(k-1)); actual <= 0 {
		return est, math.NaN(), math.NaN(), 0 // 1 against 1: no interval
	}
	return est, d[0], d[3], actual
}

// sortAllPairs bounds the pairs for which orderStats sorts every
// difference; above it, it selects the few it is asked for without
// forming them all: 2,500 rounds against 2,500 are 6.25 million
// differences, a second to sort, and a report compares dozens of such
// pairs.
const sortAllPairs = 4096

// orderStats returns the order statistics of ranks (from 0, ascending)
// of the n1·n2 differences log(y) - log(x), y of new and x of old: by
// sorting them all when few, else by selection in the matrix of the
// differences (diffMatrix). Both give the very same values.
func orderStats(new, old []float64, ranks []int) []float64 {
	out := make([]float64, len(ranks))
	if len(new)*len(old) <= sortAllPairs {
		d := make([]float64, 0, len(new)*len(old))
		for _, y := range new {
			for _, x := range old {
				d = append(d, math.Log(y)-math.Log(x))
			}
		}
		slices.Sort(d)
		for i, r := range ranks {
			out[i] = d[r]
		}
		return out
	}
	m := newDiffMatrix(new, old)
	lo, hi := make([]int, len(m.a)), make([]int, len(m.a))
	for i := range hi {
		hi[i] = len(m.b)
	}
	m.selectRanks(lo, hi, ranks, out, rand.New(rand.NewPCG(1, 2)))
	return out
}

// diffMatrix holds the differences a[i] - b[j] implicitly: a the logs of
// new ascending, b those of old descending, so that every row and every
// column ascends (a floating-point subtraction is monotone in each
// operand). selectRanks finds order statistics in O((n1+n2) log(n1·n2))
// expected time, as Monahan's algorithm for the Hodges–Lehmann estimate
// does: a random pivot among the candidates left, the count of the
// differences below it and up to it by one walk of the matrix's
// staircase, then the candidates narrowed to the side each rank lies on.
type diffMatrix struct {
	a, b   []float64
	lt, le []int // per row, the entries below and up to the pivot
}

func newDiffMatrix(new, old []float64) *diffMatrix {
	m := &diffMatrix{a: make([]float64, len(new)), b: make([]float64, len(old)), lt: make([]int, len(new)), le: make([]int, len(new))}
	for i, y := range new {
		m.a[i] = math.Log(y)
	}
	for j, x := range old {
		m.b[j] = math.Log(x)
	}
	slices.Sort(m.a)
	slices.Sort(m.b)
	slices.Reverse(m.b)
	return m
}

// counts fills lt and le, per row the entries < p and <= p (a prefix of
// the row), and returns their sums.
func (m *diffMatrix) counts(p float64) (sumLT, sumLE int) {
	jlt, jle := len(m.b), len(m.b)
	for i, a := range m.a { // rows ascend: each row's prefix is no longer than the last's
		for jlt > 0 && a-m.b[jlt-1] >= p {
			jlt--
		}
		for jle > 0 && a-m.b[jle-1] > p {
			jle--
		}
		m.lt[i], m.le[i] = jlt, jle
		sumLT += jlt
		sumLE += jle
	}
	return sumLT, sumLE
}

// selectRanks sets out[i] to the ranks[i]-th smallest difference (ranks
// ascending), among the candidates: row i's columns lo[i] <= j < hi[i],
// those before being below every rank asked for, those after above. It
// narrows lo and hi. The pivots' seed changes only the time taken, never
// the values found.
func (m *diffMatrix) selectRanks(lo, hi, ranks []int, out []float64, rng *rand.Rand) {
	n1, n2 := len(m.a), len(m.b)
	for len(ranks) > 0 {
		left, below := 0, 0
		for i := range n1 {
			left += hi[i] - lo[i]
			below += lo[i]
		}
		if left <= n1+n2 { // few enough to sort: about as long as one more count
			c := make([]float64, 0, left)
			for i := range n1 {
				for j := lo[i]; j < hi[i]; j++ {
					c = append(c, m.a[i]-m.b[j])
				}
			}
			slices.Sort(c)
			for i, r := range ranks {
				out[i] = c[r-below]
			}
			return
		}
		u := rng.IntN(left)
		i := 0
		for u >= hi[i]-lo[i] {
			u -= hi[i] - lo[i]
			i++
		}
		p := m.a[i] - m.b[lo[i]+u]
		sumLT, sumLE := m.counts(p)
		// The ranks below the pivot, at it, and above it.
		nb := sort.SearchInts(ranks, sumLT)
		na := sort.SearchInts(ranks, sumLE)
		for x := nb; x < na; x++ {
			out[x] = p
		}
		if nb > 0 && na < len(ranks) { // both sides: the lower one on its own candidates
			loB, hiB := slices.Clone(lo), slices.Clone(hi)
			for i := range n1 {
				hiB[i] = min(hiB[i], m.lt[i])
			}
			for i := range n1 { // before the recursion overwrites le
				lo[i] = max(lo[i], m.le[i])
			}
			m.selectRanks(loB, hiB, ranks[:nb], out[:nb], rng)
			ranks, out = ranks[na:], out[na:]
			continue
		}
		if nb > 0 {
			for i := range n1 {
				hi[i] = min(hi[i], m.lt[i])
			}
			ranks, out = ranks[:nb], out[:nb]
			continue
		}
		for i := range n1 {
			lo[i] = max(lo[i], m.le[i])
		}
		ranks, out = ranks[na:], out[na:]
	}
}
