package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// parseTasks reads a --tasks value: "" means all three; naming none is an
// error.
func parseTasks(s string) (optimize.Tasks, error) {
	if s == "" {
		return optimize.AllTasks, nil
	}
	t, err := optimize.ParseTasks(s)
	if err != nil {
		return t, err
	}
	if t == (optimize.Tasks{}) {
		return t, fmt.Errorf("tasks %q: name at least one of placement, scheduling, fusion", s)
	}
	return t, nil
}

// runMethods runs the named methods in order, returning their names,
// rows and results (nil for a method that could not run), with one
// progress line each on progressW (if not nil). On a cancelled context it
// returns the rows finished so far with the context's error.
//
// With composites, when the problem decides placement and scheduling
// together, each quick method (SearchReferenceMethods) that orders ops
// also runs once more with the placement left at
// TensorFlow's default (the problem's base), as "tf-default+NAME": a
// heuristic's own placement can be poor while its order on the default
// placement is good. On gnmt4 (4 GPUs), m-etf places at 339.7 ms, but
// orders the expert placement at 128.5 ms against FIFO's 152.3 ms; a
// search anchored on the best single baseline (the expert, 152.3 ms)
// reached 136.2 ms in 3 minutes, where one anchored on m-etf's order
// reached 122.3 ms. These rows come after the named methods' rows, and
// names holds them too.
func runMethods(ctx context.Context, p *optimize.Problem, list []string, mo methods.Options, composites bool, s *optimize.Settings, progressW io.Writer) (names []string, rows []report.BaselinesRow, results []*optimize.Result, err error) {
	add := func(q *optimize.Problem, name, as string) (*optimize.Result, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row, res, err := runMethod(ctx, q, name, mo, s)
		if err != nil {
			return nil, err
		}
		if as != name && (res == nil || res.Decision.Priority == nil) {
			return res, nil // failed, or does not order ops: nothing new
		}
		row.Method = as
		names, rows, results = append(names, as), append(rows, row), append(results, res)
		progress(progressW, row)
		return res, nil
	}
	for _, name := range list {
		q := p
		if name == "expert" && p.Base.Fusion == nil {
			// The expert row means one thing everywhere (eval, baselines,
			// search): the expert placement with TensorFlow's defaults for
			// the rest, FIFO scheduling and XLA-like default fusion.
			e := *p
			setBase(&e)
			q = &e
		}
		if _, err := add(q, name, name); err != nil {
			return names, rows, results, err
		}
	}
	t := p.EffectiveTasks()
	if !composites || !t.Placement || !t.Scheduling {
		return names, rows, results, nil
	}
	q := *p
	q.Tasks = optimize.Tasks{Scheduling: true, Fusion: t.Fusion}
	for _, name := range list {
		if name == "tf-default" || !slices.Contains(methods.Quick(), name) {
			continue
		}
		if _, err := add(&q, name, "tf-default+"+name); err != nil {
			return names, rows, results, err
		}
	}
	return names, rows, results, nil
}

// interrupted reports whether err is ctx's cancellation (a signal), as
// opposed to a failure.
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// bestValid returns the best valid result of methods under objective o
// and its name; when none is valid, "tf-defaults" and nil (the learned
// methods then take the problem's Base as reference).
func bestValid(o optimize.Objective, names []string, results []*optimize.Result) (string, *optimize.Result) {
	return bestOf(o, names, results, false)
}

// bestOf is bestValid, among every result when strategies is set, else
// among the single-replica decisions only (what a search can start from:
// its moves change one replica's placement on all the problem's GPUs).
func bestOf(o optimize.Objective, names []string, results []*optimize.Result, strategies bool) (string, *optimize.Result) {
	name, ref := "tf-defaults", (*optimize.Result)(nil)
	for i, r := range results {
		if r != nil && (strategies || r.Decision.Strategy.IsZero()) && o.Valid(&r.Eval) && (ref == nil || o.Of(&r.Eval) < o.Of(&ref.Eval)) {
			name, ref = names[i], r
		}
	}
	return name, ref
}

// runLearned runs the learned method called name, made with o, on p for
// steps training steps (0 = defSteps unless limit is set) or the
// wall-time limit.
func runLearned(ctx context.Context, name string, o methods.Options, p *optimize.Problem, steps, defSteps int, limit time.Duration, seed uint64) (*optimize.Result, error) {
	opt, err := methods.New(name, o)
	if err != nil {
		return nil, err
	}
	if steps == 0 && limit == 0 {
		steps = defSteps
	}
	return opt.Optimize(ctx, p, &optimize.Settings{Budget: optimize.Budget{Steps: steps, Time: limit}, Seed: seed})
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

// learnedReport adds a learned method's row to the comparison, builds the
// result file's content, and writes it to out ("" = none).
func learnedReport(p *optimize.Problem, b report.Baselines, l learned, seed uint64, out string) (SearchReport, error) {
	res := l.res
	row := report.BaselinesRow{Method: l.method, SearchTime: l.elapsed.Seconds()}
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
	var training, curve any // absent for methods that train nothing (zero-shot)
	if l := res.Learning; l != nil && l.Settings != nil {
		training, curve = l.Settings, l.Curve
	}
	g := p.Graph
	rep := SearchReport{Comparison: b, Result: report.Result{
		Format: report.ResultFormat, Version: report.ResultVersion, Method: l.method,
		Graph: g.Name(), Ops: g.NumOps(), Hardware: b.Hardware, Devices: b.Devices, Topology: b.Topology, Transfers: b.Transfers,
		Tasks: b.Tasks, Seed: seed, StepTime: res.Eval.StepTime, LowerBound: p.Cost.LowerBound(res.Decision.Fusion != nil),
		PeakMemory: res.Eval.PeakMemory, Capacity: res.Eval.Capacity, OOM: res.Eval.OOM, BytesMoved: res.Eval.BytesMoved,
		Reference: l.refName, RefStep: l.refStep, Source: l.source, Steps: res.Stats.Steps, Evaluations: res.Stats.Evaluations,
		SearchTime: res.Stats.Elapsed.Seconds(), Status: res.Stats.Status.String(),
		Decision: decision.NewFile(g, p.Devices(), res.Decision), Training: training, Curve: curve,
	}}
	if l := res.Learning; l != nil {
		rep.Result.OnePass, rep.Result.OnePassValid = l.OnePass, l.OnePassValid
	}
	// Written even after Ctrl-C: the best result so far is kept.
	if out != "" {
		if err := atomicfile.Write(out, func(w io.Writer) error { return report.JSON(w, rep.Result) }); err != nil {
			return rep, err
		}
		rep.Out = out
	}
	return rep, nil
}
