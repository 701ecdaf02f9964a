package classical

import (
	"context"
	"errors"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// AnchoredLocalSearch is local search started where a user would start:
// from the best valid decision of the quick baselines (Anchor.Quick:
// placement, priorities and fusion together), with the learned policy's
// move set. Its units are the policy's decision units (co-location
// groups, contracted to at most MaxUnits as gdp.Units does), and a move
// changes one unit: to another device, its scheduling priorities up or
// down one or two of the policy's 16 levels (a level is 1/15 of the
// anchor's priority range) or by 1-32 (a fine shift, local search's swap
// window), its fusion priorities likewise (1/14 of the range of the
// anchor's non-negative fusion priorities), or fusion switched off or on
// for the whole unit (the policy's level 0). Moves the problem's tasks do
// not allow are never drawn.
//
// Each round evaluates Batch candidates as one parallel batch and moves
// to the best if it is no worse than the current state (sideways moves
// cross plateaus); the delta filter of LocalSearch skips placement moves
// that cannot improve. The anchors run first, in parallel, and are not
// counted as evaluations (the learned search's reference is not either);
// their wall time counts against a time budget. The result is never worse
// than the anchor: the anchors are candidates for the result. Budget:
// evaluations (default optimize.DefaultEvaluations), steps (rounds) or
// time.
type AnchoredLocalSearch struct {
	// Batch is the number of candidate moves per round. 0 = 8.
	Batch int
	// MaxUnits bounds the decision units. 0 = AnchorUnits.
	MaxUnits int
	// Anchor is where the search starts (required: a given decision or
	// the quick methods to run first).
	Anchor Anchor
	// Guide, if set, picks each round's Batch moves out of Pool candidates
	// drawn as without it, and sees what they gave (the learned guide of
	// go-scored); nil = the Batch candidates drawn are evaluated.
	Guide Guide
	// Pool is the number of candidates a Guide picks from. 0 = 8 x Batch.
	Pool int
	// Method is the name the search runs and reports under. "" =
	// "local-search-anchored".
	Method string
}

var _ optimize.Optimizer = AnchoredLocalSearch{}

// Name returns Method, "local-search-anchored" by default.
func (o AnchoredLocalSearch) Name() string {
	if o.Method != "" {
		return o.Method
	}
	return "local-search-anchored"
}

// Optimize runs the anchors, then local search from the best, until the
// budget is spent or ctx is cancelled.
func (o AnchoredLocalSearch) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	bs := o.Batch
	if bs <= 0 {
		bs = 8
	}
	a, err := newAnchored(ctx, o.Name(), p, s, o.Anchor, o.MaxUnits)
	if err != nil {
		return nil, err
	}
	tr := a.tr
	pool := bs
	if o.Guide != nil {
		if pool = o.Pool; pool <= 0 {
			pool = 8 * bs
		}
		if err := o.Guide.Begin(ctx, SearchView{a}); err != nil {
			return nil, err
		}
	}
	b := newABatch(pool, bs)
	var g *guided
	var pick func([]amove) ([]int, error)
	if o.Guide != nil {
		g = &guided{guide: o.Guide, view: SearchView{a}, k: bs}
		pick = func(drawn []amove) ([]int, error) { return g.pick(ctx, drawn) }
	}
	keep := func(m amove) (bool, float64) {
		if m.kind == aPlace && a.cur.Valid() {
			if lb, oom := a.lowerBound(m); oom || lb > a.cur.StepTime {
				return false, 0
			}
		}
		return true, 0
	}
	empty := 0
	for len(a.kinds) > 0 && !tr.Done(ctx) {
		k, err := a.anchoredRound(ctx, b, pool, keep, pick)
		if err != nil {
			if errors.Is(err, optimize.ErrStopped) {
				break
			}
			return nil, err
		}
		if len(b.moves) == 0 {
			if empty++; empty > 100 {
				break // every move the filter lets through is used up
			}
			continue
		}
		empty = 0
		best := -1
		for i := 0; i < k; i++ {
			if best < 0 || p.Objective.Better(&b.out[i], &b.out[best]) {
				best = i
			}
		}
		var before evaluate.Result
		if g != nil {
			before = a.cur.Clone()
		}
		taken := -1
		if best >= 0 && !p.Objective.Better(&a.cur, &b.out[best]) {
			a.apply(b.moves[best])
			a.cur = b.out[best].Clone()
			taken = best
		}
		if g != nil {
			if err := g.observe(ctx, b, k, &before, taken); err != nil {
				return nil, err
			}
		}
		tr.Step()
	}
	return a.result(ctx)
}
