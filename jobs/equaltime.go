package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
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
	var ms []string
	for _, m := range []string{"dp", "local-search-anchored", "sa-anchored", "brkga", "go-scored", "go-scored-no-learning", "go-scored-no-network", "go-scored-pretrained-network"} {
		if _, ok := methods.Lookup(m); ok {
			ms = append(ms, m)
		}
	}
	return ms
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
	// Cascade makes every row of a graph that the report also runs on
	// fewer GPUs (listed before it, e.g. gnmt4@2,gnmt4) start each method
	// from that method's result there, at the same budget: the fewer-GPU
	// decision is valid on more GPUs, is the anchored methods' anchor
	// when better than the row's reference, and is the cell's result when
	// the method finds nothing better. So no method is worse with more
	// GPUs than with fewer (issue 17). The fewer-GPU run's budget is not
	// counted in the row's. Cells keep their decision (a .decision.json
	// beside the cell) and are kept apart from cells without it.
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
}

// equalTimeCellFile is a cell as kept in Dir.
type equalTimeCellFile struct {
	Seed uint64 `json:"seed"`
	// Model is the sha256 of the pre-trained model a cell of a method
	// that takes one ran with ("" otherwise): a rerun with another model
	// runs the cell again.
	Model string                 `json:"model,omitempty"`
	Cell  report.EqualTimeCell   `json:"cell"`
	Ref   *report.EqualTimeGraph `json:"reference,omitempty"`
}

// EqualTime runs every method on every graph for each wall-time budget,
// each anchored (where it takes an anchor) on the graph's best quick
// baseline, and returns the table. When ctx is cancelled the cells
// finished so far are returned (and kept in Dir) with ctx's error.
func EqualTime(ctx context.Context, o EqualTimeOptions) (report.EqualTime, error) {
	if len(o.Seeds) < 2 {
		if len(o.Seeds) == 1 {
			o.Seed = o.Seeds[0]
		}
		return equalTimeSeed(ctx, o)
	}
	seen := map[uint64]bool{}
	var reps []report.EqualTime
	for _, seed := range o.Seeds {
		if seen[seed] {
			return report.EqualTime{}, fmt.Errorf("equal-time: seed %d is listed twice", seed)
		}
		seen[seed] = true
		so := o
		so.Seed, so.Seeds = seed, nil
		if o.Dir != "" {
			so.Dir = filepath.Join(o.Dir, fmt.Sprintf("seed-%d", seed))
		}
		rep, err := equalTimeSeed(ctx, so)
		reps = append(reps, rep)
		if err != nil {
			return report.CombineSeeds(reps), err
		}
	}
	return report.CombineSeeds(reps), nil
}

// equalTimeSeed is EqualTime for one seed, o.Seed.
func equalTimeSeed(ctx context.Context, o EqualTimeOptions) (report.EqualTime, error) {
	graphs, ms, budgets := o.Graphs, o.Methods, o.Budgets
	if len(graphs) == 0 {
		graphs = EqualTimeGraphs
	}
	if len(ms) == 0 {
		ms = EqualTimeMethods()
	}
	if len(budgets) == 0 {
		budgets = EqualTimeBudgets
	}
	if err := methods.Check(ms); err != nil {
		return report.EqualTime{}, err
	}
	if o.NoRun && o.Dir == "" {
		return report.EqualTime{}, errors.New("equal-time: --no-run reads the kept cells: it needs --dir")
	}
	for _, b := range budgets {
		if b <= 0 {
			return report.EqualTime{}, fmt.Errorf("equal-time: budget %v: must be positive", b)
		}
	}
	lead := o.Lead
	if lead == "" {
		lead = "go"
		if slices.Contains(ms, "go-scored") {
			lead = "go-scored"
		}
	} else if !slices.Contains(ms, lead) {
		return report.EqualTime{}, fmt.Errorf("equal-time: lead %q is not one of the methods", lead)
	}
	rep := report.EqualTime{Hardware: o.Cluster.Hardware, Seed: o.Seed, Methods: ms, Lead: lead, CPU: o.CPU, Objective: o.Objective.String()}
	var model modelRef
	if o.Model != "" {
		var err error
		if model, err = loadModel(o.Model); err != nil {
			return rep, err
		}
		rep.Model = fmt.Sprintf("%s (sha256 %s)", o.Model, model.sha[:12])
	}
	if o.Head != "" {
		data, err := os.ReadFile(o.Head)
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
	for _, b := range budgets {
		rep.Budgets = append(rep.Budgets, b.Seconds())
	}
	cas := cascade{}
	for _, name := range graphs {
		g, err := equalTimeGraph(ctx, o, name, ms, budgets, model, cas)
		rep.Graphs = append(rep.Graphs, g)
		if err != nil {
			rep.Summarize()
			return rep, err
		}
	}
	rep.Summarize()
	return rep, nil
}

// cascade holds, with EqualTimeOptions.Cascade, each row's final
// decisions: graph name -> GPUs -> method and budget -> decision.
type cascade map[string]map[int]map[cascadeKey]decision.Decision

type cascadeKey struct {
	method string
	budget time.Duration
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

// equalTimeGraph runs one graph's reference and cells.
func equalTimeGraph(ctx context.Context, o EqualTimeOptions, name string, ms []string, budgets []time.Duration, model modelRef, cas cascade) (report.EqualTimeGraph, error) {
	row := report.EqualTimeGraph{Graph: name}
	pp, err := table2Problem(name, o.Cluster, o.Sync)
	if err != nil {
		row.Error = err.Error()
		return row, fmt.Errorf("equal-time: %s: %w", name, err)
	}
	defer pp.Close()
	p := pp.Problem
	p.Objective = o.Objective
	row.Graph, row.Ops, row.Devices = p.Graph.Name(), p.Graph.NumOps(), p.Devices()
	dir, err := graphDir(o.Dir, objectiveDir(row.Graph, o.Objective), row.Devices)
	if err != nil {
		return row, err
	}
	if _, serr := os.Stat(filepath.Join(dir, "reference.json")); o.NoRun && serr != nil {
		row.Missing = len(ms) * len(budgets)
		row.Note = "reference not kept"
		return row, nil
	}
	ref, err := equalTimeReference(ctx, pp, &row, dir, o.Seed)
	if err != nil {
		return row, err
	}
	fewer := 0
	if o.Cascade {
		if fewer = cas.from(row.Graph, row.Devices); fewer > 0 {
			row.CascadeFrom = fmt.Sprintf("%s@%d", row.Graph, fewer)
		}
	}
	for _, m := range ms {
		for _, b := range budgets {
			cr := cellRun{p: p, m: m, b: b, cpu: o.CPU, ref: ref, refValue: row.RefObjective, dir: dir, seed: o.Seed, model: model, noRun: o.NoRun, keep: o.Cascade}
			if fewer > 0 {
				if d, ok := cas[row.Graph][fewer][cascadeKey{m, b}]; ok {
					if cr.from, err = evaluateOn(ctx, p, d); err != nil {
						return row, fmt.Errorf("equal-time: %s: %s's decision on %s: %w", row.Graph, m, row.CascadeFrom, err)
					}
					cr.fromName = row.CascadeFrom
				}
			}
			c, d, err := equalTimeCell(ctx, cr)
			if errors.Is(err, errNotKept) {
				row.Missing++
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "equal-time: %-14s %-22s %8s: not kept in %s\n", row.Graph, m, report.Seconds(b.Seconds()), dir)
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
			if o.Cascade && d.Device != nil {
				cas.keep(row.Graph, row.Devices, cascadeKey{m, b}, d)
			}
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "equal-time: %-14s %-22s %8s: %s\n", row.Graph, m, report.Seconds(b.Seconds()), cellLine(c))
			}
		}
	}
	return row, nil
}

func cellLine(c report.EqualTimeCell) string {
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
func table2Problem(name string, cs inputs.ClusterSpec, sync bool) (*problem, error) {
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
	pp, _, err := newComparison(spec, cs, optimize.AllTasks, sync, nil)
	if err != nil {
		return nil, err
	}
	setBase(pp.Problem)
	return pp, nil
}

// graphDir makes and returns the folder of a graph's kept cells in root,
// DIR/<graph>@<devices> ("" when root is "": nothing is kept).
func graphDir(root, graph string, devices int) (string, error) {
	if root == "" {
		return "", nil
	}
	dir := filepath.Join(root, fileSafe(graph)+fmt.Sprintf("@%d", devices))
	return dir, os.MkdirAll(dir, 0o755)
}

// equalTimeReference runs the quick baselines (with the composite and
// fewer-GPU rows) once per graph, or reads them from dir.
func equalTimeReference(ctx context.Context, pp *problem, row *report.EqualTimeGraph, dir string, seed uint64) (*optimize.Result, error) {
	path := ""
	if dir != "" {
		path = filepath.Join(dir, "reference.json")
		var f struct {
			Seed     uint64                `json:"seed"`
			Ref      report.EqualTimeGraph `json:"reference"`
			Decision json.RawMessage       `json:"decision"`
		}
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &f) == nil && f.Seed == seed {
			var res optimize.Result
			if err := json.Unmarshal(f.Decision, &res.Decision); err == nil && res.Decision.Validate(pp.Graph, pp.Devices()) == nil {
				e, err := pp.Evaluator.Evaluate(context.WithoutCancel(ctx), res.Decision)
				if err != nil {
					return nil, err
				}
				res.Eval = e
				row.Reference, row.RefStep, row.RefTime = f.Ref.Reference, f.Ref.RefStep, f.Ref.RefTime
				row.RefObjective = pp.Objective.Of(&e)
				return &res, nil
			}
		}
	}
	start := time.Now()
	names, _, results, err := runReferences(ctx, pp, SearchReferenceMethods, &optimize.Settings{Seed: seed}, nil)
	if err != nil {
		return nil, err
	}
	name, ref := bestValid(pp.Objective, names, results)
	row.Reference, row.RefTime = name, time.Since(start).Seconds()
	if ref == nil {
		row.Note = "no quick baseline is valid: ratios are to the base decision"
		d := pp.Complete(pp.Base)
		e, err := pp.Evaluator.Evaluate(context.WithoutCancel(ctx), d)
		if err != nil {
			return nil, err
		}
		ref = &optimize.Result{Decision: d, Eval: e}
	}
	row.RefStep, row.RefObjective = ref.Eval.StepTime, pp.Objective.Of(&ref.Eval)
	if path != "" {
		dec, _ := json.Marshal(ref.Decision)
		f := map[string]any{"seed": seed, "reference": row, "decision": json.RawMessage(dec)}
		if err := atomicfile.Write(path, func(w io.Writer) error { return report.JSON(w, f) }); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// cellRun is one cell to run or read back: method m for budget b (CPU
// time if cpu, else wall time), anchored on ref (refValue is its
// objective value, the ratio's denominator), kept in dir.
type cellRun struct {
	p        *optimize.Problem
	m        string
	b        time.Duration
	cpu      bool
	ref      *optimize.Result
	refValue float64
	dir      string
	seed     uint64
	model    modelRef
	noRun    bool // a cell dir does not keep is errNotKept
	keep     bool // keep the cell's decision (cascade)
	// from is the method's decision on fewer GPUs (cascade; nil = none),
	// evaluated here, and fromName its row.
	from     *optimize.Result
	fromName string
}

// equalTimeCell runs a cell, or reads it from its dir, and returns it with
// its decision (read back only when r.keep). A method that fails gives a
// cell with its error.
func equalTimeCell(ctx context.Context, r cellRun) (report.EqualTimeCell, decision.Decision, error) {
	p, m, b := r.p, r.m, r.b
	mo := methods.Options{Reference: r.ref}
	if r.from != nil && p.Objective.Better(&r.from.Eval, &r.ref.Eval) {
		mo.Reference = r.from
	}
	modelSHA := ""
	if e, _ := methods.Lookup(m); e.Pretrained {
		mo.Trained, modelSHA = r.model.pol, r.model.sha
		if modelSHA == "" {
			modelSHA = "default"
		}
		if methods.UsesHead(m) && r.model.headSHA != "" {
			mo.Head = r.model.head // nil = the embedded head
			modelSHA += "; head " + r.model.headSHA
		}
	}
	path := ""
	if r.dir != "" {
		kind := "s"
		if r.cpu {
			kind = "s-cpu"
		}
		if r.from != nil {
			kind += "-from-" + fileSafe(r.fromName)
		}
		path = filepath.Join(r.dir, fmt.Sprintf("%s-%g%s.json", m, b.Seconds(), kind))
		var f equalTimeCellFile
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &f) == nil && f.Seed == r.seed && f.Cell.Method == m && f.Model == modelSHA {
			var d decision.Decision
			if r.keep {
				if data, err := os.ReadFile(decisionPath(path)); err == nil {
					_ = json.Unmarshal(data, &d)
				}
				if d.Validate(p.Graph, p.Devices()) != nil {
					d = decision.Decision{}
				}
			}
			// A cell kept without its decision (a run without the
			// cascade) runs again when the cascade needs the decision.
			if !r.keep || d.Device != nil || r.noRun || f.Cell.Error != "" {
				return f.Cell, d, nil
			}
		}
	}
	if r.noRun {
		return report.EqualTimeCell{}, decision.Decision{}, errNotKept
	}
	c := report.EqualTimeCell{Method: m, Budget: b.Seconds(), From: r.fromName}
	opt, err := methods.New(m, mo)
	if err != nil {
		return c, decision.Decision{}, err
	}
	cpu0, start := optimize.ProcessCPU().Seconds(), time.Now()
	budget := optimize.Budget{Time: b}
	if r.cpu {
		budget = optimize.Budget{CPU: b}
	}
	res, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: budget, Seed: r.seed})
	c.Wall, c.CPU = time.Since(start).Seconds(), optimize.ProcessCPU().Seconds()-cpu0
	if ctx.Err() != nil {
		// An interrupted cell is not kept: its budget was not spent.
		return c, decision.Decision{}, ctx.Err()
	}
	var d decision.Decision
	if err != nil {
		c.Error = strings.TrimPrefix(err.Error(), m+": ")
	} else {
		if r.from != nil && p.Objective.Better(&r.from.Eval, &res.Eval) {
			// The fewer-GPU decision is a candidate of every method.
			res.Decision, res.Eval = r.from.Decision, r.from.Eval
			c.FromKept = true
		}
		d = res.Decision
		c.StepTime, c.Valid = res.Eval.StepTime, p.Objective.Valid(&res.Eval)
		c.Objective = p.Objective.Of(&res.Eval)
		c.Evaluations, c.Steps, c.Status = res.Stats.Evaluations, res.Stats.Steps, res.Stats.Status.String()
		if c.Valid && r.refValue > 0 {
			c.Ratio = c.Objective / r.refValue
		}
	}
	if path != "" {
		if r.keep && d.Device != nil {
			if err := atomicfile.Write(decisionPath(path), func(w io.Writer) error { return json.NewEncoder(w).Encode(d) }); err != nil {
				return c, d, err
			}
		}
		if err := atomicfile.Write(path, func(w io.Writer) error {
			return report.JSON(w, equalTimeCellFile{Seed: r.seed, Model: modelSHA, Cell: c})
		}); err != nil {
			return c, d, err
		}
	}
	return c, d, nil
}

// decisionPath is where a cell kept at path keeps its decision.
func decisionPath(path string) string {
	return strings.TrimSuffix(path, ".json") + ".decision.json"
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
	data, err := os.ReadFile(path)
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

// fileSafe turns a graph name into a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}
