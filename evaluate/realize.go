package evaluate

import (
	"context"
	"io"

	"github.com/placer/placer/decision"
)

// Realize maps a decision to the one a framework executes for it (a
// graph from PyTorch runs contiguous module-level stages, its ops in
// program order, without fusion: workloads/export.Realizer). Realizing a
// realized decision must change nothing.
type Realize func(d decision.Decision) (decision.Decision, error)

// Realizing is an evaluator that scores what runs: every decision is
// realized by realize, then scored by ev. Its results are ev's results of
// the realized decisions, so that a search through it is scored on what
// the framework executes; the caller keeps the realized decision of its
// answer (realize it once more), whose score is the same.
func Realizing(ev Evaluator, realize Realize) Evaluator {
	return &realizing{ev: ev, realize: realize}
}

type realizing struct {
	ev      Evaluator
	realize Realize
}

func (r *realizing) Evaluate(ctx context.Context, d decision.Decision) (Result, error) {
	d, err := r.realize(d)
	if err != nil {
		return Result{}, err
	}
	return r.ev.Evaluate(ctx, d)
}

func (r *realizing) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []Result) error {
	rs := make([]decision.Decision, len(ds))
	for i := range ds {
		var err error
		if rs[i], err = r.realize(ds[i]); err != nil {
			return err
		}
	}
	return r.ev.EvaluateBatch(ctx, rs, out)
}

func (r *realizing) Trace(ctx context.Context, d decision.Decision, w io.Writer) (Result, error) {
	d, err := r.realize(d)
	if err != nil {
		return Result{}, err
	}
	return r.ev.Trace(ctx, d, w)
}

// Unwrap is the evaluator that scores the realized decisions.
func (r *realizing) Unwrap() Evaluator { return r.ev }

// Unwrap returns the evaluator beneath a Realizing one (ev itself when
// it is not one): what a caller that needs the concrete evaluator (a
// strategy evaluator's Fixed) composes with.
func Unwrap(ev Evaluator) Evaluator {
	if u, ok := ev.(interface{ Unwrap() Evaluator }); ok {
		return u.Unwrap()
	}
	return ev
}
