package classical

import (
	"context"
	"errors"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// Random is random search over placements: k placements, each co-location
// group (and each op outside one) on a device drawn uniformly, evaluated
// in batches; the best is kept (a valid one over any invalid one).
// k is the evaluation budget (default optimize.DefaultEvaluations); the
// schedule and fusion are the problem's Base. Without the placement task
// it evaluates the Base once.
type Random struct {
	// Batch is the number of placements evaluated together (in parallel
	// by the evaluator). 0 = 16. It does not change the result.
	Batch int
}

var _ optimize.Optimizer = Random{}

// Name returns "random".
func (Random) Name() string { return "random" }

// Optimize draws and evaluates random placements until the budget is
// spent or ctx is cancelled.
func (o Random) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	if !p.EffectiveTasks().Placement {
		return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) { return p.Start(), nil })
	}
	tr := optimize.NewTracker(o.Name(), p, s, optimize.DefaultEvaluations)
	batch := o.Batch
	if batch <= 0 {
		batch = 16
	}
	rng := newRand(tr.Seed(), o.Name())
	u := newUnits(p.Graph)
	b := p.Complete(p.Start())
	ds := make([]decision.Decision, batch)
	for i := range ds {
		ds[i] = b
		ds[i].Device = make([]int, p.Graph.NumOps())
	}
	out := make([]evaluate.Result, batch)
	for !tr.Done(ctx) {
		k := min(batch, tr.Remaining())
		for i := 0; i < k; i++ {
			randomPlacement(u, p.Devices(), rng, ds[i].Device)
		}
		if _, err := tr.EvaluateBatch(ctx, ds[:k], out); err != nil {
			if errors.Is(err, optimize.ErrStopped) {
				break
			}
			return nil, err
		}
		tr.Step()
	}
	return tr.Result(ctx, b)
}
