package reports

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads"
)

// EqualTimeGraphs are the 14 graphs of GO's table 2, the report's default.
var EqualTimeGraphs = []string{"rnnlm2", "rnnlm4", "rnnlm8", "gnmt2", "gnmt4", "gnmt8", "trxl2", "trxl4", "trxl8",
	"inception_b32", "inception_b64", "amoebanet", "wavenet2x18", "wavenet4x36"}

// EqualTimeBudgets are the report's default wall-time budgets.
var EqualTimeBudgets = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute}

// EqualTimeMethods are the methods the report compares by default, issue
// 17's set: the dynamic program, local search and simulated annealing
// anchored on the reference, the genetic algorithm, and the learned
// optimizer (go-scored, over an untrained network) with its ablation
// (learning off), its control (no network features) and its twin over the
// pre-trained network. The quick baselines are the reference column.
func EqualTimeMethods() []string {
	return grid.Registered("dp", "local-search-anchored", "sa-anchored", "brkga", "go-scored", "go-scored-no-learning", "go-scored-no-network", "go-scored-pretrained-network")
}

// EqualTimeOptions are the inputs of `placer report equal-time`.
type EqualTimeOptions struct {
	// Graphs are workload names or graph files (nil = EqualTimeGraphs);
	// a workload runs on its table-2 GPU count unless Cluster.GPUs is set;
	// NAME@N runs NAME on N GPUs.
	Graphs  []string
	Methods []string        // nil = EqualTimeMethods()
	Budgets []time.Duration // nil = EqualTimeBudgets
	// Lead is the method the claims are about (ahead of each other
	// method, its geometric-mean margin); "" = go-scored when it is in
	// Methods, else go.
	Lead string
	// NoRun runs no cell and no reference: the report is what Dir keeps
	// (which must be set), cells not kept there are counted as missing.
	// It is the summary of a measurement whose cells were run by several
	// processes or machines, their Dirs merged into one.
	NoRun bool
	// Cascade makes every row of a graph that the report also runs on fewer
	// GPUs (listed before it, e.g. gnmt4@2,gnmt4) start each method from
	// that method's result there, at the same budget: the fewer-GPU decision
	// is valid on more GPUs, is the anchored methods' anchor when better
	// than the row's reference, and is the cell's result when the method
	// finds nothing better. So no method is worse with more GPUs than with
	// fewer (docs/search.md). The fewer-GPU run's budget is not counted in
	// the row's. Cells keep their decision (a .decision.json beside the
	// cell) and are kept apart from cells without it.
	Cascade bool
	// Head is go-scored's pre-trained move head file, for
	// go-scored-pretrained and go-scored-zero-shot ("" = the embedded
	// default head). Their kept cells name it.
	Head string
	// CPU makes the budgets CPU time of this process (all threads;
	// optimize.Budget.CPU) instead of wall time: on a machine shared with
	// other work, each method then gets the same computing, whatever the
	// load. Cells are kept apart from wall-time cells.
	CPU     bool
	Cluster inputs.ClusterSpec
	Seed    uint64
	// Seeds, when it holds two or more, runs the whole report once per
	// seed (Seed is then unused), each kept in Dir/seed-N, and returns
	// them combined (report.CombineSeeds): every cell the geometric mean
	// of its seeds, and the claims counted per graph and per run.
	Seeds []uint64
	Sync  bool
	// Objective is what every method minimises and the ratios compare
	// (zero = step time); cells of another objective are kept apart.
	Objective optimize.Objective
	// Model is the pre-trained model of the methods that place with one
	// (methods.Entry.Pretrained); "" = the embedded default model.
	Model string
	// Dir keeps one file per finished cell (and per graph's reference); a
	// rerun with the same Dir and settings skips them ("" = keep nothing).
	Dir string
	// Progress receives a line per cell.
	Progress io.Writer
	// Work, if set, spreads the cells over processes sharing Dir
	// (--list-cells, --cell, --worker; grid.Work). Not with Cascade,
	// whose cells depend on other rows' results.
	Work *grid.Work
}

// equalTimeCellFile is a cell as kept in Dir.
type equalTimeCellFile struct {
	Seed uint64 `json:"seed"`
	// Model is the sha256 of the pre-trained model a cell of a method
	// that takes one ran with ("" otherwise): a rerun with another model
	// runs the cell again.
	Model string                   `json:"model,omitempty"`
	Cell  placements.EqualTimeCell `json:"cell"`
	// decision is the cell's final decision, with the cascade (kept
	// beside the cell's file, as CELL.decision.json).
	decision decision.Decision
}

// EqualTime runs every method on every graph for each wall-time budget,
// each anchored (where it takes an anchor) on the graph's best quick
// baseline, and returns the table. When ctx is cancelled the cells
// finished so far are returned (and kept in Dir) with ctx's error.
func EqualTime(ctx context.Context, o EqualTimeOptions) (placements.EqualTime, error) {
	g := grid.Grid{Name: "equal-time", Dir: o.Dir, NoRun: o.NoRun, Progress: o.Progress, Work: o.Work}
	if o.Work != nil && o.Cascade {
		return placements.EqualTime{}, errors.New("equal-time: --cascade makes a row's cells depend on the rows before it: it cannot be spread over cells")
	}
	reps, err := grid.Loop(ctx, g, func() ([]placements.EqualTime, error) {
		return grid.Seeds(g, o.Seed, o.Seeds, func(g grid.Grid, seed uint64) (placements.EqualTime, error) {
			so := o
			so.Seed = seed
			return equalTimeSeed(ctx, g, so)
		})
	})
	return placements.CombineSeeds(reps), err
}

// equalTimeSeed is EqualTime for one seed, o.Seed, its cells in g.
func equalTimeSeed(ctx context.Context, g grid.Grid, o EqualTimeOptions) (placements.EqualTime, error) {
	a, err := grid.Axes{Graphs: o.Graphs, Methods: o.Methods, Budgets: o.Budgets}.Or("equal-time", grid.Axes{Graphs: EqualTimeGraphs, Methods: EqualTimeMethods(), Budgets: EqualTimeBudgets})
	if err != nil {
		return placements.EqualTime{}, err
	}
	if err := g.Check(); err != nil {
		return placements.EqualTime{}, err
	}
	lead := o.Lead
	if lead == "" {
		lead = "go"
		if slices.Contains(a.Methods, "go-scored") {
			lead = "go-scored"
		}
	} else if !slices.Contains(a.Methods, lead) {
		return placements.EqualTime{}, fail.Usagef("equal-time: --lead %q is not one of the methods (%s)", lead, strings.Join(a.Methods, ", "))
	}
	rep := placements.EqualTime{Hardware: cmp.Or(o.Cluster.Hardware, roofline.DefaultHardware), Seed: o.Seed, Methods: a.Methods, Lead: lead, CPU: o.CPU, Objective: o.Objective.String()}
	var model modelRef
	if o.Model != "" {
		if model, err = loadModel(o.Model); err != nil {
			return rep, err
		}
		rep.Model = fmt.Sprintf("%s (sha256 %s)", o.Model, model.sha[:12])
	}
	if o.Head != "" {
		data, err := bounded.ReadFile(o.Head, bounded.Model, "a move head file")
		if err != nil {
			return rep, fmt.Errorf("equal-time: head: %w", err)
		}
		if model.head, err = gdp.DecodeMoveHead(data); err != nil {
			return rep, fmt.Errorf("equal-time: head %s: %w", o.Head, err)
		}
		model.headSHA = sha256Hex(data)
		if rep.Model != "" {
			rep.Model += "; "
		}
		rep.Model += fmt.Sprintf("head %s (sha256 %s)", o.Head, model.headSHA[:12])
	} else if data, err := defaultmodel.Head(); err == nil {
		// The embedded head: named in the kept cells too, so that a
		// rebuilt one runs them again.
		model.headSHA = sha256Hex(data)
	}
	rep.Budgets = a.Seconds()
	cas := cascade{}
	rep.Graphs, err = grid.Rows(a.Graphs, func(name string) (placements.EqualTimeGraph, error) {
		return equalTimeGraph(ctx, g, o, name, a, model, cas)
	})
	rep.Summarize()
	return rep, err
}

// cascade holds, with EqualTimeOptions.Cascade, each row's final
// decisions: graph name -> GPUs -> method and budget -> decision.
type cascade map[string]map[int]map[cascadeKey]decision.Decision

type cascadeKey struct {
	method string
	budget float64 // seconds
}

// from returns the row on the most GPUs fewer than devices of graph that
// ran before (its GPU count, 0 = none).
func (c cascade) from(graph string, devices int) int {
	best := 0
	for d := range c[graph] {
		if d < devices && d > best {
			best = d
		}
	}
	return best
}

// keep records a cell's decision.
func (c cascade) keep(graph string, devices int, k cascadeKey, d decision.Decision) {
	if c[graph] == nil {
		c[graph] = map[int]map[cascadeKey]decision.Decision{}
	}
	if c[graph][devices] == nil {
		c[graph][devices] = map[cascadeKey]decision.Decision{}
	}
	c[graph][devices][k] = d
}

// equalTimeGraph runs one graph's reference and cells, kept in g's
// folder of the graph.
func equalTimeGraph(ctx context.Context, g grid.Grid, o EqualTimeOptions, name string, a grid.Axes, model modelRef, cas cascade) (placements.EqualTimeGraph, error) {
	row := placements.EqualTimeGraph{Graph: name}
	pp, err := table2Problem(name, o.Cluster, o.Sync)
	if err != nil {
		row.Error = err.Error()
		return row, fmt.Errorf("equal-time: %s: %w", name, err)
	}
	defer pp.Close()
	p := pp.Problem
	p.Objective = o.Objective
	row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
	g = g.In(grid.RowDir(objectiveDir(row.Graph, o.Objective), row.Devices))
	var ref *optimize.Result
	fewer := 0
	if o.Cascade {
		if fewer = cas.from(row.Graph, row.Devices); fewer > 0 {
			row.CascadeFrom = fmt.Sprintf("%s@%d", row.Graph, fewer)
		}
	}
	res, err := grid.Row(ctx, g, func(g grid.Grid) (bool, error) {
		var err error
		ref, err = graphReference(ctx, g, pp, &row, o.Seed)
		return ref != nil, err
	}, func() []grid.Cell[equalTimeCellFile] {
		return grid.Cells(a, func(m string, b time.Duration) grid.Cell[equalTimeCellFile] {
			return equalTimeCell(g, o, p, &row, ref, m, b, model, cas[row.Graph][fewer][cascadeKey{m, b.Seconds()}])
		})
	})
	if ref == nil && err == nil {
		row.Missing, row.Note, row.CascadeFrom = len(a.Methods)*len(a.Budgets), "reference not kept", ""
		return row, nil
	}
	row.Missing += res.Missing
	for _, f := range res.Cells {
		row.Cells = append(row.Cells, f.Cell)
		if o.Cascade && f.decision.Device != nil {
			cas.keep(row.Graph, row.Devices, cascadeKey{f.Cell.Method, f.Cell.Budget}, f.decision)
		}
	}
	return row, err
}

func cellLine(c placements.EqualTimeCell) string {
	switch {
	case c.Error != "":
		return "failed: " + c.Error
	case c.Ratio <= 0:
		return "no valid decision"
	}
	return fmt.Sprintf("%.3f of the reference (step %s), %d evaluations, %.0f CPU s", c.Ratio, report.Seconds(c.StepTime), c.Evaluations, c.CPU)
}

// objectiveDir is the name of a graph's folder of kept cells: the graph's
// for step time, with the objective appended for another (their cells
// differ).
func objectiveDir(graph string, o optimize.Objective) string {
	if o == optimize.StepTime {
		return graph
	}
	return graph + "-" + o.String()
}

// table2Problem opens graph name (a workload or a graph file) for the
// equal-budget reports: a workload on its GO table-2 GPU count unless
// cs.GPUs is set, every task, TensorFlow's defaults as its base. A name
// NAME@N is graph NAME on N GPUs whatever cs.GPUs says (gnmt4@2: gnmt4 on
// 2 GPUs, the pair a "never worse with more GPUs" check compares).
func table2Problem(name string, cs inputs.ClusterSpec, sync bool) (*jobs.Setup, error) {
	if at := strings.LastIndex(name, "@"); at > 0 {
		if n, err := strconv.Atoi(name[at+1:]); err == nil {
			if n < 1 || n > 8 {
				return nil, fmt.Errorf("%q: the GPU count after @ must be 1 to 8", name)
			}
			name, cs.GPUs = name[:at], n
		}
	}
	spec := graphSpec(name)
	if cs.GPUs == 0 && spec.Workload != "" {
		if w, ok := workloads.Lookup(spec.Workload); ok {
			cs.GPUs = w.Devices
		}
	}
	pp, err := jobs.NewSetup(spec, cs, optimize.AllTasks, sync, nil)
	if err != nil {
		return nil, err
	}
	anchored.TFBase(pp.Problem)
	return pp, nil
}

// referenceFile is a graph's reference as kept in its folder
// (reference.json), by equal-time and learned alike.
type referenceFile struct {
	Decision json.RawMessage           `json:"decision"`
	Ref      placements.EqualTimeGraph `json:"reference"`
	Seed     uint64                    `json:"seed"`
}

// graphReference runs the quick baselines (with the composite and fewer-GPU
// rows) once per graph, or reads them from g, and fills row's reference;
// nil (and no error) with NoRun when g does not keep them.
func graphReference(ctx context.Context, g grid.Grid, pp *jobs.Setup, row *placements.EqualTimeGraph, seed uint64) (*optimize.Result, error) {
	var kept, ran optimize.Result
	f, out, err := grid.Do(ctx, g, grid.Cell[referenceFile]{
		File: "reference.json",
		Match: func(f *referenceFile) error {
			if f.Seed != seed || json.Unmarshal(f.Decision, &kept.Decision) != nil || kept.Decision.Validate(pp.Graph, pp.Devices()) != nil {
				return grid.ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (referenceFile, error) {
			start := time.Now()
			name, ref, err := pp.QuickReference(ctx, seed)
			if err != nil {
				return referenceFile{}, err
			}
			row.Reference, row.RefTime = name, time.Since(start).Seconds()
			if ref == nil {
				row.Note = "no quick baseline is valid: ratios are to the base decision"
				d := pp.Complete(pp.Base)
				e, err := pp.Evaluator.Evaluate(context.WithoutCancel(ctx), d)
				if err != nil {
					return referenceFile{}, err
				}
				ref = &optimize.Result{Decision: d, Eval: e}
			}
			row.RefStep, row.RefObjective = ref.Eval.StepTime, pp.Objective.Of(&ref.Eval)
			ran = *ref
			dec, _ := json.Marshal(ref.Decision)
			return referenceFile{Seed: seed, Ref: *row, Decision: dec}, nil
		},
	})
	switch {
	case err != nil:
		return nil, err
	case out == grid.Missing:
		return nil, nil
	case out == grid.Ran:
		return &ran, nil
	}
	if kept.Eval, err = pp.Evaluator.Evaluate(context.WithoutCancel(ctx), kept.Decision); err != nil {
		return nil, err
	}
	row.Reference, row.RefStep, row.RefTime = f.Ref.Reference, f.Ref.RefStep, f.Ref.RefTime
	row.RefObjective = pp.Objective.Of(&kept.Eval)
	return &kept, nil
}

// equalTimeCell is method m's cell at budget b, anchored on ref (where
// it takes an anchor) or on from, the method's decision on fewer GPUs
// (the cascade; none when from.Device is nil) when better. A method that
// fails gives a cell with its error.
func equalTimeCell(g grid.Grid, o EqualTimeOptions, p *optimize.Problem, row *placements.EqualTimeGraph, ref *optimize.Result, m string, b time.Duration, model modelRef, from decision.Decision) grid.Cell[equalTimeCellFile] {
	mo := methods.Options{Reference: ref}
	modelSHA := ""
	if e, _ := methods.Lookup(m); e.Pretrained {
		mo.Trained, modelSHA = model.pol, model.sha
		if modelSHA == "" {
			modelSHA = "default"
		}
		if methods.UsesHead(m) && model.headSHA != "" {
			mo.Head = model.head // nil = the embedded head
			modelSHA += "; head " + model.headSHA
		}
	}
	name, fromName := m+"-"+grid.BudgetName(b, o.CPU), ""
	if from.Device != nil {
		fromName = row.CascadeFrom
		name += "-from-" + grid.FileSafe(fromName)
	}
	file, decisionFile := name+".json", name+".decision.json"
	key := grid.Key{Graph: fmt.Sprintf("%s@%d", row.Graph, p.Devices()), Method: m, Budget: grid.BudgetName(b, o.CPU), Seed: o.Seed}
	if o.Objective != optimize.StepTime {
		key.Objective = o.Objective.String()
	}
	return grid.Cell[equalTimeCellFile]{
		Key:   key,
		File:  file,
		Label: fmt.Sprintf("%-14s %-22s %8s", row.Graph, m, report.Seconds(b.Seconds())),
		Match: func(f *equalTimeCellFile) error {
			if f.Seed != o.Seed || f.Cell.Method != m || f.Model != modelSHA {
				return grid.ErrStale
			}
			if !o.Cascade {
				return nil
			}
			if data, err := bounded.ReadFile(g.Path(decisionFile), bounded.Decision, "a decision file"); err == nil {
				_ = json.Unmarshal(data, &f.decision)
			}
			if f.decision.Validate(p.Graph, p.Devices()) != nil {
				f.decision = decision.Decision{}
			}
			// A cell kept without its decision (a run without the
			// cascade) runs again when the cascade needs the decision.
			if f.decision.Device == nil && !o.NoRun && f.Cell.Error == "" {
				return grid.ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (equalTimeCellFile, error) {
			f := equalTimeCellFile{Seed: o.Seed, Model: modelSHA, Cell: placements.EqualTimeCell{Method: m, Budget: b.Seconds(), From: fromName}}
			c := &f.Cell
			var start *optimize.Result // from, evaluated here
			if from.Device != nil {
				var err error
				if start, err = evaluateOn(ctx, p, from); err != nil {
					return f, fmt.Errorf("equal-time: %s: %s's decision on %s: %w", row.Graph, m, fromName, err)
				}
				if p.Objective.Better(&start.Eval, &ref.Eval) {
					mo.Reference = start
				}
			}
			run, err := grid.RunMethod(ctx, p, m, mo, optimize.Settings{Budget: grid.Budget(b, o.CPU), Seed: o.Seed}, nil)
			c.Wall, c.CPU, c.Error = run.Wall, run.CPU, run.Err
			if err != nil || run.Result == nil {
				return f, err
			}
			res := run.Result
			if start != nil && p.Objective.Better(&start.Eval, &res.Eval) {
				// The fewer-GPU decision is a candidate of every method.
				res.Decision, res.Eval = start.Decision, start.Eval
				c.FromKept = true
			}
			f.decision = res.Decision
			c.StepTime, c.Valid = res.Eval.StepTime, p.Objective.Valid(&res.Eval)
			c.Objective = p.Objective.Of(&res.Eval)
			c.Evaluations, c.Steps, c.Status = res.Stats.Evaluations, res.Stats.Steps, res.Stats.Status.String()
			if c.Valid && row.RefObjective > 0 {
				c.Ratio = c.Objective / row.RefObjective
			}
			if o.Cascade && f.decision.Device != nil {
				err = g.WriteFile(decisionFile, func(w io.Writer) error { return json.NewEncoder(w).Encode(f.decision) })
			}
			return f, err
		},
		Line: func(f *equalTimeCellFile, _ bool) string { return cellLine(f.Cell) },
	}
}

// evaluateOn evaluates d (a decision for the same graph on fewer GPUs) on
// p.
func evaluateOn(ctx context.Context, p *optimize.Problem, d decision.Decision) (*optimize.Result, error) {
	if err := d.Validate(p.Graph, p.Devices()); err != nil {
		return nil, err
	}
	e, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), d)
	if err != nil {
		return nil, err
	}
	return &optimize.Result{Decision: d, Eval: e}, nil
}

// modelRef is a pre-trained model and the sha256 of its file.
type modelRef struct {
	pol *policy.Policy
	sha string
	// head is go-scored's pre-trained move head (--head; nil = the
	// embedded one) and headSHA its file's sha256 ("" = none at all).
	head    *gdp.MoveHead
	headSHA string
}

// loadModel reads a policy file.
func loadModel(path string) (modelRef, error) {
	data, err := bounded.ReadFile(path, bounded.Model, "a policy file")
	if err != nil {
		return modelRef{}, fmt.Errorf("model: %w", err)
	}
	pol, err := policy.Decode(data, path)
	if err != nil {
		return modelRef{}, err
	}
	return modelRef{pol: pol, sha: sha256Hex(data)}, nil
}

// sha256Hex is data's sha256 in hex: what kept cells name a file by.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
