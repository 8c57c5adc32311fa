package testutil

import "gonum.org/v1/gonum/stat/distuv"

// ChiSquareP is the p-value of Pearson's chi-square test of the counts
// obs against the probabilities want (summing to 1): adjacent cells are
// merged, in order, until each expects at least 5 draws.
func ChiSquareP(obs []int, want []float64) (p float64, df int) {
	var total float64
	for _, o := range obs {
		total += float64(o)
	}
	var stat, e, o float64
	cells := 0
	for i := range obs {
		e += want[i] * total
		o += float64(obs[i])
		if e >= 5 || i == len(obs)-1 {
			stat += (o - e) * (o - e) / e
			cells++
			e, o = 0, 0
		}
	}
	df = cells - 1
	return distuv.ChiSquared{K: float64(df)}.Survival(stat), df
}
