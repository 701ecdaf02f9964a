package classical

import (
	"context"
	"errors"
	"math"

	"github.com/placer/placer/optimize"
)

// AnchoredAnnealing is simulated annealing (as Annealing: acceptance
// min(1, exp(-(c'-c)/(c T))) with T cooling geometrically from T0 to T1
// over the budget, thresholds drawn in advance, the first accepted of
// each batch taken) started from the best quick baseline with the
// policy's move set: the start, units, moves, accounting and guarantee
// of AnchoredLocalSearch. Budget: evaluations (default
// optimize.DefaultEvaluations), steps (rounds) or time.
type AnchoredAnnealing struct {
	// T0 and T1 are the initial and final relative temperatures.
	// 0 = 0.002 and 1e-4: starting from a good decision, a move 0.2% worse
	// is taken with probability 1/e at first, practically never at the end
	// (on wavenet4x36, 5 s: 0.01 reached 171.7 ms from the anchor's 171.9,
	// 0.002 148.8 ms, 0.0005 152.6 ms).
	T0, T1 float64
	// Batch is the number of candidate moves per round. 0 = 8.
	Batch int
	// MaxUnits bounds the decision units. 0 = AnchorUnits.
	MaxUnits int
	// Anchor is where the search starts (required: a given decision or
	// the quick methods to run first).
	Anchor Anchor
}

var _ optimize.Optimizer = AnchoredAnnealing{}

// Name returns "sa-anchored".
func (AnchoredAnnealing) Name() string { return "sa-anchored" }

// Optimize runs the anchors, then anneals from the best until the budget
// is spent or ctx is cancelled.
func (o AnchoredAnnealing) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	t0, t1, bs := o.T0, o.T1, o.Batch
	if t0 <= 0 {
		t0 = 0.002
	}
	if t1 <= 0 {
		t1 = 1e-4
	}
	if bs <= 0 {
		bs = 8
	}
	a, err := newAnchored(ctx, o.Name(), p, s, o.Anchor, o.MaxUnits)
	if err != nil {
		return nil, err
	}
	tr := a.tr
	b := newABatch(bs, bs)
	var c, temp float64
	keep := func(m amove) (bool, float64) {
		threshold := c * (1 - temp*math.Log(1-a.rng.Float64()))
		lb, oom := a.lowerBound(m)
		if oom {
			lb *= 2 // an invalid decision costs at least twice its step
		}
		return lb <= threshold, threshold
	}
	empty := 0
	for len(a.kinds) > 0 && !tr.Done(ctx) {
		temp = t0 * math.Pow(t1/t0, budgetUsed(a.tr))
		c = cost(p.Objective, &a.cur)
		k, err := a.anchoredRound(ctx, b, bs, keep, nil)
		if err != nil {
			if errors.Is(err, optimize.ErrStopped) {
				break
			}
			return nil, err
		}
		if len(b.moves) == 0 {
			if empty++; empty > 100 {
				break
			}
			continue
		}
		empty = 0
		for i := 0; i < k; i++ {
			if cost(p.Objective, &b.out[i]) <= b.aux[i] {
				a.apply(b.moves[i])
				a.cur = b.out[i].Clone()
				break
			}
		}
		tr.Step()
	}
	return a.result(ctx)
}
