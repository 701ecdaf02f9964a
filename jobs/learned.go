package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// LearnedGraphs are the graphs of issue 21's comparison of the learned
// methods, the report's default: the 2017 papers' RNNLM and GNMT, and GO
// table 2's Transformer-XL, Inception-V3 and AmoebaNet.
var LearnedGraphs = []string{"rnnlm2", "rnnlm4", "gnmt2", "gnmt4", "trxl2", "inception_b32", "amoebanet"}

// LearnedBudgets are the report's default wall-time budgets.
var LearnedBudgets = []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute}

// LearnedMethods are the methods the report compares by default: the
// 2017 RL placer, HDP and GO.
func LearnedMethods() []string {
	var ms []string
	for _, m := range []string{"rl17", "hdp", "go"} {
		if _, ok := methods.Lookup(m); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

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
}

// errNotKept is learnedCell's answer with NoRun for a cell Dir does not
// keep.
var errNotKept = errors.New("cell not kept")

// learnedCellKind marks the cell files of this report, so that a cell of
// equal-time in the same Dir is never read as one.
const learnedCellKind = "learned"

// learnedCellFile is a cell as kept in Dir.
type learnedCellFile struct {
	Report string             `json:"report"`
	Seed   uint64             `json:"seed"`
	Cell   report.LearnedCell `json:"cell"`
}

// Learned runs every method on every graph for each budget and returns
// the report. Every method gets methods.Options.Reference = the graph's
// best quick baseline, as in equal-time: go is anchored on it, rl17 and
// hdp ignore it and start from nothing, as their papers do. When ctx is
// cancelled the cells finished so far are returned (and kept in Dir)
// with ctx's error.
func Learned(ctx context.Context, o LearnedOptions) (report.Learned, error) {
	graphs, ms, budgets := o.Graphs, o.Methods, o.Budgets
	if len(graphs) == 0 {
		graphs = LearnedGraphs
	}
	if len(ms) == 0 {
		ms = LearnedMethods()
	}
	if len(budgets) == 0 {
		budgets = LearnedBudgets
	}
	if err := methods.Check(ms); err != nil {
		return report.Learned{}, err
	}
	if o.NoRun && o.Dir == "" {
		return report.Learned{}, errors.New("learned: no-run reads the kept cells: it needs a dir")
	}
	for _, b := range budgets {
		if b <= 0 {
			return report.Learned{}, fmt.Errorf("learned: budget %v: must be positive", b)
		}
	}
	rep := report.Learned{Hardware: o.Cluster.Hardware, Seed: o.Seed, Methods: ms, CPU: o.CPU}
	for _, b := range budgets {
		rep.Budgets = append(rep.Budgets, b.Seconds())
	}
	for _, name := range graphs {
		g, err := learnedGraph(ctx, o, name, ms, budgets)
		rep.Graphs = append(rep.Graphs, g)
		if err != nil {
			rep.Summarize()
			return rep, err
		}
	}
	rep.Summarize()
	return rep, nil
}

// learnedGraph runs one graph's expert, reference and cells.
func learnedGraph(ctx context.Context, o LearnedOptions, name string, ms []string, budgets []time.Duration) (report.LearnedGraph, error) {
	row := report.LearnedGraph{Graph: name}
	pp, err := table2Problem(name, o.Cluster, o.Sync)
	if err != nil {
		row.Error = err.Error()
		return row, fmt.Errorf("learned: %s: %w", name, err)
	}
	defer pp.Close()
	p := pp.Problem
	row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
	dir, err := graphDir(o.Dir, row.Graph, row.Devices)
	if err != nil {
		return row, err
	}
	if err := learnedExpert(ctx, p, &row); err != nil {
		return row, err
	}
	var eq report.EqualTimeGraph
	var ref *optimize.Result
	if _, serr := os.Stat(filepath.Join(dir, "reference.json")); !o.NoRun || serr == nil {
		if ref, err = equalTimeReference(ctx, pp, &eq, dir, o.Seed); err != nil {
			return row, err
		}
	} else {
		eq.Note = "reference not kept"
	}
	row.Reference, row.RefStep, row.RefTime, row.Note = eq.Reference, eq.RefStep, eq.RefTime, eq.Note
	for _, m := range ms {
		for _, b := range budgets {
			c, err := learnedCell(ctx, p, m, b, o.CPU, ref, dir, o.Seed, o.NoRun)
			if errors.Is(err, errNotKept) {
				row.Missing++
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "learned: %-14s %-8s %8s: not kept in %s\n", row.Graph, m, report.Seconds(b.Seconds()), dir)
				}
				continue
			}
			if err != nil {
				row.Missing++
				if ctx.Err() != nil {
					return row, ctx.Err()
				}
				return row, err
			}
			row.Cells = append(row.Cells, c)
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "learned: %-14s %-8s %8s: %s\n", row.Graph, m, report.Seconds(b.Seconds()), learnedLine(c, row.ExpertStep))
			}
		}
	}
	return row, nil
}

// learnedLine is a cell's progress line.
func learnedLine(c report.LearnedCell, expert float64) string {
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
func learnedExpert(ctx context.Context, p *optimize.Problem, row *report.LearnedGraph) error {
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

// learnedCell runs method m for budget b (CPU time if cpu, else wall
// time) with ref as its Reference, recording the curve of its best step
// time, or reads the cell from dir. A method that fails gives a cell
// with its error. With noRun it only reads: errNotKept if dir does not
// keep the cell.
func learnedCell(ctx context.Context, p *optimize.Problem, m string, b time.Duration, cpu bool, ref *optimize.Result, dir string, seed uint64, noRun bool) (report.LearnedCell, error) {
	path := ""
	if dir != "" {
		kind := "s"
		if cpu {
			kind = "s-cpu"
		}
		path = filepath.Join(dir, fmt.Sprintf("learned-%s-%g%s.json", m, b.Seconds(), kind))
		var f learnedCellFile
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &f) == nil && f.Report == learnedCellKind && f.Seed == seed && f.Cell.Method == m {
			return f.Cell, nil
		}
	}
	c := report.LearnedCell{Method: m, Budget: b.Seconds()}
	if noRun {
		return c, errNotKept
	}
	opt, err := methods.New(m, methods.Options{Reference: ref})
	if err != nil {
		return c, err
	}
	budget := optimize.Budget{Time: b}
	if cpu {
		budget = optimize.Budget{CPU: b}
	}
	cpu0, start := optimize.ProcessCPU(), time.Now()
	// The curve: a point at every step where the best valid step time
	// improved (Settings.Progress runs after each step of every method,
	// on the optimizer's goroutine).
	last := 0.0
	progress := func(s optimize.Stats) {
		if s.BestStep > 0 && s.BestStep != last {
			last = s.BestStep
			c.Curve = append(c.Curve, report.LearnedPoint{Wall: s.Elapsed.Seconds(), CPU: (optimize.ProcessCPU() - cpu0).Seconds(), Evaluations: s.Evaluations, BestStep: s.BestStep})
		}
	}
	res, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: budget, Seed: seed, Progress: progress})
	c.Wall, c.CPU = time.Since(start).Seconds(), (optimize.ProcessCPU() - cpu0).Seconds()
	if ctx.Err() != nil {
		// An interrupted cell is not kept: its budget was not spent.
		return c, ctx.Err()
	}
	if err != nil {
		c.Error = strings.TrimPrefix(err.Error(), m+": ")
	} else {
		c.StepTime, c.Valid = res.Eval.StepTime, res.Eval.Valid()
		c.Evaluations, c.Steps, c.Status = res.Stats.Evaluations, res.Stats.Steps, res.Stats.Status.String()
		if c.Valid {
			// The end of the run: the final best (which may have improved
			// after the last step) at the run's full time.
			c.Curve = append(c.Curve, report.LearnedPoint{Wall: c.Wall, CPU: c.CPU, Evaluations: c.Evaluations, BestStep: c.StepTime})
		}
	}
	if path != "" {
		if err := atomicfile.Write(path, func(w io.Writer) error {
			return report.JSON(w, learnedCellFile{Report: learnedCellKind, Seed: seed, Cell: c})
		}); err != nil {
			return c, err
		}
	}
	return c, nil
}
