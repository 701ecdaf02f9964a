package families

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// MTP is DeepSeek-V3's multi-token prediction (transformer.Spec.MTP
// modules) on the last stage beside the output layer
// (cost.PredictionModules).
type MTP struct{}

var _ cost.PredictionModules = MTP{}

// Name is the trait's registered name.
func (MTP) Name() string { return "multi-token-prediction" }

// When is the trait's declaration: a model that predicts further
// tokens (Spec.MTP > 0).
func (MTP) When() cost.When { return mtpWhen }

var mtpWhen = cost.When{cost.Model("multi-token prediction", func(m *transformer.Spec) bool { return m.MTP > 0 })}

// Modules is the multi-token-prediction modules on the last stage for
// one micro-batch on one GPU, forward and backward, as Megatron-Core's
// MultiTokenPredictionLayer runs DeepSeek-V3's (arXiv 2412.19437 section
// 2.2; Megatron-LM's multi_token_prediction guide): each the shared
// embedding's lookup of the next tokens (e.Embed: the last stage's copy
// of the embedding with pipeline stages), an RMS norm of it and of the
// main model's last hidden state, the two concatenated and projected
// from 2 x Hidden to Hidden (eh_proj, column-parallel: its output
// gathered back over the tensor group), one block like the model's last
// (e.Block: an MoE block in a model with experts: DeepSeek-V3's MTP
// module is a full block of the main model's kind), and the shared
// output layer with its own cross-entropy (e.Output). The block keeps its
// activations (not recomputed).
func (MTP) Modules(c *cost.Shard, e cost.Ends) (fwd, bwd cost.Phase) {
	m := c.M
	n, h := c.Tokens, float64(m.Hidden)
	T := float64(c.Plan.TP)
	sp := c.SP()
	act := n * h * cost.BF16
	norm := cost.Kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	cat := cost.Kernel{Class: graph.ClassDataMovement, Read: 2 * act * sp, Writes: 2 * act * sp}
	g := c.LGEMM(2*n*2*h*h/T, 2*act+2*h*h/T*cost.BF16, act/T)
	b := c.Back(g)
	before, _, _, bwdBefore := c.TPKinds()
	var gather cost.Phase
	if c.Plan.TP > 1 && !c.NoComm {
		ct, _ := c.Pod.Collective(roofline.AllGather, c.TPG, act)
		gather = cost.Phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1}
	}
	bf, bb := e.BlockFwd, e.BlockBwd
	ef, eb, of, ob := e.EmbedFwd, e.EmbedBwd, e.OutputFwd, e.OutputBwd
	t := c.Run
	fwd = ef.Plus(t(norm)).Plus(t(norm)).Plus(t(cat)).Plus(c.Pair(g, before, 2*act)).Plus(gather).Plus(bf).Plus(of)
	bwd = ob.Plus(bb).Plus(gather).Plus(c.Pair(b, bwdBefore, 2*act)).Plus(c.Pair(b, before, 2*act)).
		Plus(t(cost.Twice(cat))).Plus(t(cost.Twice(norm))).Plus(t(cost.Twice(norm))).Plus(eb)
	if c.FP8Fwd > 0 {
		fwd, bwd = fwd.Plus(mechanisms.Casts(c, 2*n*h*sp)), bwd.Plus(mechanisms.BwdCasts(c, 2*n*h*sp))
	}
	x := float64(m.MTP)
	return cost.Scale(fwd, x), cost.Scale(bwd, x)
}

var _ cost.PredictionMemory = MTP{}

// ModuleCount is the model's multi-token-prediction modules
// (transformer.Spec.MTP; cost.PredictionMemory).
func (MTP) ModuleCount(m transformer.Spec) float64 { return float64(m.MTP) }

// ModuleParams is one module's parameters on one GPU of a tensor group
// of T (transformer.MTPParams' share): the projection of 2h to h
// (column-parallel), its two norms, and its block's, block.
func (MTP) ModuleParams(m transformer.Spec, T, block float64) float64 {
	h := float64(m.Hidden)
	return 2*h*h/T + 2*h + block
}

// ModuleActivations is what one module keeps for one micro-batch on one
// GPU: the two norms' inputs and the projection's input (2 + 2 + 4
// units of s b h bytes unit, the latter 2 where the low-precision recipe
// keeps FP8 inputs; sequence-parallel: sp), and its block's, block
// (kept, not recomputed).
func (MTP) ModuleActivations(recipe string, unit, sp, block float64) float64 {
	proj := 4.0
	if plan.KeepsFP8Inputs(recipe) {
		proj = 2
	}
	return (2+2+proj)*unit*sp + block
}
