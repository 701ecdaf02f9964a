package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/brkga/tuned"
	regaldefault "github.com/placer/placer/methods/regal/defaultmodel"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
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
	var ms []string
	for _, m := range []string{"gp-dfs", "local-search", "brkga", "brkga-tuned", "regal", "regal-zero-shot"} {
		if _, ok := methods.Lookup(m); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// RegalCurveMethods are figure 3's methods (BRKGA and REGAL), those in the
// registry.
func RegalCurveMethods() []string {
	var ms []string
	for _, m := range []string{"brkga", "regal"} {
		if _, ok := methods.Lookup(m); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

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
	Dir      string
	Progress io.Writer
}

// regalCellFile is a cell as kept in Dir: Setting must match for a rerun
// to reuse it.
type regalCellFile struct {
	Setting string           `json:"setting"`
	Cell    report.RegalCell `json:"cell"`
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
func Regal(ctx context.Context, o RegalOptions) (report.Regal, error) {
	if o.Evaluations == 0 {
		o.Evaluations = optimize.DefaultEvaluations
	}
	if len(o.Budgets) == 0 {
		o.Budgets = []int{5000, 10000, 20000, 50000}
	}
	o.Budgets = report.SortedBudgets(o.Budgets)
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
	rep := report.Regal{Seed: o.Seed, Evaluations: o.Evaluations, BestBudget: o.BestBudget, Budgets: o.Budgets,
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
	tasks, err := parseTasks(o.Tasks)
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
	for _, rg := range graphs {
		row, err := regalGraphRun(ctx, o, rg, tasks, setting, &rep)
		rep.Graphs = append(rep.Graphs, row)
		if err != nil {
			rep.Summarize()
			return rep, err
		}
	}
	rep.Summarize()
	return rep, nil
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
			seed, set, nodes := RegalTestSeed, "synthetic test", workloads.SynthNodes
			switch tag {
			case "synthetic-train":
				seed, set = RegalTrainSeed, "synthetic train"
			case "synthetic-2x":
				seed, set, nodes = RegalTest2xSeed, "synthetic test, 2x nodes", workloads.SynthNodes.Scale(2)
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
func regalProblemFor(rg regalGraph, o RegalOptions, tasks optimize.Tasks, obj optimize.Objective) (*problem, error) {
	if rg.g != nil {
		c, err := inputs.Cluster(o.Cluster, inputs.Meta{})
		if err != nil {
			return nil, err
		}
		pp, err := newProblemOn(rg.g, c, tasks, roofline.Options{SyncTransfers: o.Sync}, nil)
		if err != nil {
			return nil, err
		}
		pp.Objective = obj
		return pp, nil
	}
	pp, err := newProblem(rg.spec, o.Cluster, tasks, o.Sync, nil)
	if err != nil {
		return nil, err
	}
	pp.Objective = obj
	return pp, nil
}

// regalGraphRun runs (or reads) every cell of one graph.
func regalGraphRun(ctx context.Context, o RegalOptions, rg regalGraph, tasks optimize.Tasks, setting string, rep *report.Regal) (report.RegalGraph, error) {
	row := report.RegalGraph{Graph: rg.name, Set: rg.set}
	for _, obj := range o.Objectives {
		pp, err := regalProblemFor(rg, o, tasks, obj)
		if err != nil {
			row.Error = err.Error()
			return row, fmt.Errorf("report regal: %s: %w", rg.name, err)
		}
		p := pp.Problem
		row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
		dir := ""
		if o.Dir != "" {
			dir = filepath.Join(o.Dir, fileSafe(row.Graph)+fmt.Sprintf("@%d", row.Devices), obj.String())
			if err := os.MkdirAll(dir, 0o755); err != nil {
				pp.Close()
				return row, err
			}
		}
		type job struct {
			m string
			b int
		}
		var todo []job
		add := func(m string, b int) {
			if !slices.Contains(todo, job{m, b}) {
				todo = append(todo, job{m, b})
			}
		}
		for _, m := range rep.Methods {
			add(m, o.Evaluations)
		}
		for _, m := range o.CurveMethods {
			for _, b := range o.Budgets {
				add(m, b)
			}
		}
		add(RegalReference, o.BestBudget)
		for _, j := range todo {
			c, err := regalCell(ctx, p, obj, j.m, j.b, setting, o.Seed, dir)
			if err != nil {
				pp.Close()
				return row, err
			}
			row.Cells = append(row.Cells, c)
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "regal: %-28s %-11s %-16s %6d: %s\n", row.Graph, obj, j.m, j.b, regalCellLine(obj, c))
			}
		}
		pp.Close()
	}
	return row, nil
}

func regalCellLine(obj optimize.Objective, c report.RegalCell) string {
	switch {
	case c.Error != "":
		return "failed: " + c.Error
	case !c.Valid:
		return "invalid (" + obj.Format(c.Value) + ")"
	}
	return fmt.Sprintf("%s, %d evaluations, %.1f CPU s", obj.Format(c.Value), c.Evaluations, c.CPU)
}

// regalCell runs method m with an evaluation limit of b on p, or reads the
// cell from dir. A method that fails gives a cell with its error.
func regalCell(ctx context.Context, p *optimize.Problem, obj optimize.Objective, m string, b int, setting string, seed uint64, dir string) (report.RegalCell, error) {
	path := ""
	if dir != "" {
		path = filepath.Join(dir, fmt.Sprintf("%s-%d.json", m, b))
		var f regalCellFile
		setting += methodFingerprint(m, obj)
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &f) == nil && f.Setting == setting && f.Cell.Method == m && f.Cell.Budget == b {
			return f.Cell, nil
		}
	}
	c := report.RegalCell{Objective: obj.String(), Method: m, Budget: b}
	opt, err := methods.New(m, methods.Options{})
	if err != nil {
		return c, err
	}
	cpu0, start := optimize.ProcessCPU(), time.Now()
	res, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: optimize.Budget{Evaluations: b}, Seed: seed})
	c.Wall, c.CPU = time.Since(start).Seconds(), (optimize.ProcessCPU() - cpu0).Seconds()
	if ctx.Err() != nil {
		return c, ctx.Err() // an interrupted cell is not kept
	}
	if err != nil {
		c.Error = strings.TrimPrefix(err.Error(), m+": ")
	} else {
		c.Value, c.StepTime, c.Valid, c.Evaluations = obj.Of(&res.Eval), res.Eval.StepTime, obj.Valid(&res.Eval), res.Stats.Evaluations
	}
	if path != "" {
		if err := atomicfile.Write(path, func(w io.Writer) error { return report.JSON(w, regalCellFile{Setting: setting, Cell: c}) }); err != nil {
			return c, err
		}
	}
	return c, nil
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
