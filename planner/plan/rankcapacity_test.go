package plan

import "testing"

// TestRankBudgetRows: _HybridEPManager.setup_metadata's budget,
// int(tokens x top-k x F) rounded up to 256: 4,096 x 8 x 1.25 = 40,960
// (160 x 256); 1,000 x 4 x 1.1 = 4,400 -> 4,608 (18 x 256); 3 x 1 x 1
// -> 256; none without the key.
func TestRankBudgetRows(t *testing.T) {
	for _, c := range []struct {
		nl   float64
		k    int
		f    float64
		want float64
	}{{4096, 8, 1.25, 40960}, {1000, 4, 1.1, 4608}, {3, 1, 1, 256}, {4096, 8, 0, 0}} {
		pl := Plan{Run: Settings{RankCapacity: c.f}}
		if got := pl.RankBudget(c.nl, c.k); got != c.want {
			t.Errorf("%g tokens, top-%d, F %g: %g rows, want %g", c.nl, c.k, c.f, got, c.want)
		}
	}
}
