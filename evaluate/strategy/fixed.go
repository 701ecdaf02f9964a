package strategy

import (
	"context"
	"fmt"
	"io"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// Fixed scores the placements of one replica with a strategy around them:
// the evaluator a search of one replica's placement, order and fusion
// uses when the strategy is chosen (the joint search: replicas of a
// searched placement, pipelines whose stages a search refines). Every
// decision is scored as if it carried S (its own strategy is replaced);
// its placement is on GPUs / S.R() devices. Results describe the step of
// the whole cluster but list only the first replica's devices (replicas
// are identical), so they have as many devices as the decisions place on.
type Fixed struct {
	E *Evaluator
	S decision.Strategy
}

var _ evaluate.Evaluator = Fixed{}

// NewFixed returns e with strategy s, after checking that s fits e's
// graph and cluster.
func NewFixed(e *Evaluator, s decision.Strategy) (Fixed, error) {
	R := s.R()
	if R < 1 || e.c.Devices%R != 0 {
		return Fixed{}, fmt.Errorf("strategy %s: %d replicas do not divide %d GPUs", s, R, e.c.Devices)
	}
	if err := s.CheckFor(e.g.Batch(), e.c.Devices/R, e.c.Devices); err != nil {
		return Fixed{}, err
	}
	return Fixed{E: e, S: s}, nil
}

// Devices is the GPUs one replica's placement uses.
func (f Fixed) Devices() int { return f.E.c.Devices / f.S.R() }

func (f Fixed) first(r evaluate.Result) evaluate.Result {
	k, n := f.Devices(), len(r.DeviceBusy)
	r.DeviceBusy, r.PeakMemory, r.Capacity = r.DeviceBusy[:k:k], r.PeakMemory[:k:k], r.Capacity[:k:k]
	if len(r.LinkBytes) == n*n && n > k { // the first replica's links
		links := make([]int64, k*k)
		for s := range k {
			copy(links[s*k:(s+1)*k], r.LinkBytes[s*n:s*n+k])
		}
		r.LinkBytes = links
	}
	if len(r.Collective) > k {
		r.Collective = r.Collective[:k:k]
	}
	return r
}

// Evaluate scores d with strategy S.
func (f Fixed) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	d.Strategy = f.S
	r, err := f.E.Evaluate(ctx, d)
	if err != nil {
		return r, err
	}
	return f.first(r), nil
}

// EvaluateBatch scores ds with strategy S on every core.
func (f Fixed) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	with := make([]decision.Decision, len(ds))
	for i, d := range ds {
		d.Strategy = f.S
		with[i] = d
	}
	if err := f.E.EvaluateBatch(ctx, with, out); err != nil {
		return err
	}
	for i := range out {
		out[i] = f.first(out[i])
	}
	return nil
}

// Trace writes one replica's timeline (Evaluator.Trace) of d with S.
func (f Fixed) Trace(ctx context.Context, d decision.Decision, w io.Writer) (evaluate.Result, error) {
	d.Strategy = f.S
	r, err := f.E.Trace(ctx, d, w)
	if err != nil {
		return r, err
	}
	return f.first(r), nil
}
