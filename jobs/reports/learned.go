package reports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
)

// LearnedGraphs are the graphs of the learned methods' comparison
// (docs/learned.md), the report's default: the 2017 papers' RNNLM and GNMT,
// and GO table 2's Transformer-XL, Inception-V3 and AmoebaNet.
var LearnedGraphs = []string{"rnnlm2", "rnnlm4", "gnmt2", "gnmt4", "trxl2", "inception_b32", "amoebanet"}

// LearnedBudgets are the report's default wall-time budgets.
var LearnedBudgets = []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute}

// LearnedMethods are the methods the report compares by default: the
// 2017 RL placer, HDP and GO.
func LearnedMethods() []string { return grid.Registered("rl17", "hdp", "go") }

// LearnedOptions are the inputs of `placer report learned`.
type LearnedOptions struct {
	// Graphs are workload names or graph files (nil = LearnedGraphs); a
	// workload runs on its table-2 GPU count unless Cluster.GPUs is set.
	Graphs  []string
	Methods []string        // nil = LearnedMethods()
	Budgets []time.Duration // nil = LearnedBudgets
	// CPU makes the budgets CPU time of this process (all threads;
	// optimize.Budget.CPU) instead of wall time, as equal-time's. Cells
	// are kept apart from wall-time cells.
	CPU     bool
	Cluster inputs.ClusterSpec
	Seed    uint64
	Sync    bool
	// Dir keeps one file per finished cell, its curve included (and per
	// graph's reference); a rerun with the same Dir and seed skips them
	// ("" = keep nothing).
	Dir string
	// NoRun runs no cell: the report is what Dir keeps (which must be
	// set), cells not kept there are counted as missing, and a graph
	// whose reference is not kept gets none (no quick baselines are
	// run). Only the expert placement is evaluated, once per graph. It
	// is the summary of a measurement whose cells were run by several
	// processes, one per graph, sharing Dir.
	NoRun bool
	// Progress receives a line per cell.
	Progress io.Writer
	// Work, if set, spreads the cells over processes sharing Dir
	// (--list-cells, --cell, --worker; grid.Work).
	Work *grid.Work
}

// learnedCellKind marks the cell files of this report, so that a cell of
// equal-time in the same Dir is never read as one.
const learnedCellKind = "learned"

// learnedCellFile is a cell as kept in Dir.
type learnedCellFile struct {
	Report string                 `json:"report"`
	Seed   uint64                 `json:"seed"`
	Cell   placements.LearnedCell `json:"cell"`
}

// Learned runs every method on every graph for each budget and returns
// the report. Every method gets methods.Options.Reference = the graph's
// best quick baseline, as in equal-time: go is anchored on it, rl17 and
// hdp ignore it and start from nothing, as their papers do. When ctx is
// cancelled the cells finished so far are returned (and kept in Dir)
// with ctx's error.
func Learned(ctx context.Context, o LearnedOptions) (placements.Learned, error) {
	a, err := grid.Axes{Graphs: o.Graphs, Methods: o.Methods, Budgets: o.Budgets}.Or("learned", grid.Axes{Graphs: LearnedGraphs, Methods: LearnedMethods(), Budgets: LearnedBudgets})
	if err != nil {
		return placements.Learned{}, err
	}
	g := grid.Grid{Name: "learned", Dir: o.Dir, NoRun: o.NoRun, Progress: o.Progress, Work: o.Work}
	if err := g.Check(); err != nil {
		return placements.Learned{}, err
	}
	return grid.Loop(ctx, g, func() (placements.Learned, error) {
		rep := placements.Learned{Hardware: cmp.Or(o.Cluster.Hardware, roofline.DefaultHardware), Seed: o.Seed, Methods: a.Methods, CPU: o.CPU, Budgets: a.Seconds()}
		var err error
		rep.Graphs, err = grid.Rows(a.Graphs, func(name string) (placements.LearnedGraph, error) {
			return learnedGraph(ctx, g, o, name, a)
		})
		rep.Summarize()
		return rep, err
	})
}

// learnedGraph runs one graph's expert, reference and cells, kept in g's
// folder of the graph.
func learnedGraph(ctx context.Context, g grid.Grid, o LearnedOptions, name string, a grid.Axes) (placements.LearnedGraph, error) {
	row := placements.LearnedGraph{Graph: name}
	pp, err := table2Problem(name, o.Cluster, o.Sync)
	if err != nil {
		row.Error = err.Error()
		return row, fmt.Errorf("learned: %s: %w", name, err)
	}
	defer pp.Close()
	p := pp.Problem
	row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
	g = g.In(grid.RowDir(row.Graph, row.Devices))
	if err := learnedExpert(ctx, p, &row); err != nil {
		return row, err
	}
	var eq placements.EqualTimeGraph
	var ref *optimize.Result
	res, err := grid.Row(ctx, g, func(g grid.Grid) (bool, error) {
		// The cells are read (not run) without the reference.
		var err error
		if ref, err = graphReference(ctx, g, pp, &eq, o.Seed); err != nil {
			return false, err
		}
		if ref == nil {
			eq.Note = "reference not kept"
		}
		row.Reference, row.RefStep, row.RefTime, row.Note = eq.Reference, eq.RefStep, eq.RefTime, eq.Note
		return true, nil
	}, func() []grid.Cell[learnedCellFile] {
		return grid.Cells(a, func(m string, b time.Duration) grid.Cell[learnedCellFile] {
			return learnedCell(o, p, &row, ref, m, b)
		})
	})
	row.Missing = res.Missing
	for _, f := range res.Cells {
		row.Cells = append(row.Cells, f.Cell)
	}
	return row, err
}

// learnedLine is a cell's progress line.
func learnedLine(c placements.LearnedCell, expert float64) string {
	switch {
	case c.Error != "":
		return "failed: " + c.Error
	case !c.Valid:
		return "no valid decision"
	case expert > 0:
		return fmt.Sprintf("%s, %.3f of the expert, %d evaluations, %.0f CPU s", report.Seconds(c.StepTime), c.StepTime/expert, c.Evaluations, c.CPU)
	}
	return fmt.Sprintf("%s, %d evaluations, %.0f CPU s", report.Seconds(c.StepTime), c.Evaluations, c.CPU)
}

// learnedExpert scores the expert placement as `placer baselines` does
// (the expert method) and fills row's expert, or says why there is none.
func learnedExpert(ctx context.Context, p *optimize.Problem, row *placements.LearnedGraph) error {
	res, err := (classical.Expert{}).Optimize(context.WithoutCancel(ctx), p, nil)
	switch {
	case errors.Is(err, classical.ErrNoExpert):
		row.ExpertNote = "no expert placement"
	case err != nil:
		row.ExpertNote = "expert failed: " + err.Error()
	case !res.Eval.Valid():
		row.ExpertNote = fmt.Sprintf("expert invalid (%s, out of memory or co-location broken)", report.Seconds(res.Eval.StepTime))
	default:
		row.ExpertStep = res.Eval.StepTime
	}
	return nil
}

// learnedCell is method m's cell at budget b with ref as its Reference,
// recording the curve of its best step time. A method that fails gives a
// cell with its error.
func learnedCell(o LearnedOptions, p *optimize.Problem, row *placements.LearnedGraph, ref *optimize.Result, m string, b time.Duration) grid.Cell[learnedCellFile] {
	return grid.Cell[learnedCellFile]{
		Key:   grid.Key{Graph: fmt.Sprintf("%s@%d", row.Graph, p.Devices()), Method: m, Budget: grid.BudgetName(b, o.CPU), Seed: o.Seed},
		File:  fmt.Sprintf("learned-%s-%s.json", m, grid.BudgetName(b, o.CPU)),
		Label: fmt.Sprintf("%-14s %-8s %8s", row.Graph, m, report.Seconds(b.Seconds())),
		Match: func(f *learnedCellFile) error {
			if f.Report != learnedCellKind || f.Seed != o.Seed || f.Cell.Method != m {
				return grid.ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (learnedCellFile, error) {
			f := learnedCellFile{Report: learnedCellKind, Seed: o.Seed, Cell: placements.LearnedCell{Method: m, Budget: b.Seconds()}}
			c := &f.Cell
			// The curve: a point at every step where the best valid step
			// time improved (Settings.Progress runs after each step of
			// every method, on the optimizer's goroutine).
			last := 0.0
			progress := func(s optimize.Stats, t grid.Timer) {
				if s.BestStep > 0 && s.BestStep != last {
					last = s.BestStep
					c.Curve = append(c.Curve, placements.LearnedPoint{Wall: s.Elapsed.Seconds(), CPU: t.CPU(), Evaluations: s.Evaluations, BestStep: s.BestStep})
				}
			}
			run, err := grid.RunMethod(ctx, p, m, methods.Options{Reference: ref}, optimize.Settings{Budget: grid.Budget(b, o.CPU), Seed: o.Seed}, progress)
			c.Wall, c.CPU, c.Error = run.Wall, run.CPU, run.Err
			if err != nil || run.Result == nil {
				return f, err
			}
			res := run.Result
			c.StepTime, c.Valid = res.Eval.StepTime, res.Eval.Valid()
			c.Evaluations, c.Steps, c.Status = res.Stats.Evaluations, res.Stats.Steps, res.Stats.Status.String()
			if c.Valid {
				// The end of the run: the final best (which may have
				// improved after the last step) at the run's full time.
				c.Curve = append(c.Curve, placements.LearnedPoint{Wall: c.Wall, CPU: c.CPU, Evaluations: c.Evaluations, BestStep: c.StepTime})
			}
			return f, nil
		},
		Line: func(f *learnedCellFile, _ bool) string { return learnedLine(f.Cell, row.ExpertStep) },
	}
}
