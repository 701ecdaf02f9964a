package search

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// Space bounds what Search enumerates; its zero value is the whole space.
type Space struct {
	// MaxMBS is the largest micro-batch size tried (0 = 8).
	MaxMBS int
	// MaxVirtual is the most model chunks per device tried (0 = 8).
	MaxVirtual int
	// MBS and Context, when above 0, are the micro-batch size and the
	// context-parallel degree a --strategy keeps (SpaceOf): the only ones
	// tried, whatever the powers of two up to MaxMBS and the long
	// sequences ContextDegrees keeps to (0: those).
	MBS, Context int
	// Keep, when not nil, keeps only the plans it returns true for (a
	// published configuration's stated degrees, with its unstated knobs
	// searched).
	Keep func(plan.Plan) bool
	// Prefilter, when not nil, skips a strategy before it is resolved:
	// it must return false only for strategies whose plans Keep refuses
	// (a cheaper necessary condition of Keep; nil: none).
	Prefilter func(plan.Strategy) bool
	// Top is how many of the fastest fitting plans to keep besides the
	// best (Result.Top; 0 = none).
	Top int
	// AllowTight keeps the plans whose memory is "tight" (planner.Result.Verdict:
	// within their regime's measured error of the usable memory); false
	// sets them aside (Result.Tight counts them).
	AllowTight bool
	// Imbalance, FP8 and GradBF16 are every plan's (Strategy's: the
	// experts' load imbalance, the FP8 recipe, the gradients' precision):
	// settings of the run, not searched.
	Imbalance float64
	FP8       string
	GradBF16  bool
	// FP8Gather is every FSDP plan's float8 all-gather
	// (Strategy.FP8Gather: a setting of the run; the plans without FSDP
	// run without it).
	FP8Gather bool
	// FineTune is every plan's fine-tuning (Strategy.FineTune: LoRA,
	// packing; a setting of the run, not searched).
	FineTune plan.FineTune
	// Software is every plan's software stack (Strategy.Software: a
	// setting of the run, not searched).
	Software plan.Software
	// MemoryRecipe is every plan's memory recipe (Strategy.MemoryRecipe:
	// FP8 weights and activations, offload, CUDA graphs' buffers, the
	// allocator; a setting of the run, not searched).
	MemoryRecipe plan.MemoryRecipe
	// FSDP adds FSDP (Strategy.FSDP) to the sharding tried beside none
	// and the distributed optimizer (false: not tried).
	FSDP bool
	// RecomputeModules, when set, adds selective recomputation of these
	// modules (Strategy.RecomputeModules) to the recomputations tried.
	RecomputeModules plan.RecomputeModules
	// EmbeddingLayer and LossLayer count the embedding and the loss as
	// layers in every plan's pipeline split (Strategy's): the one split
	// they give replaces the splits tried, and plans without a pipeline
	// are not tried.
	EmbeddingLayer, LossLayer bool
	// For is the framework the plans are for (Target): Search enumerates
	// only plans it runs. The zero value: every plan.
	For Target
	// Levers are the recipe switches (Levers' keys) Search turns on
	// where they change whether a plan fits or how fast it runs
	// (tryLevers); nil: every plan runs the recipe above as it is.
	// WithLevers sets them for a framework.
	Levers []string
	// named are the keys SpaceOf's --strategy named (their names):
	// the levers they fix stay as written (WithLevers).
	named map[string]bool
}

// Target is a framework whose plans Search proposes (Space.For): what
// its export writes, as constraints on the space Search enumerates
// (workloads/export/plans' SearchTarget builds each framework's). The zero
// value constrains nothing.
type Target struct {
	// Name is the framework's (--for NAME); "" for none.
	Name string
	// OneTensor: one tensor-parallel degree for every stage (no end
	// stages of their own degree, stage-tp).
	OneTensor bool
	// EndChunks: an end stage whose layers first= or last= set splits
	// them into V equal model chunks, as the stages between do
	// (Megatron-Core's --decoder-first/last-pipeline-num-layers with
	// virtual stages: first and last multiples of V).
	EndChunks bool
	// LayerChunks: every stage's layers split into V equal model chunks,
	// with the embedding or the loss counted as layers too (torchtitan's
	// module_fqns_per_model_part, whole layers a chunk).
	LayerChunks bool
	// UnitSplits adds to the splits tried those with the embedding, the
	// loss, or both counted as layers (Strategy's EmbeddingLayer and
	// LossLayer: Megatron-Core's --account-for-embedding/loss-in-
	// pipeline-split), with the virtual stages dividing a stage's units:
	// the uneven splits with virtual stages that end chunks of their own
	// share cannot be (Llama 3 405B's 126 layers over 16 stages: 128
	// units, 8 a stage).
	UnitSplits bool
	// FSDP adds FSDP to the sharding tried (Space.FSDP), the framework's
	// data parallelism beside others (torchtitan's).
	FSDP bool
	// Refuses, when not nil, is the framework's exporter's verdict on a
	// resolved plan, before it is evaluated: nil where it writes it, else
	// why not (Search sets the plan aside and counts it: Result.Refused).
	Refuses func(plan.Plan) error
}

// searchRecompute is a recomputation Search tries: the kind, and with
// selective recomputation its modules (0: the core attention).
type searchRecompute struct {
	rc   plan.Recompute
	mods plan.RecomputeModules
}

// recomputes are the recomputations Search tries: none, selective,
// selective of sp's modules where it names others, and full.
func (sp Space) recomputes() []searchRecompute {
	if sp.RecomputeModules != 0 && sp.RecomputeModules != plan.RecomputeCoreAttn {
		return []searchRecompute{{plan.NoRecompute, 0}, {plan.SelectiveRecompute, 0}, {plan.SelectiveRecompute, sp.RecomputeModules}, {plan.FullRecompute, 0}}
	}
	return []searchRecompute{{plan.NoRecompute, 0}, {plan.SelectiveRecompute, 0}, {plan.FullRecompute, 0}}
}

// splits are the layer splits Search tries over P stages: stageSplits',
// or with the embedding or the loss counted as layers the one split
// they give (unitSplit).
//
// For a target (Space.For) the virtual stages of each split are those
// its framework runs (EndChunks, LayerChunks), and with UnitSplits the
// splits counting the embedding, the loss or both as layers are tried
// beside the others.
func (sp Space) splits(layers, P int) []stageSplit {
	if sp.EmbeddingLayer || sp.LossLayer {
		return sp.For.chunked(layers, P, sp.unitSplit(layers, P))
	}
	out := stageSplits(layers, P)
	if sp.For.UnitSplits {
		for _, u := range [][2]bool{{true, false}, {false, true}, {true, true}} {
			out = append(out, Space{EmbeddingLayer: u[0], LossLayer: u[1]}.unitSplit(layers, P)...)
		}
	}
	return sp.For.chunked(layers, P, out)
}

// chunked is splits with each one's virtual stages cut to those target
// t's framework runs (EndChunks, LayerChunks); a split left with none
// is dropped.
func (t Target) chunked(layers, P int, splits []stageSplit) []stageSplit {
	if !t.EndChunks && !t.LayerChunks {
		return splits
	}
	out := splits[:0:0]
	for _, sp := range splits {
		stages, err := plan.Strategy{Pipeline: P, FirstLayers: sp.first, LastLayers: sp.last,
			EmbeddingLayer: sp.emb, LossLayer: sp.loss}.StageLayers(layers)
		if err != nil {
			continue
		}
		var vs []int
		for _, v := range sp.virtual {
			ok := !t.EndChunks || sp.first%v == 0 && sp.last%v == 0
			for _, l := range stages {
				ok = ok && (!t.LayerChunks || l%v == 0)
			}
			if ok {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			sp.virtual = vs
			out = append(out, sp)
		}
	}
	return out
}

// unitSplit is the split of layers over P stages with the embedding or
// the loss counted as layers (Strategy.StageLayers'), with V among the
// divisors of a stage's units; none where they do not split evenly or
// without a pipeline.
func (sp Space) unitSplit(layers, P int) []stageSplit {
	units := layers
	if sp.EmbeddingLayer {
		units++
	}
	if sp.LossLayer {
		units++
	}
	if P == 1 || units%P != 0 {
		return nil
	}
	return []stageSplit{{virtual: divisors(units / P), emb: sp.EmbeddingLayer, loss: sp.LossLayer}}
}

// Result is what Search found: the fastest plan that fits, how many
// plans it evaluated and how many of them fit. A plan's verdict is first
// on the tensors' count (planner.EvaluateCounted); only a plan that would
// be kept (the best so far, or one of Top) is judged on the caching
// allocator's simulated reservation (planner.Judge), so Fitting and Tight
// count the others on their count.
type Result struct {
	Best      planner.Result
	Found     bool
	Evaluated int
	Fitting   int
	// Tight is the plans set aside as "tight" (Space.AllowTight false),
	// not counted in Fitting.
	Tight int
	// Judged is how many plans were judged on the reservation (would
	// have been kept on the count), OverReserved how many of them it
	// set aside: over on the reservation, not counted in Fitting.
	Judged, OverReserved int
	// Refused is how many plans of the space the target framework's
	// export refuses (Target.Refuses), set aside before they are
	// evaluated and not counted in Evaluated; RefusedWhy is the first
	// one's reason, RefusedPlan that plan.
	Refused     int
	RefusedWhy  string
	RefusedPlan plan.Plan
	// Least is the evaluated plan that needs the least memory a GPU
	// (its verdict on the count), fitting or not, where Evaluated > 0:
	// what a search that found nothing says it came closest with.
	Least planner.Result
	// Top are the fastest fitting plans, fastest first, Space.Top of them
	// at most (the best among them).
	Top []planner.Result
}

// Search evaluates every plan of model m on pod p: tensor-parallel degree
// T dividing the heads and a node; pipeline stages P and virtual stages V
// whose product divides the layers; the micro-batch size; sequence
// parallelism (with T > 1); recomputation (none, selective, full); the
// distributed optimizer (with D > 1, or context parallelism); context
// parallelism C (ContextDegrees: long sequences only); and end stages of their own
// tensor-parallel degree (stage-tp: the first and/or the last stage's
// degree differing from the stages between, D x their sum the GPUs, the
// layer splits centred on the share that balances the stages); in a model
// with experts, their mesh (expertMeshes: expert-parallel degree and
// expert-tensor-parallel degree 1 or T) with every plan of the dense
// degrees, the all-to-alls overlapped or not (epoverlap, where
// Megatron-Core allows it), and no end stages of their own degree; for a
// target framework (Space.For), only the plans it runs: its constraints
// cut the splits, the virtual stages and the end stages' degrees before
// anything is evaluated, and add the splits it has in their place. It returns the fastest plan that
// fits the GPU's memory (ties: fewer GPUs per model replica, then the
// order of enumeration). The space is small enough (thousands of plans for
// the largest models) to be searched exhaustively: no plan of it is
// better than the one returned.
func Search(ctx context.Context, m transformer.Spec, p plan.Pod, sp Space) (Result, error) {
	if err := m.Check(); err != nil {
		return Result{}, err
	}
	return search(ctx, m, p, sp, false)
}

// search is Search, every plan judged on the reservation where always.
// The offload lever, whose copies the step does not price, is a second
// pass: turned on only where no plan fits without it (offloadPass).
func search(ctx context.Context, m transformer.Spec, p plan.Pod, sp Space, always bool) (Result, error) {
	sr := newSearcher(m, p, sp)
	sr.always = always
	offload := sr.lv.offload
	sr.lv.offload = false
	if err := sr.run(ctx); err != nil || sr.out.Found || !offload || sr.out.Evaluated == 0 {
		return sr.out, err // none over memory where none was evaluated
	}
	return offloadPass(ctx, sr)
}

// offloadPass searches again with the offload lever on, after first's
// pass found no plan: its plans' count adds to first's.
func offloadPass(ctx context.Context, first *searcher) (Result, error) {
	sr := newSearcher(first.m, first.p, first.sp)
	sr.always, sr.allLevers, sr.offloadPass = first.always, first.allLevers, true
	err := sr.run(ctx)
	sr.out.Evaluated += first.out.Evaluated
	sr.out.Refused += first.out.Refused
	if first.out.Refused > 0 {
		sr.out.RefusedWhy, sr.out.RefusedPlan = first.out.RefusedWhy, first.out.RefusedPlan
	}
	sr.out.Tight += first.out.Tight
	if sr.out.Evaluated == first.out.Evaluated || first.out.Least.Memory < sr.out.Least.Memory {
		sr.out.Least = first.out.Least
	}
	return sr.out, err
}

// run tries every plan of the space.
func (sr *searcher) run(ctx context.Context) error {
	if err := sr.uniformStages(ctx); err != nil {
		return err
	}
	return sr.endStages(ctx)
}

// searcher is one Search's state: the model, pod and space searched,
// their limits, the phases costed so far, and what it has found.
type searcher struct {
	m            transformer.Spec
	p            plan.Pod
	sp           Space
	maxMBS, maxV int
	recomputes   []searchRecompute
	cache        planner.PhaseCache
	out          Result
	// always judges every plan on the reservation (planner.EvaluateCached),
	// the search try's shortcut is held to (TestSearchJudgesAsAlways).
	always bool
	// lv are the levers the space turns on (Space.Levers); allLevers
	// tries the speed levers on every plan that fits, whatever its step
	// (the prune speedLevers's is held to: TestLeversPruneAsAll).
	lv        leverSet
	allLevers bool
	// offloadPass: the second pass (offloadPass), which tries only the
	// plans that can offload, with the memory levers (tryOffload).
	offloadPass bool
}

// newSearcher is Search's state before any plan: the space's limits on
// micro-batch size and virtual stages (8 each where unset).
func newSearcher(m transformer.Spec, p plan.Pod, sp Space) *searcher {
	sr := &searcher{m: m, p: p, sp: sp, maxMBS: sp.MaxMBS, maxV: sp.MaxVirtual, cache: planner.PhaseCache{}}
	if sr.maxMBS <= 0 {
		sr.maxMBS = 8
	}
	if sr.maxV <= 0 {
		sr.maxV = 8
	}
	sr.recomputes = sp.recomputes()
	sr.lv = newLeverSet(sp.Levers)
	return sr
}

// better reports whether r beats the best plan found so far: a shorter
// step, then fewer GPUs per model replica; the first found wins a tie.
func (sr *searcher) better(r planner.Result) bool {
	if !sr.out.Found {
		return true
	}
	if r.Step != sr.out.Best.Step {
		return r.Step < sr.out.Best.Step
	}
	return r.Plan.ReplicaGPUs() < sr.out.Best.Plan.ReplicaGPUs()
}

// entersTop reports whether keepTop would insert r into the Top.
func (sr *searcher) entersTop(r *planner.Result) bool {
	k, top := sr.sp.Top, sr.out.Top
	return k > 0 && (len(top) < k || r.Step < top[k-1].Step)
}

// tried is what try made of a strategy.
type tried int

const (
	// setAside: not a plan of the space, refused, over on the count, or
	// tight (Space.AllowTight false).
	setAside tried = iota
	// fitted: fits, judged on the reservation where it would be kept.
	fitted
	// overReserved: fits on the count and would be kept, but the caching
	// allocator's reservation (planner.Judge) sets it aside: over, or tight
	// (Space.AllowTight false; counted in Tight).
	overReserved
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
	if sr.offloadPass {
		return sr.tryOffload(s)
	}
	if sr.lv.any {
		return sr.tryLevers(s)
	}
	t, _, _ := sr.tryOne(s, false)
	return t
}

// tryOne is try of s alone, with s's result and true where it was
// evaluated (false where it is not a plan of the space or its framework
// refuses it). A lever's variant (lever) its framework refuses is not
// counted in Result.Refused: it is no plan of the space the user asked.
func (sr *searcher) tryOne(s plan.Strategy, lever bool) (tried, planner.Result, bool) {
	sp := sr.sp
	if sp.Prefilter != nil && !sp.Prefilter(s) {
		return setAside, planner.Result{}, false
	}
	pl, err := plan.Resolve(sr.m, s, sr.p)
	if err != nil || (sp.Keep != nil && !sp.Keep(pl)) {
		return setAside, planner.Result{}, false
	}
	if sp.For.Refuses != nil {
		if why := sp.For.Refuses(pl); why != nil {
			if lever {
				return setAside, planner.Result{}, false
			}
			if sr.out.Refused == 0 {
				sr.out.RefusedWhy, sr.out.RefusedPlan = why.Error(), pl
			}
			sr.out.Refused++
			return setAside, planner.Result{}, false
		}
	}
	r := sr.evaluate(pl)
	sr.out.Evaluated++
	if sr.out.Evaluated == 1 || r.Memory < sr.out.Least.Memory {
		sr.out.Least = r
	}
	if !sr.accepts(&r) {
		return setAside, r, true
	}
	if !sr.always && !sr.better(r) && !sr.entersTop(&r) {
		sr.out.Fitting++
		return fitted, r, true
	}
	if !sr.always {
		r = planner.Judge(sr.m, &sr.p, r)
		sr.out.Judged++
		if !r.Fits {
			sr.out.OverReserved++
			return overReserved, r, true
		}
		if !sr.accepts(&r) {
			return overReserved, r, true // tight on the reservation, set aside
		}
	}
	sr.out.Fitting++
	if sr.better(r) {
		sr.out.Best, sr.out.Found = r, true
	}
	if sp.Top > 0 {
		sr.out.Top = keepTop(sr.out.Top, r, sp.Top)
	}
	return fitted, r, true
}

// evaluate is plan pl's result, its verdict on the count
// (planner.EvaluateCounted), or judged (planner.EvaluateCached) where
// always.
func (sr *searcher) evaluate(pl plan.Plan) planner.Result {
	if sr.always {
		return planner.EvaluateCached(sr.m, pl, &sr.p, sr.cache, false)
	}
	return planner.EvaluateCounted(sr.m, pl, &sr.p, sr.cache)
}

// accepts reports whether r's verdict keeps it, counting a tight one
// set aside (Result.Tight).
func (sr *searcher) accepts(r *planner.Result) bool {
	if !r.Fits {
		return false
	}
	if r.Verdict == plan.VerdictTight && !sr.sp.AllowTight {
		sr.out.Tight++
		return false
	}
	return true
}

// uniformStages tries every plan whose stages share one tensor-parallel
// degree T: every context degree C and pipeline depth P that divide the
// pod's GPUs with it.
func (sr *searcher) uniformStages(ctx context.Context) error {
	m, n := sr.m, sr.p.GPUs()
	for _, T := range tensorDegrees(m, sr.p) {
		if n%T != 0 {
			continue
		}
		cs := plan.ContextDegrees(m, n/T)
		if C := sr.sp.Context; C > 0 {
			cs = nil
			if (n/T)%C == 0 {
				cs = []int{C}
			}
		}
		for _, C := range cs {
			for _, P := range divisors(n / (T * C)) {
				if P > m.Layers {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				sr.plans(T, nil, P, n/(T*C*P), C, sr.sp.splits(m.Layers, P))
			}
		}
	}
	return nil
}

// endStages tries the end stages of their own degree: the first and the
// last stage's TP differing from the stages between (which are
// identical, so one degree serves them), every combination whose
// replica's GPUs (their sum) divide the pod's. (Not with experts: their
// mesh is modelled with one degree.)
func (sr *searcher) endStages(ctx context.Context) error {
	m, sp, n := sr.m, sr.sp, sr.p.GPUs()
	tps := tensorDegrees(m, sr.p)
	for P := 2; P <= m.Layers && !m.MoE() && !sp.For.OneTensor; P++ {
		for _, mid := range tps {
			for _, first := range tps {
				for _, last := range tps {
					if P == 2 && (mid != first || first == last) || first == mid && last == mid {
						continue // two stages have no middle; one degree is uniformStages'
					}
					replica := first + (P-2)*mid + last
					if n%replica != 0 {
						continue
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					stages := make([]int, P)
					for i := range stages {
						stages[i] = mid
					}
					stages[0], stages[P-1] = first, last
					splits := sp.For.chunked(m.Layers, P, endSplits(m.Layers, P, first, mid, last))
					if sp.EmbeddingLayer || sp.LossLayer {
						splits = sp.For.chunked(m.Layers, P, sp.unitSplit(m.Layers, P))
					}
					sr.plans(0, stages, P, n/replica, 1, splits)
				}
			}
		}
	}
	return nil
}

// plans tries every plan of P stages of tensor-parallel degrees tps
// (nil: every stage T) and D replicas over the layer splits given: every
// micro-batch size, split and virtual-stage count, then layouts' variants
// of each.
func (sr *searcher) plans(T int, tps []int, P, D, C int, splits []stageSplit) {
	m, sp := sr.m, sr.sp
	maxT := T
	meshes := expertMeshes(m, T, C, D)
	for _, t := range tps {
		maxT = max(maxT, t)
	}
	var sizes []int
	for mbs := 1; mbs <= sr.maxMBS; mbs *= 2 {
		sizes = append(sizes, mbs)
	}
	if sp.MBS > 0 {
		sizes = []int{sp.MBS}
	}
	for _, mbs := range sizes {
		if m.Batch%(D*mbs) != 0 {
			continue
		}
		M := m.Batch / (D * mbs)
		for _, split := range splits {
			for _, V := range split.virtual {
				if V > sr.maxV || (V > 1 && (P == 1 || M%P != 0)) {
					continue
				}
				base := plan.Strategy{Tensor: T, Pipeline: P, Replicas: D, MicroBatchSize: mbs,
					FirstLayers: split.first, LastLayers: split.last, TensorStages: tps,
					Imbalance: sp.Imbalance, FP8: sp.FP8, GradBF16: sp.GradBF16, FineTune: sp.FineTune,
					EmbeddingLayer: split.emb, LossLayer: split.loss, Software: sp.Software, MemoryRecipe: sp.MemoryRecipe}
				if C > 1 {
					base.Context = C
				}
				if V > 1 {
					base.Virtual = V
				}
				sr.layouts(base, maxT, meshes)
			}
		}
	}
}

// layouts tries base (its degrees, micro-batch size and split decided)
// with sequence parallelism off, on, and on with its communication
// overlapped (the overlap takes SMs from the GEMMs beside it,
// Kernels.OverlapSMs, so it is searched, not assumed), in each of the
// experts' meshes.
func (sr *searcher) layouts(base plan.Strategy, maxT int, meshes []expertMesh) {
	for tpc := range 3 {
		if tpc > 0 && maxT == 1 {
			continue
		}
		for _, em := range meshes {
			if em.ep > 0 && tpc == 0 && maxT > 1 {
				continue // Megatron-Core's MoE layers need sequence parallelism with tp
			}
			s := base
			s.SequenceParallel, s.TPOverlap = tpc > 0, tpc == 2
			if em.ep > 1 {
				s.Experts = em.ep
			}
			s.ExpertTensor = em.etp
			sr.recomputed(s)
		}
	}
}

// recomputed tries s with each recomputation of the space and each
// optimizer's sharding: none, the distributed optimizer (with D x C > 1)
// and FSDP (where the space or the target framework asks for it); with
// experts, their all-to-alls overlapped too; with full recomputation, the
// fewest layers recomputed that fit.
func (sr *searcher) recomputed(base plan.Strategy) {
	sp := sr.sp
	P, V := base.Pipeline, max(base.Virtual, 1)
	DC := base.Replicas * max(base.Context, 1)
	// keeps[dist]: the plan without recomputation fits, so no block
	// recomputation of it can be the fastest (it only adds forward passes)
	// and, without Top to fill, fewestRecomputed's search is skipped.
	// Fitted on its count alone (try did not judge it), it was no faster
	// than the best then, and so is no block recomputation of it.
	var keeps [3]bool
	for _, rcm := range sr.recomputes {
		rc := rcm.rc
		for di := range 3 {
			if di > 0 && DC == 1 || di == 2 && !sp.FSDP && !sp.For.FSDP {
				continue
			}
			s := base
			s.Recompute, s.RecomputeModules = rc, rcm.mods
			if di == 1 {
				s.DistOpt = true
			}
			s.FSDP = di == 2
			s.FP8Gather = sp.FP8Gather && s.FSDP
			fits := sr.try(s)
			if rc == plan.NoRecompute {
				keeps[di] = fits == fitted
			}
			if s.Experts > 1 && rc != plan.FullRecompute && (P == 1 || V > 1) {
				// The experts' all-to-alls overlapped with another
				// micro-batch (one model chunk more in memory).
				o := s
				o.EPOverlap = true
				sr.try(o)
			}
			if rc == plan.FullRecompute && !(keeps[di] && sp.Top == 0) && (sp.Prefilter == nil || sp.Prefilter(s)) {
				sr.blockRecomputed(s)
			}
		}
	}
}

// expertMesh is an expert-parallel and expert-tensor-parallel degree
// (Strategy's Experts and ExpertTensor; 0 and 0 in a dense model).
type expertMesh struct{ ep, etp int }

// expertMeshes are the experts' meshes Search tries in a stage of T x C
// x D GPUs: every expert-parallel degree EP dividing the experts, with
// the expert-tensor-parallel degree 1 or T (Megatron-Core's default),
// ETP x EP dividing T x C x D. A dense model has one, no experts'.
// denseMesh is a dense model's one mesh: no experts'.
var denseMesh = []expertMesh{{}}

func expertMeshes(m transformer.Spec, T, C, D int) []expertMesh {
	if !m.MoE() {
		return denseMesh
	}
	var out []expertMesh
	inner := max(T, 1) * C * D
	etps := []int{1}
	if T > 1 && m.ExpertFFN%T == 0 {
		etps = append(etps, T)
	}
	for _, etp := range etps {
		for _, ep := range divisors(m.Experts) {
			if inner%(ep*etp) == 0 {
				out = append(out, expertMesh{ep: ep, etp: etp})
			}
		}
	}
	return out
}

// blockRecomputed tries s, a plan with full recomputation, with the
// fewest layers per model chunk recomputing that fit (fewestRecomputed),
// found on the tensors' count: where the reservation sets that plan
// aside (overReserved), the fewest that fit on the reservation are more,
// found on it. A plan with more layers recomputing is no faster, so
// where the count's fewest would not be kept neither would the
// reservation's.
func (sr *searcher) blockRecomputed(s plan.Strategy) {
	fits := planner.CountFitsTight
	if sr.always {
		fits = planner.FitsTight
	}
	k := fewestRecomputed(sr.m, s, &sr.p, 1, func(pl plan.Plan) bool { return fits(sr.m, pl, &sr.p, sr.sp.AllowTight) })
	if k == 0 {
		return
	}
	s.RecomputeLayers = k
	if sr.try(s) != overReserved {
		return
	}
	k = fewestRecomputed(sr.m, s, &sr.p, k+1, func(pl plan.Plan) bool { return planner.FitsTight(sr.m, pl, &sr.p, sr.sp.AllowTight) })
	if k > 0 {
		s.RecomputeLayers = k
		sr.try(s)
	}
}

// keepTop inserts r into top, kept sorted by step time (stable: earlier
// plans first among equals) and at most k long.
func keepTop(top []planner.Result, r planner.Result, k int) []planner.Result {
	i := sort.Search(len(top), func(i int) bool { return top[i].Step > r.Step })
	if i >= k {
		return top
	}
	top = append(top, planner.Result{})
	copy(top[i+1:], top[i:])
	top[i] = r
	if len(top) > k {
		top = top[:k]
	}
	return top
}

// fewestRecomputed is, for plan s with full recomputation, the fewest
// layers per model chunk, from, that can recompute (block
// recomputation) with the plan still fitting (fits), 0 when every layer
// must (or the plan does not fit at all). Fewer recomputing layers is
// faster and takes more memory, so the fewest that fits is the fastest:
// a bisection.
func fewestRecomputed(m transformer.Spec, s plan.Strategy, p *plan.Pod, from int, fits func(plan.Plan) bool) int {
	s.RecomputeLayers = 0
	all, err := plan.Resolve(m, s, *p)
	if err != nil || !fits(all) {
		return 0
	}
	most := 0
	for _, l := range all.Stages {
		most = max(most, (l+all.VP-1)/all.VP)
	}
	lo, hi := max(from, 1), most // the answer is in [lo, hi]; hi = most is every layer
	for lo < hi {
		mid := (lo + hi) / 2
		s.RecomputeLayers = mid
		pl, err := plan.Resolve(m, s, *p)
		if err == nil && fits(pl) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo >= most {
		return 0
	}
	return lo
}

// tensorDegrees are the tensor-parallel degrees Search tries: the
// divisors of a node's GPUs that divide the heads and the key/value heads.
func tensorDegrees(m transformer.Spec, p plan.Pod) []int {
	var out []int
	for _, T := range divisors(p.PerNode) {
		if m.Heads%T == 0 && m.KVHeads%T == 0 {
			out = append(out, T)
		}
	}
	return out
}

// endSplits are the splits Search tries of layers over P stages whose
// first and last stages have tensor-parallel degrees first and last and
// the others mid: the even split where P divides the layers, and every
// split whose end stages hold from two fewer to one more layers than the
// share that balances the stages' compute (a stage's layers in proportion
// to its degree: mid x the layers / the replica's GPUs for the stages
// between, first and last's share of that at the ends).
func endSplits(layers, P, first, mid, last int) []stageSplit {
	per := float64(layers) / float64(first+(P-2)*mid+last) // layers per GPU of degree
	return splitsAround(layers, P, int(math.Round(per*float64(first))), int(math.Round(per*float64(last))))
}

// stageSplit is one way to split a transformer's layers over P pipeline
// stages: the first and the last stage's layers (0: the others' share)
// and the virtual stages it allows.
type stageSplit struct {
	first, last int
	virtual     []int
	// emb and loss count the embedding and the loss as layers
	// (Strategy's EmbeddingLayer, LossLayer: unitSplit's).
	emb, loss bool
}

// stageSplits are the splits Search tries of layers over P stages: the
// even one when P divides the layers (with V among the divisors of each
// stage's layers), and every split whose first and last stages hold from
// two layers fewer to one more than the even share, the stages between
// an equal share of the rest (with V among the divisors of that share, at
// most the end stages' layers), each split once.
func stageSplits(layers, P int) []stageSplit {
	return splitsAround(layers, P, layers/P, layers/P)
}

// splitsAround is stageSplits with the end stages' layers tried around
// ef and el: from two fewer to one more.
func splitsAround(layers, P, ef, el int) []stageSplit {
	var out []stageSplit
	if layers%P == 0 {
		out = append(out, stageSplit{virtual: divisors(layers / P)})
	}
	if P == 1 {
		return out
	}
	seen := map[[2]int]bool{}
	for first := max(1, ef-2); first <= ef+1; first++ {
		for last := max(1, el-2); last <= el+1; last++ {
			s := plan.Strategy{Pipeline: P, FirstLayers: first, LastLayers: last}
			st, err := s.StageLayers(layers)
			if err != nil {
				continue
			}
			f, l := first, last
			if P == 2 && st[0] == st[1] {
				continue // the even split
			}
			if P > 2 { // an end stage holding the middle's share is not uneven
				if f == st[1] {
					f = 0
				}
				if l == st[1] {
					l = 0
				}
			}
			if f == 0 && l == 0 || seen[[2]int{f, l}] {
				continue
			}
			seen[[2]int{f, l}] = true
			share := st[P/2]
			if P == 2 {
				share = min(st[0], st[1])
			}
			var vs []int
			for _, v := range divisors(share) {
				if v <= min(st[0], st[P-1]) && (P == 2 && v == 1 || P > 2) {
					vs = append(vs, v)
				}
			}
			out = append(out, stageSplit{first: f, last: l, virtual: vs})
		}
	}
	return out
}

// divisors are n's divisors, ascending.
func divisors(n int) []int {
	var d []int
	for i := 1; i*i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
			if i*i != n {
				d = append(d, n/i)
			}
		}
	}
	sort.Ints(d)
	return d
}

// SpaceOf is the search space of a partial plan (placer search
// --strategy at cluster scale): what it names is kept as given and the
// rest searched. Its degrees (tp, stage-tp, cp, pp, dp, vp, mbs, mb, ep,
// etp), switches (sp, tpoverlap, distopt or shard, fsdp, epoverlap),
// recomputation (recompute, recompute-layers), stage layers (first,
// last) fix the plans Keep lets through (schedule=1f1b is the search's
// own; gpipe is refused); the run's settings
// (fp8, grads, imbalance, the fine-tuning's peft, lora-rank,
// lora-alpha, lora-targets, pack and pack-len) are every plan's, as
// Space's fields say, and
// fsdp=on adds FSDP to the sharding tried (in a model with experts too),
// recompute-modules adds selective recomputation of those modules to the
// recomputations tried (and keeps it: the plans recompute them), and
// embedding-layer and loss-layer count the embedding and the loss as
// layers in every plan's split. "" is the whole space. The errors are
// ParseStrategy's.
func SpaceOf(text string) (Space, error) {
	s, err := plan.ParseStrategy(text)
	if err != nil {
		return Space{}, err
	}
	pairs, err := plan.SplitStrategy(text)
	if err != nil {
		return Space{}, err
	}
	sp := Space{FP8: s.FP8, GradBF16: s.GradBF16, FP8Gather: s.FP8Gather, Imbalance: s.Imbalance, FSDP: s.FSDP, Software: s.Software, FineTune: s.FineTune,
		RecomputeModules: s.RecomputeModules, EmbeddingLayer: s.EmbeddingLayer, LossLayer: s.LossLayer, MemoryRecipe: s.MemoryRecipe}
	sp.named = map[string]bool{}
	var keep []func(plan.Plan) bool
	for _, kv := range pairs {
		sp.named[plan.KeyName(kv.Key)] = true
		switch plan.KeyName(kv.Key) {
		case "tp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.Uniform() && pl.TP == s.TensorDegree() })
		case "stage-tp":
			keep = append(keep, func(pl plan.Plan) bool { return slices.Equal(pl.TPs, s.TensorStages) })
		case "cp":
			sp.Context = s.ContextDegree()
			keep = append(keep, func(pl plan.Plan) bool { return pl.CP == s.ContextDegree() })
		case "pp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.PP == s.PipelineDegree() })
		case "dp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.DP == s.ReplicaCount() })
		case "vp":
			sp.MaxVirtual = max(8, s.VirtualStages())
			keep = append(keep, func(pl plan.Plan) bool { return pl.VP == s.VirtualStages() })
		case "mbs":
			sp.MaxMBS, sp.MBS = max(8, s.MicroBatchSize), s.MicroBatchSize
			keep = append(keep, func(pl plan.Plan) bool { return pl.MBS == max(s.MicroBatchSize, 1) })
		case "mb":
			keep = append(keep, func(pl plan.Plan) bool { return pl.NumMicro == max(s.MicroBatches, 1) })
		case "schedule":
			if s.Schedule != decision.OneFOneB {
				return Space{}, fmt.Errorf("strategy %q: schedule=%s: the search runs 1F1B, Megatron-Core's schedule (placer eval scores a GPipe plan)", text, s.Schedule)
			}
		case "sp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.SequenceParallel == s.SequenceParallel })
		case "tpoverlap":
			keep = append(keep, func(pl plan.Plan) bool { return pl.TPOverlap == s.TPOverlap })
		case "distopt", "shard":
			keep = append(keep, func(pl plan.Plan) bool { return pl.DistOpt == s.DistOpt })
		case "fsdp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.FSDP == s.FSDP })
		case "recompute":
			keep = append(keep, func(pl plan.Plan) bool { return pl.Recompute == s.Recompute })
		case "recompute-layers":
			keep = append(keep, func(pl plan.Plan) bool { return pl.RecomputeLayers == s.RecomputeLayers })
		case "first":
			keep = append(keep, func(pl plan.Plan) bool {
				if pl.EmbeddingLayer || pl.LossLayer {
					return pl.Stages[0] == s.FirstLayers // the split the units give, not written back
				}
				return pl.FirstLayers == s.FirstLayers
			})
		case "last":
			keep = append(keep, func(pl plan.Plan) bool {
				if pl.EmbeddingLayer || pl.LossLayer {
					return pl.Stages[pl.PP-1] == s.LastLayers
				}
				return pl.LastLayers == s.LastLayers
			})
		case "recompute-modules":
			keep = append(keep, func(pl plan.Plan) bool {
				return pl.Recompute == s.Recompute && pl.RecomputeModules == s.RecomputeModules
			})
		case "embedding-layer":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EmbeddingLayer == s.EmbeddingLayer })
		case "loss-layer":
			keep = append(keep, func(pl plan.Plan) bool { return pl.LossLayer == s.LossLayer })
		case "ep":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EP == s.ExpertDegree() })
		case "etp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.ETP == s.ExpertTensor })
		case "epoverlap":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EPOverlap == s.EPOverlap })
		}
	}
	if len(keep) > 0 {
		sp.Keep = func(pl plan.Plan) bool {
			for _, k := range keep {
				if !k(pl) {
					return false
				}
			}
			return true
		}
	}
	return sp, nil
}
