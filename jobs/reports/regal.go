package reports

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/brkga/tuned"
	regaldefault "github.com/placer/placer/methods/regal/defaultmodel"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads"
)

// RegalReference is the method every improvement is measured against at
// the table's evaluation limit: BRKGA with uniform mutants ("BRKGA 5K").
const RegalReference = "brkga"

// RegalMSRDir is where the msr-fiddle graphs are looked for by default,
// relative to the working directory (the shared data beside a checkout).
const RegalMSRDir = "../shared/data/msr-fiddle"

// RegalGraphs are the report's default test graphs: 8 held-out synthetic
// graphs, the small built-in workloads (on 2 GPUs) and the msr-fiddle
// graphs when RegalMSRDir holds them.
var RegalGraphs = []string{"synthetic:8", "trxl2", "wavenet2x18", "msr-fiddle:" + RegalMSRDir}

// RegalMethods are REGAL table 1's methods as placer has them, in table
// order, keeping those in the registry (regal and regal-zero-shot appear
// when their entries exist).
func RegalMethods() []string {
	return grid.Registered("gp-dfs", "local-search", "brkga", "brkga-tuned", "regal", "regal-zero-shot")
}

// RegalCurveMethods are figure 3's methods (BRKGA and REGAL), those in the
// registry.
func RegalCurveMethods() []string { return grid.Registered("brkga", "regal") }

// RegalOptions are the inputs of `placer report regal`.
type RegalOptions struct {
	// Graphs are the test graphs: workload names, graph files,
	// "synthetic:N" (N held-out synthetic graphs, seed RegalTestSeed),
	// "synthetic-train:N" (the first N graphs of brkga-tuned's training
	// set, seed RegalTrainSeed: training-set results, REGAL A.3),
	// "synthetic-2x:N" (N held-out graphs of twice the training graphs'
	// nodes, 100-400, seed RegalTest2xSeed) and
	// "msr-fiddle:DIR" (every graph file in DIR, skipped when DIR does
	// not exist). nil = RegalGraphs.
	Graphs []string
	// Methods are the table's methods (nil = RegalMethods()); the
	// reference (brkga) is always run.
	Methods []string
	// CurveMethods are run at every Budgets limit (nil = RegalCurveMethods()).
	CurveMethods []string
	Objectives   []optimize.Objective // nil = both
	Evaluations  int                  // the table's limit (0 = 5,000)
	Budgets      []int                // the curve's limits (nil = 5K, 10K, 20K, 50K)
	// BestBudget is the large BRKGA run joining the best known solution
	// (0 = the largest of Budgets and 50,000).
	BestBudget int
	Cluster    inputs.ClusterSpec // GPUs 0 = 2
	Tasks      string             // "" = placement,scheduling (REGAL's decisions)
	Sync       bool               // REGAL's synchronous transfers
	Seed       uint64
	// Dir keeps one file per finished cell; a rerun with the same Dir
	// and settings skips them ("" = keep nothing).
	Dir string
	// NoRun runs no cell: the report is what Dir keeps (which must be
	// set), cells not kept there counted as missing; the table of cells
	// run by several processes or machines into one Dir.
	NoRun    bool
	Progress io.Writer
	// Work, if set, spreads the cells over processes sharing Dir
	// (--list-cells, --cell, --worker; grid.Work).
	Work *grid.Work
}

// regalCellFile is a cell as kept in Dir: Setting must match for a rerun
// to reuse it.
type regalCellFile struct {
	Setting string               `json:"setting"`
	Cell    placements.RegalCell `json:"cell"`
}

// regalGraph is a resolved test graph.
type regalGraph struct {
	name, set string
	g         *graph.Graph     // resolved already (synthetic), or
	spec      inputs.GraphSpec // to resolve
}

// Regal runs REGAL table 1 and figure 3 on the test graphs. When ctx is
// cancelled the cells finished so far are returned (and kept in Dir) with
// ctx's error.
func Regal(ctx context.Context, o RegalOptions) (placements.Regal, error) {
	if o.Evaluations == 0 {
		o.Evaluations = optimize.DefaultEvaluations
	}
	if len(o.Budgets) == 0 {
		o.Budgets = []int{5000, 10000, 20000, 50000}
	}
	o.Budgets = placements.SortedBudgets(o.Budgets)
	if o.BestBudget == 0 {
		o.BestBudget = max(50000, o.Budgets[len(o.Budgets)-1])
	}
	if o.Cluster.GPUs == 0 {
		o.Cluster.GPUs = 2
	}
	if len(o.Objectives) == 0 {
		o.Objectives = optimize.Objectives
	}
	if len(o.Graphs) == 0 {
		o.Graphs = RegalGraphs
	}
	if o.Methods == nil {
		o.Methods = RegalMethods()
	}
	if o.CurveMethods == nil {
		o.CurveMethods = RegalCurveMethods()
	}
	if o.Tasks == "" {
		o.Tasks = "placement,scheduling"
	}
	rep := placements.Regal{Seed: o.Seed, Evaluations: o.Evaluations, BestBudget: o.BestBudget, Budgets: o.Budgets,
		Methods: o.Methods, CurveMethods: o.CurveMethods, Reference: RegalReference, Devices: o.Cluster.GPUs, Transfers: "async"}
	if o.Sync {
		rep.Transfers = "sync"
	}
	for _, obj := range o.Objectives {
		rep.Objectives = append(rep.Objectives, obj.String())
	}
	if err := methods.Check(append(append(slices.Clone(o.Methods), o.CurveMethods...), RegalReference)); err != nil {
		return rep, fmt.Errorf("report regal: %w", err)
	}
	if !slices.Contains(rep.Methods, RegalReference) {
		rep.Methods = append([]string{RegalReference}, rep.Methods...)
	}
	if o.Evaluations < 1 || o.BestBudget < 1 || o.Budgets[0] < 1 {
		return rep, fmt.Errorf("report regal: evaluation limits must be positive")
	}
	tasks, err := jobs.ParseTasks(o.Tasks)
	if err != nil {
		return rep, err
	}
	rep.Tasks = tasks.String()
	c, err := inputs.Cluster(o.Cluster, inputs.Meta{})
	if err != nil {
		return rep, err
	}
	rep.Hardware, rep.Memory = c.Hardware.Name, c.Hardware.Memory
	graphs, err := regalGraphs(o.Graphs)
	if err != nil {
		return rep, err
	}
	setting := fmt.Sprintf("seed %d, %s, %d GPUs, memory %d, topology %q, %s transfers, tasks %s",
		o.Seed, rep.Hardware, rep.Devices, rep.Memory, o.Cluster.Topology, rep.Transfers, rep.Tasks)
	g := grid.Grid{Name: "regal", Dir: o.Dir, NoRun: o.NoRun, Progress: o.Progress, Work: o.Work}
	if err := g.Check(); err != nil {
		return rep, err
	}
	return grid.Loop(ctx, g, func() (placements.Regal, error) {
		rep := rep
		var err error
		rep.Graphs, err = grid.Rows(graphs, func(rg regalGraph) (placements.RegalGraph, error) {
			return regalGraphRun(ctx, g, o, rg, tasks, setting, rep.Methods)
		})
		rep.Summarize()
		return rep, err
	})
}

// regalGraphs expands the graph list.
func regalGraphs(list []string) ([]regalGraph, error) {
	var out []regalGraph
	for _, s := range list {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "synthetic:"), strings.HasPrefix(s, "synthetic-train:"), strings.HasPrefix(s, "synthetic-2x:"):
			tag, count, _ := strings.Cut(s, ":")
			n, err := strconv.Atoi(count)
			if err != nil || n < 1 || n > 1_000_000 {
				return nil, fmt.Errorf("report regal: graphs: %q: want %s:N with N from 1 to 1000000", s, tag)
			}
			seed, set, nodes := jobs.RegalTestSeed, "synthetic test", workloads.SynthNodes
			switch tag {
			case "synthetic-train":
				seed, set = jobs.RegalTrainSeed, "synthetic train"
			case "synthetic-2x":
				seed, set, nodes = jobs.RegalTest2xSeed, "synthetic test, 2x nodes", workloads.SynthNodes.Scale(2)
			}
			gs, err := workloads.SyntheticSetNodes("all", n, seed, nodes)
			if err != nil {
				return nil, err
			}
			for _, g := range gs {
				out = append(out, regalGraph{name: g.Name(), set: set, g: g})
			}
		case strings.HasPrefix(s, "msr-fiddle:"):
			dir := strings.TrimPrefix(s, "msr-fiddle:")
			files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
			for _, f := range files {
				out = append(out, regalGraph{name: strings.TrimSuffix(filepath.Base(f), ".json"), set: "msr-fiddle", spec: inputs.GraphSpec{Path: f}})
			}
		default:
			spec := graphSpec(s)
			set := "file"
			if spec.Workload != "" {
				set = "built-in"
			}
			out = append(out, regalGraph{name: s, set: set, spec: spec})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("report regal: no test graphs")
	}
	return out, nil
}

// regalProblemFor builds graph rg's problem for objective obj.
func regalProblemFor(rg regalGraph, o RegalOptions, tasks optimize.Tasks, obj optimize.Objective) (*jobs.Setup, error) {
	if rg.g != nil {
		c, err := inputs.Cluster(o.Cluster, inputs.Meta{})
		if err != nil {
			return nil, err
		}
		pp, err := jobs.NewSetupOn(rg.g, c, tasks, roofline.Options{SyncTransfers: o.Sync}, nil)
		if err != nil {
			return nil, err
		}
		pp.Objective = obj
		return pp, nil
	}
	pp, err := jobs.NewSetup(rg.spec, o.Cluster, tasks, o.Sync, nil)
	if err != nil {
		return nil, err
	}
	pp.Objective = obj
	return pp, nil
}

// regalGraphRun runs (or reads from g's folder of the graph) every cell
// of one graph: per objective, the table's methods at the table's limit,
// the curve's at each of its limits, and BRKGA at the best-known limit.
func regalGraphRun(ctx context.Context, g grid.Grid, o RegalOptions, rg regalGraph, tasks optimize.Tasks, setting string, ms []string) (placements.RegalGraph, error) {
	row := placements.RegalGraph{Graph: rg.name, Set: rg.set}
	for _, obj := range o.Objectives {
		pp, err := regalProblemFor(rg, o, tasks, obj)
		if err != nil {
			row.Error = err.Error()
			return row, fmt.Errorf("report regal: %s: %w", rg.name, err)
		}
		p := pp.Problem
		row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
		var cells []grid.Cell[regalCellFile]
		add := func(m string, b int) {
			if !slices.ContainsFunc(cells, func(c grid.Cell[regalCellFile]) bool { return c.File == regalCellName(m, b) }) {
				cells = append(cells, regalCell(p, obj, row.Graph, m, b, setting+methodFingerprint(m, obj), o.Seed))
			}
		}
		for _, m := range ms {
			add(m, o.Evaluations)
		}
		for _, m := range o.CurveMethods {
			for _, b := range o.Budgets {
				add(m, b)
			}
		}
		add(RegalReference, o.BestBudget)
		res, err := grid.All(ctx, g.In(grid.RowDir(row.Graph, row.Devices), obj.String()), cells)
		pp.Close()
		for _, f := range res.Cells {
			row.Cells = append(row.Cells, f.Cell)
		}
		if err != nil {
			return row, err
		}
	}
	return row, nil
}

func regalCellLine(obj optimize.Objective, c placements.RegalCell) string {
	switch {
	case c.Error != "":
		return "failed: " + c.Error
	case !c.Valid:
		return "invalid (" + obj.Format(c.Value) + ")"
	}
	return fmt.Sprintf("%s, %d evaluations, %.1f CPU s", obj.Format(c.Value), c.Evaluations, c.CPU)
}

// regalCellName is the file of method m's cell at limit b.
func regalCellName(m string, b int) string { return fmt.Sprintf("%s-%d.json", m, b) }

// regalCell is method m's cell with an evaluation limit of b on p, kept
// with setting (a kept cell of another setting runs again). A method that
// fails gives a cell with its error.
func regalCell(p *optimize.Problem, obj optimize.Objective, graph, m string, b int, setting string, seed uint64) grid.Cell[regalCellFile] {
	return grid.Cell[regalCellFile]{
		Key:   grid.Key{Graph: fmt.Sprintf("%s@%d", graph, p.Devices()), Objective: obj.String(), Method: m, Budget: fmt.Sprintf("%d evaluations", b), Seed: seed},
		File:  regalCellName(m, b),
		Label: fmt.Sprintf("%-28s %-11s %-16s %6d", graph, obj, m, b),
		Match: func(f *regalCellFile) error {
			if f.Setting != setting || f.Cell.Method != m || f.Cell.Budget != b {
				return grid.ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (regalCellFile, error) {
			f := regalCellFile{Setting: setting, Cell: placements.RegalCell{Objective: obj.String(), Method: m, Budget: b}}
			c := &f.Cell
			run, err := grid.RunMethod(ctx, p, m, methods.Options{}, optimize.Settings{Budget: optimize.Budget{Evaluations: b}, Seed: seed}, nil)
			c.Wall, c.CPU, c.Error = run.Wall, run.CPU, run.Err
			if res := run.Result; res != nil {
				c.Value, c.StepTime, c.Valid, c.Evaluations = obj.Of(&res.Eval), res.Eval.StepTime, obj.Valid(&res.Eval), res.Stats.Evaluations
			}
			return f, err
		},
		Line: func(f *regalCellFile, _ bool) string { return regalCellLine(obj, f.Cell) },
	}
}

// methodFingerprint is what, besides its name, decides a method's result
// and must match for a kept cell to count: brkga-tuned's setting for the
// objective (a retuned params file reruns its cells); "" for the others.
func methodFingerprint(m string, obj optimize.Objective) string {
	if m == "regal" || m == "regal-zero-shot" {
		// The embedded model it ran with: a rebuilt model runs it again.
		if sum := regaldefault.SHA256For(obj); sum != "" {
			return "; model sha256 " + sum[:16]
		}
		return ""
	}
	if m != "brkga-tuned" {
		return ""
	}
	f, err := tuned.Load()
	if err != nil {
		return ""
	}
	q, err := f.For(obj)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; brkga-tuned %+v", q)
}
