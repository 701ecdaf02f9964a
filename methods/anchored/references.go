package anchored

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

// Resizer makes the problem of graph g on devices GPUs of the same
// hardware, topology, cost-model options and evaluator kind as the
// problem it was made for, with g's expert placement on them (nil when
// there is none) and the caller's tasks. close releases its evaluator.
// The pipeline sets the new problem's objective and base. It makes the
// fewer-GPU rows' problems and the joint space's replicas.
type Resizer func(g *graph.Graph, devices int) (p *optimize.Problem, close func() error, err error)

// TFBase gives p TensorFlow's defaults for the parts its tasks leave
// alone: the expert placement (else one GPU), FIFO scheduling, XLA-like
// default fusion.
func TFBase(p *optimize.Problem) {
	p.Base = decision.Decision{Fusion: decision.TopologicalFusion(p.Graph), Device: p.Expert}
}

// Interrupted reports whether err is ctx's cancellation (a signal), as
// opposed to a failure.
func Interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// Methods runs the named methods (made with mo) on p in order, one row
// each (a row without a result for a method that could not run), each
// reported to rec as it finishes. On a cancelled context it returns the
// rows finished so far with the context's error.
//
// With composites, when the problem decides placement and scheduling
// together, each quick method (methods.Quick) that orders ops also runs
// once more with the placement left at TensorFlow's default (the
// problem's base), as "tf-default+NAME": a heuristic's own placement can
// be poor while its order on the default placement is good. On gnmt4 (4
// GPUs), m-etf places at 339.7 ms, but orders the expert placement at
// 128.5 ms against FIFO's 152.3 ms; a search anchored on the best single
// baseline (the expert, 152.3 ms) reached 136.2 ms in 3 minutes, where
// one anchored on m-etf's order reached 122.3 ms. These rows come after
// the named methods' rows.
func Methods(ctx context.Context, p *optimize.Problem, list []string, mo methods.Options, composites bool, s *optimize.Settings, rec optimize.Recorder) ([]Row, error) {
	var rows []Row
	add := func(q *optimize.Problem, name, as string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := Method(ctx, q, name, mo, s)
		if err != nil {
			return err
		}
		if as != name && (row.Result == nil || row.Decision.Priority == nil) {
			return nil // failed, or does not order ops: nothing new
		}
		row.Name = as
		rows = append(rows, row)
		record(rec, row)
		return nil
	}
	for _, name := range list {
		q := p
		if name == "expert" && p.Base.Device == nil && p.Base.Priority == nil && p.Base.Fusion == nil {
			// The expert row means one thing everywhere (eval, baselines,
			// search): the expert placement with TensorFlow's defaults for
			// the rest, FIFO scheduling and XLA-like default fusion. (A
			// base the caller set is kept: the row must be a decision of
			// the caller's problem.)
			e := *p
			TFBase(&e)
			q = &e
		}
		if err := add(q, name, name); err != nil {
			return rows, err
		}
	}
	t := p.EffectiveTasks()
	if !composites || !t.Placement || !t.Scheduling || p.Realize != nil {
		// A realized problem runs every placement in program order: a
		// heuristic's order on the default placement is the default's.
		return rows, nil
	}
	q := *p
	q.Tasks = optimize.Tasks{Scheduling: true, Fusion: t.Fusion}
	for _, name := range list {
		if name == "tf-default" || !slices.Contains(methods.Quick(), name) {
			continue
		}
		if err := add(&q, name, "tf-default+"+name); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// Method runs one registered method; its row's decision is what runs
// (Problem.Realized). A method that cannot run on this
// graph (no expert placement, no batch) gets a row with its error and no
// result; the error returned is for a cancelled context or an unknown
// method.
func Method(ctx context.Context, p *optimize.Problem, name string, mo methods.Options, s *optimize.Settings) (Row, error) {
	opt, err := methods.New(name, mo)
	if err != nil {
		return Row{}, err
	}
	start := time.Now()
	res, err := opt.Optimize(ctx, p, s)
	row := Row{Name: name, Elapsed: time.Since(start)}
	if err != nil {
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		row.Err = err
		return row, nil
	}
	res.Decision = p.Realized(res.Decision)
	row.Result = res
	return row, nil
}

// References runs the quick reference methods in list on p (with the
// composite rows of Methods), then the same methods on fewer GPUs of the
// same hardware and topology (N/2, N/4, ..., 2; resize makes those
// problems, nil = none): the best valid decision for k GPUs is valid on
// N, so it joins the rows as "NAME@kgpu", scored by p's evaluator. A
// reference chosen from these rows is never worse than the best quick
// decision on fewer GPUs. Last, when the problem decides fusion, the best
// row so far is tried with the default fusion order reversed and with no
// fusion ("NAME+reverse-fusion", "NAME+no-fusion").
func References(ctx context.Context, p *optimize.Problem, list []string, s *optimize.Settings, resize Resizer, rec optimize.Recorder) ([]Row, error) {
	rows, err := Methods(ctx, p, list, methods.Options{}, true, s, rec)
	if err != nil {
		return rows, err
	}
	for k := p.Devices() / 2; k >= 2 && resize != nil; k /= 2 {
		row, ok, err := fewerGPUs(ctx, p, k, list, s, resize)
		if err != nil {
			return rows, err
		}
		if ok {
			rows = append(rows, row)
			record(rec, row)
		}
	}
	if !p.EffectiveTasks().Fusion || p.Realize != nil {
		// A realized problem fuses nothing.
		return rows, nil
	}
	// Fusion-order variants of the best so far: every quick method uses
	// the default topological fusion order.
	best, ok := Best(p.Objective, rows, false)
	if !ok || best.Decision.Fusion == nil {
		return rows, nil
	}
	for _, v := range []struct {
		name   string
		fusion []int
	}{{"reverse-fusion", decision.ReverseTopologicalFusion(p.Graph)}, {"no-fusion", nil}} {
		d := best.Decision.Clone()
		d.Fusion = v.fusion
		row, err := Evaluate(ctx, p, best.Name+"+"+v.name, d, s)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
		record(rec, row)
	}
	return rows, nil
}

// Evaluate scores one decision as a row called name (its decision: what
// runs, Problem.Realized).
func Evaluate(ctx context.Context, p *optimize.Problem, name string, d decision.Decision, s *optimize.Settings) (Row, error) {
	tr := optimize.NewTracker(name, p, &optimize.Settings{Seed: s.Seed}, 0)
	if _, err := tr.Evaluate(context.WithoutCancel(ctx), d); err != nil {
		return Row{}, err
	}
	res, err := tr.Result(ctx, d)
	if err != nil {
		return Row{}, err
	}
	res.Decision = p.Realized(res.Decision)
	return Row{Name: name, Result: res, Elapsed: res.Stats.Elapsed}, nil
}

// fewerGPUs runs list (with composites) on k GPUs and returns the best
// valid decision, evaluated on p's N GPUs, as a row named after the
// method that found it, "NAME@kgpu"; ok is false when no decision for k
// GPUs is valid.
func fewerGPUs(ctx context.Context, p *optimize.Problem, k int, list []string, s *optimize.Settings, resize Resizer) (Row, bool, error) {
	q, closer, err := resized(p, p.Graph, k, resize)
	if err != nil {
		return Row{}, false, err
	}
	defer closer()
	qrows, err := Methods(ctx, q, list, methods.Options{}, true, s, nil)
	if err != nil {
		return Row{}, false, err
	}
	best, ok := Best(p.Objective, qrows, false)
	if !ok {
		return Row{}, false, nil
	}
	// The decision on N GPUs: the same placement, order and fusion; the
	// problem's own evaluator scores it.
	row, err := Evaluate(ctx, p, fmt.Sprintf("%s@%dgpu", best.Name, k), p.Complete(best.Decision.Clone()), s)
	if err != nil {
		return row, false, err
	}
	row.Stats.Evaluations += best.Stats.Evaluations
	return row, true, nil
}

// resized is resize's problem for g on k GPUs with p's tasks, objective
// and TensorFlow's defaults as its base.
func resized(p *optimize.Problem, g *graph.Graph, k int, resize Resizer) (*optimize.Problem, func() error, error) {
	q, closer, err := resize(g, k)
	if err != nil {
		return nil, nil, err
	}
	if closer == nil {
		closer = func() error { return nil }
	}
	q.Tasks, q.Objective = p.Tasks, p.Objective
	TFBase(q)
	return q, closer, nil
}
