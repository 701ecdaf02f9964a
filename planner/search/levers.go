package search

import (
	"math"
	"slices"
	"strconv"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// The levers: recipe switches Search turns on where the user left them
// (Space.Levers), each named by its plan key (plan.Keys).
const (
	// LeverFP8Params is fp8-params=on: FP8 (or, under a block-scaled
	// recipe, quantized) primary weights. Less memory; under LoRA with
	// an FP8 recipe no cast of the frozen base either, so there it is
	// never slower and never needs more memory and is turned on
	// wherever it applies.
	LeverFP8Params = "fp8-params"
	// LeverFP8Activation is fp8-activation=on: the MLP activation's
	// saved input in FP8. Memory only.
	LeverFP8Activation = "fp8-activation"
	// LeverOffload is offload-layers=N: the fewest layers whose
	// activations go to the host for the plan to fit. Memory only (the
	// model prices the copies hidden), and only without a pipeline or
	// recomputation (Megatron-Core's rule).
	LeverOffload = "offload-layers"
	// LeverCPComm is cp-comm-type: the context-parallel exchange (p2p,
	// all_gather, a2a), tried where cp > 1.
	LeverCPComm = "cp-comm-type"
	// LeverOutputProj is fp8-output-proj=on: the output layer's GEMMs in
	// MXFP8 (Megatron-Core's fp8_output_proj, fp8=mxfp8 only), tried on
	// a plan that fits where its step less all its output layer's time
	// beats the cutoff: faster GEMMs, their casts beside them, the
	// columnwise copies kept (more memory).
	LeverOutputProj = "fp8-output-proj"
	// LeverGraphs is cuda-graphs: Transformer Engine's per-layer CUDA
	// graphs (dense; full as well in a model with experts), with their
	// static buffers (graph-pool=layers) where the memory model counts
	// them, tried where the plan's GPU waits on its host: graphs change
	// nothing else of a step.
	LeverGraphs = "cuda-graphs"
)

// Levers are every lever, in the order Search turns them on.
var Levers = []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverCPComm, LeverOutputProj, LeverGraphs}

// leverFixedBy are the keys of a --strategy that fix each lever beside
// its own: the transposes' cache is fp8-params'; the graphs' buffers are
// the graphs'; a named stack (stack=) sets the graphs and the exchange
// as its release runs them.
var leverFixedBy = map[string][]string{
	LeverFP8Params:     {"fp8-params", "fp8-transpose-cache"},
	LeverFP8Activation: {"fp8-activation"},
	LeverOffload:       {"offload-layers"},
	LeverCPComm:        {"cp-comm-type", "stack"},
	LeverOutputProj:    {"fp8-output-proj"},
	LeverGraphs:        {"cuda-graphs", "graph-pool", "stack"},
}

// LeversFor are the levers a search for framework target may turn on,
// in Levers' order: those whose key target's export writes (plan.Keys'
// Exports: megatron and megatron-bridge write fp8-params, offload-layers,
// cp-comm-type and cuda-graphs, megatron-bridge fp8-activation and
// fp8-output-proj too; torchtitan and deepspeed none), every one some
// export writes for "any", none for "" (no framework: the user's
// recipe). named reports whether the --strategy named a key (by its
// name): a lever a named key fixes (leverFixedBy) is left as written.
//
// Two recipe switches are no lever, since no export writes them:
// fp8-dpa=on (Megatron-LM core_v0.16.1's arguments.py has no flag for
// fp8_dot_product_attention; Megatron-Bridge 0.5.0's
// MixedPrecisionConfig.setup copies its recipe's
// fp8_dot_product_attention False over the model's) and
// lora-dropout-recompute=on (NeMo's dropout_recompute: Bridge 0.5.0's
// ParallelLinearAdapter keeps an nn.Dropout and takes no such
// argument). TestNoLeverUnwritten holds them out.
func LeversFor(target string, named func(key string) bool) []string {
	if target == "" {
		return nil
	}
	var out []string
	for _, lv := range Levers {
		if slices.ContainsFunc(leverFixedBy[lv], named) {
			continue
		}
		for _, k := range plan.Keys {
			if k.Name == lv && (target == "any" && len(k.Exports) > 0 || slices.Contains(k.Exports, target)) {
				out = append(out, lv)
			}
		}
	}
	return out
}

// WithLevers is sp with the levers target's framework writes
// (LeversFor) that sp's --strategy (SpaceOf) did not fix.
func (sp Space) WithLevers(target string) Space {
	sp.Levers = LeversFor(target, func(k string) bool { return sp.named[k] })
	return sp
}

// Switches are the levers plan s has turned on against sp's own recipe
// (what the --strategy wrote), as key=value in Levers' order: what the
// search chose for the user.
func (sp Space) Switches(s plan.Strategy) []string {
	var out []string
	if s.FP8Params && !sp.MemoryRecipe.FP8Params {
		out = append(out, LeverFP8Params+"=on")
	}
	if s.FP8Activation && !sp.MemoryRecipe.FP8Activation {
		out = append(out, LeverFP8Activation+"=on")
	}
	if n := s.OffloadLayers; n != sp.MemoryRecipe.OffloadLayers {
		out = append(out, LeverOffload+"="+strconv.Itoa(n))
	}
	if c := s.Software.CPComm; c != sp.Software.CPComm {
		out = append(out, LeverCPComm+"="+c)
	}
	if s.FP8OutputProj && !sp.MemoryRecipe.FP8OutputProj {
		out = append(out, LeverOutputProj+"=on")
	}
	if g := s.Software.Graphs; g != sp.Software.Graphs {
		out = append(out, LeverGraphs+"="+g)
		if s.GraphPool != sp.MemoryRecipe.GraphPool {
			out = append(out, "graph-pool="+s.GraphPool)
		}
	}
	return out
}

// leverSet is which levers a search turns on (Space.Levers).
type leverSet struct {
	any, fp8Params, fp8Act, offload, cpComm, outputProj, graphs bool
}

func newLeverSet(levers []string) leverSet {
	on := func(k string) bool { return slices.Contains(levers, k) }
	return leverSet{any: len(levers) > 0, fp8Params: on(LeverFP8Params), fp8Act: on(LeverFP8Activation),
		offload: on(LeverOffload), cpComm: on(LeverCPComm), outputProj: on(LeverOutputProj), graphs: on(LeverGraphs)}
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

// teFP8 is whether s's FP8 recipe is one whose weights and activations
// Transformer Engine's switches hold (plan.MemoryRecipe's check): the
// per-tensor recipes and the block-scaled ones.
func teFP8(s plan.Strategy) bool {
	return s.FP8 == plan.FP8Delayed || s.FP8 == plan.FP8Current || plan.BlockScaled(s.FP8)
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

// cpKernelShare is the share of a plan's step the context-parallel
// exchanges may differ by beyond their exposed communication: their
// attention runs as kernels of other shapes (the p2p ring's chunk calls,
// all_gather's two calls, a2a's one whole-sequence call of fewer heads),
// the same FLOPs a rank. speedLevers tries the other exchanges where the
// step less this share and the exposed exchange could be kept;
// TestLeversPruneAsAll holds the answers to those of trying them on
// every plan.
const cpKernelShare = 0.02
