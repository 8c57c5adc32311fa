package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFormat2(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{7.135, "7.13"}, // 7.1349999999999997868… in binary
		{(7.15 + 7.21 + 7.20 + 6.98) / 4, "7.13"}, // the seed's kvstore persist_no set
		{6.125, "6.12"}, // exact half: ties to even, as printf does
		{6.135, "6.13"},
		{4.595, "4.59"},
		{(4.75 + 4.72 + 4.94 + 4.32) / 4, "4.68"},
		{140206.5, "140206.50"},
		{0, "0.00"},
		{-6.58151, "-6.58"},
	}
	for _, tt := range tests {
		if got := Format2(tt.in); got != tt.want {
			t.Errorf("Format2(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRound2(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{1e6 / 139895, 7.15},
		{1e6 / 144388, 6.93},
		{7.135, 7.13},
		{2.5, 2.5},
		{-0.004, 0},
	}
	for _, tt := range tests {
		if got := Round2(tt.in); got != tt.want {
			t.Errorf("Round2(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := Round2(x); !(got == x || math.IsNaN(got) && math.IsNaN(x)) {
			t.Errorf("Round2(%v) = %v, want it unchanged", x, got)
		}
	}
}

func TestFormatChange(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{-6.5815, "-6.58%"},
		{6.896, "+6.90%"},
		{0, "+0.00%"},
		{-0.001, "+0.00%"},
		{44.81, "+44.81%"},
	}
	for _, tt := range tests {
		if got := FormatChange(tt.in); got != tt.want {
			t.Errorf("FormatChange(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestChangePct(t *testing.T) {
	tests := []struct {
		name              string
		variant, baseline float64
		want              string
	}{
		{"kvstore persist_no set QPS", 140206.50, 150084.25, "-6.58%"},
		{"kvstore persist_no set us/op", 7.13, 6.67, "+6.90%"},
		{"from the displayed figure, not the exact mean", 7.1349999, 6.67, "+6.90%"},
		{"redis aof_everysec get QPS", 208713.75, 217642.50, "-4.10%"},
		{"redis aof_everysec get us/op", 4.79, 4.59, "+4.36%"},
		{"equal", 5, 5, "+0.00%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatChange(ChangePct(tt.variant, tt.baseline)); got != tt.want {
				t.Errorf("ChangePct(%v, %v) = %s, want %s", tt.variant, tt.baseline, got, tt.want)
			}
		})
	}
	for _, c := range [][2]float64{{1, 0}, {math.NaN(), 1}, {1, math.NaN()}} {
		if got := ChangePct(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("ChangePct(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
}

func TestMeanMedian(t *testing.T) {
	tests := []struct {
		in           []float64
		mean, median float64
	}{
		{[]float64{3, 1, 2}, 2, 2},
		{[]float64{4, 1, 3, 2}, 2.5, 2.5},
		{[]float64{139895, 138768, 138867, 143296, 144388}, 141042.8, 139895},
		{[]float64{5}, 5, 5},
	}
	for _, tt := range tests {
		if got := Mean(tt.in); math.Abs(got-tt.mean) > 1e-9 {
			t.Errorf("Mean(%v) = %v, want %v", tt.in, got, tt.mean)
		}
		if got := Median(tt.in); got != tt.median {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.median)
		}
	}
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(Median(nil)) {
		t.Error("Mean and Median of nothing should be NaN")
	}
}

func TestTrim(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want int
	}{
		{"kvstore persist_no set drops round 5", []float64{139895, 138768, 138867, 143296, 144388}, 4},
		{"kvstore nopersist set drops round 3", []float64{157950, 143109, 135043, 152045, 147233}, 2},
		{"redis none get drops round 1", []float64{225347, 221000, 218357, 216466, 214747}, 0},
		{"redis aof_everysec get drops round 4", []float64{212422, 201051, 211508, 192190, 209874}, 3},
		{"tie: the earliest round", []float64{1, 2, 3}, 0},
		{"tie with an even count", []float64{10, 20, 30, 40}, 0},
		{"all equal: the first", []float64{7, 7, 7}, 0},
		{"three rounds is enough", []float64{100, 101, 150}, 2},
		{"two rounds: nothing dropped", []float64{1, 100}, -1},
		{"one round", []float64{1}, -1},
		{"none", nil, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Trim(tt.in); got != tt.want {
				t.Errorf("Trim(%v) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	in := []float64{1, 2, 3}
	if got := Without(in, 1); !slices.Equal(got, []float64{1, 3}) {
		t.Errorf("Without(_, 1) = %v", got)
	}
	if got := Without(in, -1); !slices.Equal(got, in) {
		t.Errorf("Without(_, -1) = %v", got)
	}
}

// TestNoMutation checks that no function sorts or changes its argument.
func TestNoMutation(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3, 9, 0}
	orig := slices.Clone(in)
	other := []float64{8, 7, 6, 5}
	origOther := slices.Clone(other)
	Median(in)
	Trim(in)
	Without(in, 2)
	Describe(in, DefaultConfidence)
	Compare(in, other, 0)
	if !slices.Equal(in, orig) || !slices.Equal(other, origOther) {
		t.Errorf("input changed: %v (was %v), %v (was %v)", in, orig, other, origOther)
	}
}

func TestDescribe(t *testing.T) {
	t.Run("five rounds: [min, max] at 93.75%", func(t *testing.T) {
		s := Describe([]float64{139895, 138768, 138867, 143296, 144388}, DefaultConfidence)
		if s.N != 5 || s.Min != 138768 || s.Max != 144388 || s.Median != 139895 {
			t.Errorf("got %+v", s)
		}
		if Format2(s.CV) != "1.86" {
			t.Errorf("CV = %v, want 1.86", s.CV)
		}
		if s.Lo != 138768 || s.Hi != 144388 || s.Confidence != 0.9375 {
			t.Errorf("interval [%v, %v] at %v, want [138768, 144388] at 0.9375 (1 - 2/2^5)", s.Lo, s.Hi, s.Confidence)
		}
		if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Error(), "needs 6 values") {
			t.Errorf("warnings %v, want one saying 95%% needs 6 values", s.Warnings)
		}
	})
	t.Run("never infinite", func(t *testing.T) {
		for n := 2; n <= 12; n++ {
			for _, level := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
				xs := ramp(100, n)
				s := Describe(xs, level)
				if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || math.IsNaN(s.Lo) || math.IsNaN(s.Hi) ||
					s.Lo > s.Median || s.Hi < s.Median || !slices.Contains(xs, s.Lo) || !slices.Contains(xs, s.Hi) {
					t.Errorf("n=%d at %v: [%v, %v] around %v", n, level, s.Lo, s.Hi, s.Median)
				}
				// The level is reached exactly when there are enough values.
				if enough := n >= MedianCIRounds(level); enough != (s.Confidence >= level) || enough != (len(s.Warnings) == 0) {
					t.Errorf("n=%d at %v: confidence %v, warnings %v (need %d)", n, level, s.Confidence, s.Warnings, MedianCIRounds(level))
				}
			}
		}
		if s := Describe([]float64{7}, DefaultConfidence); !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) || s.Confidence != 0 {
			t.Errorf("one value: [%v, %v] at %v, want no interval", s.Lo, s.Hi, s.Confidence)
		}
	})
	t.Run("exact confidence of [min, max]", func(t *testing.T) {
		for n, want := range map[int]float64{2: 0.5, 3: 0.75, 4: 0.875, 5: 0.9375} {
			if s := Describe(ramp(0, n), 0.99); s.Confidence != want {
				t.Errorf("n=%d: %v, want %v", n, s.Confidence, want)
			}
		}
	})
	t.Run("ten rounds: a finite interval around the median", func(t *testing.T) {
		xs := []float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
		s := Describe(xs, DefaultConfidence)
		if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || s.Lo > s.Median || s.Hi < s.Median || s.Confidence < DefaultConfidence {
			t.Errorf("got [%v, %v] at %v around %v", s.Lo, s.Hi, s.Confidence, s.Median)
		}
		if len(s.Warnings) != 0 {
			t.Errorf("unexpected warnings %v", s.Warnings)
		}
	})
	t.Run("cv", func(t *testing.T) {
		if s := Describe([]float64{1, 2, 3}, DefaultConfidence); s.StdDev != 1 || s.CV != 50 {
			t.Errorf("StdDev, CV = %v, %v; want 1, 50", s.StdDev, s.CV)
		}
		if s := Describe([]float64{4}, DefaultConfidence); !math.IsNaN(s.StdDev) || !math.IsNaN(s.CV) {
			t.Errorf("one value: StdDev, CV = %v, %v; want NaN, NaN", s.StdDev, s.CV)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if s := Describe(nil, DefaultConfidence); s.N != 0 || !math.IsNaN(s.Mean) || !math.IsNaN(s.CV) {
			t.Errorf("got %+v", s)
		}
	})
}

func TestCompare(t *testing.T) {
	none := []float64{198673, 211843, 193900, 208293, 211071}
	aofNo := []float64{144042, 139615, 140016, 149925, 150658}
	tests := []struct {
		name        string
		a, b        []float64
		significant bool
		p           string // 3 decimals
	}{
		{"redis aof_no set against none", aofNo, none, true, "0.008"},
		{"a sample against itself", none, none, false, "1.000"},
		{"overlapping samples", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, false, "0.690"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.a, tt.b, DefaultAlpha)
			if c.Significant() != tt.significant || strconv.FormatFloat(c.P, 'f', 3, 64) != tt.p {
				t.Errorf("Compare = p %v significant %v, want p %s significant %v", c.P, c.Significant(), tt.p, tt.significant)
			}
			if c.N1 != len(tt.a) || c.N2 != len(tt.b) || c.Alpha != DefaultAlpha {
				t.Errorf("sizes/alpha = %d %d %v", c.N1, c.N2, c.Alpha)
			}
		})
	}
	t.Run("too small to ever be significant", func(t *testing.T) {
		c := Compare([]float64{1, 2}, []float64{10, 11}, DefaultAlpha)
		if c.Significant() || len(c.Warnings) == 0 {
			t.Errorf("got %+v, want not significant with a warning", c)
		}
	})
	t.Run("empty sample", func(t *testing.T) {
		c := Compare(nil, []float64{1, 2, 3}, 0)
		if c.P != 1 || c.Significant() || len(c.Warnings) == 0 || c.Alpha != DefaultAlpha {
			t.Errorf("got %+v, want p=1 with a warning", c)
		}
	})
}

// TestRound2FastPath checks Round2's arithmetic fast path against the
// definition (format with %.2f, parse back) on many values, ties included.
func TestRound2FastPath(t *testing.T) {
	slow := func(x float64) float64 {
		v, _ := strconv.ParseFloat(Format2(x), 64)
		return v
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(x float64) {
		if got, want := Round2(x), slow(x); got != want && !(got == 0 && want == 0) {
			t.Fatalf("Round2(%v) = %v, want %v", x, got, want)
		}
	}
	for range 200000 {
		check(rng.Float64() * 1e6)
		check(float64(rng.IntN(1e8)) / 1000) // many exact and near ties
		check(-rng.Float64() * 100)
		check(rng.NormFloat64() * 1e9)
	}
	for _, x := range []float64{0.005, 0.015, 0.125, 6.125, 7.135, 2.675, 1.005, 1e10 + 0.005, 5e-324, 1e300} {
		check(x)
	}
}

// TestRoundsNeeded: the thresholds the report quotes are benchmath's own
// (its messages say "need >= 6 samples for confidence interval at level
// 0.95", "need >= 4 samples to detect a difference at alpha level 0.05").
func TestRoundsNeeded(t *testing.T) {
	for _, tt := range []struct {
		got, want int
		what      string
	}{
		{MedianCIRounds(0.95), 6, "median CI at 95%"},
		{MedianCIRounds(0.99), 8, "median CI at 99%"},
		{SignificanceRounds(0.05), 4, "U test at 0.05"},
		{SignificanceRounds(0.01), 5, "U test at 0.01"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %d rounds, want %d", tt.what, tt.got, tt.want)
		}
	}
	n := MedianCIRounds(0.95)
	if s := Describe(ramp(1, n-1), 0.95); len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0].Error(), "needs 6 values") {
		t.Errorf("the warning with %d rounds: %v", n-1, s.Warnings)
	}
	if s := Describe(ramp(1, n), 0.95); len(s.Warnings) != 0 {
		t.Errorf("benchmath warns with %d rounds: %v", n, s.Warnings)
	}
}
