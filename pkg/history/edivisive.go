package history

import (
	"math/rand/v2"
	"slices"
)

// E-Divisive means, after Matteson and James (2014), with the exponent
// α = 1, as MongoDB's signal-processing-algorithms and Hunter use it.
// Written here rather than taken from a library: Go has none, and it is
// small. For a split of x at τ (left x[:τ], right x[τ:], sizes a and b,
// m = a+b) the divergence is
//
//	q̂(τ) = ab/m · ( 2/(ab) Σ|xᵢ−xⱼ| − 1/C(a,2) Σ|xᵢ−xₖ| − 1/C(b,2) Σ|xⱼ−xₖ| )
//
// with the sums over pairs across, within the left and within the right;
// the best split maximizes it. It is significant when few permutations
// of the segment give a larger best q̂ (a permutation test). Splitting
// goes on hierarchically, the most divergent segment first, until the
// best split left is not significant.

// edParams are E-Divisive's parameters.
type edParams struct {
	// alpha is the permutation test's level.
	alpha float64
	// permutations is how many permutations a test draws at most.
	permutations int
	// minSize is the fewest points a segment may have.
	minSize int
	// window is the longest stretch searched at once; longer series are
	// searched in windows overlapping by half (as Hunter does), which
	// keeps the cost linear in the series' length and finds change points
	// the whole series' largest one would hide.
	window int
}

// defaultED are the parameters Detect uses: a candidate needs p ≤ 0.05
// against 199 permutations, and the U test confirms it afterwards at a
// stricter level. A stricter permutation test would miss a change with
// 2 or 3 runs after it in a short series: so few runs can be arranged in
// too few ways to reach it (TestShortSeries).
var defaultED = edParams{alpha: 0.05, permutations: 199, minSize: 2, window: 50}

// bestSplit returns the split τ of x (minSize ≤ τ ≤ len(x)-minSize) with
// the largest q̂, and that q̂; τ is 0 when x is too short to split. The
// sums are updated as the split moves right, O(len(x)²) in all.
func bestSplit(x []float64, minSize int) (tau int, best float64) {
	m := len(x)
	if m < 2*minSize {
		return 0, 0
	}
	var within float64 // all pairs, then the right's
	for i := range m {
		for j := i + 1; j < m; j++ {
			within += abs(x[i] - x[j])
		}
	}
	var left, across float64
	right := within
	for t := 0; t < m-minSize; t++ {
		// Move x[t] from the right to the left.
		var toLeft, toRight float64
		for i := range t {
			toLeft += abs(x[i] - x[t])
		}
		for j := t + 1; j < m; j++ {
			toRight += abs(x[j] - x[t])
		}
		left += toLeft
		right -= toRight
		across += toRight - toLeft
		a, b := float64(t+1), float64(m-t-1)
		if t+1 < minSize {
			continue
		}
		q := 2*across/(a*b) - left/(a*(a-1)/2) - right/(b*(b-1)/2)
		q *= a * b / float64(m)
		if tau == 0 || q > best {
			tau, best = t+1, q
		}
	}
	return tau, best
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// significant runs the permutation test of a segment whose best split has
// divergence q: the share of shuffles of x whose best split diverges at
// least as much, counting the observed one, must be at most alpha. It
// stops as soon as the answer is no.
func (p edParams) significant(x []float64, q float64, rng *rand.Rand) bool {
	buf := slices.Clone(x)
	limit := int(p.alpha * float64(p.permutations+1)) // the most exceedances a significant test allows, the observed one counted
	exceed := 1
	for range p.permutations {
		rng.Shuffle(len(buf), func(i, j int) { buf[i], buf[j] = buf[j], buf[i] })
		if _, qp := bestSplit(buf, p.minSize); qp >= q {
			if exceed++; exceed > limit {
				return false
			}
		}
	}
	return true
}

// segment is a stretch [lo, hi) of the series with its best split.
type segment struct {
	lo, hi, tau int
	q           float64
}

// divisive finds the change points of x (each the index of the first
// point after a change), hierarchically: the segment with the most
// divergent split is tested and split, until a test fails.
func (p edParams) divisive(x []float64, rng *rand.Rand) []int {
	seg := func(lo, hi int) segment {
		tau, q := bestSplit(x[lo:hi], p.minSize)
		return segment{lo: lo, hi: hi, tau: tau, q: q}
	}
	segs := []segment{seg(0, len(x))}
	var cps []int
	for {
		best := -1
		for i, s := range segs {
			if s.tau > 0 && (best < 0 || s.q > segs[best].q) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		s := segs[best]
		if !p.significant(x[s.lo:s.hi], s.q, rng) {
			break
		}
		cut := s.lo + s.tau
		cps = append(cps, cut)
		segs = slices.Replace(segs, best, best+1, seg(s.lo, cut), seg(cut, s.hi))
	}
	slices.Sort(cps)
	return cps
}

// candidates are the change points of x found window by window: every
// window of p.window points, overlapping by half, is searched on its own
// (the next one starting at the last change found, when that is later).
func (p edParams) candidates(x []float64, rng *rand.Rand) []int {
	if len(x) <= p.window {
		return p.divisive(x, rng)
	}
	var out []int
	step := p.window / 2
	for start := 0; start < len(x); {
		end := min(start+p.window, len(x))
		found := p.divisive(x[start:end], rng)
		for _, c := range found {
			out = append(out, start+c)
		}
		if end == len(x) {
			break
		}
		next := start + step
		if len(found) > 0 {
			next = max(next, start+found[len(found)-1])
		}
		start = next
	}
	slices.Sort(out)
	return slices.Compact(out)
}
