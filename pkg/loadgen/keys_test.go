package loadgen

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// TestMixZipfSharesRanking: the commands of a mix draw zipf keys from one
// ranking, so the key a mix reads most is the one it writes most; their
// draws are still independent streams.
func TestMixZipfSharesRanking(t *testing.T) {
	c, err := fill(Config{Commands: []mix.Command{
		{Args: []string{"GET", "__key__"}}, {Args: []string{"SET", "__key__", "__data__"}},
	}, Load: Load{Keyspace: 10_000, Seed: 11, KeyPattern: keyspace.Zipf, Requests: 1}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	g := newCmdKeys(newPlan(c), 0, 1)
	top := func(k *keyspace.Gen) (uint64, []uint64) {
		n := map[uint64]int{}
		var first []uint64
		for i := range 50_000 {
			x := k.Next()
			n[x]++
			if i < 20 {
				first = append(first, x)
			}
		}
		best := uint64(0)
		for x, m := range n {
			if m > n[best] {
				best = x
			}
		}
		return best, first
	}
	get, getFirst := top(g[0])
	set, setFirst := top(g[1])
	if get != set {
		t.Errorf("most read key %d, most written %d: want the same", get, set)
	}
	if fmt.Sprint(getFirst) == fmt.Sprint(setFirst) {
		t.Errorf("GET and SET draw the same keys %v", getFirst)
	}
}

// gaussianChi2 draws n keys from connection 0's sequence of c and returns
// Pearson's chi-square statistic against the rounded normal distribution
// of c's median and stddev truncated to the keyspace, over bins of 10 keys
// merged until each expects at least 20 draws, and its degrees of freedom.
func gaussianChi2(t *testing.T, c Config, n int, median, stddev float64) (float64, int) {
	t.Helper()
	c, err := c.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	g := keyspace.NewGen(c.Keys(), 0, 1)
	counts := make([]float64, c.Keyspace)
	for range n {
		counts[g.Next()]++
	}
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-median)/(stddev*math.Sqrt2)) }
	total := cdf(float64(c.Keyspace)-0.5) - cdf(-0.5)
	var chi2, obs, exp float64
	bins := 0
	for k := int64(0); k < c.Keyspace; k++ {
		obs += counts[k]
		exp += float64(n) * (cdf(float64(k)+0.5) - cdf(float64(k)-0.5)) / total
		if (k+1)%10 == 0 && exp >= 20 || k == c.Keyspace-1 {
			chi2 += (obs - exp) * (obs - exp) / exp
			obs, exp = 0, 0
			bins++
		}
	}
	return chi2, bins - 1
}

// TestGaussianKeys: the gaussian pattern's keys fit its definition (a
// chi-square test over 200,000 draws at the 0.1% level, which a stddev 5%
// off fails), and the median and stddev default to the keyspace's middle
// and a sixth of it.
func TestGaussianKeys(t *testing.T) {
	c := fill(Config{Load: Load{Keyspace: 1000, Seed: 5, KeyPattern: keyspace.Gaussian, KeyMedian: 300, KeyStddev: 150, Requests: 1}})
	// 0.1% critical value of chi-square with df degrees of freedom
	// (Wilson-Hilferty).
	crit := func(df int) float64 {
		k := float64(df)
		return k * math.Pow(1-2/(9*k)+3.09*math.Sqrt(2/(9*k)), 3)
	}
	chi2, df := gaussianChi2(t, c, 200_000, 300, 150)
	if chi2 > crit(df) {
		t.Errorf("chi-square %.1f with %d degrees of freedom: above the 0.1%% critical value %.1f", chi2, df, crit(df))
	}
	if chi2, df := gaussianChi2(t, c, 200_000, 300, 150*1.05); chi2 <= crit(df) {
		t.Errorf("chi-square %.1f against a stddev 5%% off: the test cannot tell", chi2)
	}
	d, err := fill(Config{Load: Load{Keyspace: 1000, KeyPattern: keyspace.Gaussian, Requests: 1}}).Normalize()
	if err != nil || d.KeyMedian != 499.5 || d.KeyStddev != 1000.0/6 {
		t.Errorf("defaults: median %g, stddev %g, %v", d.KeyMedian, d.KeyStddev, err)
	}
	if chi2, df := gaussianChi2(t, d, 200_000, 499.5, 1000.0/6); chi2 > crit(df) {
		t.Errorf("defaults: chi-square %.1f with %d degrees of freedom", chi2, df)
	}
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Load: Load{KeyPattern: keyspace.Gaussian, KeyMedian: 1000}}, "--key-median 1000: want 0 to 999"},
		{Config{Load: Load{KeyPattern: keyspace.Gaussian, KeyStddev: -1}}, "--key-stddev -1"},
		{Config{Load: Load{KeyPattern: keyspace.Gaussian, KeyStddev: 1e6}}, "--key-stddev 1e+06"},
		{Config{Load: Load{KeyPattern: keyspace.Random, KeyStddev: 3}}, "--key-median and --key-stddev need --key-pattern gaussian, not random"},
	} {
		tc.c.Keyspace, tc.c.Requests = 1000, 1
		if _, err := fill(tc.c).Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}
