package classical

import (
	"context"
	"errors"

	"github.com/placer/placer/optimize"
)

// LocalSearch is REGAL's local-search baseline (seeds/regal-iclr2020.txt
// §5.2, A.10): from a random placement and a topological schedule it
// repeatedly draws local moves - one co-location group (or op) to another
// device, or two ops' scheduling priorities swapped (and, when the
// problem's tasks include fusion, two fusion priorities swapped or one op
// switched between initiating fusions and not) - and keeps the best of
// each round of Batch candidates if it is no worse than the current
// state (sideways moves cross plateaus). After Patience rounds without
// improvement it restarts from a new random placement; the best state
// over all restarts is the answer.
//
// Candidates are evaluated in batches (in parallel by the evaluator).
// A cheap delta filter skips, without evaluating, placement moves that
// cannot improve on a valid current state: those that put more
// parameters on a device than it holds (certain OOM) and those whose
// target device's busy-time lower bound already exceeds the current step
// time. Budget: evaluations (default optimize.DefaultEvaluations), steps
// (rounds) or time.
type LocalSearch struct {
	// Start is the initial placement: "random" (REGAL's, the default),
	// "base", "m-topo", "m-etf" or "metis". Restarts happen only from
	// "random".
	Start string
	// Batch is the number of candidate moves per round. 0 = 8.
	Batch int
	// Patience is the number of rounds without improvement before a
	// restart. 0 = 50.
	Patience int
}

var _ optimize.Optimizer = LocalSearch{}

// Name returns "local-search".
func (LocalSearch) Name() string { return "local-search" }

// Optimize runs local search until the budget is spent, ctx is cancelled,
// or no move is left to try.
func (o LocalSearch) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	bs, patience := o.Batch, o.Patience
	if bs <= 0 {
		bs = 8
	}
	if patience <= 0 {
		patience = 50
	}
	restart := o.Start == "" || o.Start == "random"
	se, done, err := startSearcher(ctx, o.Name(), p, s, o.Start)
	if se == nil {
		return done, err
	}
	tr := se.tr
	b := newBatch(bs)
	stale, empty := 0, 0
	for len(se.kinds) > 0 && !tr.Done(ctx) {
		b.moves = b.moves[:0]
		for tries := 0; len(b.moves) < bs && tries < 4*bs; tries++ {
			m := se.propose()
			if !se.usable(m) {
				continue
			}
			if se.cur.Valid() {
				if lb, oom := se.lowerBound(m); oom || lb > se.cur.StepTime { // (no filter under PeakMemory: lowerBound is 0, false)
					continue
				}
			}
			se.apply(m)
			se.snapshot(&b.ds[len(b.moves)])
			se.undo(m)
			b.moves = append(b.moves, m)
		}
		if len(b.moves) == 0 {
			if empty++; empty > 100 {
				break // every move the filter lets through is used up
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
		best := -1
		for i := 0; i < k; i++ {
			if best < 0 || p.Objective.Better(&b.out[i], &b.out[best]) {
				best = i
			}
		}
		improved := false
		if best >= 0 && !p.Objective.Better(&se.cur, &b.out[best]) {
			improved = p.Objective.Better(&b.out[best], &se.cur)
			se.apply(b.moves[best])
			se.cur = b.out[best].Clone()
		}
		if improved {
			stale = 0
		} else {
			stale++
		}
		tr.Step()
		if stale >= patience && restart && se.tasks.Placement && !tr.Done(ctx) {
			stale = 0
			randomPlacement(se.u, se.nd, se.rng, se.dev)
			se.recount()
			if err := se.evaluateCurrent(ctx); err != nil {
				if errors.Is(err, optimize.ErrStopped) {
					break
				}
				return nil, err
			}
		}
	}
	return se.result(ctx)
}
