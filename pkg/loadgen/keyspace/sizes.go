package keyspace

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxValueSize is the largest value size, Redis's proto-max-bulk-len.
const MaxValueSize = 512 << 20

// SizeRange is one entry of a value size distribution (Config.ValueSizes):
// sizes Min to Max bytes, uniformly, with Weight its share of the keys.
type SizeRange struct{ Min, Max, Weight int }

// String is the entry as ParseValueSizes takes it.
func (r SizeRange) String() string {
	s := strconv.Itoa(r.Min)
	if r.Max != r.Min {
		s += "-" + strconv.Itoa(r.Max)
	}
	return s + ":" + strconv.Itoa(r.Weight)
}

// FormatValueSizes is a distribution as ParseValueSizes takes it.
func FormatValueSizes(rs []SizeRange) string {
	var w []string
	for _, r := range rs {
		w = append(w, r.String())
	}
	return strings.Join(w, ",")
}

// ParseValueSize parses a value size: "32" (fixed, returned as size with
// no ranges) or a uniform range "32-1024" (one range).
func ParseValueSize(s string) (size int, ranges []SizeRange, err error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	a, errA := strconv.Atoi(lo)
	if !isRange {
		if errA != nil || a < 0 || a > MaxValueSize {
			return 0, nil, fmt.Errorf("%q: want a size in bytes (0 to %d) or a range MIN-MAX", s, MaxValueSize)
		}
		return a, nil, nil
	}
	b, errB := strconv.Atoi(hi)
	if errA != nil || errB != nil || a < 0 || b < a || b > MaxValueSize {
		return 0, nil, fmt.Errorf("%q: want a range MIN-MAX of sizes in bytes, 0 <= MIN <= MAX <= %d", s, MaxValueSize)
	}
	return b, []SizeRange{{a, b, 1}}, nil
}

// ParseValueSizes parses a weighted list of sizes, memtier_benchmark's
// --data-size-list: "32:60,1024:30,16384:10" gives 60% of the keys 32-byte
// values, 30% 1024 and 10% 16384; an entry may be a range ("32-64:60").
// Errors name the offending entry.
func ParseValueSizes(s string) ([]SizeRange, error) {
	var out []SizeRange
	for _, w := range strings.Split(s, ",") {
		sz, wt, ok := strings.Cut(strings.TrimSpace(w), ":")
		n, err := strconv.Atoi(wt)
		if !ok || err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want SIZE:WEIGHT, the weight a whole number >= 1", w)
		}
		size, r, err := ParseValueSize(sz)
		if err != nil {
			return nil, fmt.Errorf("%q: size %w", w, err)
		}
		if r == nil {
			r = []SizeRange{{size, size, 1}}
		}
		r[0].Weight = n
		out = append(out, r[0])
	}
	return out, nil
}

// SizeErrors checks a distribution.
func SizeErrors(rs []SizeRange) []error {
	var errs []error
	var sum uint64
	for _, r := range rs {
		if r.Min < 0 || r.Max < r.Min || r.Max > MaxValueSize || r.Weight < 1 {
			errs = append(errs, fmt.Errorf("value sizes %s: want 0 <= MIN <= MAX <= %d and a weight >= 1", r, MaxValueSize))
		}
		sum += uint64(max(r.Weight, 0))
	}
	if sum > 1<<40 {
		errs = append(errs, fmt.Errorf("value sizes %s: weights sum to more than 2^40", FormatValueSizes(rs)))
	}
	return errs
}

// Sizes gives each key its value size from a distribution.
type Sizes struct {
	seed   int64
	ranges []SizeRange
	cum    []uint64 // cumulative weights
	max    int      // the largest size
}

// NewSizes returns the sizes the distribution rs gives the keys of a run
// of this seed; nil when rs is empty (every value has the run's size).
func NewSizes(rs []SizeRange, seed int64) *Sizes {
	if len(rs) == 0 {
		return nil
	}
	z := &Sizes{seed: seed, ranges: rs}
	var s uint64
	for _, r := range rs {
		s += uint64(r.Weight)
		z.cum = append(z.cum, s)
		z.max = max(z.max, r.Max)
	}
	return z
}

// Max is the largest size of the distribution.
func (z *Sizes) Max() int { return z.max }

// Of is the size of key i's value: an entry of the list chosen by weight
// and a size in its range, both by a hash of (seed, i), so that a reader
// knows the size of every value a writer of the same seed wrote.
func (z *Sizes) Of(i uint64) int {
	h := Mix64(uint64(z.seed) ^ 0x73697a6573 ^ Mix64(i+golden)) // "sizes"
	x, _ := bits.Mul64(h, z.cum[len(z.cum)-1])
	k := 0
	for x >= z.cum[k] {
		k++
	}
	r := z.ranges[k]
	if r.Max == r.Min {
		return r.Min
	}
	off, _ := bits.Mul64(Mix64(h), uint64(r.Max-r.Min+1))
	return r.Min + int(off)
}
