package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
)

// noExpert is the expert row's note on a graph without an expert
// placement (an imported or synthetic graph): not a failure.
const noExpert = "no expert placement for this graph"

// NoBatch is a batch-splitting row's note on a graph without batch
// information: not a failure.
const NoBatch = "no batch information in this graph (its batch cannot be split)"

// DefaultBaselines are the methods `placer baselines` compares when none
// are named, in table order (methods.Compared).
var DefaultBaselines = methods.Compared()

// BaselinesOptions are the inputs of a comparison of methods.
type BaselinesOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	// Methods are optimize registry names; nil = DefaultBaselines.
	Methods []string
	// Budget is the evaluation budget of each search method (0 = each
	// method's default: optimize.DefaultEvaluations for the searches).
	Budget int
	// Time limits each method's wall time, CPU its CPU time (this
	// process's; the methods run one at a time) (0 = none).
	Time, CPU time.Duration
	Seed      uint64
	// Tasks is what the methods may change ("" = placement, scheduling
	// and fusion; see optimize.ParseTasks).
	Tasks string
	Sync  bool // REGAL's synchronous transfers
	// Host models each GPU's host thread dispatching its kernels in
	// every evaluation, the baselines', the search's and the joint
	// space's (strategies, pipelines) alike (roofline.Options.Host; nil =
	// none, the default). ParseFlags makes it from HostOn and Dispatch,
	// the --host and --dispatch flags, as eval's Check does.
	Host     *roofline.Host
	HostOn   bool
	Dispatch time.Duration
	// HostByGraph gives a graph that records an eager PyTorch run (its
	// execution settings) the host model when Host is nil: the CLI's
	// default where --host is not given.
	HostByGraph bool
	// Start is local-search's and sa's start ("" = each one's default;
	// "anchored" = the anchored searches: methods.Options.Start).
	Start string
	// Objective is what the methods minimise (zero = step time).
	Objective optimize.Objective
	// Backend makes the cost model and the evaluator (nil = Roofline).
	Backend Backend
	// Progress, if set, receives one line per method as it finishes.
	Progress io.Writer
	// Rows is a folder that gets every row's decision: one result file
	// per row and the index rows.json (writeRows; "" = none). Written
	// after an interruption too, with the rows finished.
	Rows string
}

// Baselines runs each method on one graph and cluster with the roofline
// model and returns the comparison. A method that cannot run (no expert
// placement for the graph) gets a row with its error. When ctx is
// cancelled the rows finished so far are returned with ctx's error.
func Baselines(ctx context.Context, o BaselinesOptions) (placements.Baselines, error) {
	names := o.Methods
	if err := methods.Check(names); err != nil {
		return placements.Baselines{}, err
	}
	if err := methods.CheckStart(o.Start); err != nil {
		return placements.Baselines{}, fail.AsUsage(err) // --start names no start
	}
	tasks, err := ParseTasks(o.Tasks)
	if err != nil {
		return placements.Baselines{}, err
	}
	pp, b, err := newComparisonWith(o.Graph, o.Cluster, tasks, roofline.Options{SyncTransfers: o.Sync, Host: o.Host}, o.Backend, o.HostByGraph)
	if err != nil {
		return b, err
	}
	defer pp.Close()
	pp.placementOnly()
	p := pp.Problem
	if len(names) == 0 {
		names = anchored.Realizable(p, DefaultBaselines)
	}
	p.Objective, b.Objective = o.Objective, o.Objective.String()
	b.Host = setupHostNote(pp, o.Dispatch)
	b.Budget, b.TimeLimit, b.CPULimit, b.Seed = o.Budget, o.Time.Seconds(), o.CPU.Seconds(), o.Seed
	// The budget a user names is the one that binds: --time or --cpu
	// alone leaves the evaluations unbounded; none at all is each
	// method's default (optimize.DefaultEvaluations for the searches).
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: o.Budget, Time: o.Time, CPU: o.CPU}, Seed: o.Seed}
	rows, err := anchored.Methods(ctx, p, names, methods.Options{Start: o.Start}, false, s, rowPrinter(p, o.Progress))
	b.Rows = tableRows(rows, p)
	if err != nil && !interrupted(ctx, err) {
		return b, err
	}
	b.Reference, b.RefStep = reference(ctx, p, rows)
	for i := range b.Rows {
		if r := &b.Rows[i]; r.Error == "" && r.StepTime > 0 {
			r.SpeedUp = b.RefStep / r.StepTime
		}
	}
	if o.Rows != "" && len(rows) > 0 {
		if err := writeRows(o.Rows, p, &b, rows, "", o.Seed); err != nil {
			return b, err
		}
	}
	return b, ctx.Err()
}

// tableRows are the search's rows as the table's.
func tableRows(rows []anchored.Row, p *optimize.Problem) []placements.BaselinesRow {
	out := make([]placements.BaselinesRow, len(rows))
	for i, r := range rows {
		out[i] = tableRow(r, p)
	}
	return out
}

// tableRow is one row of the search as the table's: its measures, or
// why its method could not run (an expected absence, no expert placement
// or no batch, said as a note).
func tableRow(r anchored.Row, p *optimize.Problem) placements.BaselinesRow {
	row := placements.BaselinesRow{Method: r.Name, SearchTime: r.Elapsed.Seconds()}
	switch {
	case r.Result != nil:
		fillRow(&row, r.Result, p)
	case errors.Is(r.Err, classical.ErrNoExpert):
		row.Error = noExpert
	case errors.Is(r.Err, classical.ErrNoBatch):
		row.Error = NoBatch
	case r.Err != nil:
		row.Error = strings.TrimPrefix(r.Err.Error(), r.Name+": ")
	}
	return row
}

// rowPrinter is a recorder that writes one progress line to w per row
// finished (nil when w is).
func rowPrinter(p *optimize.Problem, w io.Writer) optimize.Recorder {
	if w == nil {
		return nil
	}
	return optimize.RecorderFunc(func(e optimize.Event) {
		if e.Kind == optimize.Done {
			progress(w, tableRow(anchored.Row{Name: e.Method, Result: e.Result, Err: e.Err, Elapsed: e.Elapsed}, p))
		}
	})
}

// fillRow copies a result's measures into a row.
func fillRow(row *placements.BaselinesRow, res *optimize.Result, p *optimize.Problem) {
	e := &res.Eval
	row.StepTime = e.StepTime
	row.Objective, row.Feasible = p.Objective.Of(e), p.Objective.Valid(e)
	row.Fused = res.Decision.Fusion != nil
	if e.StepTime > 0 {
		row.Efficiency = p.Cost.LowerBound(row.Fused) / e.StepTime
	}
	for _, pk := range e.PeakMemory {
		row.PeakMemory = max(row.PeakMemory, pk)
	}
	row.PeakFraction = e.MaxPeakFraction()
	row.OOM = e.OOM
	row.ColocationViolations = e.ColocationViolations
	row.Evaluations = res.Stats.Evaluations
	row.EvalsPerSecond = evalsPerSecond(res.Stats.Evaluations, row.SearchTime, res.Stats.Elapsed.Seconds())
	row.Status = res.Stats.Status.String()
	row.Rest = restOf(res.Decision, p)
}

// evalsPerSecond is a row's evaluations over its search time (the
// table's column, what the row took in all), else over the result's own
// elapsed time; 0 when neither is known. A joint row's result is scored
// once more at the end (its Stats.Elapsed is that one evaluation) while
// its evaluations are all of its refinement's: their rate is over the
// row's time.
func evalsPerSecond(evals int, searchTime, elapsed float64) float64 {
	sec := searchTime
	if sec <= 0 {
		sec = elapsed
	}
	if sec <= 0 {
		return 0
	}
	return float64(evals) / sec
}

// restOf names a decision's non-placement parts for the table: fifo or
// own scheduling, none, default (TensorFlow's XLA-like) or own fusion.
func restOf(d decision.Decision, p *optimize.Problem) string {
	sched := "fifo"
	if d.Priority != nil {
		sched = "own"
	}
	fusion := "none"
	switch {
	case d.Fusion == nil:
	case slices.Equal(d.Fusion, decision.TopologicalFusion(p.Graph)):
		fusion = "default"
	default:
		fusion = "own"
	}
	return sched + ", " + fusion
}

// reference picks the method speed-ups are measured against: expert when
// it ran, else single (evaluated here if it was not among the rows), else
// the best valid row.
func reference(ctx context.Context, p *optimize.Problem, rows []anchored.Row) (string, float64) {
	// A reference that runs out of memory measures nothing: skip it.
	for _, want := range []string{"expert", "single"} {
		if i := slices.IndexFunc(rows, func(r anchored.Row) bool { return r.Name == want }); i >= 0 && rows[i].Result != nil && rows[i].Eval.Valid() {
			return want, rows[i].Eval.StepTime
		}
	}
	if best, ok := anchored.Best(p.Objective, rows, true); ok {
		return best.Name, best.Eval.StepTime
	}
	r, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), p.Complete(decision.Decision{Device: decision.Single(p.Graph)}))
	if err != nil {
		return "single", 0
	}
	if !r.Valid() {
		return "single (out of memory: no decision fits)", r.StepTime
	}
	return "single", r.StepTime
}

// progress writes one line about a finished method.
func progress(w io.Writer, r placements.BaselinesRow) {
	if w == nil {
		return
	}
	if r.Error == noExpert || r.Error == NoBatch { // an imported graph has none: not a failure
		fmt.Fprintf(w, "baselines: %-12s none: %s\n", r.Method, r.Error)
		return
	}
	if r.Error != "" {
		fmt.Fprintf(w, "baselines: %-12s failed: %s\n", r.Method, r.Error)
		return
	}
	var extra []string
	if r.OOM {
		extra = append(extra, "OOM")
	}
	if r.Evaluations > 1 {
		extra = append(extra, fmt.Sprintf("%.0f evaluations/s", r.EvalsPerSecond))
	}
	tail := ""
	if len(extra) > 0 {
		tail = ", " + strings.Join(extra, ", ")
	}
	evals := fmt.Sprintf("%d evaluations", r.Evaluations)
	if r.Evaluations == 1 {
		evals = "1 evaluation"
	}
	fmt.Fprintf(w, "baselines: %-12s step %s (%s in %s%s)\n", r.Method, report.Seconds(r.StepTime), evals, report.Seconds(r.SearchTime), tail)
}
