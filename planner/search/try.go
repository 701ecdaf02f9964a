package search

import (
	"math"
	"slices"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// try evaluates s, counts it, keeps it if it is the best or among the
// Top, and reports what it made of it. The verdict is the tensors'
// count's (planner.EvaluateCounted) for a plan that would not be kept
// anyway, and the caching allocator's simulated reservation
// (planner.Judge, a replay of milliseconds) for one that would: a plan
// over on the count is over on the reservation (never below it), and
// which plan is kept depends only on the verdicts of those it would
// keep, so the search keeps the plans it would with every plan judged
// (TestSearchJudgesAsAlways).
//
// With levers (Space.Levers) it tries s's variants too (tryLevers).
func (sr *searcher) try(s plan.Strategy) tried {
	if sr.offloading {
		return sr.tryOffload(s)
	}
	if sr.lv.any {
		return sr.tryLevers(s)
	}
	t, _, _ := sr.tryOne(s, false)
	return t
}

// tryLevers is try with the search's levers: s as the user's recipe
// has it, and where a lever can change whether it fits or how fast it
// runs, s with it:
//   - fp8-params on at once where it is never slower and never more
//     memory (dominantFP8Params), s as it is only where that is not a
//     plan; the steps below on whichever was tried;
//   - where s does not fit, the fewest memory levers that make it fit
//     (memoryLevers), then that plan;
//   - on a plan that fits, the other context-parallel exchanges where
//     cp > 1 and the exchange's exposed time could bring it among the
//     plans kept, on each of those the MXFP8 output layer where its
//     time could, and on each the CUDA graphs where its GPU waits on
//     its host and that wait could (speedLevers).
//
// It reports fitted where any of them fitted, else s's own verdict.
func (sr *searcher) tryLevers(s plan.Strategy) tried {
	t, r, ok := setAside, planner.Result{}, false
	if sr.lv.fp8Params && dominantFP8Params(s) {
		v := s
		v.FP8Params = true
		if t, r, ok = sr.tryOne(v, true); ok {
			s = v
		}
	}
	if !ok {
		if t, r, ok = sr.tryOne(s, false); !ok {
			return t
		}
	}
	if t != fitted {
		v, ok := sr.memoryLevers(s)
		if !ok {
			return t
		}
		if t, r, ok = sr.tryOne(v, true); !ok || t != fitted {
			return t
		}
		s = v
	}
	sr.speedLevers(s, &r)
	return fitted
}

// tryOffload is try in the offload pass: of the plans the first pass
// tried (none of which fitted), those that can offload (no pipeline, no
// recomputation), with the fewest memory levers that make them fit,
// offload among them (memoryLevers), and the speed levers on those;
// the others are set aside, tried already.
func (sr *searcher) tryOffload(s plan.Strategy) tried {
	if !offloadable(s) {
		return setAside
	}
	if sr.lv.fp8Params && dominantFP8Params(s) {
		s.FP8Params = true // as the first pass tried it
	}
	v, ok := sr.memoryLevers(s)
	if !ok {
		return setAside
	}
	t, r, ok := sr.tryOne(v, true)
	if t == fitted && ok {
		sr.speedLevers(v, &r)
	}
	return t
}

// offloadable is whether Megatron-Core offloads plan s's activations:
// no pipeline, no recomputation, and none offloaded yet.
func offloadable(s plan.Strategy) bool {
	return s.OffloadLayers == 0 && s.Recompute == plan.NoRecompute && s.PipelineDegree() == 1 && s.VirtualStages() == 1
}

// dominantFP8Params is whether fp8-params=on is never slower and never
// needs more memory for plan s: LoRA's frozen base under an FP8 recipe
// (no cast of it a step: mechanisms.FP8Casts; its weights one byte, no
// BF16 copy: memory/state.go), TestDominantFP8Params holding it so.
func dominantFP8Params(s plan.Strategy) bool {
	return s.FineTune.LoRA() && teFP8(s) && !s.FP8Params && !s.NoTransposeCache && !s.FSDP
}

// teFP8 is whether s's FP8 recipe is one whose weights and activations
// Transformer Engine's switches hold (plan.MemoryRecipe's check): the
// per-tensor recipes and the block-scaled ones.
func teFP8(s plan.Strategy) bool {
	return s.FP8 == plan.FP8Delayed || s.FP8 == plan.FP8Current || plan.BlockScaled(s.FP8)
}

// memoryLevers is s with the fewest memory levers (fp8-params,
// fp8-activation, offload-layers: Levers' order, fewer switches first)
// on which it fits on the tensors' count, offload at the fewest layers
// that do; false where s fits with none of them, every one on (offload
// at every layer but one: Megatron-Core's most) tried first.
func (sr *searcher) memoryLevers(s plan.Strategy) (plan.Strategy, bool) {
	var sets []func(*plan.Strategy)
	if sr.lv.fp8Params && teFP8(s) && !s.FP8Params && !s.FSDP {
		sets = append(sets, func(v *plan.Strategy) { v.FP8Params = true })
	}
	if sr.lv.fp8Act && teFP8(s) && !s.FP8Activation {
		sets = append(sets, func(v *plan.Strategy) { v.FP8Activation = true })
	}
	offload := sr.lv.offload && offloadable(s) && sr.m.Layers > 1 &&
		plan.RecipeFits(sr.m, plan.Strategy{MemoryRecipe: plan.MemoryRecipe{OffloadLayers: 1}}) == nil
	if offload {
		sets = append(sets, func(v *plan.Strategy) { v.OffloadLayers = sr.m.Layers - 1 })
	}
	n := len(sets)
	if n == 0 {
		return s, false
	}
	with := func(mask int) plan.Strategy {
		v := s
		for i, set := range sets {
			if mask&(1<<i) != 0 {
				set(&v)
			}
		}
		return v
	}
	all := 1<<n - 1
	if !sr.countFits(with(all)) {
		return s, false
	}
	// The subsets by their count of switches, then in Levers' order.
	masks := make([]int, 0, all)
	for mask := 1; mask <= all; mask++ {
		masks = append(masks, mask)
	}
	slices.SortStableFunc(masks, func(a, b int) int { return popcount(a) - popcount(b) })
	for _, mask := range masks {
		v := with(mask)
		if !sr.countFits(v) {
			continue
		}
		if offload && mask&(1<<(n-1)) != 0 {
			v.OffloadLayers = sr.fewestOffloaded(v)
		}
		return v, true
	}
	return s, false
}

// countFits reports whether s is a plan that fits on the tensors' count
// (tight ones as the space keeps them).
func (sr *searcher) countFits(s plan.Strategy) bool {
	pl, err := plan.Resolve(sr.m, s, sr.p)
	return err == nil && planner.CountFitsTight(sr.m, pl, &sr.p, sr.sp.AllowTight)
}

// fewestOffloaded is the fewest layers s (which fits at its
// OffloadLayers) can offload and still fit on the count: more offloaded
// is less memory, so a bisection.
func (sr *searcher) fewestOffloaded(s plan.Strategy) int {
	lo, hi := 1, s.OffloadLayers
	for lo < hi {
		mid := (lo + hi) / 2
		v := s
		v.OffloadLayers = mid
		if sr.countFits(v) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// popcount is the set bits of a small mask.
func popcount(x int) int {
	n := 0
	for ; x > 0; x &= x - 1 {
		n++
	}
	return n
}

// cutoff is the step a plan must beat to be kept: the Top's last when
// it is full, the best's without a Top, none before a plan is found
// (and none where every lever is tried on every plan: sr.allLevers).
func (sr *searcher) cutoff() float64 {
	k, top := sr.sp.Top, sr.out.Top
	switch {
	case sr.allLevers || k > 0 && len(top) < k || k == 0 && !sr.out.Found:
		return math.Inf(1)
	case k > 0:
		return top[k-1].Step
	}
	return sr.out.Best.Step
}

// speedLevers tries, on s (fitting, r its result), the other
// context-parallel exchanges where cp > 1 and r's step less its exposed
// exchange beats the cutoff (the exchanges differ in their attention
// alone: the same FLOPs a rank, their communication exposed), on s and
// each exchange that fitted the MXFP8 output layer where its step less
// all its output layer's time (planner.Result.OutputLayer) beats the
// cutoff, and on each of those that fitted the CUDA graphs where the
// plan's busiest GPU waits on its host and its step less that wait
// beats the cutoff (graphs take the launches off the host, nothing
// else).
func (sr *searcher) speedLevers(s plan.Strategy, r *planner.Result) {
	type fit struct {
		s plan.Strategy
		r planner.Result
	}
	fits := []fit{{s, *r}}
	if sr.lv.cpComm && r.Plan.CP > 1 && r.Step*(1-cpKernelShare)-r.CPExposed < sr.cutoff() {
		for _, c := range []string{plan.CPCommP2P, plan.CPCommAllGather, plan.CPCommA2A} {
			if c == s.Software.CPComm || c == plan.CPCommP2P && s.Software.CPComm == "" {
				continue
			}
			v := s
			v.Software.CPComm = c
			if t, rv, ok := sr.tryOne(v, true); t == fitted && ok {
				fits = append(fits, fit{v, rv})
			}
		}
	}
	if sr.lv.outputProj && outputProjApplies(s) {
		for _, f := range fits[:len(fits):len(fits)] {
			if f.r.Step-f.r.OutputLayer >= sr.cutoff() {
				continue
			}
			v := f.s
			v.FP8OutputProj = true
			if t, rv, ok := sr.tryOne(v, true); t == fitted && ok {
				fits = append(fits, fit{v, rv})
			}
		}
	}
	if !sr.lv.graphs || s.Software.Graphs != "" && s.Software.Graphs != plan.GraphsOff {
		return
	}
	for _, f := range fits {
		if !(f.r.HostExposed > 0 || sr.allLevers) || f.r.Step-f.r.HostExposed >= sr.cutoff() {
			continue
		}
		for _, g := range sr.graphScopes() {
			v := f.s
			v.Software.Graphs = g
			if v.GraphPool == "" {
				v.GraphPool = plan.GraphPoolLayers
				if plan.RecipeFits(sr.m, v) != nil {
					v.GraphPool = "" // not counted where the memory model has no count of them
				}
			}
			sr.tryOne(v, true)
		}
	}
}

// cpKernelShare is the share of a plan's step the context-parallel
// exchanges may differ by beyond their exposed communication: their
// attention runs as kernels of other shapes (the p2p ring's chunk calls,
// all_gather's two calls, a2a's one whole-sequence call of fewer heads),
// the same FLOPs a rank. speedLevers tries the other exchanges where the
// step less this share and the exposed exchange could be kept;
// TestLeversPruneAsAll holds the answers to those of trying them on
// every plan.
const cpKernelShare = 0.02

// outputProjApplies is whether fp8-output-proj=on is a variant of plan
// s: Megatron-Core's fp8_output_proj under fp8=mxfp8 (its
// TransformerConfig refuses it under any other recipe), not on yet.
func outputProjApplies(s plan.Strategy) bool {
	return s.FP8 == plan.FP8MX && !s.FP8OutputProj && s.Software.Framework() == plan.FrameworkMegatron
}

// graphScopes are the CUDA graphs' scopes the graphs lever tries: dense
// (the attention and a dense layer's MLP), and in a model with experts
// full (the whole layer, where the routing lets it be graphed).
func (sr *searcher) graphScopes() []string {
	if sr.m.MoE() {
		return []string{plan.GraphsDense, plan.GraphsFull}
	}
	return []string{plan.GraphsDense}
}
