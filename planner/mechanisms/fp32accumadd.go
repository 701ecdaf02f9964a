package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// FP32AccumAdd is the gradient accumulation of a stack that keeps its
// FP32 gradients apart from the BF16 ones its backward writes and adds
// each micro-batch's into them in a kernel of its own, a weight tensor
// at a time: nanotron's FP32GradientAccumulator (huggingface/nanotron at
// c2528430, optim/gradient_accumulator.py, accumulate_grad_in_fp32: true
// in the scaling benchmarks' config, examples/config_tiny_llama_bench.yaml
// at 67c5ebb6). Its backward(loss) runs loss.backward() and then, for
// every parameter of the rank, _accumulate_grad: fp32_grad.add_(
// half_param.grad) and half_param.grad = None, every micro-batch (the
// DDP path's last micro-batch adds in its communication hook,
// get_fp32_accum_hook, the same bytes). Each add reads the BF16
// gradient and the FP32 buffer and writes the buffer: 2 + 4 + 4 bytes a
// parameter, a launch a tensor. Megatron-Core's fused wgrad accumulates
// into main_grad in the GEMM itself (gradient_accumulation_fusion), the
// default pricing, with no such pass.
//
// Priced on each block's two halves, the tensors nanotron's LlamaModel
// builds them of: the attention's qkv_proj and o_proj (split over the
// tensor group) and its input norm's scale (whole), the MLP's
// gate_up_proj and down_proj and its norm's scale. The embedding and the
// output layer's adds are not priced (left out: a stage's blocks only).
type FP32AccumAdd struct{}

const fp32AccumAddKey = "fp32-accum-add"

var (
	_ cost.AttentionKernels = FP32AccumAdd{}
	_ cost.MLPKernels       = FP32AccumAdd{}
)

// Name is the mechanism's registered name.
func (FP32AccumAdd) Name() string { return "fp32-accum-add" }

// Keys is the switch the mechanism declares: fp32-accum-add=on.
func (FP32AccumAdd) Keys() []plan.Key {
	return []plan.Key{plan.SwitchKey(plan.Key{Name: fp32AccumAddKey,
		Help: "each micro-batch's BF16 weight gradients added into FP32 buffers by a kernel a weight tensor (nanotron's FP32GradientAccumulator)",
		Doc:  "docs/cluster-scale.md"})}
}

// When is the switch on, in a dense model (the halves priced are a
// dense block's).
func (FP32AccumAdd) When() cost.When {
	return cost.When{
		cost.Key(fp32AccumAddKey, fp32AccumAddKey+"=on", func(pl *plan.Plan) bool { return pl.Declared.On(fp32AccumAddKey) }),
		cost.Not(cost.MoE),
	}
}

// Attention is the attention half's adds in the backward: the query,
// key, value and output projections' weights over the tensor group, and
// the norm's scale, three kernels.
func (FP32AccumAdd) Attention(s *cost.Shard) (fwd, bwd cost.Phase) {
	m := s.M
	h, d := float64(m.Hidden), float64(m.HeadDim())
	qkv := h * float64(m.Heads+2*m.KVHeads) * d
	o := float64(m.Heads) * d * h
	return cost.Phase{}, accumAdds(s, qkv/tpOf(s), o/tpOf(s), h)
}

// MLP is the MLP half's adds in the backward: the gated up and down
// projections' weights over the tensor group, and the norm's scale,
// three kernels.
func (FP32AccumAdd) MLP(s *cost.Shard) (fwd, bwd cost.Phase) {
	m := s.M
	h, f := float64(m.Hidden), float64(m.FFN)
	up := 2 * h * f
	if !m.SwiGLU() {
		up = h * f
	}
	return cost.Phase{}, accumAdds(s, up/tpOf(s), h*f/tpOf(s), h)
}

// tpOf is the tensor-parallel degree of the shard's layer.
func tpOf(s *cost.Shard) float64 { return float64(max(s.TPG.Size(), 1)) }

// accumAdds is one add kernel a tensor of ns parameters: its BF16
// gradient and FP32 accumulator read, the accumulator written.
func accumAdds(s *cost.Shard, ns ...float64) cost.Phase {
	var p cost.Phase
	for _, n := range ns {
		p = p.Plus(s.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: n, Read: n * (2 + 4), Writes: n * 4}))
	}
	return p
}
