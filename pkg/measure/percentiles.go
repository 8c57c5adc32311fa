package measure

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Chosen percentiles: besides Latency's fixed ones, a Result may carry a
// list of percentiles (Result.Percentiles, as --percentiles gives them);
// its JSON form then has "percentiles_us", an object of their latencies
// in µs keyed "p50", "p99.9", "p99.99" (PercentileKey), for the whole and
// for each command. They are derived from the histograms when encoded,
// never stored: decoding reads back which percentiles were asked for.

// PercentileKey is percentile p's name: "p" and p in its shortest form
// (p50, p99.9, p99.99).
func PercentileKey(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// ParsePercentileKey is PercentileKey's inverse.
func ParsePercentileKey(k string) (float64, error) {
	s, ok := strings.CutPrefix(k, "p")
	if !ok {
		return 0, fmt.Errorf("percentile %q: want p and a number, as p99.9", k)
	}
	return parsePercentile(s)
}

// ParsePercentiles parses a comma-separated list of percentiles, each
// above 0 and at most 100 ("50,99,99.9,99.99"), and returns them sorted
// without duplicates.
func ParsePercentiles(s string) ([]float64, error) {
	var ps []float64
	for f := range strings.SplitSeq(s, ",") {
		p, err := parsePercentile(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return slices.Compact(ps), nil
}

func parsePercentile(s string) (float64, error) {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !(p > 0 && p <= 100) {
		return 0, fmt.Errorf("percentile %q: want a number above 0 and at most 100", s)
	}
	return p, nil
}

// PercentilesOf returns the latency of h (nanoseconds) at each of ps in
// µs, keyed PercentileKey; nil for no percentiles or an empty histogram,
// whose latencies are unknown, not zero.
func PercentilesOf(h *hdrhistogram.Histogram, ps []float64) map[string]float64 {
	if len(ps) == 0 || h == nil || h.TotalCount() == 0 {
		return nil
	}
	m := make(map[string]float64, len(ps))
	for _, p := range ps {
		m[PercentileKey(p)] = Micros(h.ValueAtQuantile(p))
	}
	return m
}

// percentileKeys returns the percentiles m's keys name, sorted.
func percentileKeys(m map[string]float64) ([]float64, error) {
	var ps []float64
	for k := range m {
		p, err := ParsePercentileKey(k)
		if err != nil {
			return nil, fmt.Errorf("percentiles_us: %w", err)
		}
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps, nil
}
