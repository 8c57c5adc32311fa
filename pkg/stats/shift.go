package stats

import (
	"math"
	"slices"

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
	d := make([]float64, 0, n1*n2)
	for _, y := range new {
		for _, x := range old {
			d = append(d, math.Log(y)-math.Log(x))
		}
	}
	slices.Sort(d)
	mid := len(d) / 2
	est = d[mid]
	if len(d)%2 == 0 {
		est = (d[mid-1] + d[mid]) / 2
	}
	// k is the largest count with P(U <= k-1) <= (1-confidence)/2: the
	// interval runs from the k-th smallest difference to the k-th largest.
	half := (1 - confidence) / 2
	cdf := moremath.UDist{N1: n1, N2: n2}.CDF
	if n1*n2 > exactUPairs {
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		cdf = func(u float64) float64 { return moremath.StdNormal.CDF((u + 0.5 - mu) / sigma) }
	}
	k := 0
	for k < len(d)/2 && cdf(float64(k)) <= half {
		k++
	}
	if k == 0 {
		// Too few values for the level: the widest interval, from the
		// smallest difference to the largest, at its exact confidence
		// (66.67% for 2 against 2), as the report does for the median.
		k = 1
	}
	if actual = 1 - 2*cdf(float64(k-1)); actual <= 0 {
		return est, math.NaN(), math.NaN(), 0 // 1 against 1: no interval
	}
	return est, d[k-1], d[len(d)-k], actual
}
