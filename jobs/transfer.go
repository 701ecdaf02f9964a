package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads"
)

// PretrainOptions are the inputs of `placer pretrain`.
type PretrainOptions struct {
	// Workloads are built-in workload names ("all" = every one); GraphsDir
	// a comma-separated list of folders (searched recursively) and files
	// whose graphs join them: native JSON graphs and any format an
	// importer recognizes (msr-fiddle's, say).
	Workloads []string
	GraphsDir string
	// HoldOut drops every graph of a family: workloads of that
	// workloads.Family, native graph files named "<family>-..." (as
	// `placer workloads synth` names REGAL's families er, ba, ws, sbm),
	// and imported files whose model is of the family (fileFamily).
	HoldOut string
	Cluster inputs.ClusterSpec
	// ExtraGPUs are more device counts every graph is also trained on
	// (as graph "<name>@<n>"), besides Cluster.GPUs: one policy serves 2
	// to 8 GPUs, but only learns the counts it sees.
	ExtraGPUs []int
	Tasks     string // "" = placement,scheduling,fusion
	Sync      bool

	Steps   int           // total steps, warm-up included (0 = 200 unless Time is set)
	Time    time.Duration // wall time of this run (0 = none)
	Seed    uint64
	Samples int  // rollout size K (0 = 16)
	Warmup  int  // imitation steps (0 = 30 per graph; negative = none)
	Random  bool // pick graphs at random instead of in turn
	// Scored trains go-scored's move head instead (see
	// gdp.ScoredPretrain): Steps counts visits (each a go-scored run of
	// PerVisit on one graph from its reference), the features read the
	// embedded default model, and Out is the head's file.
	Scored   bool
	PerVisit optimize.Budget
	// Workers runs the visits (Scored) or the GO policy's steps in
	// synchronous rounds of Workers shared by any number of processes
	// through the folder Rounds (gdp.Rounds: same seed and Workers, same
	// model; 1 = the sequential model); Lease is a claim's lease (0 =
	// 1m).
	Workers int
	Rounds  string
	Lease   time.Duration
	// ListCells, with Workers, receives the run's cells (one per visit,
	// JSON lines) and nothing runs; OneCell runs cell Cell only
	// (gdp.Rounds.One): a task of a cluster's array job.
	ListCells io.Writer
	OneCell   bool
	Cell      int
	Policy    *policy.Config
	PPO       ppo.Settings

	// Backend makes each graph's cost model and evaluator (nil = Roofline).
	Backend Backend

	Out             string // the model file (required); checkpoints go here too
	CheckpointEvery int    // steps between checkpoints (0 = 50)
	Resume          string // checkpoint to continue from ("" = a new policy)

	// Progress receives one line per graph as it is set up; OnStep each
	// training step (with the step budget, 0 = time-bound).
	Progress io.Writer
	OnStep   func(pt gdp.PretrainPoint, steps int)
}

// PretrainGraph describes one graph of a pre-training set.
type PretrainGraph struct {
	Name      string  `json:"name"`
	Family    string  `json:"family,omitempty"`
	Ops       int     `json:"ops"`
	Devices   int     `json:"devices"`
	Reference string  `json:"reference"`
	RefStep   float64 `json:"reference_step_time_s"`
	// Skipped says why the graph is not trained on ("" = it is): with
	// Scored, a graph none of whose quick baselines is valid (out of
	// memory on its GPUs, say) gives the head no anchor to learn from.
	Skipped string `json:"skipped,omitempty"`
}

// PretrainReport is what `placer pretrain` prints.
type PretrainReport struct {
	Graphs  []PretrainGraph     `json:"graphs"`
	HeldOut []string            `json:"held_out,omitempty"`
	Devices int                 `json:"devices"` // --gpus (graphs name their own count)
	Seed    uint64              `json:"seed"`
	Steps   int                 `json:"steps"`
	Elapsed float64             `json:"elapsed_s"`
	Status  string              `json:"status"`
	Model   string              `json:"model"`
	State   string              `json:"state"`
	Curve   []gdp.PretrainPoint `json:"curve"`
	// Visits are a go-scored head's pre-training visits (--scored).
	Visits []gdp.ScoredVisit `json:"visits,omitempty"`
}

// Pretrain pre-trains one policy over several graphs and writes it to
// o.Out (a checkpoint: the policy file and its state file). Each graph's
// quick baselines (methods.Quick()) run first; the best valid one
// is the graph's reference. When ctx is cancelled (Ctrl-C) the checkpoint
// is still written and the report returned with ctx's error.
func Pretrain(ctx context.Context, o PretrainOptions) (PretrainReport, error) {
	var rep PretrainReport
	if o.Out == "" {
		return rep, fmt.Errorf("pretrain: no model file (--out)")
	}
	tasks, err := ParseTasks(o.Tasks)
	if err != nil {
		return rep, err
	}
	specs, held, err := trainingGraphs(o.Workloads, o.GraphsDir, o.HoldOut)
	if err != nil {
		return rep, err
	}
	rep.HeldOut = held
	if o.ListCells != nil {
		return rep, listPretrainCells(o)
	}
	if o.Resume != "" && !o.Scored {
		// A bad checkpoint fails before the baselines run.
		if _, _, err := gdp.LoadCheckpoint(o.Resume); err != nil {
			return rep, err
		}
	}
	if o.Resume != "" && o.Scored {
		if _, err := gdp.LoadMoveHead(o.Resume); err != nil {
			return rep, err
		}
	}
	pt := &gdp.Pretrain{Config: o.Policy, PPO: o.PPO, Seed: o.Seed, Samples: o.Samples, Warmup: o.Warmup, Random: o.Random,
		Steps: o.Steps, Time: o.Time, Checkpoint: o.Out, CheckpointEvery: o.CheckpointEvery, Resume: o.Resume}
	if pt.CheckpointEvery == 0 {
		pt.CheckpointEvery = 50
	}
	counts := append([]int{o.Cluster.GPUs}, o.ExtraGPUs...)
	rep.Devices = o.Cluster.GPUs
	for ci, n := range counts {
		if n < 1 || n > 8 || (ci > 0 && slices.Contains(counts[:ci], n)) {
			return rep, fmt.Errorf("pretrain: GPU counts %v: want distinct counts of 1 to 8 (the policy places on at most 8)", counts)
		}
	}
	for _, s := range specs {
		for ci, n := range counts {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			cs := o.Cluster
			cs.GPUs = n
			pp, _, err := newComparison(s.spec, cs, tasks, o.Sync, o.Backend)
			if err != nil {
				return rep, fmt.Errorf("pretrain: %s: %w", s.name, err)
			}
			defer pp.Close()
			p := pp.Problem
			setBase(p)
			refName, ref, err := pp.QuickReference(ctx, o.Seed)
			if err != nil {
				return rep, err
			}
			tg := gdp.TrainGraph{Name: p.Graph.Name(), Problem: p}
			if ci > 0 {
				tg.Name = fmt.Sprintf("%s@%d", tg.Name, n)
			}
			g := PretrainGraph{Name: tg.Name, Family: s.family, Ops: p.Graph.NumOps(), Devices: n, Reference: refName}
			if ref != nil {
				tg.Reference, tg.RefTime, g.RefStep = ref.Decision, ref.Eval.StepTime, ref.Eval.StepTime
			} else {
				g.Reference = ""
				if o.Scored {
					g.Skipped = fmt.Sprintf("no quick baseline is valid on %d GPUs", n)
				}
			}
			rep.Graphs = append(rep.Graphs, g)
			if g.Skipped == "" {
				pt.Graphs = append(pt.Graphs, tg)
			}
			if o.Progress != nil {
				line := fmt.Sprintf("reference %s %s", refName, report.Seconds(g.RefStep))
				if g.Skipped != "" {
					line = "skipped: " + g.Skipped
				}
				fmt.Fprintf(o.Progress, "pretrain: %-28s %6d ops, %d GPUs, %s\n", g.Name, g.Ops, n, line)
			}
		}
	}
	steps := o.Steps
	if steps == 0 && o.Time == 0 {
		steps = 200
	}
	if o.OnStep != nil {
		pt.OnStep = func(p gdp.PretrainPoint) { o.OnStep(p, steps) }
	}
	if o.Scored {
		if len(pt.Graphs) == 0 {
			return rep, fmt.Errorf("pretrain: no graph has a valid quick baseline to start from on %v GPUs", counts)
		}
		return pretrainScored(ctx, o, pt.Graphs, rep)
	}
	if o.Workers > 0 {
		pt.Rounds = &gdp.Rounds{Workers: o.Workers, Dir: o.Rounds, Lease: o.Lease, One: o.OneCell, Cell: o.Cell}
	}
	r, err := pt.Run(ctx)
	if err != nil {
		return rep, err
	}
	rep.Seed, rep.Steps, rep.Elapsed, rep.Status, rep.Curve = r.Seed, r.Step, r.Elapsed.Seconds(), r.Status.String(), r.Curve
	if pt.Rounds != nil && r.Policy == nil {
		rep.Status = fmt.Sprintf("cell %d kept; %d of %d steps in finished rounds, the model is the last round's cell's to write", o.Cell, r.Step, steps)
		return rep, ctx.Err()
	}
	rep.Model, rep.State = o.Out, gdp.CheckpointState(o.Out)
	return rep, ctx.Err()
}

// pretrainScored trains go-scored's move head over the graphs (o.Scored).
func pretrainScored(ctx context.Context, o PretrainOptions, graphs []gdp.TrainGraph, rep PretrainReport) (PretrainReport, error) {
	// The head reads go-scored's features: its fixed untrained network
	// (gdp.ScoredNetworkSeed), as every go-scored variant with a
	// pre-trained head does.
	sp := &gdp.ScoredPretrain{Graphs: graphs, PerVisit: o.PerVisit, Seed: o.Seed, Visits: o.Steps, Time: o.Time,
		Checkpoint: o.Out, Resume: o.Resume, LearningRate: o.PPO.LearningRate}
	if o.Steps == 0 && o.Time == 0 {
		sp.Visits = 3 * len(graphs)
	}
	if o.Workers > 0 {
		sp.Rounds = &gdp.Rounds{Workers: o.Workers, Dir: o.Rounds, Lease: o.Lease, One: o.OneCell, Cell: o.Cell}
	}
	if o.OnStep != nil {
		sp.OnVisit = func(v gdp.ScoredVisit) {
			o.OnStep(gdp.PretrainPoint{Step: v.Visit, Graph: v.Graph, Phase: "scored", Elapsed: v.Elapsed, BestReward: 1 - v.Ratio}, sp.Visits)
		}
	}
	r, err := sp.Run(ctx)
	if err != nil {
		return rep, err
	}
	rep.Seed, rep.Steps, rep.Elapsed, rep.Status, rep.Visits = r.Seed, r.Visits, r.Elapsed.Seconds(), r.Status.String(), r.Curve
	if r.Head == nil {
		// One cell, not the last: the cell that ends the last round
		// writes the head.
		rep.Status = fmt.Sprintf("cell %d kept; %d of %d visits in finished rounds, the model is the last round's cell's to write", o.Cell, r.Visits, sp.Visits)
		return rep, ctx.Err()
	}
	rep.Model, rep.State = o.Out, o.Out+".state.json"
	return rep, ctx.Err()
}

// listPretrainCells writes the cells of o's rounds to o.ListCells.
func listPretrainCells(o PretrainOptions) error {
	rd := &gdp.Rounds{Workers: o.Workers}
	cells := rd.Cells(o.Steps)
	if !o.Scored {
		cells = rd.PolicyCells(o.Steps)
	}
	enc := json.NewEncoder(o.ListCells)
	for _, c := range cells {
		l := grid.RoundCell{Index: c.Index, Round: c.Round, Method: "go-scored-visit", Budget: fmt.Sprintf("%d-evals", o.PerVisit.Evaluations), Seed: o.Seed, File: c.File}
		if !o.Scored {
			// A PPO (or, in the warm-up, imitation) step of the GO policy.
			l.Method, l.Budget = "go-pretrain-step", fmt.Sprintf("%d-samples", max(o.Samples, 1))
		}
		if o.Rounds != "" {
			l.File = filepath.Join(o.Rounds, c.File)
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

type trainSpec struct {
	name, family string
	spec         inputs.GraphSpec
}

// trainingGraphs resolves the workload list and the graph folder, minus
// the held-out family.
func trainingGraphs(names []string, dir, holdOut string) ([]trainSpec, []string, error) {
	holdOut = strings.ToLower(strings.TrimSpace(holdOut))
	if holdOut != "" && !slices.Contains(HoldOutFamilies(), holdOut) {
		return nil, nil, fail.Usagef("pretrain: unknown family %q to hold out (want one of %s)", holdOut, strings.Join(HoldOutFamilies(), ", "))
	}
	var out []trainSpec
	var held []string
	if len(names) == 1 && names[0] == "all" {
		names = workloads.Names()
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		s, ok := workloads.Lookup(n)
		if !ok {
			_, err := workloads.Build(n) // the registry's error lists the names
			return nil, nil, fail.AsUsage(err)
		}
		if string(s.Family) == holdOut {
			held = append(held, s.Name)
			continue
		}
		out = append(out, trainSpec{name: s.Name, family: string(s.Family), spec: inputs.GraphSpec{Workload: s.Name}})
	}
	files, err := graphFiles(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("pretrain: %w", err)
	}
	for _, f := range files {
		format, err := inputs.DetectFormat(f)
		if err != nil {
			return nil, nil, fmt.Errorf("pretrain: %w", err)
		}
		if format == "" {
			continue // not a graph (a result, a decision...)
		}
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		fam := fileFamily(base, format)
		if fam == holdOut {
			held = append(held, base)
			continue
		}
		out = append(out, trainSpec{name: base, family: fam, spec: inputs.GraphSpec{Path: f, Format: format}})
	}
	if len(out) == 0 {
		if len(held) > 0 {
			return nil, nil, fmt.Errorf("pretrain: holding out %s leaves no graph to train on", holdOut)
		}
		return nil, nil, fmt.Errorf("pretrain: no graphs: give --workloads or a --graphs folder with native JSON graphs")
	}
	return out, held, nil
}

// PretrainGraphs are the names of the graphs pretrain trains on with
// workloads names and the graph folder dir (PretrainOptions' Workloads
// and GraphsDir), minus family holdOut.
func PretrainGraphs(names []string, dir, holdOut string) ([]string, error) {
	specs, _, err := trainingGraphs(names, dir, holdOut)
	var out []string
	for _, s := range specs {
		out = append(out, s.name)
	}
	return out, err
}

// graphFiles lists the files of list (comma-separated folders, searched
// recursively, and files): a folder's .json, .pbtxt and .onnx files,
// sorted; a file as named.
func graphFiles(list string) ([]string, error) {
	var files []string
	for _, root := range strings.Split(list, ",") {
		if root = strings.TrimSpace(root); root == "" {
			continue
		}
		st, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, root)
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".json", ".pbtxt", ".onnx":
				if !d.IsDir() {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// fileFamily is the family of a graph file named base (no extension) in
// format: a native file's name up to its first "-" (er-0001: er); an
// imported file's model, its name's last "-" part up to "_", read as the
// family it starts with when it starts with one
// (throughput-LayerGraphs-inceptionv3_training: inception).
func fileFamily(base, format string) string {
	if format == "native" {
		fam, _, _ := strings.Cut(base, "-")
		return fam
	}
	model := base[strings.LastIndex(base, "-")+1:]
	model, _, _ = strings.Cut(model, "_")
	model = strings.ToLower(model)
	for _, f := range HoldOutFamilies() {
		if strings.HasPrefix(model, f) {
			return f
		}
	}
	return model
}

// HoldOutFamilies are the families --hold-out accepts: the workload
// families and REGAL's synthetic ones.
func HoldOutFamilies() []string {
	var f []string
	for _, w := range workloads.Families() {
		f = append(f, string(w))
	}
	return append(f, workloads.SyntheticFamilies()...)
}

// TransferOptions are the inputs of `placer infer` and `placer finetune`.
type TransferOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	// Model is a policy file (placer pretrain --out); "" = the embedded
	// default model, if this build has one.
	Model string
	// Tasks must be the model's tasks; "" = the model's.
	Tasks   string
	Sync    bool
	Seed    uint64
	Samples int // infer: decisions sampled besides the argmax (0 = 16); finetune: rollout size (0 = 16)

	// Infer only: go-scored-prior refines the better of the reference and
	// the zero-shot decision (row go-zero-shot+refined) for RefineEvals
	// evaluations (the same seed gives the same answer) or, when Refine is
	// set, what the zero-shot pass leaves of the learned part's whole wall
	// time Refine, whichever ends first. Both 0 = no refinement.
	RefineEvals int
	Refine      time.Duration
	// Head is the pre-trained move head the refinement reads as its
	// prior (placer pretrain --scored; "" = the embedded default head).
	Head string

	// Finetune only.
	Steps  int           // PPO steps (0 = 50 unless Time is set)
	Time   time.Duration // wall-time limit (0 = none)
	Warmup int           // imitation steps before PPO (0 = none; see gdp.Search.Warmup)
	PPO    ppo.Settings

	Out string // result file ("" = none)

	// Backend makes the cost model and the evaluator (nil = Roofline).
	Backend Backend

	// Progress receives one line per finished baseline; OnStep each
	// fine-tuning step (with the reference step time and step budget).
	Progress io.Writer
	OnStep   func(pt gdp.Point, refStep float64, steps int)
}

// LoadModel loads a policy file, or the embedded default model when path
// is "".
func LoadModel(path string) (*policy.Policy, error) {
	if path == "" {
		return defaultmodel.Load()
	}
	return policy.Load(path)
}

// modelTasks returns the tasks a policy decides.
func modelTasks(c policy.Config) optimize.Tasks {
	return optimize.Tasks{Placement: true, Scheduling: !c.NoScheduling, Fusion: !c.NoFusion}
}

// transferSetup loads the model, builds the problem and runs the quick
// baselines.
func transferSetup(ctx context.Context, o *TransferOptions, verb string) (*policy.Policy, *Setup, placements.Baselines, string, *optimize.Result, error) {
	var b placements.Baselines
	pol, err := LoadModel(o.Model)
	if err != nil {
		return nil, nil, b, "", nil, err
	}
	tasks := modelTasks(pol.Config())
	if o.Tasks != "" {
		t, err := ParseTasks(o.Tasks)
		if err != nil {
			return nil, nil, b, "", nil, err
		}
		if t != tasks {
			return nil, nil, b, "", nil, fmt.Errorf("%s: the model decides %s, --tasks asks for %s (pre-train a model for those tasks)", verb, tasks, t)
		}
	}
	pp, b, err := newComparison(o.Graph, o.Cluster, tasks, o.Sync, o.Backend)
	if err != nil {
		return nil, nil, b, "", nil, err
	}
	p := pp.Problem
	fail := func(err error) (*policy.Policy, *Setup, placements.Baselines, string, *optimize.Result, error) {
		pp.Close()
		return nil, nil, b, "", nil, err
	}
	if md := pol.Config().MaxDevices; p.Devices() > md {
		return fail(fmt.Errorf("%s: %d GPUs; the model places on at most %d", verb, p.Devices(), md))
	}
	setBase(p)
	rows, err := pp.references(ctx, o.Seed, o.Progress)
	if err != nil {
		return fail(err)
	}
	b.Rows = tableRows(rows, p)
	b.Reference, b.RefStep = reference(ctx, p, rows)
	b.Seed = o.Seed
	refName, ref := bestValid(p.Objective, rows)
	return pol, pp, b, refName, ref, nil
}

// Infer places one graph zero-shot with a pre-trained model: one
// low-memory forward pass (policy.Infer) conditioned on the best quick
// baseline's decision, the best of o.Samples sampled decisions and the
// most likely one (gdp.ZeroShot). Its row "go-zero-shot" joins the
// quick baselines' table. For o.RefineEvals evaluations (or what is left
// of o.Refine), go-scored-prior refines the better of the reference and
// that decision: go-scored with
// the pre-trained move head as its prior, a new head learning online what
// the prior gets wrong on this graph (row "go-zero-shot+refined").
func Infer(ctx context.Context, o TransferOptions) (SearchReport, error) {
	pol, pp, b, refName, ref, err := transferSetup(ctx, &o, "infer")
	if err != nil {
		return SearchReport{}, err
	}
	defer pp.Close()
	p := pp.Problem
	refStep := 0.0
	if ref != nil {
		refStep = ref.Eval.StepTime
	}
	start := time.Now()
	res, err := runLearned(ctx, "go-zero-shot", methods.Options{Trained: pol, Samples: o.Samples, Reference: ref}, p, 0, 0, 0, o.Seed, nil)
	if err != nil {
		return SearchReport{}, err
	}
	zeroShot := learned{method: res.Method, res: res, refName: refName, refStep: refStep, elapsed: time.Since(start)}
	budget := optimize.Budget{Evaluations: o.RefineEvals}
	if o.Refine > 0 {
		if budget.Time = o.Refine - time.Since(start); budget.Time <= 0 {
			budget = optimize.Budget{}
		}
	}
	if budget == (optimize.Budget{}) || ctx.Err() != nil {
		rep, err := learnedReport(p, b, zeroShot, o.Seed, o.Out)
		if err != nil {
			return rep, err
		}
		return rep, ctx.Err()
	}
	// The zero-shot row joins the table; the refined one is the result.
	zrow := placements.BaselinesRow{Method: zeroShot.method, SearchTime: zeroShot.elapsed.Seconds()}
	fillRow(&zrow, res, p)
	b.Rows = append(b.Rows, zrow)
	from := res
	if ref != nil && !p.Objective.Better(&res.Eval, &ref.Eval) {
		from = ref
	}
	mo := methods.Options{Reference: from}
	if o.Head != "" {
		if mo.Head, err = gdp.LoadMoveHead(o.Head); err != nil {
			return SearchReport{}, fmt.Errorf("infer: head: %w", err)
		}
	}
	opt, err := methods.New("go-scored-prior", mo)
	if err != nil {
		return SearchReport{}, err
	}
	rres, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: budget, Seed: o.Seed})
	if err != nil {
		return SearchReport{}, fmt.Errorf("infer: refining: %w", err)
	}
	if rres.Learning != nil && res.Learning != nil {
		rres.Learning.OnePass, rres.Learning.OnePassValid = res.Learning.OnePass, res.Learning.OnePassValid
	}
	rep, err := learnedReport(p, b, learned{method: "go-zero-shot+refined", res: rres, refName: refName, refStep: refStep, elapsed: time.Since(start)}, o.Seed, o.Out)
	if err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// Finetune trains a pre-trained model further on one graph with PPO
// (gdp.Search starting from the model; GDP §4.3 fine-tunes for fewer
// than 50 steps) and compares its best decision, row "go-finetune", with
// the quick baselines. When ctx is cancelled it still returns, and
// writes, the best result so far.
func Finetune(ctx context.Context, o TransferOptions) (SearchReport, error) {
	pol, pp, b, refName, ref, err := transferSetup(ctx, &o, "finetune")
	if err != nil {
		return SearchReport{}, err
	}
	defer pp.Close()
	p := pp.Problem
	warm := o.Warmup
	if warm == 0 {
		warm = -1
	}
	mo := methods.Options{Trained: pol, PPO: o.PPO, Samples: o.Samples, Warmup: warm, Reference: ref}
	steps := o.Steps
	if steps == 0 && o.Time == 0 {
		steps = 50
	}
	var rec optimize.Recorder
	if o.OnStep != nil {
		rec = optimize.RecorderFunc(func(e optimize.Event) {
			if e.Kind == optimize.Point {
				o.OnStep(*e.Point, e.RefStep, steps)
			}
		})
	}
	start := time.Now()
	res, err := runLearned(ctx, "go", mo, p, o.Steps, 50, o.Time, o.Seed, rec)
	if err != nil {
		return SearchReport{}, fmt.Errorf("finetune: %w", err)
	}
	rep, err := learnedReport(p, b, learned{method: "go-finetune", res: res, refName: refName, refStep: res.Learning.RefStep, elapsed: time.Since(start)}, o.Seed, o.Out)
	if err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}
