package reports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads"
)

// ParallelZoo are the zoo models `placer report parallel` compares by
// default, read from ParallelZooDir (make zoo writes them).
var ParallelZoo = []string{"resnet50", "inception_v3", "vit_b_16", "bert_base", "gpt2_small"}

// ParallelZooDir is where make zoo writes the zoo's graphs.
const ParallelZooDir = "out/zoo"

// ParallelGPUs and ParallelTopologies are the report's default GPU counts
// and topologies.
var (
	ParallelGPUs       = []int{2, 4, 8}
	ParallelTopologies = []string{"nvswitch", "pcie"}
)

// DefaultParallelEvaluations is placer's search budget per cell when none
// is named.
const DefaultParallelEvaluations = 4000

// parallelUser are the strategies users run without placer, in the
// report's order: placer's answer is measured against the best of them.
var parallelUser = []string{"ddp", "fsdp", "zero2", "gpipe", "1f1b", "pipedream"}

// ParallelOptions are the inputs of `placer report parallel`.
type ParallelOptions struct {
	// Graphs are workload names, graph files or zoo model names (a name
	// with out/zoo/NAME.json); nil = ParallelZoo's files that exist.
	Graphs     []string
	GPUs       []int    // nil = ParallelGPUs
	Topologies []string // nil = ParallelTopologies
	Hardware   string   // preset or profile file ("" = v100)
	// Evals is placer's search budget per cell in evaluations (0 =
	// DefaultParallelEvaluations, or none when CPU is set), CPU in CPU
	// time of its process (whichever is spent first); Method its search
	// ("" = the default).
	Evals  int
	CPU    time.Duration
	Method string
	Seed   uint64
	// Dir keeps one file per finished cell; a rerun with the same
	// settings skips it. NoRun runs nothing: the table of what Dir keeps.
	Dir   string
	NoRun bool
	// Work, if set, spreads the cells over processes sharing Dir
	// (--list-cells, --cell, --worker; grid.Work).
	Work *grid.Work
	// Progress receives a line per cell.
	Progress io.Writer
}

// parallelCellFile is a cell as kept in Dir: the settings it ran with and
// its rows.
type parallelCellFile struct {
	Seed     uint64                  `json:"seed"`
	Evals    int                     `json:"evaluations"`
	CPU      float64                 `json:"cpu_seconds,omitempty"`
	Method   string                  `json:"method"`
	Hardware string                  `json:"hardware"`
	Cell     placements.ParallelCell `json:"cell"`
}

// ErrUnknownGraph is Check's error for a graph that is neither a
// workload, a file nor a zoo model; ErrNoDir for NoRun without a Dir.
var (
	ErrUnknownGraph = errors.New("unknown graph")
	ErrNoDir        = errors.New("nothing to report: NoRun reads the cells kept in Dir, and Dir is empty")
)

// Check resolves o's defaults and checks every input before anything
// runs: the error names the first bad one.
func (o *ParallelOptions) Check() error {
	if o.Evals < 0 {
		return fmt.Errorf("evaluations %d: want at least 1", o.Evals)
	}
	if o.CPU < 0 {
		return fmt.Errorf("CPU time %v: want a positive duration", o.CPU)
	}
	if o.CPU == 0 {
		o.Evals = cmp.Or(o.Evals, DefaultParallelEvaluations)
	}
	o.Method = cmp.Or(o.Method, anchored.DefaultMethod)
	if err := methods.CheckSearch(o.Method); err != nil {
		return err
	}
	o.Hardware = cmp.Or(o.Hardware, roofline.DefaultHardware)
	if len(o.GPUs) == 0 {
		o.GPUs = ParallelGPUs
	}
	if len(o.Topologies) == 0 {
		o.Topologies = ParallelTopologies
	}
	for _, n := range o.GPUs {
		if n < 2 || n > inputs.MaxGPUs {
			return fmt.Errorf("%d GPUs: want 2 to %d", n, inputs.MaxGPUs)
		}
	}
	for _, t := range o.Topologies {
		if _, err := inputs.Cluster(inputs.ClusterSpec{GPUs: o.GPUs[0], Hardware: o.Hardware, Topology: t}, inputs.Meta{}); err != nil {
			return err
		}
	}
	if o.NoRun && o.Dir == "" {
		return ErrNoDir
	}
	if len(o.Graphs) == 0 {
		for _, m := range ParallelZoo {
			if p := filepath.Join(ParallelZooDir, m+".json"); fileExists(p) {
				o.Graphs = append(o.Graphs, p)
			}
		}
		if len(o.Graphs) == 0 {
			return fmt.Errorf("parallel: no zoo graphs in %s (run make zoo, or name graphs with --graphs)", ParallelZooDir)
		}
	}
	for i, g := range o.Graphs {
		if _, ok := workloads.Lookup(g); ok || fileExists(g) {
			continue
		}
		if p := filepath.Join(ParallelZooDir, g+".json"); fileExists(p) {
			o.Graphs[i] = p
			continue
		}
		return fmt.Errorf("%w %q: not a workload (placer workloads list), a graph file nor %s/%s.json (make zoo)", ErrUnknownGraph, g, ParallelZooDir, g)
	}
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// graphLabel names a graph in the report: a workload's name, a file's
// base name without .json.
func graphLabel(g string) string {
	if _, ok := workloads.Lookup(g); ok {
		return g
	}
	return strings.TrimSuffix(filepath.Base(g), ".json")
}

// Parallel runs, for every graph, GPU count and topology (one cell each,
// on jobs/grid), placer's search (Search with o.Method and o.Evals,
// which runs the quick baselines and the strategies users run) and
// returns the strategies side by side: one GPU, the best quick
// single-replica placement, ddp, fsdp, gpipe, 1f1b, pipedream and
// placer's answer, at the same global batch. When ctx is cancelled the
// cells finished so far are returned with ctx's error.
func Parallel(ctx context.Context, o ParallelOptions) (placements.Parallel, error) {
	if err := o.Check(); err != nil {
		return placements.Parallel{}, err
	}
	rep := placements.Parallel{Hardware: o.Hardware, Method: o.Method, Evals: o.Evals, CPU: o.CPU.Seconds(), Seed: o.Seed, GPUs: o.GPUs, Topologies: o.Topologies}
	g := grid.Grid{Name: "parallel", Dir: o.Dir, NoRun: o.NoRun, Progress: o.Progress, Work: o.Work}
	var cells []grid.Cell[parallelCellFile]
	for _, n := range o.GPUs {
		for _, t := range o.Topologies {
			for _, gr := range o.Graphs {
				cells = append(cells, parallelCell(o, gr, n, t))
			}
		}
	}
	return grid.Loop(ctx, g, func() (placements.Parallel, error) {
		rep := rep
		res, err := grid.All(ctx, g, cells)
		for _, f := range res.Cells {
			rep.Cells = append(rep.Cells, f.Cell)
		}
		rep.Missing = res.Missing
		rep.Summarize()
		return rep, err
	})
}

// parallelCell is one graph on n GPUs over topology t.
func parallelCell(o ParallelOptions, gr string, n int, t string) grid.Cell[parallelCellFile] {
	label := graphLabel(gr)
	budget := fmt.Sprintf("%d evaluations", o.Evals)
	if o.CPU > 0 {
		budget = grid.BudgetName(o.CPU, true)
		if o.Evals > 0 {
			budget += fmt.Sprintf(" or %d evaluations", o.Evals)
		}
	}
	return grid.Cell[parallelCellFile]{
		Key:   grid.Key{Graph: fmt.Sprintf("%s@%d-%s", label, n, t), Method: o.Method, Budget: budget, Seed: o.Seed},
		File:  fmt.Sprintf("%s@%d-%s.json", grid.FileSafe(label), n, t),
		Label: fmt.Sprintf("%-14s %2d GPUs %-9s", label, n, t),
		Match: func(f *parallelCellFile) error {
			c := &f.Cell
			if f.Seed != o.Seed || f.Evals != o.Evals || f.CPU != o.CPU.Seconds() || f.Method != o.Method || f.Hardware != o.Hardware || c.Graph != label || c.GPUs != n || c.Topology != t {
				return grid.ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (parallelCellFile, error) {
			f := parallelCellFile{Seed: o.Seed, Evals: o.Evals, CPU: o.CPU.Seconds(), Method: o.Method, Hardware: o.Hardware}
			c, err := parallelRun(ctx, o, gr, label, n, t)
			f.Cell = c
			return f, err
		},
		Line: func(f *parallelCellFile, kept bool) string {
			c := &f.Cell
			s := fmt.Sprintf("placer %s (%d evaluations, %.0f CPU s)", report.Seconds(c.Placer().StepTime), c.Evaluations, c.CPU)
			if c.Ratio > 0 {
				s += fmt.Sprintf(", %.3f of the best of %s (%s)", c.Ratio, strings.Join(parallelUser, ", "), c.BestUser)
			}
			if kept {
				s += " (kept)"
			}
			return s
		},
		Interrupted: "interrupted (not kept)",
	}
}

// parallelRun is one cell: placer's search, its table's rows as the
// report's.
func parallelRun(ctx context.Context, o ParallelOptions, gr, label string, n int, t string) (placements.ParallelCell, error) {
	c := placements.ParallelCell{Graph: label, GPUs: n, Topology: t}
	timer := grid.StartTimer()
	rep, err := jobs.SearchGraph(ctx, jobs.GraphSearchOptions{
		Graph: graphSpec(gr), Cluster: inputs.ClusterSpec{GPUs: n, Hardware: o.Hardware, Topology: t},
		Method: o.Method, Evals: o.Evals, CPU: o.CPU, Seed: o.Seed,
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
			return c, err
		}
		return c, fmt.Errorf("parallel: %s: %w", label, err)
	}
	b := rep.Comparison
	c.Ops, c.Batch, c.Capacity = b.Ops, rep.Batch(), b.Capacity
	rowOf := func(name string) *placements.BaselinesRow {
		for i := range b.Rows {
			if b.Rows[i].Method == name {
				return &b.Rows[i]
			}
		}
		return nil
	}
	add := func(strategy, name string) {
		r := placements.ParallelRow{Strategy: strategy, From: name}
		row := rowOf(name)
		res := rep.RowResult(name)
		switch {
		case row == nil && rep.Batch() == 0:
			r.Note = jobs.NoBatch
		case row == nil:
			r.Note = "not in placer search's table"
		case row.Error != "" || res == nil:
			r.Note = cmp.Or(row.Error, "no decision")
		default:
			fillParallelRow(&r, row, res.Decision, n)
		}
		c.Rows = append(c.Rows, r)
	}
	add("single", "single")
	// The best single-replica placement of the quick baselines (their
	// compositions, fewer-GPU and fusion variants included): the search's
	// anchor.
	var quick []anchored.Row
	for _, row := range b.Rows {
		if r := rep.RowResult(row.Method); r != nil && r.Decision.Strategy.IsZero() && !strings.HasPrefix(row.Method, o.Method+" ") && row.Method != o.Method {
			quick = append(quick, anchored.Row{Name: row.Method, Result: r})
		}
	}
	if best, ok := anchored.Best(optimize.StepTime, quick, false); ok {
		add("best quick", best.Name)
	} else {
		c.Rows = append(c.Rows, placements.ParallelRow{Strategy: "best quick", Note: "no quick baseline fits"})
	}
	for _, s := range parallelUser {
		add(s, s)
	}
	// Placer's answer: the search's result (a row's decision when the
	// search did not beat it: Source).
	r := rep.Result
	p := placements.ParallelRow{Strategy: "placer", From: cmp.Or(r.Source, r.Method), StepTime: r.StepTime, OOM: r.OOM, Placer: true}
	for _, pk := range r.PeakMemory {
		p.PeakMemory = max(p.PeakMemory, pk)
	}
	p.Fits = r.StepTime > 0 && !r.OOM
	d := r.Decision.Decision()
	p.Chose, p.Replicas, p.GPUsPerReplica = d.Strategy.String(), d.Strategy.R(), usedDevices(d)
	c.Rows = append(c.Rows, p)
	c.SetRatio()
	// The search's evaluations: its own and its joint search's (rows
	// "METHOD STRATEGY").
	c.Evaluations, c.Wall, c.CPU = r.Evaluations, timer.Wall(), timer.CPU()
	for _, row := range b.Rows {
		if strings.HasPrefix(row.Method, o.Method+" ") {
			c.Evaluations += row.Evaluations
		}
	}
	return c, nil
}

// fillParallelRow copies a table row and its decision into r.
func fillParallelRow(r *placements.ParallelRow, row *placements.BaselinesRow, d decision.Decision, gpus int) {
	r.StepTime, r.PeakMemory, r.OOM = row.StepTime, row.PeakMemory, row.OOM
	r.Fits = row.StepTime > 0 && !row.OOM && row.ColocationViolations == 0
	r.Chose, r.Replicas, r.GPUsPerReplica = d.Strategy.String(), d.Strategy.R(), usedDevices(d)
}

// usedDevices is the number of distinct GPUs one replica's placement
// uses.
func usedDevices(d decision.Decision) int {
	seen := map[int]bool{}
	for _, dev := range d.Device {
		seen[dev] = true
	}
	return len(seen)
}
