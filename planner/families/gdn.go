package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// GatedDeltaNet is the Gated DeltaNet mixer of a model whose layers mix
// Gated DeltaNet and gated attention (transformer.Spec.Mixers:
// Qwen3-Next): MixerBlock, one Gated DeltaNet block's mixer half, and
// AttnGate, the output gate of its gated attention layers (the
// cost.LinearMixer extension point), which the
// coster's mixer block weighs by the layers of each kind.
type GatedDeltaNet struct{}

// Name is the family's registered name.
func (GatedDeltaNet) Name() string { return "gated-deltanet" }

// When is the family's declaration: a model that mixes Gated DeltaNet
// layers in.
func (GatedDeltaNet) When() cost.When { return gdnWhen }

var gdnWhen = cost.When{cost.Model("gated-deltanet layers", func(m *transformer.Spec) bool {
	ng, _ := m.MixerKinds()
	return ng > 0
})}

// MixerBlock is one Gated DeltaNet block's mixer half on shard s (gdnBlock's).
func (GatedDeltaNet) MixerBlock(s *cost.Shard) (fwd, bwd, rec cost.Phase) {
	return recurrent{s}.gdnBlock()
}

// AttnGate is the output gate of a gated attention layer on shard s
// (attnGate's).
func (GatedDeltaNet) AttnGate(s *cost.Shard) (fwd, bwd cost.Phase) { return recurrent{s}.attnGate() }

// attnGate is Qwen3-Next's output gate of a gated attention layer
// (transformers v5.24's Qwen3NextAttention: q_proj's second half, the
// attention's output times its sigmoid before o_proj; Megatron-Core's
// attention_output_gate widens linear_qkv likewise): a GEMM of heads x
// head_dim more columns on the QKV GEMM's input (its gathered input
// shared: no collective of its own) and the elementwise gate, forward
// and backward (its two gradients, twice the elementwise traffic).
func (c recurrent) attnGate() (fwd, bwd cost.Phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	g := c.LGEMM(2*n*h*qd, n*h*cost.BF16+h*qd*cost.BF16, n*qd*cost.BF16)
	gate := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 5 * n * qd, Read: 2 * n * qd * cost.BF16, Writes: n * qd * cost.BF16}
	fwd = c.Run(g).Plus(c.Run(gate))
	b := c.Back(g)
	bwd = c.Run(b).Plus(c.Run(b)).Plus(c.Run(cost.Twice(gate)))
	return fwd, bwd
}

// gdnBlock is one Gated DeltaNet block's mixer half for one micro-batch
// on one GPU (arXiv 2412.06464; transformers v5.24's
// Qwen3NextGatedDeltaNet, Megatron-Core's GatedDeltaNet, its heads split
// over the tensor group): the norm; the input projections to queries,
// keys, values, the gate z, beta and the decay, column-parallel; the
// causal depthwise convolution of the queries, keys and values with its
// SiLU; the chunkwise gated delta rule (transformer.Spec.GDNKernelFLOPs)
// at the pod's GEMM rate and bytes; the gated RMS norm of its output by
// SiLU(z); out_proj, row-parallel; the residual; the tensor-parallel
// collectives beside the two GEMMs as attention's beside QKV and its
// projection. Modelled, not measured: nothing here timed
// flash-linear-attention's chunk_gated_delta_rule. Backward: each GEMM's
// two gradients, the kernel's twice its FLOPs and the chunk states
// recomputed (2 KDim VDim a value head a token), the elementwise kernels
// twice. No selective recomputation of it.
func (c recurrent) gdnBlock() (fwd, bwd, rec cost.Phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	g := m.GDN
	sp := c.SP()
	act := n * h * cost.BF16
	in := float64(g.InProj()) / T
	conv := float64(g.ConvChannels()) / T
	vd := float64(g.VHeads*g.VDim) / T
	vh := float64(g.VHeads) / T
	norm := cost.Kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	cv := cost.Kernel{Class: graph.ClassElementwise, FLOPs: (2*float64(g.Conv) + 4) * n * conv, Read: n * conv * cost.BF16, Writes: n * conv * cost.BF16}
	kf := n * m.GDNKernelFLOPs() / T
	k := cost.Kernel{Class: graph.ClassMatMul, FLOPs: kf, Read: n * (conv + 2*vh) * cost.BF16, Writes: n * vd * cost.BF16}
	states := 2 * float64(g.KDim*g.VDim) * vh * n
	kB := cost.Kernel{Class: graph.ClassMatMul, FLOPs: 2*kf + states, Read: n * (2*conv + 2*vh + 2*vd) * cost.BF16, Writes: n * (conv + 2*vh) * cost.BF16}
	gated := cost.Kernel{Class: graph.ClassReduction, FLOPs: 10 * n * vd, Read: 2 * n * vd * cost.BF16, Writes: n * vd * cost.BF16}
	fwd, bwd = c.recurrentBlock(n, h, in, vd, sp, act, recurrentKernels{norm, cv, k, kB, gated, resid})
	return fwd, bwd, rec
}
