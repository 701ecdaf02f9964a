package roofline

import (
	"context"
	"io"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// Evaluator is the roofline model as an evaluate.Evaluator: a Model plus
// a pool of Simulators, safe for concurrent use.
type Evaluator struct {
	Model *Model
	pool  sync.Pool
}

var (
	_ evaluate.Evaluator = (*Evaluator)(nil)
	_ evaluate.CostModel = (*Model)(nil)
)

// NewEvaluator returns an evaluator for model m.
func NewEvaluator(m *Model) *Evaluator {
	e := &Evaluator{Model: m}
	e.pool.New = func() any { return NewSimulator(m, nil) }
	return e
}

// Evaluate simulates one decision.
func (e *Evaluator) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Result{}, err
	}
	s := e.pool.Get().(*Simulator)
	defer e.pool.Put(s)
	r, err := s.Run(d)
	if err != nil {
		return evaluate.Result{}, err
	}
	return r.Clone(), nil
}

// EvaluateBatch simulates ds on all cores; out[i] receives the result of
// ds[i]. The first error stops the batch.
func (e *Evaluator) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	return evaluate.Workers(ctx, len(ds), func() (func(int) error, func()) {
		s := e.pool.Get().(*Simulator)
		return func(i int) error {
			r, err := s.Run(ds[i])
			if err != nil {
				return err
			}
			out[i] = r.Clone()
			return nil
		}, func() { e.pool.Put(s) }
	})
}

// Trace simulates d with a recording simulator and writes its timeline to
// w (WriteTrace).
func (e *Evaluator) Trace(ctx context.Context, d decision.Decision, w io.Writer) (evaluate.Result, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Result{}, err
	}
	r, tl, err := Simulate(e.Model, d)
	if err != nil {
		return evaluate.Result{}, err
	}
	return r, WriteTrace(w, e.Model, tl)
}
