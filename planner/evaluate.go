package planner

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// Evaluate predicts one training step of model m under strategy s on pod
// p. The errors are Resolve's.
func Evaluate(m transformer.Spec, s plan.Strategy, p plan.Pod) (Result, error) {
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		return Result{}, err
	}
	r := EvaluateCached(m, pl, &p, nil, true)
	r.LayerCosting = EagerCosting(m, pl)
	if p.Profile != nil {
		mid := pl.PP / 2
		c := newCoster(m, pl, &p, pl.TPs[mid], float64(pl.MBS)*float64(m.Seq)/float64(pl.CP))
		_, pm := memoryTraitsOf(c.Points, &c.Shard)
		r.Sources = sources(&c.Plan, &c, &p, memory.StageOf(&m, &pl, mid, float64(transformer.LayerParams(m)), pm).Params)
	}
	return r, nil
}

func evaluate(m transformer.Spec, pl plan.Plan, p plan.Pod) Result {
	return EvaluateCached(m, pl, &p, nil, false)
}

// EvaluateCached is the evaluation of resolved plan pl (plan.Resolve) of
// m on p with the phases kept in cache (nil: none); hosts says to fill
// Result.HostStages. Under a power limit the step's
// compute is priced at the clock its average power allows (balanced).
// The memory verdict weighs what PyTorch's caching allocator would
// reserve (Judge).
func EvaluateCached(m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache, hosts bool) Result {
	return Judge(m, p, evaluateCounted(m, pl, p, cache, hosts))
}

// EvaluateCounted is EvaluateCached with the memory verdict on the
// tensors' count alone (no replay of the caching allocator; Judge adds
// it): a search weighs every plan so and replays only those it would
// keep. A plan over on the count is over on the reservation too.
func EvaluateCounted(m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache) Result {
	return evaluateCounted(m, pl, p, cache, false)
}

func evaluateCounted(m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache, hosts bool) Result {
	return balanced(registered, p, func(q *plan.Pod, whole bool) Result {
		return evaluateAt(registered, m, pl, q, cache, hosts && whole, whole)
	})
}

// evaluateAt is EvaluateCached at the pod's ComputeSlowdown as it is;
// without whole, its times only (Result.breakdown: no memory figures).
func evaluateAt(pts *cost.Points, m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache, hosts, whole bool) Result {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(pl.CP)
	// One coster per distinct tensor-parallel degree (one for a uniform
	// plan, at most three for end stages of their own).
	// A plan has at most three (the end stages' and the middle's); kept
	// on the stack, as the stages of a pipeline of up to 32 are.
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = appendKit(kits, pts, m, pl, p, T, tokens, cache)
		}
	}
	// A pipeline of up to 128 stages keeps its costs on the stack.
	var stageBuf [128]stageCost
	stages := stageBuf[:0]
	if pl.PP > len(stageBuf) {
		stages = make([]stageCost, 0, pl.PP)
	}
	stages = stages[:pl.PP]
	lp := float64(transformer.LayerParams(m))
	for s := range stages {
		stages[s].assemble(&kits[kitIndex(kits, pl.TPs[s])], &m, &pl, s, lp)
	}
	step := cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: p, Tokens: tokens}
	decide(pts, &step)
	if c := contendedBy(pts, &step); c != nil {
		smBound(pts, c, &m, &pl, p, cache, tokens, stages)
	}
	if pl.EPOverlap {
		for s := range stages {
			epOverlap(pts, &stages[s], pl, p, s)
		}
	}
	r := Result{Plan: pl, priced: kits[0].c.Priced, points: pts}
	for i := range kits[1:] {
		r.priced = r.priced.Union(kits[1+i].c.Priced)
	}
	if hosts {
		r.HostStages = stageHosts(pts, stages, &pl, &p.Kernels.Host)
	}
	busiest, sum := r.busiest(stages)
	last := &kits[kitIndex(kits, pl.TPs[pl.PP-1])]
	r.OutputLayer = float64(pl.NumMicro+1) * (last.outputFwd.Busy + last.outputBwd.Busy)
	if w := stepWait(pts, &step, &p.Kernels.Host); w > 0 {
		r.Compute += w
		r.HostExposed += w
	}
	if pl.PP > 1 {
		r.Bubble = bubble(&m, &pl, p, tokens, busiest, sum)
		// With connections=1 the steady state's sends are exposed too.
		r.Bubble += steadySends(&m, &pl, p, tokens)
	}
	r.DPExposed = dpExposed(pts, &step, stages)
	r.Embedding = embeddingAllReduce(&m, &pl, p)
	r.Optimizer = optimizerStep(pts, &step, stageViews(stages, &pl))
	r.Step = r.Compute + r.Bubble + r.DPExposed + r.Embedding + r.Optimizer
	gpus := float64(p.GPUs())
	r.TFLOPs = stepFLOPs(&m, &pl) / r.Step / gpus / 1e12
	// A CPU pod has no measured peak to take a fraction of (Pod.CPU):
	// no MFU.
	if peak := p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16); peak > 0 && !p.CPU() {
		r.MFU = stepFLOPs(&m, &pl) / r.Step / gpus / peak
	}
	if whole {
		r.setMemory(&m, &pl, p, stages)
	}
	// One block alone: an interior stage's (the middle one's).
	r.LayerForward, r.LayerBackward = kits[kitIndex(kits, pl.TPs[pl.PP/2])].blockAlone()
	return r
}
