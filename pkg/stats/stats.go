// Package stats owns the arithmetic behind kvbench's reports: the 2-decimal
// number conventions, the trimming rule that drops one outlying round per
// scenario, descriptive statistics of a scenario's rounds (mean, median,
// coefficient of variation, min/max, a confidence interval of the median) and
// the significance test between two scenarios.
//
// The confidence interval and the Mann–Whitney U test come from
// golang.org/x/perf/benchmath, the package behind benchstat, so a kvbench
// verdict means what a benchstat verdict means. Where benchmath has no
// finite interval (too few rounds for the level), Describe gives the widest
// order-statistic interval, [min, max], at its exact confidence instead of
// an unbounded one (see Describe).
//
// No function here sorts or otherwise modifies the caller's slice.
package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/perf/benchmath"
)

// Defaults used by the report; exported so documentation and flags cannot drift.
const (
	// DefaultAlpha is the significance level of Compare: a difference is
	// significant when p <= DefaultAlpha (benchstat's rule).
	DefaultAlpha = 0.05
	// DefaultConfidence is the level of the median's confidence interval.
	DefaultConfidence = 0.95
	// MaxCV is the coefficient of variation, in percent, above which a
	// scenario's rounds are reported as too noisy to trust.
	MaxCV = 5.0
	// MinRounds is the number of ok rounds below which a scenario is
	// reported as too short to trust.
	MinRounds = 5
	// MinTrimRounds is the number of rounds the trimming rule needs: with
	// fewer, nothing is dropped.
	MinTrimRounds = 3
)

// Format2 formats x with exactly 2 decimals, as every figure of a report is
// printed. It formats the binary float64 value (strconv's correctly rounded
// 'f' format, ties to even on exact halves), which is what the seed
// reports' printf("%.2f") did: a mean of 7.135 is held as
// 7.13499999999999978… and prints as 7.13.
func Format2(x float64) string {
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Round2 returns the float64 nearest to x as Format2 prints it, so that
// figures derived from a rounded figure use exactly the digits shown.
// Non-finite values are returned unchanged.
func Round2(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	// Fast path, exact: y = x*100 is within |y|*2^-53 < 2e-4 of the true
	// product when |y| < 1e12. If the true product is not within 1e-3 of a
	// half-way point, rounding y to the nearest integer c gives the digits
	// %.2f prints, and c/100 (an exact integer divided by 100, correctly
	// rounded) is the float64 ParseFloat would return for them.
	if y := x * 100; math.Abs(y) < 1e12 {
		f := math.Floor(y)
		if d := y - f - 0.5; d < -1e-3 || d > 1e-3 {
			c := f
			if d > 0 {
				c++
			}
			return c / 100
		}
	}
	v, err := strconv.ParseFloat(Format2(x), 64)
	if err != nil { // cannot happen for a finite float
		return x
	}
	return v
}

// FormatChange formats a percentage change signed with 2 decimals and a
// percent sign: "-6.58%", "+6.90%"; a change that rounds to zero is
// "+0.00%", never "-0.00%".
func FormatChange(pct float64) string {
	s := Format2(pct)
	if s == "-0.00" {
		s = "0.00"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

// ChangePct is the overhead of variant against baseline in percent,
// (variant/baseline - 1) * 100, computed from the two figures as displayed
// (each rounded with Round2 first) and itself rounded with Round2. It
// returns NaN when either figure is missing (NaN) or the baseline is zero.
func ChangePct(variant, baseline float64) float64 {
	v, b := Round2(variant), Round2(baseline)
	if math.IsNaN(v) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return Round2((v/b - 1) * 100)
}

// Mean is the arithmetic mean of xs, summed in order in float64; NaN for an
// empty slice.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the median of xs (the mean of the two middle values for an even
// count); NaN for an empty slice. xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Trim applies the trimming rule to one scenario's rounds, given in round
// order: it returns the index of the round whose value deviates most from
// the median of all rounds, the earliest one on a tie. With fewer than
// MinTrimRounds values nothing is dropped and Trim returns -1.
func Trim(xs []float64) int {
	if len(xs) < MinTrimRounds {
		return -1
	}
	med := Median(xs)
	drop, worst := -1, -1.0
	for i, x := range xs {
		if d := math.Abs(x - med); d > worst {
			drop, worst = i, d
		}
	}
	return drop
}

// Without returns a new slice holding xs minus the element at index i (all
// of xs when i < 0).
func Without(xs []float64, i int) []float64 {
	out := make([]float64, 0, len(xs))
	for j, x := range xs {
		if j != i {
			out = append(out, x)
		}
	}
	return out
}

// Summary describes one sample of rounds.
type Summary struct {
	// N is the number of values.
	N int
	// Mean, Median, Min and Max are the usual statistics of the values.
	Mean, Median, Min, Max float64
	// StdDev is the sample standard deviation (n-1 denominator); NaN for
	// fewer than 2 values.
	StdDev float64
	// CV is the coefficient of variation, StdDev/|Mean|, in percent; NaN
	// for fewer than 2 values or a zero mean.
	CV float64
	// Lo and Hi bound the confidence interval of the median, two of the
	// values (order statistics); always finite, NaN for fewer than 2
	// values (no interval).
	Lo, Hi float64
	// Confidence is the exact level of [Lo, Hi]: at least the requested
	// one when there are enough values for it, else below it (the
	// interval is then [Min, Max]); 0 when there is no interval.
	Confidence float64
	// Warnings explain figures that cannot be trusted: an interval below
	// the requested level says how many values that level needs.
	Warnings []error
}

// Describe summarizes xs; the median's confidence interval is at the given
// level (e.g. DefaultConfidence). xs is not modified. An empty xs gives a
// Summary whose figures are NaN.
//
// The interval is distribution-free, made of order statistics: the
// probability that the population median lies between the i-th and j-th
// smallest of n values is a sum of binomial(n, 1/2) terms, which needs no
// assumption about the rounds' distribution (benchmark rounds are skewed
// and have outliers, so a normal interval would mislead). With enough
// values it is benchmath's (benchstat's) interval, the narrowest at the
// level or above. With too few for the level (5 values cannot reach 95%,
// 6 can) benchmath bounds it by ±Inf; Describe gives instead the widest
// interval that exists, [min, max], whose exact confidence is
// 1 - 2·(1/2)^n (93.75% for 5 values): a true interval at a stated
// level, rather than no bound at a level it does not have. A bootstrap
// interval would be narrower but its level at n = 5 is only nominal;
// Hodges–Lehmann's bounds a pseudo-median, not the median the report
// prints.
func Describe(xs []float64, confidence float64) Summary {
	nan := math.NaN()
	s := Summary{N: len(xs), Mean: nan, Median: nan, Min: nan, Max: nan, StdDev: nan, CV: nan, Lo: nan, Hi: nan}
	if len(xs) == 0 {
		return s
	}
	s.Mean = Mean(xs)
	s.Min, s.Max = slices.Min(xs), slices.Max(xs)
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(len(xs)-1))
	}
	if s.Mean != 0 {
		s.CV = s.StdDev / math.Abs(s.Mean) * 100
	}
	th := benchmath.DefaultThresholds
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &th), confidence)
	s.Median = sum.Center
	switch n := len(xs); {
	case !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0):
		s.Lo, s.Hi, s.Confidence = sum.Lo, sum.Hi, sum.Confidence
	case n >= 2:
		s.Lo, s.Hi, s.Confidence = s.Min, s.Max, minMaxConfidence(n)
		if need := MedianCIRounds(confidence); need > 0 {
			s.Warnings = append(s.Warnings, fmt.Errorf("the %v%% confidence interval of the median needs %d values; [min, max] of %d is at %v%%",
				confidence*100, need, n, s.Confidence*100))
		} else {
			s.Warnings = append(s.Warnings, fmt.Errorf("the %v%% confidence interval of the median needs more than 50 values; [min, max] of %d is at %v%%",
				confidence*100, n, s.Confidence*100))
		}
	}
	return s
}

// minMaxConfidence is the exact confidence of [min, max] as an interval of
// the median of n values: the probability that some but not all of them
// fall below the median, 1 - 2·(1/2)^n, exact in binary.
func minMaxConfidence(n int) float64 { return 1 - math.Ldexp(1, 1-n) }

// Comparison is the verdict of Compare.
type Comparison struct {
	// P is the two-sided p-value of the Mann–Whitney U test; 1 when the
	// test could not be run (see Warnings).
	P float64
	// Alpha is the significance level the verdict uses.
	Alpha float64
	// N1 and N2 are the sizes of the two samples.
	N1, N2 int
	// Warnings explain a verdict that cannot be trusted (e.g. samples too
	// small to ever reach significance).
	Warnings []error
}

// Significant reports whether the samples differ at level Alpha: p <= Alpha,
// benchstat's rule (benchstat prints "~" otherwise).
func (c Comparison) Significant() bool { return c.P <= c.Alpha }

// Compare tests whether a and b come from the same distribution with
// benchmath's Mann–Whitney U test, as benchstat does. Neither slice is
// modified. alpha <= 0 means DefaultAlpha.
func Compare(a, b []float64, alpha float64) Comparison {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	th := benchmath.Thresholds{CompareAlpha: alpha}
	c := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &th),
		benchmath.NewSample(slices.Clone(b), &th))
	return Comparison{P: c.P, Alpha: c.Alpha, N1: len(a), N2: len(b), Warnings: c.Warnings}
}

// MedianCIRounds is the fewest values for which the confidence interval
// of the median reaches the given level (6 at 95%); 0 if even 50 values
// are too few. With fewer, Describe's interval is [min, max] at a lower,
// exact level.
func MedianCIRounds(confidence float64) int {
	return cachedRounds(&medianCIRounds, confidence, 50, func(n int) bool {
		th := benchmath.DefaultThresholds
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(ramp(0, n), &th), confidence)
		return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0)
	})
}

// SignificanceRounds is the fewest values per side with which Compare can
// find two samples different at level alpha at all (4 at 0.05: below that,
// even samples that do not overlap give p > alpha); 0 if even 20 are
// too few.
func SignificanceRounds(alpha float64) int {
	return cachedRounds(&significanceRounds, alpha, 20, func(n int) bool {
		return Compare(ramp(0, n), ramp(float64(n), n), alpha).Significant()
	})
}

var medianCIRounds, significanceRounds sync.Map // level → rounds

// cachedRounds is the smallest n in [1, limit] for which enough(n) holds,
// computed once per level.
func cachedRounds(cache *sync.Map, level float64, limit int, enough func(n int) bool) int {
	if v, ok := cache.Load(level); ok {
		return v.(int)
	}
	found := 0
	for n := 1; n <= limit; n++ {
		if enough(n) {
			found = n
			break
		}
	}
	cache.Store(level, found)
	return found
}

// ramp is n distinct values from start.
func ramp(start float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = start + float64(i)
	}
	return xs
}
