package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
)

// Ratio is an estimate of the ratio of two sides' figures (new/old, or
// a/b) with its confidence interval: the one shape every comparison of
// kvbench reports, paired (measured close together in time) or not.
type Ratio struct {
	// Est is the estimate of the ratio; NaN when there is nothing to
	// estimate from.
	Est float64
	// Lo and Hi bound the interval; NaN when there is no interval (too few
	// measurements for any).
	Lo, Hi float64
	// Confidence is the interval's exact level: at least the requested one
	// when there are enough measurements, below it otherwise; 0 when there
	// is no interval.
	Confidence float64
	// N is the number of measurements behind it: pairs for a paired ratio,
	// the smaller side for an unpaired one.
	N int
}

// HalfWidth is the interval's half-width relative to the estimate,
// (Hi-Lo)/(2·Est): 0.03 for an interval of ±3%. +Inf when there is no
// interval, so that no precision is ever met by nothing.
func (r Ratio) HalfWidth() float64 {
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || !(r.Est > 0) {
		return math.Inf(1)
	}
	return (r.Hi - r.Lo) / (2 * r.Est)
}

// Change is the ratio as a change in percent, (ratio - 1) * 100 with 2
// decimals, as RatioCI gives it: the estimate and the interval's bounds,
// NaN where the Ratio has none.
func (r Ratio) Change() (est, lo, hi float64) {
	pct := func(x float64) float64 {
		if math.IsNaN(x) {
			return x
		}
		return Round2((x - 1) * 100)
	}
	return pct(r.Est), pct(r.Lo), pct(r.Hi)
}

// String formats the ratio as the reports print it: "0.93 [0.91, 0.95]",
// or "0.93 [no interval]".
func (r Ratio) String() string {
	if math.IsNaN(r.Est) {
		return "no estimate"
	}
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) {
		return fmt.Sprintf("%.2f [no interval]", r.Est)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", r.Est, r.Lo, r.Hi)
}

// Verdict is what a comparison lets a user conclude.
type Verdict string

// The verdicts, as the comparisons CSV spells them.
const (
	// Faster: the interval lies wholly on the better side of 1 and not
	// wholly inside the margin.
	Faster Verdict = "faster"
	// Slower: the interval lies wholly on the worse side of 1 and not
	// wholly inside the margin.
	Slower Verdict = "slower"
	// Equivalent: the interval lies inside [1-margin, 1+margin]: whatever
	// the difference is, it is not larger than the margin.
	Equivalent Verdict = "equivalent"
	// Undecided: the interval straddles 1 and reaches beyond the margin
	// (or there is no interval): more measurements are needed.
	Undecided Verdict = "undecided"
)

// VerdictOf classifies r against a margin (0.03 for ±3%).
// higherIsBetter says which side of 1 is "faster": true for throughput,
// false for latency. Equivalence is checked first: an interval inside
// the margin says "no difference larger than the margin", which is what a
// user acts on, even when it also excludes 1 (a real difference smaller
// than the margin).
func VerdictOf(r Ratio, margin float64, higherIsBetter bool) Verdict {
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) {
		return Undecided
	}
	switch {
	case margin > 0 && r.Lo >= 1-margin && r.Hi <= 1+margin:
		return Equivalent
	case r.Lo > 1:
		if higherIsBetter {
			return Faster
		}
		return Slower
	case r.Hi < 1:
		if higherIsBetter {
			return Slower
		}
		return Faster
	}
	return Undecided
}

// VerdictAt is VerdictOf for an interval asked for at a confidence
// level: an interval below that level (too few measurements for it: 2
// rounds against 2 reach 66.67%, 5 pairs 93.75%) decides nothing, and is
// Undecided, as a significance test at that level would be.
func VerdictAt(r Ratio, margin float64, higherIsBetter bool, confidence float64) Verdict {
	if r.Confidence < confidence {
		return Undecided
	}
	return VerdictOf(r, margin, higherIsBetter)
}

// PairedRatio estimates the ratio a/b from paired measurements: a[i] and
// b[i] were taken close together in time (one block of interleaved
// slices), so the slow drift of a shared machine, which both see alike,
// cancels in their log-ratio. The estimate is the Hodges–Lehmann center of
// the pairs' log-ratios (the median of their Walsh averages) and the
// interval the Wilcoxon signed-rank interval around it, at the given
// level: distribution-free for log-ratios symmetric about their center,
// and robust to the odd disturbed pair, which a mean and a t interval are
// not. Every value must be positive; pairs with a non-positive side are
// left out. Neither slice is modified.
//
// With fewer pairs than the level needs (6 at 95%), the interval is the
// widest there is, [min, max] of the Walsh averages, at its exact level;
// with one pair there is no interval.
func PairedRatio(a, b []float64, confidence float64) Ratio {
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if a[i] > 0 && b[i] > 0 {
			d = append(d, math.Log(a[i])-math.Log(b[i]))
		}
	}
	return signedRankInterval(d, confidence)
}

// LogRatioInterval is PairedRatio for log-ratios already formed (each the
// difference of two sides' mean log figures in one block).
func LogRatioInterval(d []float64, confidence float64) Ratio {
	return signedRankInterval(slices.Clone(d), confidence)
}

// signedRankInterval works on d, which it may reorder.
func signedRankInterval(d []float64, confidence float64) Ratio {
	nan := math.NaN()
	n := len(d)
	r := Ratio{Est: nan, Lo: nan, Hi: nan, N: n}
	if n == 0 {
		return r
	}
	// The Walsh averages (d_i + d_j)/2, i <= j: n(n+1)/2 of them.
	w := make([]float64, 0, n*(n+1)/2)
	for i := range n {
		for j := i; j < n; j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	m := len(w)
	center := w[m/2]
	if m%2 == 0 {
		center = (w[m/2-1] + w[m/2]) / 2
	}
	r.Est = math.Exp(center)
	if n < 2 {
		return r
	}
	// k is the largest count with P(T <= k-1) <= (1-confidence)/2, T the
	// signed-rank statistic: the interval runs from the k-th smallest
	// Walsh average to the k-th largest.
	cdf := signedRankCDF(n)
	half := (1 - confidence) / 2
	k := 0
	for k < m/2 && cdf(k) <= half {
		k++
	}
	if k == 0 {
		k = 1
	}
	r.Confidence = 1 - 2*cdf(k-1)
	r.Lo, r.Hi = math.Exp(w[k-1]), math.Exp(w[m-k])
	return r
}

// exactSignedRank bounds the pairs for which the signed-rank statistic's
// distribution is counted exactly; above it the normal approximation (with
// a continuity correction) is used, whose error is then far below what
// the interval's width can show.
const exactSignedRank = 60

// signedRankCDF is P(T <= t) for the Wilcoxon signed-rank statistic of n
// pairs under the null: exact below exactSignedRank, by counting the
// subsets of {1..n} with each rank sum.
func signedRankCDF(n int) func(t int) float64 {
	if n > exactSignedRank {
		mu := float64(n*(n+1)) / 4
		sigma := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
		return func(t int) float64 { return moremath.StdNormal.CDF((float64(t) + 0.5 - mu) / sigma) }
	}
	cum := signedRankTable(n)
	return func(t int) float64 {
		if t < 0 {
			return 0
		}
		if t >= len(cum) {
			return 1
		}
		return cum[t]
	}
}

var signedRankTables sync.Map // n → []float64 (cumulative)

// signedRankTable is the cumulative distribution of the signed-rank
// statistic of n pairs, computed once per n.
func signedRankTable(n int) []float64 {
	if v, ok := signedRankTables.Load(n); ok {
		return v.([]float64)
	}
	maxT := n * (n + 1) / 2
	// counts[t] is the number of subsets of {1..k} summing to t; float64
	// holds 2^60 exactly enough for probabilities.
	counts := make([]float64, maxT+1)
	counts[0] = 1
	for k := 1; k <= n; k++ {
		for t := maxT; t >= k; t-- {
			counts[t] += counts[t-k]
		}
	}
	total := math.Ldexp(1, n)
	cum := make([]float64, maxT+1)
	var acc float64
	for t, c := range counts {
		acc += c
		cum[t] = acc / total
	}
	signedRankTables.Store(n, cum)
	return cum
}

// UnpairedRatio estimates new/old from two independent samples (runs
// before and after a change, rounds of two scenarios): the Hodges–Lehmann
// estimate of the log-ratio and the Mann–Whitney interval of RatioCI, as
// a Ratio. N is the smaller sample's size.
func UnpairedRatio(old, new []float64, confidence float64) Ratio {
	est, lo, hi, actual := ratioCI(old, new, confidence)
	r := Ratio{Est: math.Exp(est), Lo: math.Exp(lo), Hi: math.Exp(hi), Confidence: actual, N: min(len(old), len(new))}
	if math.IsNaN(est) {
		r.Est = math.NaN()
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		r.Lo, r.Hi = math.NaN(), math.NaN()
	}
	return r
}

// Precision is the stopping rule of an adaptive run: measure until every
// comparison's interval is within ±Target, with at least MinPairs pairs
// behind it, so that a few lucky measurements never stop a run.
type Precision struct {
	// Target is the relative half-width to reach: 0.03 for ±3%.
	Target float64
	// Confidence is the interval's level.
	Confidence float64
	// MinPairs is the fewest pairs a comparison may stop on.
	MinPairs int
}

// DefaultMinPairs is the fewest pairs an adaptive comparison stops on: 6
// is the fewest for which the signed-rank interval reaches 95% at all,
// and with fewer a run of near-identical lucky pairs could look precise.
const DefaultMinPairs = 6

// Reached says whether r is precise enough to stop measuring it.
func (p Precision) Reached(r Ratio) bool {
	minPairs := p.MinPairs
	if minPairs < DefaultMinPairs {
		minPairs = DefaultMinPairs
	}
	return r.N >= minPairs && r.Confidence >= p.Confidence && r.HalfWidth() <= p.Target
}

// DefaultPrecision is the relative half-width an adaptive run measures
// its comparisons to, and the margin of their verdicts: ±3%, a difference
// smaller than the run-to-run spread of a quiet machine.
const DefaultPrecision = 0.03

// ParsePrecision parses a precision given as a percentage, "3%" (or
// "3"), into a fraction (0.03). It accepts above 0 and at most 50%.
func ParsePrecision(s string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(p > 0) || p > 50 {
		return 0, fmt.Errorf("precision %q: want a percentage above 0 and at most 50%%, e.g. 3%%", s)
	}
	return p / 100, nil
}

// FormatPrecision prints a precision as the flags take it: 0.03 is "3%".
func FormatPrecision(p float64) string {
	return strconv.FormatFloat(p*100, 'g', 6, 64) + "%"
}
