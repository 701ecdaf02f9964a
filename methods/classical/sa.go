package classical

import (
	"context"
	"errors"
	"math"

	"github.com/placer/placer/optimize"
)

// Annealing is simulated annealing over placement, scheduling priorities
// and fusion priorities (whichever the problem's tasks allow), GO's search
// baseline for fusion ("priority fusion via Simulated Annealing",
// seeds/go-transferable-graph-optimizers-neurips2020.txt §5, Table 3) and
// the classical annealer of graph partitioning (Johnson et al. 1989).
// Its moves are local search's. A move from cost c to cost c' is taken
// with probability min(1, exp(-(c'-c)/(c T))): T is a temperature
// relative to the current cost, cooling geometrically from T0 to T1 over
// the budget. Costs are optimize.Cost (the step time; invalid decisions
// pay a penalty).
//
// Each round draws Batch moves with their acceptance thresholds drawn in
// advance, skips those whose busy-time lower bound already exceeds the
// threshold (the delta filter), evaluates the rest as one batch, and
// takes the first accepted in draw order. Budget: evaluations (default
// optimize.DefaultEvaluations), steps (rounds) or time.
type Annealing struct {
	// Start is the initial placement: "m-etf" (the default, with its
	// schedule: memory-aware and the strongest of the list schedulers),
	// "random", "base", "m-topo" or "metis" (with the topological
	// schedule). Fusion starts from the Base fusion, else the default
	// topological fusion.
	Start string
	// T0 and T1 are the initial and final relative temperatures.
	// 0 = 0.05 and 1e-4: at first a move 5% worse is taken with
	// probability 1/e, at the end practically never.
	T0, T1 float64
	// Batch is the number of candidate moves per round. 0 = 4.
	Batch int
}

var _ optimize.Optimizer = Annealing{}

// Name returns "sa".
func (Annealing) Name() string { return "sa" }

// Optimize anneals until the budget is spent or ctx is cancelled.
func (o Annealing) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	start, t0, t1, bs := o.Start, o.T0, o.T1, o.Batch
	if start == "" {
		start = "m-etf"
	}
	if t0 <= 0 {
		t0 = 0.05
	}
	if t1 <= 0 {
		t1 = 1e-4
	}
	if bs <= 0 {
		bs = 4
	}
	se, done, err := startSearcher(ctx, o.Name(), p, s, start)
	if se == nil {
		return done, err
	}
	tr := se.tr
	b := newBatch(bs)
	empty := 0
	for len(se.kinds) > 0 && !tr.Done(ctx) {
		temp := t0 * math.Pow(t1/t0, budgetUsed(se.tr))
		c := cost(p.Objective, &se.cur)
		b.moves, b.aux = b.moves[:0], b.aux[:0]
		for tries := 0; len(b.moves) < bs && tries < 4*bs; tries++ {
			m := se.propose()
			if !se.usable(m) {
				continue
			}
			threshold := c * (1 - temp*math.Log(1-se.rng.Float64()))
			lb, oom := se.lowerBound(m)
			if oom {
				lb *= 2 // an invalid decision costs at least twice its step
			}
			if lb > threshold {
				continue
			}
			se.apply(m)
			se.snapshot(&b.ds[len(b.moves)])
			se.undo(m)
			b.moves = append(b.moves, m)
			b.aux = append(b.aux, threshold)
		}
		if len(b.moves) == 0 {
			if empty++; empty > 100 {
				break
			}
			continue
		}
		empty = 0
		k, err := tr.EvaluateBatch(ctx, b.ds[:len(b.moves)], b.out)
		if err != nil {
			if errors.Is(err, optimize.ErrStopped) {
				break
			}
			return nil, err
		}
		for i := 0; i < k; i++ {
			if cost(p.Objective, &b.out[i]) <= b.aux[i] {
				se.apply(b.moves[i])
				se.cur = b.out[i].Clone()
				break
			}
		}
		tr.Step()
	}
	return se.result(ctx)
}
