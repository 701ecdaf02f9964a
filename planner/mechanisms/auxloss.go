package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// RouterAuxLoss is the router's load-balancing loss beside its top-k
// (Router), as Megatron-Core computes it (moe_router_load_balancing_type
// "aux_loss": Qwen3-MoE's, planner/families' qwen3.go says where
// it was read), on its layers of a model with experts and an aux loss
// coefficient, GPT-OSS's excepted.
type RouterAuxLoss struct{}

var _ cost.RouterKernels = RouterAuxLoss{}

// Name is the mechanism's registered name.
func (RouterAuxLoss) Name() string { return "router-aux-loss" }

// When is the loss's declaration: a router that computes it, a model
// with experts balanced by an auxiliary loss (not GPT-OSS's) on
// Megatron-Core's layers.
func (RouterAuxLoss) When() cost.When { return auxLossWhen }

var auxLossWhen = cost.When{
	cost.MoE,
	cost.Model("aux-loss>0", func(m *transformer.Spec) bool { return m.Config.AuxLoss > 0 }),
	cost.Not(cost.Model("gpt-oss", func(m *transformer.Spec) bool { return m.Config.ModelType == "gpt_oss" })),
	cost.Megatron,
}

// auxLoss is the router's load-balancing loss for nl tokens on one GPU
// with Megatron-Core's fused router (TopKRouter.routing in
// megatron/core/transformer/moe/router.py, moe_router_fusion on), where
// the model balances by an auxiliary loss (Config.AuxLoss > 0; not
// GPT-OSS's, which Megatron-Bridge trains with none). Forward: the
// scores for the loss (moe_utils.py compute_routing_scores_for_aux_loss
// -> Transformer Engine's fused_compute_score_for_moe_aux_loss: the
// logits read, the scores and the routing map written), the tokens per
// expert (get_tokens_per_expert_and_token_count: routing_map.sum(dim=0),
// then an all-reduce of the E counts over the tensor x context group,
// none on one GPU), the loss (switch_load_balancing_loss_func -> TE's
// fused_moe_aux_loss: the scores read by one cluster of 8 blocks into a
// scalar), and attach_and_log_load_balancing_loss's scalars
// (save_to_aux_losses_tracker: loss / coeff and the tracker's add; the
// loss times the token count for MoEAuxLossAutoScaler): 6 kernels.
// Backward: MoEAuxLossAutoScaler.backward's ones_like and multiply, the
// token count's multiply, fused_moe_aux_loss's backward (the scores'
// gradient written), the scores' backward (the logits' gradient
// written), and that gradient's add to the top-k's: 6 kernels. With
// balance forced (moe_router_force_load_balancing: a plan on a
// Megatron stack that states no imbalance and drops no token),
// apply_random_logits's RandomSTE replaces the logits with
// logits.clone().normal_() (2 kernels; its backward passes the gradient
// through). With the router unfused (moe_router_fusion off) the same
// functions run in eager PyTorch (megatron-core 0.16.1 moe_utils.py):
// compute_routing_scores_for_aux_loss(fused=False) is a softmax, a topk,
// zeros_like, .int(), scatter and .bool() (6 kernels for the fused 1)
// and switch_load_balancing_loss_func(fused=False) probs.sum(dim=0), the
// product with the counts, its sum and the scalar factor (4 for 1): 8
// kernels more forward; the backward the same 6 (autograd's nodes of the
// eager ops: a sum's expand, the products' multiplies, the softmax's
// backward). tools/measure/mcoreops/count.py counts these on a CPU (aux_loss
// against none, the same layer: 12 forward, 6 backward, without the
// tracker's add and the per-token multiply, which the MoE layer built
// alone does not run).
func (RouterAuxLoss) Router(c *cost.Shard, nl float64) (fwd, bwd cost.Phase) {
	m := c.M
	E := float64(m.Experts)
	s := nl * E * 4 // an FP32 tensor of nl x E
	ew := func(read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: nl * E, Read: read, Writes: write}
	}
	scalar := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 1, Read: 4, Writes: 4}
	scores := ew(s, s+nl*E) // the scores and the routing map (a bool a score)
	counts := cost.Kernel{Class: graph.ClassReduction, FLOPs: nl * E, Read: nl * E, Writes: E * 8}
	loss := cost.Kernel{Class: graph.ClassReduction, FLOPs: 2 * nl * E, Read: s, Writes: 4}
	sc, ls := []cost.Kernel{scores}, []cost.Kernel{loss}
	if c.Plan.Run.UnfusedRouter {
		// softmax, topk (values and int64 indices), zeros_like, .int(),
		// scatter, .bool(); the probabilities' sum over the tokens, its
		// product with the counts, their sum, the scalar factor.
		k := float64(m.TopK)
		sc = []cost.Kernel{ew(s, s), ew(s, nl*k*12), ew(0, s), ew(s, s), ew(s, s), ew(s, nl*E)}
		ls = []cost.Kernel{ew(s, E*4), ew(E*12, E*4), ew(E*4, 4), ew(4, 4)}
	}
	fwd = c.RunAll(append(append(sc, counts), append(ls, scalar, scalar, scalar)...)...)
	fwd = fwd.Plus(c.TPCPReduce(E * 8))
	bwd = c.RunAll(scalar, scalar, scalar, ew(4, s), ew(2*s, s), ew(2*s, s))
	if c.Plan.Imbalance <= 1 && c.Plan.Run.Capacity == 0 {
		fwd = fwd.Plus(c.RunAll(ew(s, s), ew(0, s)))
	}
	return fwd, bwd
}
