package rank

import (
	"math"
	"slices"
	"testing"
)

// TestRanks: ranks by hand, ties at their mean rank.
func TestRanks(t *testing.T) {
	for _, c := range []struct{ x, want []float64 }{
		{[]float64{30, 10, 20}, []float64{3, 1, 2}},
		{[]float64{5, 5, 1, 9}, []float64{2.5, 2.5, 1, 4}},
		{[]float64{7, 7, 7}, []float64{2, 2, 2}},
		{nil, []float64{}},
	} {
		if got := Ranks(c.x); !slices.Equal(got, c.want) {
			t.Errorf("Ranks(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestSpearman: the same order is 1, the reverse -1; with one tie
// (ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4) Pearson's of the ranks is
// 4.5 / sqrt(4.5 * 5) = 0.9487.
func TestSpearman(t *testing.T) {
	if got := Spearman([]float64{1, 2, 3}, []float64{10, 200, 3000}); math.Abs(got-1) > 1e-12 {
		t.Errorf("same order: %v, want 1", got)
	}
	if got := Spearman([]float64{1, 2, 3}, []float64{3, 2, 1}); math.Abs(got+1) > 1e-12 {
		t.Errorf("reverse order: %v, want -1", got)
	}
	if got, want := Spearman([]float64{1, 5, 5, 9}, []float64{1, 2, 3, 4}), 4.5/math.Sqrt(4.5*5); math.Abs(got-want) > 1e-12 {
		t.Errorf("one tie: %v, want %v", got, want)
	}
}
