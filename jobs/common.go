package jobs

import (
	"context"
	"io"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
)

// ParseTasks reads a tasks value (--tasks): "" means all three; naming none is an
// error.
func ParseTasks(s string) (optimize.Tasks, error) {
	if s == "" {
		return optimize.AllTasks, nil
	}
	t, err := optimize.ParseTasks(s)
	if err != nil {
		return t, fail.AsUsage(err) // a name on the command line (--tasks)
	}
	if t == (optimize.Tasks{}) {
		return t, fail.Usagef("tasks %q: name at least one of placement, scheduling, fusion", s)
	}
	return t, nil
}

// interrupted reports whether err is ctx's cancellation (a signal), as
// opposed to a failure.
func interrupted(ctx context.Context, err error) bool { return anchored.Interrupted(ctx, err) }

// bestValid is the name and result of the best valid single-replica row
// under objective o; "tf-defaults" and nil when none is valid (the
// learned methods then take the problem's Base as reference).
func bestValid(o optimize.Objective, rows []anchored.Row) (string, *optimize.Result) {
	if best, ok := anchored.Best(o, rows, false); ok {
		return best.Name, best.Result
	}
	return "tf-defaults", nil
}

// runLearned runs the learned method called name, made with o, on p for
// steps training steps (0 = defSteps unless limit is set) or the
// wall-time limit, its progress to rec (nil = none).
func runLearned(ctx context.Context, name string, o methods.Options, p *optimize.Problem, steps, defSteps int, limit time.Duration, seed uint64, rec optimize.Recorder) (*optimize.Result, error) {
	opt, err := methods.New(name, o)
	if err != nil {
		return nil, err
	}
	if steps == 0 && limit == 0 {
		steps = defSteps
	}
	return opt.Optimize(ctx, p, &optimize.Settings{Budget: optimize.Budget{Steps: steps, Time: limit}, Seed: seed, Recorder: rec})
}

// learned is a learned method's run, as the report needs it.
type learned struct {
	method string // the row's name
	// source, if set, is the table row whose decision res holds: the
	// search did not improve on it; own is then the search's own result,
	// which its row shows.
	source  string
	own     *optimize.Result
	res     *optimize.Result
	refName string // the reference's name
	refStep float64
	elapsed time.Duration // wall time of the run
}

// resultOf is what a result file (search --out, and each file of --rows)
// holds for res, the decision of the table's row method: the decision on
// p's devices, its figures, b's problem and reference, the learned
// methods' settings and curve.
func resultOf(p *optimize.Problem, b placements.Baselines, method string, res *optimize.Result, seed uint64) placements.Result {
	var training, curve any // absent for methods that train nothing (zero-shot)
	if l := res.Learning; l != nil && l.Settings != nil {
		training, curve = l.Settings, l.Curve
	}
	g := p.Graph
	r := placements.Result{
		Format: placements.ResultFormat, Version: placements.ResultVersion, Method: method,
		Graph: g.Name(), Ops: g.NumOps(), Hardware: b.Hardware, Devices: b.Devices, Topology: b.Topology, Transfers: b.Transfers,
		Tasks: b.Tasks, Seed: seed, StepTime: res.Eval.StepTime, LowerBound: p.Cost.LowerBound(res.Decision.Fusion != nil),
		PeakMemory: res.Eval.PeakMemory, Capacity: res.Eval.Capacity, OOM: res.Eval.OOM, BytesMoved: res.Eval.BytesMoved,
		Reference: b.Reference, RefStep: b.RefStep, Steps: res.Stats.Steps, Evaluations: res.Stats.Evaluations,
		SearchTime: res.Stats.Elapsed.Seconds(), Status: res.Stats.Status.String(),
		Decision: decision.NewFile(g, p.Devices(), res.Decision), Training: training, Curve: curve,
	}
	if l := res.Learning; l != nil {
		r.OnePass, r.OnePassValid = l.OnePass, l.OnePassValid
	}
	return r
}

// learnedReport adds a learned method's row to the comparison, builds the
// result file's content, and writes it to out ("" = none).
func learnedReport(p *optimize.Problem, b placements.Baselines, l learned, seed uint64, out string) (SearchReport, error) {
	res := l.res
	if p.Realize != nil {
		// What runs (a graph from PyTorch): the same score.
		r := *res
		r.Decision = p.Realized(r.Decision)
		res = &r
	}
	row := placements.BaselinesRow{Method: l.method, SearchTime: l.elapsed.Seconds()}
	if l.own != nil {
		fillRow(&row, l.own, p)
	} else {
		fillRow(&row, res, p)
	}
	b.Rows = append(b.Rows, row)
	for i := range b.Rows {
		if r := &b.Rows[i]; r.Error == "" && r.StepTime > 0 {
			r.SpeedUp = b.RefStep / r.StepTime
		}
	}
	b.Seed = seed
	rep := SearchReport{Comparison: b, Result: resultOf(p, b, l.method, res, seed)}
	rep.Result.Reference, rep.Result.RefStep, rep.Result.Source = l.refName, l.refStep, l.source
	// Written even after Ctrl-C: the best result so far is kept.
	if out != "" {
		if err := atomicfile.Write(out, func(w io.Writer) error { return report.JSON(w, rep.Result) }); err != nil {
			return rep, err
		}
		rep.Out = out
	}
	return rep, nil
}

// REGAL's synthetic sets as the REGAL jobs draw them (workloads.SyntheticSet,
// every family in turn): the training set that brkga-tuned is tuned on and
// the held-out test set of `placer report regal`. Their seeds are a
// million apart, so that no test graph shares a seed with a training
// graph (graph i of a set takes seed splitmix64(seed + i)).
const (
	RegalTrainSeed uint64 = 1
	RegalTestSeed  uint64 = 1_000_001
	// RegalTest2xSeed seeds the held-out graphs twice the size of the
	// training graphs (report regal's synthetic-2x:N).
	RegalTest2xSeed uint64 = 2_000_001
)
