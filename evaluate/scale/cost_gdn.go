package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/graph"
)

// A model whose layers' token mixers differ (transformer.Spec.Mixers:
// Qwen3-Next) has in each layer one mixer and its experts. The
// attention half the cost model asks of a block (attnBlock) is the mean
// of the layers' mixers: a gated attention layer (attnBlock's, with the
// gate's GEMM and product: attnGate) or a Gated DeltaNet (gdnBlock); the
// experts are moeBlock's. As for hybridLayer, a stage's layers cost their
// number times one layer, so the mean is exact over the model and a
// stage of another mix is costed at it.

// mixerBlock is the mean of m's layers' mixers for one micro-batch on
// one GPU, forward, backward and what selective recomputation runs
// again (the attention layers' core attention).
func (c *coster) mixerBlock() (fwd, bwd, rec phase) {
	ng, na := c.M.MixerKinds()
	l := float64(c.M.Layers)
	add := func(f, b, r phase, k int) {
		w := float64(k) / l
		fwd, bwd, rec = fwd.Plus(cost.Scale(f, w)), bwd.Plus(cost.Scale(b, w)), rec.Plus(cost.Scale(r, w))
	}
	if na > 0 {
		plain := *c
		plain.M.Mixers = ""
		f, b, r := plain.attnBlock()
		gf, gb := c.attnGate()
		add(f.Plus(gf), b.Plus(gb), r, na)
	}
	if ng > 0 {
		f, b, r := c.gdnBlock()
		add(f, b, r, ng)
	}
	return fwd, bwd, rec
}

// attnGate is Qwen3-Next's output gate of a gated attention layer
// (transformers v5.24's Qwen3NextAttention: q_proj's second half, the
// attention's output times its sigmoid before o_proj; Megatron-Core's
// attention_output_gate widens linear_qkv likewise): a GEMM of heads x
// head_dim more columns on the QKV GEMM's input (its gathered input
// shared: no collective of its own) and the elementwise gate, forward
// and backward (its two gradients, twice the elementwise traffic).
func (c *coster) attnGate() (fwd, bwd phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	g := c.LGEMM(2*n*h*qd, n*h*bf16+h*qd*bf16, n*qd*bf16)
	gate := kernel{Class: graph.ClassElementwise, FLOPs: 5 * n * qd, Read: 2 * n * qd * bf16, Writes: n * qd * bf16}
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
func (c *coster) gdnBlock() (fwd, bwd, rec phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	g := m.GDN
	sp := c.SP()
	act := n * h * bf16
	in := float64(g.InProj()) / T
	conv := float64(g.ConvChannels()) / T
	vd := float64(g.VHeads*g.VDim) / T
	vh := float64(g.VHeads) / T
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	cv := kernel{Class: graph.ClassElementwise, FLOPs: (2*float64(g.Conv) + 4) * n * conv, Read: n * conv * bf16, Writes: n * conv * bf16}
	kf := n * m.GDNKernelFLOPs() / T
	k := kernel{Class: graph.ClassMatMul, FLOPs: kf, Read: n * (conv + 2*vh) * bf16, Writes: n * vd * bf16}
	states := 2 * float64(g.KDim*g.VDim) * vh * n
	kB := kernel{Class: graph.ClassMatMul, FLOPs: 2*kf + states, Read: n * (2*conv + 2*vh + 2*vd) * bf16, Writes: n * (conv + 2*vh) * bf16}
	gated := kernel{Class: graph.ClassReduction, FLOPs: 10 * n * vd, Read: 2 * n * vd * bf16, Writes: n * vd * bf16}
	fwd, bwd = c.recurrentBlock(n, h, in, vd, sp, act, recurrentKernels{norm, cv, k, kB, gated, resid})
	return fwd, bwd, rec
}
