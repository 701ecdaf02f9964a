package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
)

// titanLayers are torchtitan's layers run eager (torchtitan-0.2 with
// compile=false, its default): its Llama TransformerBlock (9dec370) as
// eager PyTorch issues it (LayerTitan: FSDP2's BF16 weights), and its
// MoE (v0.2.0 torchtitan/models/moe/moe.py: MoETitan, torch._grouped_mm
// over the local experts, one host sync with expert parallelism), with
// grouped-gemm=off its use_grouped_mm=False for-loop over the experts
// (one sync more).
type titanLayers struct{ eagerLayers }

var _ eagerStack = titanLayers{}

func (titanLayers) Name() string { return plan.LayersTitan }

func (l titanLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.pl.Run)
	return l.moe(c, impl, loop)
}

func (titanLayers) experts(run plan.Settings) (eager.MoEImpl, bool) {
	return eager.MoETitan, run.ExpertLoop
}

// titanCompiled is torchtitan's model compiled (compile=on): torch.compile
// wraps each TransformerBlock alone (9dec370
// parallelisms/parallelize_llama.py apply_compile: torch.compile of every
// child of model.layers, fullgraph=True), so the blocks are costed as
// fused kernels (fusedLayers) while the final norm, the output layer and
// the loss run eager as torchtitan writes them (train.py loss_fn:
// cross_entropy of pred.flatten(0, 1).float(), an FP32 copy of the
// logits; loss_parallel at T > 1): eagerOutput of its code.
type titanCompiled struct{ fusedLayers }

func (titanCompiled) Output(c coster) (fwd, bwd phase) { return c.eagerOutput(eager.LayerTitan) }

// Dense is a compiled block (fusedLayers') whose selective recomputation
// is torchtitan's per-op policy as the compiled graph runs it
// (titanSAC), not Megatron-Core's core attention.
func (titanCompiled) Dense(c coster) (fwd, bwd phase) {
	a, f := half(c.attnBlock()), half(c.mlpBlock())
	if c.pl.Recompute == plan.SelectiveRecompute {
		a.rec, f.rec = c.titanSAC()
	}
	return c.join(a, f, false)
}

// titanSAC is what torchtitan's per-op selective checkpointing recomputes
// of a compiled dense block, attention half and MLP half. Its policy
// (9dec370 parallelisms/parallelize_llama.py _apply_ac_to_transformer_block,
// _custom_policy) saves the outputs of the ops in _save_list (mm, the
// flash and efficient SDPA, reduce_scatter_tensor, abs and max) except
// every second mm, and marks every other op PREFER_RECOMPUTE. The block's
// mms run wq, wk, wv, wo, w1, w3, w2 (Attention.forward, FeedForward's
// w2(F.silu(w1(x)) * w3(x))), so wk, wo and w3 are recomputed; SDPA is
// saved. Compiled, the backward graph recomputes only what the backward
// reads (AOTAutograd's partitioner), all of it here: each norm's output
// (the projections' weight gradients), K through wk (SDPA's backward),
// the residual stream after the attention through wo (the MLP norm's
// backward: with sp=on its reduce-scatter is saved and wo is not run
// again), w3's output and SwiGLU's product (w2's weight gradient), the
// FP8 casts of the recomputed GEMMs' inputs (their amax saved: abs and
// max). The rotary embedding of K is left out as the fused blocks leave
// it out. Without SwiGLU no third mm of the MLP is recomputed.
func (c *coster) titanSAC() (attn, mlp phase) {
	m, T := c.m, float64(c.pl.TP)
	n, h, f := c.tokens, float64(m.Hidden), float64(m.FFN)
	kw := float64(m.KVHeads) * float64(m.HeadDim()) / T
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	sp := c.sp()
	act := n * h * bf16
	norm := c.run(kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}).plus(c.casts(n * h * sp))
	attn = norm.plus(c.run(c.lgemm(2*n*h*kw, act+h*kw*bf16, n*kw*bf16)))
	if !c.pl.SequenceParallel || c.pl.TP <= 1 {
		_, after, _, _ := c.tpKinds()
		wo := c.lgemm(2*n*qd*h, n*qd*bf16+qd*h*bf16, act)
		attn = attn.plus(c.casts(n * qd)).plus(c.pair(wo, after, act))
	}
	mlp = norm
	if m.SwiGLU() {
		w3 := c.lgemm(2*n*h*f/T, act+h*f/T*bf16, n*f/T*bf16)
		swi := kernel{class: graph.ClassElementwise, flops: 6 * n * f / T, read: 2 * n * f / T * bf16, writes: n * f / T * bf16}
		mlp = mlp.plus(c.run(w3)).plus(c.run(swi))
	}
	return attn, mlp
}
