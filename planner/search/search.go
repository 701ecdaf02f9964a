package search

import (
	"context"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

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
	return searchPasses(ctx, m, p, sp, false)
}

// searchPasses is Search, every plan judged on the reservation where always.
// The offload lever, whose copies the step does not price, is a second
// pass: turned on only where no plan fits without it (offloadPass).
func searchPasses(ctx context.Context, m transformer.Spec, p plan.Pod, sp Space, always bool) (Result, error) {
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
	sr.always, sr.allLevers, sr.offloading = first.always, first.allLevers, true
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
