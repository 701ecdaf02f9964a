package rank

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Spearman is Spearman's rank correlation of x and y: Pearson's
// correlation of their ranks, tied values taking the mean of the ranks
// they span.
func Spearman(x, y []float64) float64 {
	return stat.Correlation(Ranks(x), Ranks(y), nil)
}

// Ranks are x's ranks, 1 the smallest, ties at their mean rank.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}
