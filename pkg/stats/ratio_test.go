package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSignedRankTable(t *testing.T) {
	// n = 6: 64 subsets; P(T <= 0) = 1/64, P(T <= 2) = 3/64 (sums 0, 1, 2).
	cdf := signedRankCDF(6)
	for _, c := range []struct {
		t    int
		want float64
	}{{-1, 0}, {0, 1.0 / 64}, {1, 2.0 / 64}, {2, 3.0 / 64}, {21, 1}, {30, 1}} {
		if got := cdf(c.t); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(T <= %d) = %v, want %v", c.t, got, c.want)
		}
	}
	// The normal approximation takes over smoothly.
	exact, approx := signedRankTable(exactSignedRank), signedRankCDF(exactSignedRank+1)
	mid := len(exact) / 2
	if math.Abs(exact[mid]-approx(mid+exactSignedRank/2+1)) > 0.02 {
		t.Errorf("exact and approximate distributions disagree near the center: %v vs %v", exact[mid], approx(mid))
	}
}

func TestPairedRatio(t *testing.T) {
	a := []float64{110, 108, 112, 109, 111, 110, 107, 113}
	b := []float64{100, 100, 101, 99, 100, 101, 98, 102}
	r := PairedRatio(a, b, 0.95)
	if r.N != 8 || !(r.Lo < r.Est && r.Est < r.Hi) {
		t.Fatalf("PairedRatio = %+v, want an interval around the estimate from 8 pairs", r)
	}
	if r.Est < 1.08 || r.Est > 1.12 || r.Lo < 1.05 || r.Hi > 1.15 {
		t.Errorf("PairedRatio = %v, want about 1.10", r)
	}
	if r.Confidence < 0.95 {
		t.Errorf("confidence %v below the level asked for with 8 pairs", r.Confidence)
	}
	if a[0] != 110 || b[0] != 100 {
		t.Error("PairedRatio modified its input")
	}
	// One pair: an estimate, no interval; no pairs: nothing.
	one := PairedRatio([]float64{2}, []float64{1}, 0.95)
	if one.Est != 2 || !math.IsNaN(one.Lo) || one.Confidence != 0 || !math.IsInf(one.HalfWidth(), 1) {
		t.Errorf("one pair = %+v, want estimate 2 and no interval", one)
	}
	if none := PairedRatio(nil, nil, 0.95); !math.IsNaN(none.Est) || none.String() != "no estimate" {
		t.Errorf("no pairs = %+v", none)
	}
	// Non-positive figures (a failed slice) are left out, not logged.
	if r := PairedRatio([]float64{0, 2, 2}, []float64{1, 1, 1}, 0.95); r.N != 2 || r.Est != 2 {
		t.Errorf("with a zero figure: %+v, want 2 pairs at ratio 2", r)
	}
}

func TestVerdictOf(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		lo, hi float64
		higher bool
		want   Verdict
	}{
		{0.98, 1.02, true, Equivalent},
		{1.01, 1.02, true, Equivalent}, // a real difference, smaller than the margin
		{1.02, 1.05, true, Faster},
		{1.02, 1.05, false, Slower},
		{0.90, 0.95, true, Slower},
		{0.90, 0.95, false, Faster},
		{0.95, 1.05, true, Undecided},
		{nan, nan, true, Undecided},
	} {
		r := Ratio{Est: (c.lo + c.hi) / 2, Lo: c.lo, Hi: c.hi, Confidence: 0.95, N: 10}
		if got := VerdictOf(r, 0.03, c.higher); got != c.want {
			t.Errorf("VerdictOf([%v, %v], ±3%%, higherIsBetter %v) = %s, want %s", c.lo, c.hi, c.higher, got, c.want)
		}
	}
}

func TestPrecisionNeverStopsOnLuck(t *testing.T) {
	p := Precision{Target: 0.03, Confidence: 0.95, MinPairs: 2}
	// Identical pairs give a zero-width interval: still no stop before
	// DefaultMinPairs pairs, whatever MinPairs asks.
	for n := 1; n < DefaultMinPairs; n++ {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = 100, 100
		}
		if r := PairedRatio(a, b, 0.95); p.Reached(r) {
			t.Fatalf("stopped on %d identical pairs: %+v", n, r)
		}
	}
	a, b := make([]float64, DefaultMinPairs), make([]float64, DefaultMinPairs)
	for i := range a {
		a[i], b[i] = 100, 100
	}
	if r := PairedRatio(a, b, 0.95); !p.Reached(r) {
		t.Errorf("%d identical pairs did not reach ±3%%: %+v", DefaultMinPairs, r)
	}
}

// drifting simulates a shared machine's throughput over slices: a slow
// AR(1) drift that every side sees, a slice's own noise, and now and then
// a disturbance that hits one slice hard.
type drifting struct {
	rng                   *rand.Rand
	drift, rho, driftSD   float64
	sliceSD, disturbedPct float64
}

func (m *drifting) slice(logMean float64) float64 {
	m.drift = m.rho*m.drift + m.rng.NormFloat64()*m.driftSD*math.Sqrt(1-m.rho*m.rho)
	x := logMean + m.drift + m.rng.NormFloat64()*m.sliceSD
	if m.rng.Float64() < m.disturbedPct {
		x -= 0.2 + 0.2*m.rng.Float64()
	}
	return math.Exp(x)
}

// simulateRun measures two sides A and B (true ratio a/b = ratio) in
// mirrored blocks, A B B A, until the rule stops it or maxBlocks pass,
// and returns the final interval.
func simulateRun(m *drifting, ratio float64, p Precision, maxBlocks int) Ratio {
	var d []float64
	var r Ratio
	for b := 0; b < maxBlocks; b++ {
		a1 := m.slice(math.Log(ratio))
		b1 := m.slice(0)
		b2 := m.slice(0)
		a2 := m.slice(math.Log(ratio))
		d = append(d, (math.Log(a1)+math.Log(a2))/2-(math.Log(b1)+math.Log(b2))/2)
		r = LogRatioInterval(d, p.Confidence)
		if p.Reached(r) {
			break
		}
	}
	return r
}

// TestPairedCoverage: over 1,000 simulated adaptive runs on a drifting
// machine (drift SD 10%, lag-one correlation 0.97 per slice, 3% slice
// noise, 5% of slices disturbed by 20-40%), the interval the stopping
// rule stops on covers the true ratio at least 94% of the time, for an
// A/A comparison and for a known difference alike, and an A/A run calls a
// difference no more often than its interval misses (about 5%: a
// sequential rule stopped on width costs a fraction of a point of
// coverage, which the test allows for).
//
// It runs without the race detector ("make test" runs it so, beside the
// race-detected tests): 4,000 simulated runs of one goroutine each, whose
// intervals sort up to 20,000 Walsh averages a block, took 5 minutes under
// it on two loaded cores, and the detector has nothing to find in them.
func TestPairedCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 simulated runs per case")
	}
	if raceDetector {
		t.Skip("a simulation of one goroutine: make test runs it without -race")
	}
	p := Precision{Target: 0.03, Confidence: 0.95, MinPairs: DefaultMinPairs}
	for _, c := range []struct {
		name    string
		ratio   float64
		sliceSD float64
	}{
		{"A/A pinned", 1, 0.03},
		{"known 0.75 pinned", 0.75, 0.03},
		{"A/A unpinned", 1, 0.12},
		{"known 1.10 unpinned", 1.10, 0.12},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case draws from a generator of its own
			rng := rand.New(rand.NewPCG(1, uint64(c.ratio*1000+c.sliceSD*1e6)))
			const runs = 1000
			covered, stopped, pairs, falseAlarms := 0, 0, 0, 0
			for range runs {
				m := &drifting{rng: rng, rho: 0.97, driftSD: 0.10, sliceSD: c.sliceSD, disturbedPct: 0.05}
				r := simulateRun(m, c.ratio, p, 200)
				if r.Lo <= c.ratio && c.ratio <= r.Hi {
					covered++
				}
				if p.Reached(r) {
					stopped++
				}
				if c.ratio == 1 {
					if v := VerdictOf(r, 0.03, true); v == Faster || v == Slower {
						falseAlarms++
					}
				}
				pairs += r.N
			}
			coverage := float64(covered) / runs
			t.Logf("coverage %.1f%%, reached ±3%% in %d of %d runs, %.1f pairs on average, %d false alarms",
				coverage*100, stopped, runs, float64(pairs)/runs, falseAlarms)
			if coverage < 0.94 {
				t.Errorf("coverage %.1f%% < 94%%", coverage*100)
			}
			if c.ratio == 1 && falseAlarms > runs*6/100 {
				t.Errorf("A/A: %d false alarms in %d runs, more than 6%%", falseAlarms, runs)
			}
		})
	}
}

func TestUnpairedRatio(t *testing.T) {
	old := []float64{100, 101, 99, 100, 102}
	new := []float64{90, 91, 89, 90, 92}
	r := UnpairedRatio(old, new, 0.95)
	if r.N != 5 || r.Est < 0.89 || r.Est > 0.91 || !(r.Lo <= r.Est && r.Est <= r.Hi) {
		t.Errorf("UnpairedRatio = %+v, want about 0.90", r)
	}
	// It agrees with RatioCI, which prints the same interval as a change.
	est, lo, hi, _ := RatioCI(old, new, 0.95)
	if math.Abs((r.Est-1)*100-est) > 0.01 || math.Abs((r.Lo-1)*100-lo) > 0.01 || math.Abs((r.Hi-1)*100-hi) > 0.01 {
		t.Errorf("UnpairedRatio %v disagrees with RatioCI %v [%v, %v]", r, est, lo, hi)
	}
	if r := UnpairedRatio([]float64{1}, []float64{2}, 0.95); !math.IsNaN(r.Lo) || r.Est != 2 {
		t.Errorf("1 against 1 = %+v, want an estimate and no interval", r)
	}
}

func TestVerdictAt(t *testing.T) {
	low := Ratio{Est: 0.9, Lo: 0.85, Hi: 0.95, Confidence: 0.6667, N: 2}
	if v := VerdictAt(low, 0.03, true, 0.95); v != Undecided {
		t.Errorf("an interval at 66.67%% asked at 95%%: %s, want undecided", v)
	}
	low.Confidence = 0.9683
	if v := VerdictAt(low, 0.03, true, 0.95); v != Slower {
		t.Errorf("at 96.83%%: %s, want slower", v)
	}
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]float64{"3%": 0.03, "3": 0.03, " 0.5% ": 0.005, "50%": 0.5} {
		if got, err := ParsePrecision(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1%", "51%", "x", "NaN"} {
		if _, err := ParsePrecision(in); err == nil {
			t.Errorf("ParsePrecision(%q): want an error", in)
		}
	}
	if s := FormatPrecision(DefaultPrecision); s != "3%" {
		t.Errorf("FormatPrecision(%v) = %q", DefaultPrecision, s)
	}
}

// TestRatioChange: a Ratio as a change in percent is RatioCI's.
func TestRatioChange(t *testing.T) {
	old, new := []float64{100, 101, 99, 100, 102, 98}, []float64{90, 91, 89, 90, 92, 93}
	est, lo, hi := UnpairedRatio(old, new, 0.95).Change()
	e, l, h, _ := RatioCI(old, new, 0.95)
	if est != e || lo != l || hi != h {
		t.Errorf("Change() = %v [%v, %v], RatioCI %v [%v, %v]", est, lo, hi, e, l, h)
	}
	if _, lo, _ := UnpairedRatio([]float64{1}, []float64{2}, 0.95).Change(); !math.IsNaN(lo) {
		t.Errorf("no interval: lo %v, want NaN", lo)
	}
}

// TestPairwiseSelection: the order statistics the matrix selects are the
// very values sorting every difference gives, ties and all, whatever the
// sizes, for one rank or several at once.
func TestPairwiseSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range [][2]int{{1, 4097}, {4097, 1}, {65, 65}, {100, 41}, {300, 200}, {9, 1000}} {
		for _, ties := range []bool{false, true} {
			a, b := make([]float64, n[0]), make([]float64, n[1])
			for i := range a {
				a[i] = 1000 * (1 + 0.05*rng.NormFloat64())
			}
			for i := range b {
				b[i] = 950 * (1 + 0.05*rng.NormFloat64())
			}
			if ties {
				for i := range a {
					a[i] = math.Round(a[i] / 20)
				}
				for i := range b {
					b[i] = math.Round(b[i] / 20)
				}
			}
			var all []float64
			for _, y := range a {
				for _, x := range b {
					all = append(all, math.Log(y)-math.Log(x))
				}
			}
			slices.Sort(all)
			m := len(all)
			for _, ranks := range [][]int{{0}, {m - 1}, {m / 2}, {0, 1, m / 3, m/2 - 1, m / 2, m - 2, m - 1}, {m / 5, m / 5, m - m/5}} {
				got := orderStats(a, b, ranks)
				for i, r := range ranks {
					if got[i] != all[r] {
						t.Fatalf("%d×%d, ties %v, ranks %v: rank %d = %v, want %v", n[0], n[1], ties, ranks, r, got[i], all[r])
					}
				}
			}
		}
	}
}
