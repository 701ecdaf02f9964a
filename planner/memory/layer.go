package memory

import (
	"github.com/placer/placer/planner/plan"
)

// layerMemory is c's layerMem (stageMemory's), computed once for all
// the stages of its degree.
func (c *counter) layerMemory() layerMem {
	if c.m.Hybrid() {
		return c.hybridMemory() // mixers.go
	}
	if c.m.Mixed() {
		return c.mixerMemory() // mixers.go
	}
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	n, h := c.tokens, float64(m.Hidden)
	heads := float64(m.Heads)
	unit := n * h // s b h
	in := c.gemmInputBytes()
	attn, mlp, replicated := blockUnits(m, in, !c.dropoutFree(), c.attention)
	if pl.FP8 != "" && !pl.Titan() && !pl.Run.Eager {
		attn += in * projFP8Input(m, c.attention != nil)
	}
	// The recipe's FP8 attention, FP8 activation storage, LoRA's frozen
	// base (recipe.go).
	attn, mlp, replicated, rb := c.recipeBlock(attn, mlp, replicated, in)
	norms := 2 * float64(m.NormsPerBlock()) // the norms' inputs: two, or Gemma's four
	perLayer := (norms + attn + mlp) * unit
	perDense := perLayer // a dense block's in a model with experts
	switch {
	case m.MoE():
		// Attention as a dense block's (sequence-parallel where T > 1:
		// Resolve requires it); the experts' on this GPU's tokens
		// (moeActivations). Its dense blocks before the experts, all of
		// their activations sequence-parallel likewise.
		perLayer = (norms+attn)*unit/T + c.moeActivations()
		perDense /= T
	case pl.SequenceParallel:
		perLayer /= T
	case pl.TP > 1:
		perLayer = replicated*unit + (norms+attn+mlp-replicated)*unit/T
	}
	if pl.Titan() && !m.MoE() {
		perLayer += c.titanBlockExtra()
		perDense = perLayer
	}
	if rb.whole > 0 {
		perLayer += rb.whole * unit
		perDense = perLayer
	}
	kept := rb.whole*unit + (rb.kept+rb.masks)*unit*c.sp()
	if !pl.SequenceParallel && pl.TP > 1 {
		kept = rb.whole*unit + rb.kept*unit/T + rb.masks*unit
	}
	wholeBlock := perLayer // a prediction module's block: not recomputed
	mods := pl.Recomputes()
	if mods.Has(plan.RecomputeCoreAttn) {
		// The attention output, recomputed.
		out := 2 * unit / T
		if c.attention != nil {
			out = c.attention.OutputUnits(*m) * unit / T
		}
		perLayer -= out
		perDense -= out
	} else if c.pod.Kernels.UnfusedAttention && pl.CP <= 1 && !pl.Titan() {
		// Unfused attention's softmax output, dropout mask and dropout
		// output, 5 bytes a score (Korthikanti's 5 a s / h). Not under
		// torchtitan, whose attention is scaled_dot_product_attention
		// (models/llama/model.py), flash attention on A100 and H100
		// alike: a pod's unfused kernels stand for its time only.
		perLayer += 5 * n * heads / T * float64(m.Seq)
		perDense += 5 * n * heads / T * float64(m.Seq)
	}
	if mods&^plan.RecomputeCoreAttn != 0 {
		// The other modules selective recomputation names.
		perLayer -= c.recomputeSaved(m.MoE())
		perDense -= c.recomputeSaved(false)
	}
	var recomputing float64
	if pl.Titan() && pl.Recompute == plan.SelectiveRecompute && !m.MoE() {
		// One block's forward recomputed before its backward holds
		// what the block keeps without recomputation.
		recomputing = perLayer
		perLayer = c.titanOpSAC()
		perDense = perLayer
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMem{perLayer: perLayer, perDense: perDense, wholeBlock: wholeBlock, layerInput: layerInput, recomputing: recomputing, kept: kept}
}

// titanBlockExtra is what a torchtitan block keeps for its backward
// beyond layerMemory's Megatron-Core count, bytes for one micro-batch
// on one GPU
// (pytorch/torchtitan at 9dec370):
//   - with sequence parallelism, its attention's and its MLP's inputs
//     whole: apply_tp (parallelize_llama.py) gives attention and
//     feed_forward PrepareModuleInput(input_layouts Shard(1),
//     desired_input_layouts Replicate()), so the norms' outputs are
//     all-gathered before wq, wk, wv and w1, w3, which save the
//     gathered tensor (Megatron-Core saves the sequence-parallel shard
//     and gathers it again in the backward). 2 units each, 1 with
//     Float8 (Float8ColwiseParallel casts to float8 before the
//     all-gather, and the float8 matmul saves its float8 input);
//   - with fewer key/value heads than heads, the keys and values
//     scaled_dot_product_attention saves at every head: Attention.forward
//     (models/llama/model.py) calls repeat_kv on them before it, a
//     copy of heads/kv_heads times the projections' outputs.
func (c *counter) titanBlockExtra() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden)
	var extra float64
	if pl.TP > 1 && pl.SequenceParallel {
		in := 2.0 + 2 // the attention's and the MLP's gathered inputs
		if plan.KeepsFP8Inputs(pl.FP8) {
			in = 1 + 1
		}
		extra += in * unit * (1 - 1/T)
	}
	if kv, heads := float64(m.KVHeads), float64(m.Heads); kv > 0 && kv < heads {
		d, h := float64(m.HeadDim()), float64(m.Hidden)
		extra += 2 * 2 * (heads - kv) * d / h * unit / T
	}
	return extra
}

// titanOpSAC is one block's activations under torchtitan's selective
// per-op checkpointing (selective_ac_option "op"; pytorch/torchtitan
// torchtitan/parallelisms/parallelize_llama.py at 9dec370: _save_list
// and _get_custom_policy), bytes for one micro-batch on one GPU: the
// checkpoint keeps the block's input, and the policy the outputs of the
// flash attention (its output, BF16, and its log-sum-exp, FP32 a head
// and token), of the reduce-scatters (sequence parallelism's, one after
// the attention and one after the MLP) and of every other matmul of
// the block, counted in its order: wq, wk, wv, wo, w1, w3, w2 (the 1st,
// 3rd, 5th and 7th kept: wq's, wv's, w1's and w2's outputs, each on
// this GPU's shard; w2's row-parallel output whole before its
// reduction). Float8Linear's matmul is aten.mm too (the policy sees it
// before torchao's subclass dispatches it), so Float8 counts alike.
// The rest is recomputed.
func (c *counter) titanOpSAC() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv, d := float64(m.Heads), float64(m.KVHeads), float64(m.HeadDim())
	units := 2*c.sp() + // the block's input
		2*heads*d/h/T + 2*kv*d/h/T + // wq's and wv's outputs
		2*heads*d/h/T + 4*heads/h/T + // the attention's output and log-sum-exp
		2*f/h/T + 2 // w1's output, w2's
	if pl.TP > 1 && pl.SequenceParallel {
		units += 2 * 2 / T // the two reduce-scatters' outputs
	}
	return units * c.tokens * h
}
