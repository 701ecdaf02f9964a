package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// RankBudget is HybridEP's static receive budget (rank-capacity=F:
// Megatron-Core's moe_expert_rank_capacity_factor; plan/rankcapacity.go
// has the code it is read from) at the experts' output (cost.ExpertOutput):
// the compute the padding costs. The budget's buffer has
// plan.Plan.RankBudget rows whatever the rank receives, and what runs
// over it is Transformer Engine's op fuser (TransformerEngine d0067d0,
// transformer_engine/pytorch/ops): the grouped GEMMs take the
// per-expert counts on the device (basic/grouped_linear.py "Keep on GPU
// for graph safety") and compute the received rows, which the experts'
// GEMMs already price; the scaled activation between them
// (basic/swiglu.py ScaledSwiGLU, ScaledClampedQGeGLU: fuser_forward's
// _scaled_glu_forward over the whole input tensor, no split sizes) runs
// over every row of the buffer. So the padding's compute is the
// activation's forward and its backward (twice, as the experts' own) on
// the buffer's rows beyond those received: the difference of the
// activation's time over the two, no launch of its own. None where the
// rank receives its budget or more (an overflow: the step rerun eager by
// PagedStashRunner, not priced; plan.checkRankCapacity refuses a stated
// imbalance above the budget).
type RankBudget struct{}

var _ cost.ExpertOutput = RankBudget{}

// Name is the mechanism's registered name.
func (RankBudget) Name() string { return "rank-budget" }

// When is the budget's declaration: a plan that gives HybridEP a static
// budget.
func (RankBudget) When() cost.When { return rankBudgetWhen }

var rankBudgetWhen = cost.When{
	cost.MoE,
	cost.Setting("dispatcher=hybridep, rank-capacity>0", func(st *plan.Settings) bool { return st.HybridEP && st.RankCapacity > 0 }),
}

// ExpertOutput is the padding rows' activation, forward and backward, on
// shard c whose most loaded rank's expert GEMMs take rows (recv x ETP)
// of nl tokens a GPU.
func (RankBudget) ExpertOutput(c *cost.Shard, rows, _, nl float64) (fwd, bwd cost.Phase) {
	pl := &c.Plan
	etp := float64(pl.ETP)
	full := pl.RankBudget(nl, c.M.TopK) * etp
	if full <= rows {
		return fwd, bwd
	}
	cols := float64(c.M.ExpertFFN) / etp
	act := func(r float64) float64 {
		k := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 10 * r * cols, Read: r * cols * cost.BF16, Writes: r * cols * cost.BF16}
		if c.M.SwiGLU() {
			k = cost.Kernel{Class: graph.ClassElementwise, FLOPs: 6 * r * cols, Read: 2 * r * cols * cost.BF16, Writes: r * cols * cost.BF16}
		}
		return k.Time(c.H)
	}
	pad := act(full) - act(rows)
	return cost.Phase{Busy: pad}, cost.Phase{Busy: 2 * pad}
}
