package jobs

import (
	"context"
	"fmt"
	"io"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/report"
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

// Search runs placer's search on the workload o names, in its world
// (inputs.WorldOf): for an op graph, the quick baselines, the strategies
// and the search method anchored on the best of them (SearchGraph); for
// a transformer at cluster scale, every plan of its degrees of
// parallelism (ScaleSearch).
func Search(ctx context.Context, o SearchOptions) (Answer, error) {
	if inputs.WorldOf(o.Graph, o.Cluster) == inputs.ClusterScale {
		so := scaleOptionsOf(o.Graph, o.Cluster, o.Fixed, o.Out)
		so.For = o.For
		rep, err := ScaleSearch(ctx, so)
		return ScaleSearchReport{rep}, err
	}
	return SearchGraph(ctx, o)
}

// Eval evaluates the decision o names in its workload's world
// (inputs.WorldOf): an op graph's placement, schedule, fusion and
// strategy (EvalGraph), or a transformer's plan at cluster scale
// (ScaleEval).
func Eval(ctx context.Context, o EvalOptions) (Answer, error) {
	var err error
	if o.Placement, err = planOrPlacement(o.Plan, o.Placement); err != nil {
		return nil, err
	}
	if inputs.WorldOf(o.Graph, o.Cluster) == inputs.ClusterScale {
		so := scaleOptionsOf(o.Graph, o.Cluster, o.Strategy, "")
		if o.Placement != "" && o.Placement != "single" {
			so.PlanFile = o.Placement
		}
		p, err := ScaleEval(ctx, so)
		return ScalePlanReport{p}, err
	}
	e, err := EvalGraph(ctx, o)
	return EvalReport{e}, err
}

// CheckStrategy checks strategy s in the world of the workload g on c:
// an op graph's strategy (decision.ParseStrategy) or a transformer's plan
// at cluster scale (scale.ParseStrategy), each refusing the other's keys.
func CheckStrategy(g inputs.GraphSpec, c inputs.ClusterSpec, s string) error {
	if inputs.WorldOf(g, c) == inputs.ClusterScale {
		_, err := scale.ParseStrategy(s)
		return err
	}
	_, err := decision.ParseStrategy(s)
	return err
}

// scaleOptionsOf is the cluster-scale options of what the user named.
func scaleOptionsOf(g inputs.GraphSpec, c inputs.ClusterSpec, strategy, out string) ScaleOptions {
	return ScaleOptions{Workload: g.Workload, Cluster: c.Pod, GPUs: c.GPUs, Profile: c.Profile, MemoryMargin: c.MemoryMargin, Strat: strategy, Out: out}
}

// EvalReport is an op graph's evaluation as an Answer.
type EvalReport struct{ report.Eval }

// WriteText writes the evaluation's table.
func (e EvalReport) WriteText(w io.Writer) error { return report.WriteEval(w, e.Eval) }

// Found is true: an evaluation always has its answer.
func (EvalReport) Found() (bool, string) { return true, "" }

// ScalePlanReport is a plan's evaluation at cluster scale as an Answer.
type ScalePlanReport struct{ report.ScalePlan }

// WriteText writes the plan's table.
func (p ScalePlanReport) WriteText(w io.Writer) error { return report.WriteScalePlan(w, p.ScalePlan) }

// Found is true: an evaluation always has its answer.
func (ScalePlanReport) Found() (bool, string) { return true, "" }

// ScaleSearchReport is a search at cluster scale as an Answer.
type ScaleSearchReport struct{ report.ScaleSearch }

// WriteText writes the best plan and the runners-up.
func (s ScaleSearchReport) WriteText(w io.Writer) error {
	return report.WriteScaleSearch(w, s.ScaleSearch)
}

// Found reports whether a plan was found, and the file it was written to.
func (s ScaleSearchReport) Found() (bool, string) { return s.Best.Strategy != "", s.Out }

// WriteText writes the comparison table, the search's summary and where
// its files went.
func (r SearchReport) WriteText(w io.Writer) error {
	w, flush := report.FitLines(w) // its own lines too: at most 120 columns
	defer flush()
	report.WriteOpCosts(w, r.Costs)
	if err := report.WriteBaselines(w, r.Comparison); err != nil {
		return err
	}
	if r.Result.OOM {
		fmt.Fprintln(w, "NOTHING FITS: no decision found fits in device memory; the result below is the best out-of-memory one (more GPUs, --memory, or a smaller graph)")
	}
	if err := report.WriteSearchSummary(w, r.Result); err != nil {
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
	return report.WriteRowsNote(w, r.Comparison)
}

// Found reports whether the search has a result (an interrupted one may
// have none yet) and the file it was written to.
func (r SearchReport) Found() (bool, string) { return r.Result.Method != "", r.Out }
