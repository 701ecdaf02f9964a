package jobs

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/report/plans"
)

// Answer is a job's report, in either of placer's worlds (an op graph, or
// a transformer at cluster scale: inputs.World), as the CLI prints it:
// the value itself is its JSON twin (report.JSON), WriteText its tables
// for people.
type Answer interface {
	WriteText(w io.Writer) error
	// Found reports whether there is an answer to print and keep (an
	// interrupted search may have found nothing yet) and the file it was
	// written to ("" = none).
	Found() (bool, string)
}

// SearchOptions are the inputs of `placer search` in either world: the
// world of the workload, decided once by the caller (inputs.WorldOf), and
// that world's options (the other's are not read).
type SearchOptions struct {
	World   inputs.World
	OpGraph GraphSearchOptions // an op graph's
	Scale   ScaleOptions       // a transformer's at cluster scale
}

// Search runs placer's search in o's world: for an op graph, the quick
// baselines, the strategies and the search method anchored on the best
// of them (SearchGraph); for a transformer at cluster scale, every plan
// of its degrees of parallelism (ScaleSearch).
func Search(ctx context.Context, o SearchOptions) (Answer, error) {
	if o.World == inputs.ClusterScale {
		rep, err := ScaleSearch(ctx, o.Scale)
		return ScaleSearchReport{rep}, err
	}
	return SearchGraph(ctx, o.OpGraph)
}

// EvalOptions are the inputs of `placer eval` in either world: the world
// of the workload, decided once by the caller (inputs.WorldOf), and that
// world's options (the other's are not read).
type EvalOptions struct {
	World   inputs.World
	OpGraph GraphEvalOptions // an op graph's
	Scale   ScaleOptions     // a transformer's at cluster scale
}

// Eval evaluates the decision o names in its world: an op graph's
// placement, schedule, fusion and strategy (EvalGraph), or a
// transformer's plan at cluster scale (ScaleEval).
func Eval(ctx context.Context, o EvalOptions) (Answer, error) {
	if o.World == inputs.ClusterScale {
		p, err := ScaleEval(ctx, o.Scale)
		return ScalePlanReport{p}, err
	}
	g := o.OpGraph
	var err error
	if g.Placement, err = exportjob.PlanOrPlacement(g.Plan, g.Placement); err != nil {
		return nil, err
	}
	e, err := EvalGraph(ctx, g)
	return EvalReport{e}, err
}

// CheckStrategy checks strategy s in world w: an op graph's strategy
// (decision.ParseStrategy) or a transformer's plan at cluster scale
// (plan.ParseStrategy), each refusing the other's keys.
func CheckStrategy(w inputs.World, s string) error {
	if w == inputs.ClusterScale {
		_, err := plan.ParseStrategy(s)
		return err
	}
	_, err := decision.ParseStrategy(s, plan.IsKey)
	return err
}

// EvalReport is an op graph's evaluation as an Answer.
type EvalReport struct{ placements.Eval }

// WriteText writes the evaluation's table.
func (e EvalReport) WriteText(w io.Writer) error { return placements.WriteEval(w, e.Eval) }

// Found is true: an evaluation always has its answer.
func (EvalReport) Found() (bool, string) { return true, "" }

// ScalePlanReport is a plan's evaluation at cluster scale as an Answer.
type ScalePlanReport struct{ plans.ScalePlan }

// WriteText writes the plan's table.
func (p ScalePlanReport) WriteText(w io.Writer) error { return plans.WriteScalePlan(w, p.ScalePlan) }

// Found is true: an evaluation always has its answer.
func (ScalePlanReport) Found() (bool, string) { return true, "" }

// ScaleSearchReport is a search at cluster scale as an Answer.
type ScaleSearchReport struct{ plans.ScaleSearch }

// WriteText writes the best plan and the runners-up.
func (s ScaleSearchReport) WriteText(w io.Writer) error {
	return plans.WriteScaleSearch(w, s.ScaleSearch)
}

// Found reports whether a plan was found, and the file it was written to.
func (s ScaleSearchReport) Found() (bool, string) { return s.Best.Strategy != "", s.Out }

// WriteText writes the comparison table, the search's summary and where
// its files went.
func (r SearchReport) WriteText(w io.Writer) error {
	w, flush := report.FitLines(w) // its own lines too: at most 120 columns
	defer flush()
	placements.WriteOpCosts(w, r.Costs)
	if err := placements.WriteBaselines(w, r.Comparison); err != nil {
		return err
	}
	if r.Interrupted != "" {
		line := strings.Replace(r.Interrupted, "interrupted", "INTERRUPTED", 1) + ": the table holds the rows that finished"
		if len(r.Cut) > 0 {
			line += "; cut short, each at its best so far: " + strings.Join(r.Cut, ", ")
		}
		if len(r.NotRun) > 0 {
			line += "; not run: " + strings.Join(r.NotRun, ", ")
		}
		fmt.Fprintln(w, line)
	}
	if r.Result.OOM {
		fmt.Fprintln(w, "NOTHING FITS: no decision found fits in device memory; the result below is the best out-of-memory one (more GPUs, --memory, or a smaller graph)")
	}
	if err := placements.WriteSearchSummary(w, r.Result); err != nil {
		return err
	}
	if r.TrainMode != nil {
		fmt.Fprintln(w, r.TrainMode.Line)
	}
	if r.Checked != nil {
		fmt.Fprintln(w, r.Checked.Line())
	}
	for _, f := range []struct{ what, path string }{{"result", r.Out}, {"trace", r.Trace}, {"plot", r.Plot}} {
		if f.path != "" {
			fmt.Fprintf(w, "%s written to %s\n", f.what, f.path)
		}
	}
	return placements.WriteRowsNote(w, r.Comparison)
}

// Found reports whether the search has a result (an interrupted one may
// have none yet) and the file it was written to.
func (r SearchReport) Found() (bool, string) { return r.Result.Method != "", r.Out }
