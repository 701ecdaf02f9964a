package scale

import (
	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

// fits reports whether plan pl fits the GPUs' memory, as
// evaluateCached's Result.Fits says, computing the memory alone (no
// kernel or collective times).
func fits(m transformer.Spec, pl Plan, p *Pod) bool {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(pl.C)
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = append(kits, stageKit{c: newCoster(m, pl, p, T, tokens)})
		}
	}
	// A pipeline of up to 128 stages keeps its costs on the stack.
	var stageBuf [128]stageCost
	stages := stageBuf[:0]
	if pl.P > len(stageBuf) {
		stages = make([]stageCost, 0, pl.P)
	}
	stages = stages[:pl.P]
	lp := float64(m.LayerParams())
	for s := range stages {
		st := &stages[s]
		st.dense, st.denseRec = pl.denseOn(&m, s)
		st.weigh(&m, &pl, s, lp)
	}
	var r Result
	memory(&r, stages, kits, pl.TPs)
	return r.Fits
}

// memory is the most loaded GPU's peak: BF16 weights, FP32 main
// gradients, FP32 master weights and Adam moments (divided over the
// replicas with the distributed optimizer), and the activations of the
// micro-batches in flight: with 1F1B the first stage holds P of them
// (times 1 + (P-1)/(P V) interleaved; all M with GPipe), each L/P layers
// of activations (Korthikanti et al., 2022, with flash attention: no
// S x S scores), the last stage one micro-batch's FP32 logits. Stage s
// is costed by the coster of kits of its tensor-parallel degree, tps[s].
func memory(r *Result, stages []stageCost, kits []stageKit, tps []int) {
	// One layer's activations at each kit's degree, shared by its
	// stages (a plan has at most three kits: kept on the stack).
	var lmBuf [3]layerMemory
	lms := lmBuf[:0]
	for i := range kits {
		lms = append(lms, kits[i].c.layerMemory())
	}
	var peak, wPeak, gPeak, oPeak, aPeak float64
	for s := range stages {
		k := kitIndex(kits, tps[s])
		w, g, o, acts := kits[k].c.stageMemory(s, &stages[s], &lms[k])
		if tot := w + g + o + acts; tot > peak {
			peak, wPeak, gPeak, oPeak, aPeak = tot, w, g, o, acts
		}
	}
	r.Memory = int64(peak)
	r.Weights, r.Grads, r.OptState, r.Activations = int64(wPeak), int64(gPeak), int64(oPeak), int64(aPeak)
	r.Fits = r.Memory <= kits[0].c.pod.Hardware.Memory-Reserve
}

// layerMemory is what stageMemory's stages of one tensor-parallel degree
// share, bytes for one micro-batch: one layer's activations (a block's
// of the model's kind, and in a model with experts a dense block's
// before them), the multi-token-prediction module's block's, and the
// input a recomputing layer keeps.
type layerMemory struct{ perLayer, perDense, mtpBlock, layerInput float64 }

// layerMemory is c's layerMemory (stageMemory's), computed once for all
// the stages of its degree.
func (c *coster) layerMemory() layerMemory {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, h := c.tokens, float64(m.Hidden)
	heads := float64(m.Heads)
	unit := n * h // s b h
	attn, mlp, replicated := blockUnits(m, pl.FP8 != "")
	perLayer := (4 + attn + mlp) * unit
	perDense := perLayer // a dense block's in a model with experts
	switch {
	case m.MoE():
		// Attention as a dense block's (sequence-parallel where T > 1:
		// Resolve requires it); the experts' on this GPU's tokens
		// (moeActivations). Its dense blocks before the experts, all of
		// their activations sequence-parallel likewise.
		perLayer = (4+attn)*unit/T + c.moeActivations()
		perDense /= T
	case pl.SequenceParallel:
		perLayer /= T
	case pl.T > 1:
		perLayer = replicated*unit + (4+attn+mlp-replicated)*unit/T
	}
	mtpBlock := perLayer // the multi-token-prediction module's block: not recomputed
	mods := pl.Recomputes()
	if mods.Has(RecomputeCoreAttn) {
		// The attention output, recomputed.
		out := 2 * unit / T
		if m.MLA() {
			out = 2 * heads * float64(m.HeadDim()) / h * unit / T
		}
		perLayer -= out
		perDense -= out
	} else if c.pod.Kernels.UnfusedAttention && pl.C <= 1 {
		// Unfused attention's softmax output, dropout mask and dropout
		// output, 5 bytes a score (Korthikanti's 5 a s / h).
		perLayer += 5 * n * heads / T * float64(m.Seq)
		perDense += 5 * n * heads / T * float64(m.Seq)
	}
	if mods&^RecomputeCoreAttn != 0 {
		// The other modules selective recomputation names.
		perLayer -= c.recomputeSaved(m.MoE())
		perDense -= c.recomputeSaved(false)
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMemory{perLayer: perLayer, perDense: perDense, mtpBlock: mtpBlock, layerInput: layerInput}
}

// recomputeSaved is the bytes of one block's activations (an MoE
// block's with moe, else a dense block's) that selective
// recomputation's modules other than the core attention free, for one
// micro-batch on one GPU (layerMemory's): layernorm the output of the
// norms that are modules of their own (an MoE block's norm before its
// experts: the experts' input; latent attention's input norm: the down
// projections' input, FP8 where they run in FP8); mla_up_proj every
// head's query, key and value (flash attention's saved inputs); mlp a
// dense MLP's saved tensors but the dropout mask (FC1's input, the
// activation's input, FC2's input; its checkpoint keeps the block's
// residual, counted as the norm's input); moe everything moeActivations
// counts but the experts' input; moe_act FC2's input (the activation's
// output); shared_experts the shared experts'. Held while one layer
// recomputes: not counted (a few of its tensors, not the stage's).
func (c *coster) recomputeSaved(moe bool) float64 {
	m, pl := &c.m, &c.pl
	mods := pl.Recomputes()
	T := float64(pl.T)
	unit := c.tokens * float64(m.Hidden) // s b h
	fp8 := pl.FP8 != ""
	// rep units replicated over the tensor group without sequence
	// parallelism, shard units split over it.
	split := func(rep, shard float64) float64 {
		if pl.SequenceParallel {
			return (rep + shard) * unit / T
		}
		return rep*unit + shard*unit/T
	}
	var saved float64
	if mods.Has(RecomputeLayerNorm) && m.MLA() {
		in := 2.0
		if fp8 {
			in = 1
		}
		saved += split(in, 0)
	}
	if mods.Has(RecomputeMLAUpProj) && m.MLA() {
		d, r, h := float64(m.HeadDim()), float64(m.RopeDim), float64(m.Hidden)
		saved += split(0, 2*float64(m.Heads)*(2*(d+r)+d)/h)
	}
	if moe {
		a, input, mid, shared := c.moeActivationParts()
		if mods.Has(RecomputeLayerNorm) {
			saved += input
		}
		switch {
		case mods.Has(RecomputeMoE):
			saved += a - input // its checkpoint keeps the input
		default:
			if mods.Has(RecomputeMoEAct) {
				saved += mid
			}
			if mods.Has(RecomputeSharedExperts) {
				saved += shared
			}
		}
		return saved
	}
	if mods.Has(RecomputeMLP) {
		_, mlp, _ := blockUnits(m, fp8)
		fc1In, mask := 2.0, 1.0 // FC1's input (FP8: one byte), the dropout mask (SwiGLU's block has none)
		if fp8 {
			fc1In = 1
		}
		if m.SwiGLU() {
			mask = 0
		}
		saved += split(fc1In, mlp-mask-fc1In)
	}
	return saved
}

// blockUnits is what one block keeps for its backward in units of s b h
// bytes (layerMemory's), before any split over the tensor group: its
// attention's, its MLP's, and of both what stays replicated over the
// tensor group without sequence parallelism; fp8 where the blocks'
// GEMMs run in FP8.
func blockUnits(m *transformer.Spec, fp8 bool) (attn, mlp, replicated float64) {
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	// Per layer, in units of s b h bytes (Korthikanti's 34 for GPT):
	// layer norm inputs 4, attention: its input 2, Q K V, its output 2,
	// dropout mask 1; MLP: its input 2, the activation's input and the
	// second GEMM's input (2 f/h each; SwiGLU 4 f/h and 2 f/h), mask 1.
	attn = 2 + 2*(heads+2*kv)/heads + 2 + 1
	if m.Head > 0 {
		d := float64(m.HeadDim())
		attn = 2 + 2*(heads+2*kv)*d/h + 2*heads*d/h + 1
	}
	lat := 0.0 // latent attention's latents (replicated over the tensor group without sp)
	if m.MLA() {
		// Latent attention, as Megatron-Core's MLASelfAttention keeps it
		// (mlaBlock): the down projections' input 2; the query's latent
		// before and after its norm (the norm's input, the up
		// projection's), 4 QLoRA/h; the keys' and values' latent with the
		// rotary key (the down projection's output, the norm's input) and
		// the normed latent (the up projection's input), 2 (KVLoRA +
		// RopeDim)/h + 2 KVLoRA/h; every head's Q and K of Head + RopeDim
		// and V of Head as flash attention saves them (the up
		// projections' outputs are not kept: the rotary embedding and
		// the concatenation need no input for their backward), the
		// output 2 heads Head/h, mask 1.
		d, r := float64(m.HeadDim()), float64(m.RopeDim)
		ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
		lat = (4*ql + 2*(kl+r) + 2*kl) / h
		attn = 2 + lat + 2*heads*(2*(d+r)+d)/h + 2*heads*d/h + 1
	}
	mlp = 2 + 4*f/h + 1
	if m.SwiGLU() {
		mlp = 2 + 6*f/h
	}
	replicated = 4.0 + 2 + 2 + 2 + lat // norms' inputs, the two column-parallel inputs, masks, latents
	if fp8 {
		// Transformer Engine keeps the FP8 copies of the GEMMs' inputs
		// for their weight gradients, one byte an element: QKV's and
		// FC1's inputs (1 unit each, not 2) and FC2's (f/h, not 2 f/h);
		// the attention's output stays BF16 (flash attention's backward
		// reads it).
		attn--
		mlp -= 1 + f/h
		replicated -= 2
		if m.MLA() {
			// The up projections' normed latents in FP8 too.
			fp8Lat := (float64(m.QLoRA) + float64(m.KVLoRA)) / h
			attn -= fp8Lat
			replicated -= fp8Lat
		}
	}
	return attn, mlp, replicated
}

// stageMemory is stage s's weights, gradients, optimizer state and
// activations in flight, bytes, at c's tensor-parallel degree; lm is
// c's layerMemory.
func (c *coster) stageMemory(s int, st *stageCost, lm *layerMemory) (w, g, o, acts float64) {
	acts = c.stageActivations(s, st, lm)
	w, g, o = c.stageState(s, st)
	return w, g, o, acts
}

// stageActivations is stage s's activations in flight, bytes, at c's
// tensor-parallel degree (stageMemory's); lm is c's layerMemory.
func (c *coster) stageActivations(s int, st *stageCost, lm *layerMemory) (acts float64) {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, kv := c.tokens, float64(m.KVHeads)
	unit := n * float64(m.Hidden) // s b h
	perLayer, perDense, mtpBlock, layerInput := lm.perLayer, lm.perDense, lm.mtpBlock, lm.layerInput
	perDevice := float64(pl.Stages[s])
	inflight := pl.inflight(s)
	// A model with experts' dense blocks before them (denseOn's, in st):
	// the stage's dense layers and how many of them recompute.
	dn := st.dense
	dense, drec := float64(dn), float64(st.denseRec)
	if pl.Recompute == FullRecompute {
		// The recomputing layers keep their input; the others (block
		// recomputation) all they save; one layer's worth while one
		// recomputes.
		kk := pl.recomputed(s)
		mrec := min(max(kk-drec, 0), perDevice-dense)
		keep := (perDevice-dense-mrec)*perLayer + (dense-drec)*perDense
		most := perLayer
		if dn == pl.Stages[s] {
			most = perDense
		} else if dn > 0 {
			most = max(perLayer, perDense)
		}
		acts = inflight*(kk*layerInput+keep) + most
	} else {
		acts = inflight * ((perDevice-dense)*perLayer + dense*perDense)
	}
	if s == 0 {
		acts += inflight * 3 * unit / T
	}
	if s == pl.P-1 {
		acts += n * float64(m.Vocab) / T * (bf16 + 4 + 4) // logits, their FP32 copy and its gradient
		if m.MTP > 0 {
			// Each multi-token-prediction module (mtp), for the
			// micro-batches in flight on the last stage: the two norms'
			// inputs and the projection's input (2 + 2 + 4 units, the
			// latter 2 in FP8; sequence-parallel), its block's (kept, not
			// recomputed), and its own logits as the output layer's.
			proj := 4.0
			if pl.FP8 != "" {
				proj = 2
			}
			acts += float64(m.MTP) * (inflight*((2+2+proj)*unit*c.sp()+mtpBlock) + n*float64(m.Vocab)/T*(bf16+4+4))
		}
	}
	if pl.C > 1 {
		// The context ring's buffers while one layer's attention runs:
		// the K and V chunk received and, in the backward, the chunk
		// sent on and a gradient chunk in flight (three chunks of this
		// GPU's K and V).
		acts += 3 * n * 2 * kv / T * float64(m.HeadDim()) * bf16
	}
	return acts
}

// inflight is the micro-batches whose activations stage s holds at
// its peak (stageMemory's): with 1F1B P - s of them at most M,
// interleaved the first stage 1 + (P-1)/(P V) times P, with GPipe all
// M; with the experts' all-to-alls overlapped one model chunk more.
func (pl *Plan) inflight(s int) float64 {
	inflight := float64(min(pl.M, pl.P-s))
	if pl.V > 1 && s == 0 {
		inflight = float64(pl.P) * (1 + float64(pl.P-1)/float64(pl.P*pl.V))
	}
	if pl.P > 1 && pl.Sched() == decision.GPipe {
		inflight = float64(pl.M)
	}
	if pl.EPOverlap && pl.M > 1 {
		// A merged pair runs the next forward before the backward before
		// it has freed its activations: one model chunk more.
		inflight += 1 / float64(pl.V)
	}
	return inflight
}

// stageState is stage s's weights, gradients and optimizer state,
// bytes, on one of its GPUs (stageMemory's).
func (c *coster) stageState(s int, st *stageCost) (w, g, o float64) {
	m, pl := &c.m, &c.pl
	gb := pl.gradBytes()
	w = st.params * bf16
	g = st.params * gb
	o = st.params * 12
	if pl.DistOpt {
		o /= float64(pl.D * pl.C) // sharded over the data-parallel and context ranks
		if m.MoE() {
			o = (st.params-st.experts)*12/float64(pl.D*pl.C) + st.experts*12/float64(pl.EDP)
		}
	}
	if pl.FP8 != "" {
		w += 2 * st.layers // the blocks' FP8 weights, row- and column-wise
	}
	if pl.FSDP {
		// Sharded over the C x D ranks (a model with experts: its
		// experts' over the expert-data-parallel ones), but for two
		// layers' weights gathered (the one running and the next,
		// prefetched: Megatron-FSDP's unit is a layer) and one layer's
		// gradient before its reduce-scatter.
		D := float64(pl.D * pl.C)
		var layer float64
		if l := pl.Stages[s]; l > 0 {
			layer = st.layers / float64(l)
		}
		if m.MoE() {
			E := float64(pl.EDP)
			dense := st.params - st.experts
			w = dense*bf16/D + st.experts*bf16/E
			if pl.FP8 != "" {
				w += 2*(st.layers-st.experts)/D + 2*st.experts/E
			}
			g = dense*gb/D + st.experts*gb/E
			o = dense*12/D + st.experts*12/E
			return w + 2*layer*bf16, g + layer*gb, o
		}
		w, g, o = w/D+2*layer*bf16, g/D+layer*gb, st.params*12/D
	}
	return w, g, o
}

// Reserve is the memory of a GPU a plan cannot use: the CUDA context,
// NCCL's buffers and the allocator's fragmentation (an assumption: a few
// GiB is what users of Megatron-LM and PyTorch see on 80 GB GPUs).
const Reserve = 6 << 30
