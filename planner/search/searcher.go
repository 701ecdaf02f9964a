package search

import (
	"slices"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

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
	// offloading: the second pass (offloadPass), which tries only the
	// plans that can offload, with the memory levers (tryOffload).
	offloading bool
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

// keepTop inserts r into top, kept sorted by step time (stable: earlier
// plans first among equals) and at most k long.
func keepTop(top []planner.Result, r planner.Result, k int) []planner.Result {
	i := slices.IndexFunc(top, func(t planner.Result) bool { return t.Step > r.Step }) // the first slower
	if i < 0 {
		i = len(top)
	}
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
