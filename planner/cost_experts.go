package planner

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// moeBlock is one MoE block's MLP part for one micro-batch on one GPU:
// the norm, the experts (moe) and the residual, forward and backward;
// and rec, the forward selective recomputation runs again of it: the
// norm (layernorm: a module of its own before the experts in
// Megatron-Core's layers) and moe's.
func (c *coster) moeBlock() (fwd, bwd, rec phase) {
	m := c.M
	n, h := c.Tokens, float64(m.Hidden)
	sp := c.SP()
	act := n * h * bf16
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	t := c.Run
	mf, mb, rec := c.moe()
	fwd = t(norm).Plus(mf).Plus(t(resid))
	bwd = t(cost.Twice(resid)).Plus(mb).Plus(t(cost.Twice(norm)))
	if c.Plan.Recomputes().Has(plan.RecomputeLayerNorm) {
		rec = rec.Plus(t(norm))
	}
	return fwd, bwd, rec
}

// moe is one MoE block's experts for one micro-batch on one GPU, forward
// and backward, as Megatron-Core's all-to-all token dispatcher runs them
// (moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher; dropless, every
// token reaching its TopK experts): the router (a BF16 GEMM to the
// experts' scores, a softmax and top-k over them), the tokens permuted
// into expert order, dispatched over the expert-parallel group by an
// all-to-all (each GPU sends its n/T tokens x TopK copies, an equal share
// to each rank when balanced), all-gathered over the expert-tensor group,
// the local experts' grouped GEMMs (FC1, the activation, FC2) over the
// tokens the rank receives (Imbalance x the mean: the most loaded rank's),
// reduce-scattered back, combined by the reverse all-to-all and unpermuted
// (the TopK outputs weighted and summed), and the shared experts over the
// GPU's tokens. The backward mirrors it: the GEMMs twice, the same
// collectives, twice the elementwise traffic. The experts' communication
// is not overlapped (Megatron-Core overlaps it only with
// --overlap-moe-expert-parallel-comm, off by default). rec is the
// forward selective recomputation runs again of it: all of it with the
// moe module (its all-to-alls and the dispatcher's synchronization
// again), else the experts' activation function with its output's FP8
// casts (moe_act) and the shared experts (shared_experts).
func (c *coster) moe() (fwd, bwd, rec phase) {
	w := c.expertWork()
	experts, expertsB, rec, dispatched := w.fwd, w.bwd, w.rec, w.routed
	recv, rows, local, nl := w.recv, w.rows, w.local, w.nl
	mods := c.Plan.Recomputes()
	t := c.Run
	router, scores, permute, unpermute := moeGlue(c.M, nl)
	d := dispatcherOf(c.Points, &c.Shard) // the registered cost.TokenDispatcher's
	var comm phase
	if !c.NoComm {
		comm = d.DispatchComm(recv, rows, nl)
	}
	// The glue as the stack runs it: the router's top-k fused or not,
	// the permutation fused, unfused, or (allgather, flex) over the
	// tokens that dispatcher hands the experts (glue).
	g := d.Glue(router, scores, permute, unpermute, rows, nl)
	// Megatron-Core's alltoall dispatcher's sort by local expert and its
	// small exchanges beside the tokens' (Bookkeeping).
	bf, bb := d.Bookkeeping(recv, rows, local)
	// The dropless dispatcher sizes its all-to-all and the grouped GEMMs'
	// splits on the host: the tokens per expert copied to it once a
	// forward (the backward reuses the splits), a synchronization
	// (dispatchSyncs: none with capacity routing on the all-to-all).
	fwd = t(router).Plus(g.Scores).Plus(g.MultihotF()).Plus(g.Permute).Plus(experts).Plus(g.Unpermute).Plus(comm).Plus(bf).Plus(phase{Syncs: d.DispatchSyncs()})
	fwd.Tail = c.moeTail(d, g, comm, bf, dispatched)
	bwd = g.UnpermuteB.Plus(expertsB).Plus(g.PermuteB).Plus(g.MultihotB).Plus(g.ScoresB).
		Plus(t(router)).Plus(t(router)).Plus(comm).Plus(bb)
	if mods.Has(plan.RecomputeMoE) {
		rec = fwd // the whole layer checkpointed: moe_act's and shared_experts' within it
	}
	return fwd, bwd, rec
}

// moeWork is one MoE block's experts for one micro-batch on one GPU
// (expertWork): fwd and bwd, the local experts' work with the shared
// experts'; routed, the forward's routed experts alone; rec, what the
// forward's selective recomputation runs again of them (moe_act,
// shared_experts); wgrad, bwd's weight-gradient GEMMs (the routed
// experts' and the shared experts'); recv, the token copies the most loaded rank receives;
// rows, its expert GEMMs' rows; local, its experts; nl, its tokens.
type moeWork struct {
	fwd, bwd, rec, routed, wgrad phase
	recv, rows, local, nl        float64
}

// expertWork is moe's experts: the routed experts' grouped GEMMs, their
// activation, casts, biases and padding, and the shared experts, forward
// and backward, without the router, the permutation or the exchanges
// (Megatron-Core's combined 1F1B schedule runs them as its "mlp" node:
// epOverlap).
func (c *coster) expertWork() moeWork {
	m, pl := c.M, c.Plan
	var rec phase
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	nl := c.Tokens / float64(pl.TP)   // this GPU's sequence shard
	routed := nl * k                  // the token copies it dispatches
	recv := routed * c.loadFactor(nl) // those the most loaded rank receives
	ETP := float64(pl.ETP)
	rows := recv * ETP // its expert GEMMs' rows, gathered over the expert-tensor group
	local := E / float64(pl.EP)
	fe := float64(m.ExpertFFN)
	cols := fe / ETP
	up := cols
	if m.SwiGLU() {
		up = 2 * cols
	}
	t := c.Run
	ew := func(flops, read, write float64) kernel {
		return kernel{Class: graph.ClassElementwise, FLOPs: flops, Read: read, Writes: write}
	}
	// The local experts' GEMMs grouped (the registered cost.GroupedGEMM).
	grouped := func(g kernel, n float64) kernel { return c.Points.GroupedGEMM.Grouped(&c.Shard, g, local, rows, n) }
	run := pl.Run
	// With grouped-gemm=off (SequentialMLP) each local expert runs its
	// own FC1, activation and FC2 on its rows/local tokens, each GEMM a
	// dense GEMM of its shape (no grouped-GEMM efficiency), its casts its
	// own: the kernels below once per expert (nexp of them), and the
	// experts' outputs concatenated (cost.GroupedGEMM's LoopCat).
	erows, nexp, gw := rows, 1.0, local
	if run.ExpertLoop {
		erows, nexp, gw = rows/local, local, 1
		grouped = func(g kernel, _ float64) kernel { return g }
	}
	fc1 := grouped(c.LGEMM(2*erows*h*up, erows*h*bf16+gw*h*up*bf16, erows*up*bf16), up)
	actFn := ew(10*erows*cols, erows*cols*bf16, erows*cols*bf16)
	if m.SwiGLU() {
		actFn = ew(6*erows*cols, 2*erows*cols*bf16, erows*cols*bf16)
	}
	fc2 := grouped(c.LGEMM(2*erows*cols*h, erows*cols*bf16+gw*cols*h*bf16, erows*h*bf16), h)
	fc1b, fc2b := c.Back(fc1), c.Back(fc2)
	// Transformer Engine's grouped GEMM launches one GEMM an expert from
	// its own loop: each forward GEMM and each of the backward's data and
	// weight gradients, local calls (cost.GroupedGEMM's Calls).
	tg := func(k kernel) phase {
		return phase{Busy: k.Time(c.H), Launches: 1, Calls: c.Points.GroupedGEMM.Calls(&c.Shard, local)}
	}
	experts := tg(fc1).Plus(t(actFn)).Plus(tg(fc2)).Plus(c.casts(erows*h, erows*cols))
	// The families' kernels in the activation (GPT-OSS's clamp), again
	// under moe_act.
	var clampF, clampB phase
	for p := range c.Points.ExpertActivation.On(&c.Shard) {
		f, b := p.ExpertActivation(&c.Shard, erows, cols)
		clampF, clampB = clampF.Plus(f), clampB.Plus(b)
	}
	experts = experts.Plus(clampF)
	mods := c.Plan.Recomputes()
	if mods.Has(plan.RecomputeMoEAct) {
		rec = t(actFn).Plus(c.casts(erows * cols)).Plus(clampF)
	}
	// The data gradients as the forward GEMMs; the weight gradients into
	// the main gradients (expertWgrad).
	fc1w := c.expertWgrad(fc1b, erows*h, erows*up, gw*h*up)
	fc2w := c.expertWgrad(fc2b, erows*cols, erows*h, gw*cols*h)
	expertsB := tg(fc1b).Plus(tg(fc1w)).Plus(t(actFn)).Plus(t(actFn)).Plus(tg(fc2b)).Plus(tg(fc2w)).
		Plus(c.bwdCasts(erows*h, erows*cols)).Plus(clampB)
	wgrad := tg(fc1w).Plus(tg(fc2w)) // what a frozen base does not run (LoRA: expertLoRA)
	experts.Calls += c.Points.GroupedGEMM.SplitCastCalls(&c.Shard, local)
	expertsB.Calls += c.Points.GroupedGEMM.SplitCastCalls(&c.Shard, local)
	if run.ExpertLoop {
		experts = cost.Scale(experts, nexp).Plus(t(c.Points.GroupedGEMM.LoopCat(&c.Shard, rows)))
		expertsB = cost.Scale(expertsB, nexp)
		wgrad = cost.Scale(wgrad, nexp)
		rec = cost.Scale(rec, nexp)
	}
	// The families' and mechanisms' kernels at the experts' output (the
	// FC2 biases, FP8's padding to the GEMM's alignment).
	for p := range c.Points.ExpertOutput.On(&c.Shard) {
		f, b := p.ExpertOutput(&c.Shard, rows, local, nl)
		experts, expertsB = experts.Plus(f), expertsB.Plus(b)
	}
	dispatched := experts // the routed experts alone, before the shared ones join them
	if sh := float64(m.SharedExperts) * fe; sh > 0 {
		sup := sh
		if m.SwiGLU() {
			sup = 2 * sh
		}
		s1 := c.LGEMM(2*nl*h*sup, nl*h*bf16+h*sup*bf16, nl*sup*bf16)
		sa := ew(6*nl*sh, 2*nl*sh*bf16, nl*sh*bf16)
		s2 := c.LGEMM(2*nl*sh*h, nl*sh*bf16+sh*h*bf16, nl*h*bf16)
		experts = experts.Plus(t(s1)).Plus(t(sa)).Plus(t(s2))
		if mods.Has(plan.RecomputeSharedExperts) {
			rec = rec.Plus(t(s1)).Plus(t(sa)).Plus(t(s2))
		}
		s1b, s2b := c.Back(s1), c.Back(s2)
		expertsB = expertsB.Plus(t(s1b)).Plus(t(s1b)).Plus(t(sa)).Plus(t(sa)).Plus(t(s2b)).Plus(t(s2b))
		wgrad = wgrad.Plus(t(s1b)).Plus(t(s2b))
	}
	return moeWork{fwd: experts, bwd: expertsB, rec: rec, routed: dispatched, wgrad: wgrad, recv: recv, rows: rows, local: local, nl: nl}
}

// loadFactor is the copies the most loaded expert-parallel rank
// receives over the even share for nl tokens a GPU: the registered
// cost.ExpertLoad's where it prices the shard (mechanisms.RandomRouting:
// the force-balanced router's draw), else the plan's (Plan.LoadFactor:
// its stated imbalance or capacity factor).
func (c *coster) loadFactor(nl float64) float64 {
	if l := c.Points.ExpertLoad.Of(&c.Shard); l != nil {
		return l.Load(&c.Shard, nl)
	}
	return c.Plan.LoadFactor()
}

// expertWgrad is the weight gradient of the experts' GEMM g (c.back of
// an lgemm over in input and out output elements, w weight elements) on
// Megatron-Core's layers: Transformer Engine's GroupedLinear (and Linear,
// SequentialMLP's) with fuse_wgrad_accumulation, which Megatron-Core
// sets from gradient_accumulation_fusion (extensions/transformer_engine.py
// TEGroupedLinear, 1e057005 and core_v0.16.0; on by default in
// Megatron-LM's arguments), writes the weight gradient into the
// parameter's main gradient and, after a step's first micro-batch,
// accumulates into it (TE v2.4 module/grouped_linear.py backward:
// wgrad_list = main_grads, accumulate=accumulate_wgrad_into_param_main_grad):
// the main gradient read and written (Plan.GradBytes an element) besides
// the input and the output gradient, no weight. Without the fusion the
// BF16 weight gradient is written and then added into the main gradient
// by a kernel of its own, more traffic than this. With few rows an
// expert the main gradient's traffic outweighs the GEMM's FLOPs (the
// roofline's max): at 512 rows, 4,096 x 3,072 weights take 100 MB of
// FP32 traffic against 12.9 GFLOP. Off Megatron's layers g as it is.
func (c *coster) expertWgrad(g kernel, in, out, w float64) kernel {
	if !c.MegatronLayers() || in+w <= 0 {
		return g
	}
	gb := c.Plan.GradBytes()
	s := g.Read / ((in + w) * bf16) // lgemm's bytes per BF16 byte: 1, 1/2 in FP8, 1/4 in NVFP4
	g.Read = (in+out)*bf16*s + w*gb
	g.Writes = w * gb
	return g
}

// moeGlue is what an MoE block runs around its experts for nl tokens on
// one GPU (moe): the router's GEMM to the experts' scores (FP32), the
// scores' softmax and top-k, the permutation of each token's TopK copies
// into expert order and the unpermutation (the copies weighted and
// summed back), each a memory-bound pass at the rate of a fused kernel
// (Megatron-Core's moe_permute_fusion, Transformer Engine's), backward
// twice its traffic.
func moeGlue(m transformer.Spec, nl float64) (router, scores, permute, unpermute kernel) {
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	routed := nl * k
	ew := func(flops, read, write float64) kernel {
		return kernel{Class: graph.ClassElementwise, FLOPs: flops, Read: read, Writes: write}
	}
	router = kernel{Class: graph.ClassMatMul, FLOPs: 2 * nl * h * E, Read: nl*h*bf16 + h*E*bf16, Writes: nl * E * 4}
	scores = ew(5*nl*E, nl*E*4, nl*E*4+routed*8)
	permute = kernel{Class: graph.ClassDataMovement, Read: nl * h * bf16, Writes: routed * h * bf16}
	unpermute = ew(2*routed*h, routed*h*bf16+routed*4, nl*h*bf16)
	return router, scores, permute, unpermute
}

// moeTail is what the host issues after the dispatcher's
// synchronization in one MoE layer's forward, with the GPU's queue empty
// but for what was issued just before it (drain): the runs the
// registered cost.TokenDispatcher's dispatch issues (its Issue), from
// the glue g, the exchange comm, the bookkeeping's forward bf and the
// routed experts' forward. No tail without a synchronization (capacity
// routing) or without a host (noHost).
func (c *coster) moeTail(d cost.Dispatch, g cost.Glue, comm, bf, routed phase) syncTail {
	h := &c.Pod.Kernels.Host
	if c.NoHost || d.DispatchSyncs() == 0 || (h.Issue <= 0 && h.Launch <= 0) {
		return syncTail{}
	}
	var tl syncTail
	for i, r := range d.Issue(g, comm, bf, routed) {
		if t := drain(c.Points, h, r.Ahead, r.Steps...); i == 0 {
			tl = t
		} else {
			tl = tl.Plus(t)
		}
	}
	return tl
}

// casts and bwdCasts are the casts of GEMM inputs of es elements each on
// c's shard, forward and backward, by the registered cost.LowPrecision
// that prices it; none in BF16.
func (c *coster) casts(es ...float64) phase {
	if lp := c.Points.LowPrecision.Of(&c.Shard); lp != nil {
		return lp.Casts(&c.Shard, es...)
	}
	return phase{}
}

func (c *coster) bwdCasts(es ...float64) phase {
	if lp := c.Points.LowPrecision.Of(&c.Shard); lp != nil {
		return lp.BwdCasts(&c.Shard, es...)
	}
	return phase{}
}
