package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestRankBudgetByHand: HybridEP's static budget (rank-capacity=F) on a
// SwiGLU model of hidden 1024, 16 experts of FFN 512, top-2, at 4,096
// tokens a GPU. The budget is int(4,096 x 2 x 1.25) = 10,240 rows,
// already a multiple of 256; the most loaded rank's GEMMs take 8,274
// rows (a load of 1.01); the scaled SwiGLU runs over all 10,240, so its
// padding is 1,966 rows x 512 columns, read twice and written once in
// BF16: 3 x 1,966 x 512 x 2 = 6,039,552 bytes, 6.039552 us at 1e12 B/s
// (no launch: the kernel is the experts' own), its backward twice that.
// At ETP 2 each rank's 256 columns over 2 x 10,240 rows against 16,548
// are the same bytes. Not priced (its declaration, When) without the
// budget or without HybridEP; none where the rank receives its budget
// (10,240 rows or more). The
// dispatch's host synchronizations: HybridEP's one, none under the
// budget.
func TestRankBudgetByHand(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=4096,batch=8,experts=16,topk=2,expert_ffn=512")
	hw := roofline.Hardware{MemBandwidth: 1e12, FP16: 1e18}
	hw.MemEff[graph.ClassElementwise] = 1
	hw.ComputeEff[graph.ClassElementwise] = 1
	shard := func(etp int, hybrid bool, f float64) *cost.Shard {
		pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, EP: 8, ETP: etp, TPs: []int{1},
			Run: plan.Settings{Dispatcher: plan.DispatcherFlex, HybridEP: hybrid, RankCapacity: f}}
		return &cost.Shard{M: m, Plan: pl, H: &hw, Tokens: 4096}
	}
	const pad = 3 * 1966 * 512 * 2 / 1e12
	for _, c := range []struct {
		name   string
		s      *cost.Shard
		priced bool
		rows   float64
		want   float64
		syncs  float64
	}{
		{"etp 1", shard(1, true, 1.25), true, 8274, pad, 0},
		{"etp 2", shard(2, true, 1.25), true, 16548, pad, 0},
		{"at the budget", shard(1, true, 1.25), true, 10240, 0, 0},
		{"over the budget", shard(1, true, 1.25), true, 10500, 0, 0},
		{"no budget", shard(1, true, 0), false, 8274, 0, 1},
		{"deepep", shard(1, false, 1.25), false, 8274, 0, 1},
	} {
		if got := cost.Applies(RankBudget{}, c.s); got != c.priced {
			t.Errorf("%s: priced %t, want %t", c.name, got, c.priced)
		}
		var fwd, bwd cost.Phase
		if c.priced {
			fwd, bwd = RankBudget{}.ExpertOutput(c.s, c.rows, 2, 4096)
		}
		if math.Abs(fwd.Busy-c.want) > 1e-15 || math.Abs(bwd.Busy-2*c.want) > 1e-15 || fwd.Launches+bwd.Launches != 0 {
			t.Errorf("%s: padding %g / %g s (%g launches), want %g / %g", c.name, fwd.Busy, bwd.Busy, fwd.Launches+bwd.Launches, c.want, 2*c.want)
		}
		if got := (Dispatcher{Shard: c.s}).DispatchSyncs(); got != c.syncs {
			t.Errorf("%s: %g host synchronizations, want %g", c.name, got, c.syncs)
		}
	}
}
