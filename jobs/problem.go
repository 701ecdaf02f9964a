package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/hw"
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads/export"
)

// Backend makes the cost model and the evaluator of a graph on a cluster:
// the one place where a job chooses what scores its decisions. nil means
// Roofline. A Backend that returns a closer (non-nil) has it called when
// the job ends.
type Backend func(g *graph.Graph, c *roofline.Cluster, o roofline.Options) (evaluate.CostModel, evaluate.Evaluator, func() error, error)

// Roofline is the default Backend: the roofline model as cost model and
// evaluator, decisions with a strategy (replicas) composed around one
// replica's simulation (evaluate/strategy).
func Roofline(g *graph.Graph, c *roofline.Cluster, o roofline.Options) (evaluate.CostModel, evaluate.Evaluator, func() error, error) {
	m, err := roofline.NewModel(g, c, o)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, strategy.Wrap(m), nil, nil
}

// GPUs is the Backend that measures every decision on this machine's GPUs
// (hw.Evaluator: a binary built with `make cuda`), planning with the
// roofline model. It fails with hw.ErrNoCUDA in a binary without CUDA.
func GPUs(repeats int) Backend {
	return func(g *graph.Graph, c *roofline.Cluster, o roofline.Options) (evaluate.CostModel, evaluate.Evaluator, func() error, error) {
		m, err := roofline.NewModel(g, c, o)
		if err != nil {
			return nil, nil, nil, err
		}
		ev, err := hw.NewEvaluator(g, c, hw.EvalOptions{Repeats: repeats})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("measure: %w", err)
		}
		return m, ev, ev.Close, nil
	}
}

// Setup is an op graph's problem as a job sets it up: the one problem
// type from what the user named to the methods, optimize.Problem (what
// every method takes), made of the resolved graph and cluster (in, kept
// whole as inputs resolved it) with the job's cost model and evaluator.
// A job (and a report's cell, jobs/reports) runs methods on its Problem.
type Setup struct {
	*optimize.Problem
	// in is the op graph on its cluster as inputs resolved it (its
	// graph is Problem's, its expert file's placement Problem's Expert).
	in      inputs.GraphOnCluster
	opts    roofline.Options
	backend Backend
	close   func() error
	// realizer realizes the decisions of a graph from PyTorch (its meta
	// file beside it); nil for the others (realize).
	realizer *export.Realizer
	// hostByGraph says that opts.Host is the host model the graph got by
	// default (eagerHost), not one the caller asked for.
	hostByGraph bool
}

// cluster is the cluster the problem's decisions are costed on.
func (pp *Setup) cluster() *roofline.Cluster { return pp.in.Cluster }

// hardwareNote is GraphFileNote where the hardware is a graph file's
// default, none named ("" otherwise).
func (pp *Setup) hardwareNote() string {
	if pp.in.GraphFileDefault {
		return GraphFileNote
	}
	return ""
}

// GraphFileNote is what a report's header says of hardware that no
// --hardware named on a graph file (roofline.GraphFileHardware).
var GraphFileNote = roofline.GraphFileHardware + ": a graph file's default (--hardware)"

// Close releases the evaluator (GPUs), if it holds any.
func (p *Setup) Close() error {
	if p == nil || p.close == nil {
		return nil
	}
	return p.close()
}

// resize is the problem of g on k GPUs of pp's hardware and topology,
// with pp's tasks, cost-model options and backend (anchored.Resizer).
func (pp *Setup) resize(g *graph.Graph, k int) (*optimize.Problem, func() error, error) {
	c, err := roofline.NewCluster(pp.cluster().Hardware, k, pp.cluster().Topology)
	if err != nil {
		return nil, nil, err
	}
	q, err := NewSetupOn(g, c, pp.Tasks, pp.opts, pp.backend)
	if err != nil {
		return nil, nil, err
	}
	if pp.realizer != nil && g.NumOps() == pp.Graph.NumOps() {
		// The same graph, or a replica's share of its batch (the same ops):
		// realized as the whole graph's cut is.
		q.realize(pp.realizer)
	}
	return q.Problem, q.Close, nil
}

// references runs the quick references on pp (anchored.References: the
// quick methods with their compositions, fewer-GPU rows and fusion
// variants), a line each on w (nil = none).
func (pp *Setup) references(ctx context.Context, seed uint64, w io.Writer) ([]anchored.Row, error) {
	return anchored.References(ctx, pp.Problem, methods.Quick(), &optimize.Settings{Seed: seed}, pp.resize, rowPrinter(pp.Problem, w))
}

// QuickReference runs the quick references on pp (references) and
// returns the best valid one under pp's objective ("tf-defaults" and nil
// when none is valid: bestValid).
func (pp *Setup) QuickReference(ctx context.Context, seed uint64) (string, *optimize.Result, error) {
	rows, err := pp.references(ctx, seed, nil)
	if err != nil {
		return "", nil, err
	}
	name, ref := bestValid(pp.Objective, rows)
	return name, ref, nil
}

// NewSetup resolves the graph and the cluster, makes the cost model and
// the evaluator with backend (nil = Roofline), and fills the problem's
// expert placement (nil for a graph that has none).
func NewSetup(gs inputs.GraphSpec, cs inputs.ClusterSpec, tasks optimize.Tasks, sync bool, backend Backend) (*Setup, error) {
	return newSetupWith(gs, cs, tasks, roofline.Options{SyncTransfers: sync}, backend, false)
}

// newSetupWith is NewSetup with the cost model's options. hostByGraph
// gives a graph that records an eager PyTorch run the host model where
// opts has none (eagerHost: the CLI's default when --host is not given).
func newSetupWith(gs inputs.GraphSpec, cs inputs.ClusterSpec, tasks optimize.Tasks, opts roofline.Options, backend Backend, hostByGraph bool) (*Setup, error) {
	if w := inputs.WorldOf(gs.Workload); w != inputs.OpGraph {
		return nil, fail.Usagef("workload %s is %s: placer eval, search and export plan it (docs/cluster-scale.md); this command places an op graph's ops", gs.Workload, w)
	}
	r, err := inputs.Resolve(gs, cs)
	if err != nil {
		return nil, err
	}
	byGraph := hostByGraph && opts.Host == nil && eagerHost(r.Graph)
	if byGraph {
		opts.Host = HostModel(true, 0)
	}
	p, err := setupOf(r, tasks, opts, backend)
	if err != nil {
		return nil, err
	}
	p.hostByGraph = byGraph
	rz, err := torchRealizer(gs, r.Graph, r.Profile, r.ProfilePath)
	if err != nil {
		p.Close()
		return nil, err
	}
	if rz != nil {
		p.realize(rz)
	}
	return p, nil
}

// torchRealizer is the realizer of a graph from PyTorch: one whose
// exporter's meta file (tools/dev/torchexport) lies beside it, X.meta.json
// for X.json; nil for any other graph.
func torchRealizer(gs inputs.GraphSpec, g *graph.Graph, pr *profile.Profile, prPath string) (*export.Realizer, error) {
	if pr != nil {
		meta, err := exportjob.ProfileMeta(pr, prPath, g)
		if meta == nil || err != nil {
			return nil, err
		}
		return export.NewRealizer(g, meta)
	}
	if gs.Path == "" || !strings.HasSuffix(gs.Path, ".json") {
		return nil, nil
	}
	path := strings.TrimSuffix(gs.Path, ".json") + ".meta.json"
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	meta, err := export.ReadTorchMeta(path, g)
	if err != nil {
		return nil, err
	}
	return export.NewRealizer(g, meta)
}

// realize makes pp score what PyTorch runs (DESIGN §10): every decision
// is realized by rz (contiguous module-level stages of one replica of
// GPUs / R devices, ops in program order, no fusion) before the
// evaluator sees it. The problem's tasks stay what the user asked for
// (the policies of go and infer decide all three), but only the
// placement and the strategy reach the evaluator: the order and the
// fusion are the realization's.
func (pp *Setup) realize(rz *export.Realizer) {
	pp.realizer = rz
	n := pp.Devices()
	pp.Realize = func(d decision.Decision) (decision.Decision, error) {
		R := d.Strategy.R()
		if R < 1 || n%R != 0 {
			return decision.Decision{}, fmt.Errorf("realize: %d replicas do not divide %d GPUs", R, n)
		}
		return rz.Realize(d, n/R)
	}
	pp.Evaluator = evaluate.Realizing(pp.Evaluator, pp.Realize)
}

// placementOnly makes a realized problem's tasks the placement only: the
// order and the fusion are the realization's, and a search's moves on
// them would change nothing that runs. search and baselines call it; the
// learned policies of infer and finetune decide the tasks they were
// trained for.
func (pp *Setup) placementOnly() {
	if pp.realizer != nil {
		pp.Tasks = optimize.Tasks{Placement: true}
	}
}

// NewSetupOn is NewSetup for a graph and a cluster made, not named (a
// generated graph, a resized cluster).
func NewSetupOn(g *graph.Graph, c *roofline.Cluster, tasks optimize.Tasks, opts roofline.Options, backend Backend) (*Setup, error) {
	return setupOf(inputs.GraphOnCluster{Graph: g, Cluster: c}, tasks, opts, backend)
}

// setupOf makes the problem of the op graph on its cluster in: the cost
// model and the evaluator with backend (nil = Roofline), the expert
// placement of in's expert file, else the graph's own (nil when it has
// none, or the expert cannot place it).
func setupOf(in inputs.GraphOnCluster, tasks optimize.Tasks, opts roofline.Options, backend Backend) (*Setup, error) {
	g, c := in.Graph, in.Cluster
	if backend == nil {
		backend = Roofline
	}
	cost, ev, closer, err := backend(g, c, opts)
	if err != nil {
		return nil, err
	}
	// A graph without an expert placement (or one the expert cannot
	// place) has none: the expert row says so, the base is one GPU.
	exp := in.Expert
	if exp == nil {
		if exp, err = inputs.Expert(g, c.Devices); err != nil {
			exp = nil
		}
	}
	p := &optimize.Problem{Graph: g, Cost: cost, Evaluator: ev, Tasks: tasks, Expert: exp}
	return &Setup{Problem: p, in: in, opts: opts, backend: backend, close: closer}, nil
}

// newComparison sets up the problem and the report's header.
func newComparison(gs inputs.GraphSpec, cs inputs.ClusterSpec, tasks optimize.Tasks, sync bool, backend Backend) (*Setup, placements.Baselines, error) {
	return newComparisonWith(gs, cs, tasks, roofline.Options{SyncTransfers: sync}, backend, false)
}

// newComparisonWith is newComparison with the cost model's options
// (hostByGraph as newSetupWith's).
func newComparisonWith(gs inputs.GraphSpec, cs inputs.ClusterSpec, tasks optimize.Tasks, opts roofline.Options, backend Backend, hostByGraph bool) (*Setup, placements.Baselines, error) {
	p, err := newSetupWith(gs, cs, tasks, opts, backend, hostByGraph)
	if err != nil {
		return nil, placements.Baselines{}, err
	}
	c := p.cluster()
	b := placements.Baselines{
		Graph: p.Graph.Name(), Ops: p.Graph.NumOps(), Hardware: c.Hardware.Name, Devices: c.Devices, Topology: c.Topology,
		HardwareNote: p.hardwareNote(), Capacity: c.Hardware.Memory, Transfers: "async", Tasks: tasks.String(),
		LowerBound: p.Cost.LowerBound(false), LowerBoundFusion: p.Cost.LowerBound(true),
	}
	if p.realizer != nil {
		// What runs: the realization decides the order and the fusion.
		b.Tasks = "placement"
	}
	if opts.SyncTransfers {
		b.Transfers = "sync"
	}
	return p, b, nil
}

// setBase gives the problem TensorFlow's defaults for the parts its tasks
// leave alone: the expert placement (else one GPU), FIFO scheduling,
// XLA-like default fusion.
func setBase(p *optimize.Problem) { anchored.TFBase(p) }

// writeTrace writes the Chrome trace of d to path through the problem's
// evaluator (atomically), so the trace shows the evaluator that scored it.
func writeTrace(ctx context.Context, p *optimize.Problem, d decision.Decision, path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := p.Evaluator.Trace(context.WithoutCancel(ctx), d, w)
		return err
	})
}
