package keyspace

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

// cumulative returns the n+1 partial sums of p, from 0.
func cumulative(p []float64) []float64 {
	c := make([]float64, len(p)+1)
	for i, v := range p {
		c[i+1] = c[i] + v
	}
	return c
}

// zipfProbs is P(rank k) of the Zipf distribution over ranks 1..n.
func zipfProbs(n int, s float64) []float64 {
	p := make([]float64, n)
	var sum float64
	for k := range p {
		p[k] = math.Pow(float64(k+1), -s)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// TestKeyDistributions: 200,000 draws of each random key pattern fit its
// definition by a chi-square test at the 0.1% level: uniform; zipf by
// rank (the permutation inverted); gaussian truncated to the keyspace,
// per key; latest by rank, the newest insert first, then the keyspace
// from its end, with inserts interleaved as a mix makes them.
func TestKeyDistributions(t *testing.T) {
	const n, draws = 1000, 200_000
	base := Spec{Keyspace: n, Seed: 11, Zipf: 0.99, Median: 400, Stddev: 120}
	gaussian := make([]float64, n)
	var gsum float64
	for k := range gaussian {
		gaussian[k] = math.Exp(-0.5 * math.Pow((float64(k)-400)/120, 2))
		gsum += gaussian[k]
	}
	for k := range gaussian {
		gaussian[k] /= gsum
	}
	uniform := make([]float64, n)
	for k := range uniform {
		uniform[k] = 1.0 / n
	}
	for _, tc := range []struct {
		pattern Pattern
		want    []float64
		cell    func(g *Gen, key uint64) int // the cell of a draw
	}{
		{Random, uniform, func(_ *Gen, k uint64) int { return int(k) }},
		{Gaussian, gaussian, func(_ *Gen, k uint64) int { return int(k) }},
		{Zipf, zipfProbs(n, 0.99), func(g *Gen, k uint64) int {
			for r := range uint64(n) { // invert the permutation
				if g.perm.at(r) == k {
					return int(r)
				}
			}
			return -1
		}},
	} {
		t.Run(string(tc.pattern), func(t *testing.T) {
			c := base
			c.Pattern = tc.pattern
			g := NewGen(c, 0, 1)
			obs := make([]int, n)
			inv := map[uint64]int{}
			for range draws {
				k := g.Next()
				cell, ok := inv[k]
				if !ok {
					cell = tc.cell(g, k)
					inv[k] = cell
				}
				obs[cell]++
			}
			if p, df := testutil.ChiSquareP(obs, tc.want); p < 0.001 {
				t.Errorf("chi-square p = %.2g (%d degrees of freedom): not the %s distribution", p, df, tc.pattern)
			}
		})
	}

	// Latest: one connection of three, inserting every 20th of 50,000
	// draws. Each
	// read's rank is counted against the Zipf distribution over the keys
	// written so far, by its probability integral transform: the ranks'
	// cumulative probabilities are uniform, tested in 20 cells.
	t.Run("latest", func(t *testing.T) {
		c := base
		c.Pattern = Latest
		const conn, conns = 1, 3
		read := NewGen(c, conn, conns)
		ins := c
		ins.Pattern = Insert
		insert := NewGen(ins, conn, conns)
		insert.inserted = read.inserted
		obs := make([]int, 20)
		r := Rand(5)
		var cum []float64
		for i := range draws / 4 {
			if i%20 == 19 {
				k := insert.Next()
				if k < n || (k-n)%conns != conn {
					t.Fatalf("insert %d: not past the keyspace in the connection's stripe", k)
				}
				continue
			}
			ins := *read.inserted
			k := read.Next()
			var rank uint64 // 1: the newest key
			if k >= n {
				rank = ins - (k-n-conn)/conns
			} else {
				rank = ins + n - k
			}
			if len(cum) != int(n+ins)+1 {
				cum = cumulative(zipfProbs(int(n+ins), 0.99))
			}
			// A uniform point within the rank's probability mass.
			u := cum[rank-1] + r.Float()*(cum[rank]-cum[rank-1])
			obs[min(int(u*20), 19)]++
		}
		want := make([]float64, 20)
		for i := range want {
			want[i] = 1.0 / 20
		}
		if p, df := testutil.ChiSquareP(obs, want); p < 0.001 {
			t.Errorf("chi-square p = %.2g (%d degrees of freedom): ranks are not Zipf over the newest keys: %v", p, df, obs)
		}
	})
}
