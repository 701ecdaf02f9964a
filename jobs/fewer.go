package jobs

import (
	"context"
	"fmt"
	"io"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/methods"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// runReferences runs the quick reference methods of a learned method on
// pp (with the composite rows of runMethods), then the same methods on
// fewer GPUs of the same hardware and topology (N/2, N/4, ..., 2): the
// best valid decision for k GPUs is valid on N, so it joins the rows as
// "NAME@kgpu", scored by pp's evaluator. A reference chosen from these
// rows is never worse than the best quick decision on fewer GPUs. Last,
// when the problem decides fusion, the best row so far is tried with the
// default fusion order reversed and with no fusion ("NAME+reverse-fusion",
// "NAME+no-fusion").
func runReferences(ctx context.Context, pp *problem, list []string, s *optimize.Settings, progressW io.Writer) (names []string, rows []report.BaselinesRow, results []*optimize.Result, err error) {
	names, rows, results, err = runMethods(ctx, pp.Problem, list, methods.Options{}, true, s, progressW)
	if err != nil {
		return names, rows, results, err
	}
	for k := pp.Devices() / 2; k >= 2; k /= 2 {
		name, row, res, err := fewerGPUs(ctx, pp, k, list, s)
		if err != nil {
			return names, rows, results, err
		}
		if res == nil {
			continue
		}
		names, rows, results = append(names, name), append(rows, row), append(results, res)
		progress(progressW, row)
	}
	if !pp.EffectiveTasks().Fusion {
		return names, rows, results, nil
	}
	// Fusion-order variants of the best so far: every quick method uses
	// the default topological fusion order.
	from, best := bestValid(pp.Objective, names, results)
	if best == nil || best.Decision.Fusion == nil {
		return names, rows, results, nil
	}
	for _, v := range []struct {
		name   string
		fusion []int
	}{{"reverse-fusion", decision.ReverseTopologicalFusion(pp.Graph)}, {"no-fusion", nil}} {
		d := best.Decision.Clone()
		d.Fusion = v.fusion
		name := from + "+" + v.name
		row, res, err := evaluateRow(ctx, pp.Problem, name, d, s)
		if err != nil {
			return names, rows, results, err
		}
		names, rows, results = append(names, name), append(rows, row), append(results, res)
		progress(progressW, row)
	}
	return names, rows, results, nil
}

// evaluateRow scores one decision as a row called name.
func evaluateRow(ctx context.Context, p *optimize.Problem, name string, d decision.Decision, s *optimize.Settings) (report.BaselinesRow, *optimize.Result, error) {
	tr := optimize.NewTracker(name, p, &optimize.Settings{Seed: s.Seed}, 0)
	if _, err := tr.Evaluate(context.WithoutCancel(ctx), d); err != nil {
		return report.BaselinesRow{}, nil, err
	}
	res, err := tr.Result(ctx, d)
	if err != nil {
		return report.BaselinesRow{}, nil, err
	}
	row := report.BaselinesRow{Method: name, SearchTime: res.Stats.Elapsed.Seconds()}
	fillRow(&row, res, p)
	return row, res, nil
}

// fewerGPUs runs list (with composites) on k GPUs and returns the best
// valid decision, evaluated on pp's N GPUs, as a row named after the
// method that found it, "NAME@kgpu"; res is nil when no decision for k
// GPUs is valid.
func fewerGPUs(ctx context.Context, pp *problem, k int, list []string, s *optimize.Settings) (string, report.BaselinesRow, *optimize.Result, error) {
	name := fmt.Sprintf("best@%dgpu", k) // until the best is known
	c, err := roofline.NewCluster(pp.cluster.Hardware, k, pp.cluster.Topology)
	if err != nil {
		return name, report.BaselinesRow{}, nil, err
	}
	q, err := newProblemOn(pp.Graph, c, pp.Tasks, pp.opts, pp.backend)
	if err != nil {
		return name, report.BaselinesRow{}, nil, err
	}
	defer q.Close()
	q.Objective = pp.Objective
	// TensorFlow's defaults on k GPUs (the expert's placement for k).
	setBase(q.Problem)
	qnames, _, qres, err := runMethods(ctx, q.Problem, list, methods.Options{}, true, s, nil)
	if err != nil {
		return name, report.BaselinesRow{}, nil, err
	}
	from, best := bestValid(pp.Objective, qnames, qres)
	if best == nil {
		return name, report.BaselinesRow{}, nil, nil
	}
	name = fmt.Sprintf("%s@%dgpu", from, k)
	// The decision on N GPUs: the same placement, order and fusion; the
	// problem's own evaluator scores it.
	row, res, err := evaluateRow(ctx, pp.Problem, name, pp.Complete(best.Decision.Clone()), s)
	if err != nil {
		return name, row, nil, err
	}
	res.Stats.Evaluations += best.Stats.Evaluations
	row.Evaluations = res.Stats.Evaluations
	return name, row, res, nil
}
