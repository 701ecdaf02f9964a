package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/evaluate/hw"
	"github.com/placer/placer/evaluate/opcheck"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
)

// GraphEvalOptions are the inputs of an op graph's evaluation.
type GraphEvalOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	// Placement is "single", "round-robin", "expert" or a decision file.
	Placement string
	// Plan is a file holding the decision: what Placement reads (a
	// search's or an eval's -o file; "" = Placement).
	Plan string
	// Strategy is the decision's strategy around the placement, e.g.
	// "dp=4" ("" = the placement file's, else none: one replica). The
	// placement is then one replica's, on GPUs / replicas GPUs.
	Strategy string
	Schedule string // "fifo" or a decision file; "" = the placement file's, else fifo
	Fusion   string // "none", "default" or a decision file; "" = the placement file's, else none
	Sync     bool   // REGAL's synchronous transfers
	// Host models each device's host thread dispatching its kernels
	// (roofline.Options.Host; nil = none, the default). The CLI makes it
	// from HostOn and Dispatch, the --host and --dispatch flags: every
	// op at Dispatch when that is above 0, else the graph's profiled
	// dispatch times (dispatch_s) where it has some and roofline's
	// defaults elsewhere.
	Host     *roofline.Host
	HostOn   bool
	Dispatch time.Duration
	// HostByGraph gives a graph that records an eager PyTorch run (its
	// execution settings) the host model when Host is nil: the CLI's
	// default where --host is not given (the report's Host says so).
	HostByGraph bool
	// TF32 is the --tf32 flag: which f32 matmuls and convolutions run on
	// TF32 tensor cores ("" or "graph": the graph's recorded settings, else
	// the hardware's; on, off, matmul, conv; roofline.ParseTF32).
	TF32 string
	// MemoryFormat is the --memory-format flag: the step's activations'
	// memory format ("" or "graph": not said, no layout transposes; nchw;
	// nhwc; convlayout.Parse).
	MemoryFormat string
	// Objective is the objective whose value the report shows beside the
	// rest (zero = step time).
	Objective optimize.Objective
	Trace     string // write a Chrome trace here ("" = none)
	// Measure also runs the decision on the GPUs present (a binary built
	// with make cuda) and reports measured beside predicted.
	Measure bool
	Repeats int // timed runs when measuring (0 = 5)
	// Backend makes the cost model and the evaluator of the prediction
	// (nil = Roofline).
	Backend Backend
}

// EvalGraph evaluates one decision of an op graph with the roofline model (through its
// evaluator, which writes the trace too), and with --measure on the GPUs
// as well.
func EvalGraph(ctx context.Context, o GraphEvalOptions) (placements.Eval, error) {
	// A placement file says how many GPUs it was made for; an msr-fiddle
	// expert file is the graph's expert placement.
	st, err := exportjob.StrategyOf(o.Strategy, o.Placement)
	if err != nil {
		return placements.Eval{}, err
	}
	tf32, err := roofline.ParseTF32(o.TF32)
	if err != nil {
		return placements.Eval{}, err
	}
	layout, err := convlayout.Parse(o.MemoryFormat)
	if err != nil {
		return placements.Eval{}, err
	}
	// --gpus is every GPU; one replica's placement gets GPUs / R of them
	// (GPUsRule, as search and export read it).
	if o.Cluster.GPUs, err = exportjob.ReplicaCluster(o.Cluster.GPUs, st, o.Placement); err != nil {
		return placements.Eval{}, err
	}
	if o.Cluster.GPUs == 0 {
		o.Cluster.GPUs = inputs.PlacementDevices(o.Placement) * st.R() // an msr-fiddle expert file's
	}
	if inputs.IsMSRFiddleExpert(o.Placement) {
		o.Graph.Expert, o.Placement = o.Placement, "expert"
	}
	p, err := newSetupWith(o.Graph, o.Cluster, optimize.AllTasks, roofline.Options{SyncTransfers: o.Sync, Host: o.Host, TF32: tf32, MemoryFormat: layout}, o.Backend, o.HostByGraph)
	if err != nil {
		return placements.Eval{}, err
	}
	defer p.Close()
	g, c := p.Graph, p.cluster()
	// "expert" means one thing in every command: the expert placement with
	// TensorFlow's defaults for the rest (FIFO scheduling, XLA-like
	// default fusion), the tables' expert row (classical.Expert on the
	// problem's Base). An explicit --fusion still wins. With --expert FILE
	// the placement is the file's.
	if p := strings.ToLower(o.Placement); (p == "expert" || p == "human") && o.Fusion == "" {
		o.Fusion = "default"
	}
	// A graph the user runs under torch.compile (its execution settings)
	// runs Inductor's fused kernels: when neither --fusion nor a placement
	// file says otherwise, the default fusion stands for them (and the host
	// model launches one kernel per fused group).
	if p := strings.ToLower(o.Placement); o.Fusion == "" && (p == "single" || p == "round-robin") {
		if e := g.Execution(); e != nil && e.Compile != "" {
			o.Fusion = "default"
		}
	}
	placement := o.Placement
	fromExpertFile := o.Graph.Expert != "" && strings.EqualFold(placement, "expert")
	if fromExpertFile {
		placement = "single" // replaced by the expert file's below
	}
	devices := c.Devices / st.R() // one replica's GPUs
	if err := st.CheckFor(g.Batch(), devices, c.Devices); err != nil {
		return placements.Eval{}, err
	}
	d, err := inputs.Decision(placement, o.Schedule, o.Fusion, g, devices)
	if err != nil {
		return placements.Eval{}, err
	}
	d.Strategy = st
	ev, lower := p.Evaluator, p.Cost.LowerBound(d.Fusion != nil)
	if !st.IsZero() {
		if o.Measure {
			return placements.Eval{}, fmt.Errorf("eval --strategy %s: --measure takes one replica's decision (no --strategy) for now", st)
		}
		se, err := strategy.NewEvaluator(g, c, p.opts)
		if err != nil {
			return placements.Eval{}, err
		}
		if lower, err = se.LowerBound(st, d.Fusion != nil); err != nil {
			return placements.Eval{}, err
		}
		ev = se
		if p.Realize != nil {
			// A graph from PyTorch: scored as its torch plan runs, with or
			// without a strategy (the problem's evaluator realizes every
			// decision; this one must too): contiguous stages, program
			// order, no fusion. A placement without a priority list
			// (--placement single) then runs in program order, as search's
			// rows and the runner do, not first-in first-out.
			ev = evaluate.Realizing(se, p.Realize)
		}
	}
	if fromExpertFile {
		d.Device = p.Expert
	}
	if err := ctx.Err(); err != nil {
		return placements.Eval{}, err
	}
	var res evaluate.Result
	if o.Trace != "" {
		err = atomicfile.Write(o.Trace, func(w io.Writer) error {
			var err error
			res, err = ev.Trace(ctx, d, w)
			return err
		})
	} else {
		res, err = ev.Evaluate(ctx, d)
	}
	if err != nil {
		return placements.Eval{}, err
	}
	perDev := make([]int, c.Devices)
	for r := 0; r < st.R(); r++ { // every replica runs the same ops
		for _, dv := range d.Device {
			perDev[r*devices+dv]++
		}
	}
	e := placements.NewEval(&res, lower, perDev)
	e.Strategy, e.Replicas = st.String(), st.R()
	e.Graph, e.Ops, e.Hardware, e.Devices, e.Topology = g.Name(), g.NumOps(), c.Hardware.Name, c.Devices, c.Topology
	e.HardwareNote = p.hardwareNote()
	e.Placement = orDefault(o.Placement, "single")
	e.Schedule, e.Fusion = describe(o.Schedule, d.Priority != nil, "fifo", o.Placement), describe(o.Fusion, d.Fusion != nil, "none", o.Placement)
	if p.Realize != nil {
		// What the torch plan runs, whatever the decision says.
		e.Schedule, e.Fusion = "program order (the torch plan's)", "none (the torch plan's)"
	}
	e.Objective, e.ObjectiveValue, e.Feasible = o.Objective.String(), o.Objective.Of(&res), o.Objective.Valid(&res)
	e.Transfers = "async"
	if o.Sync {
		e.Transfers = "sync"
	}
	e.Execution = execNote(g, &c.Hardware, tf32)
	e.Host = setupHostNote(p, o.Dispatch)
	// The allocator's reserve, where the cost model times the decision op
	// by op (the roofline) and it runs as given (one replica, no torch
	// plan re-ordering it).
	if sc, ok := p.Cost.(evaluate.Scheduler); ok && st.IsZero() && p.Realize == nil {
		if err := reservedPerDevice(ctx, &e, sc, g, d, c.Devices); err != nil {
			return placements.Eval{}, err
		}
	}
	if p.in.Profile != nil {
		if e.Costs, err = opCosts(p.in.Profile, p.in.ProfilePath, g, c, p.opts, d.Device, st); err != nil {
			return placements.Eval{}, err
		}
		e.Costs.Moved(e.BytesMoved)
	}
	// The decision itself, one replica's with its strategy: eval --placement
	// and export --placement read the report back as a decision file.
	file := decision.NewFile(g, c.Devices, d)
	e.Decision = &file
	if o.Measure {
		if err := measure(ctx, &e, g, c, d, o.Repeats); err != nil {
			return placements.Eval{}, err
		}
	}
	if o.Trace != "" {
		e.Trace = o.Trace
	}
	// With an ops profile the costs' lines say what the figures rest on:
	// the roofline's check of op kinds (and its host-bound warning, a
	// GPU's host) is for graphs the roofline prices.
	if p.in.Profile != nil {
		return e, nil
	}
	if e.Checked, err = checkedAgainst(g, c, p.opts, d.Device); err != nil {
		return placements.Eval{}, err
	}
	return e, nil
}

// checkedAgainst is what graph g's op kinds were checked against on one
// GPU of cluster c, costed as the evaluation costs them (opts), with which
// GPUs of the decision's placement (device: op -> GPU of one replica;
// nil: none) are host-bound where it uses more than one.
func checkedAgainst(g *graph.Graph, c *roofline.Cluster, opts roofline.Options, device []int) (*opcheck.Report, error) {
	refs, err := opcheck.References()
	if err != nil {
		return nil, err
	}
	one, err := roofline.NewCluster(c.Hardware, 1, "")
	if err != nil {
		return nil, err
	}
	m, err := roofline.NewModel(g, one, opts)
	if err != nil {
		return nil, err
	}
	r := opcheck.Check(g, m, c.Hardware.Name, refs)
	r.AddStages(g, m, device)
	return &r, nil
}

// describe names where a part of the decision came from.
func describe(spec string, set bool, none, placement string) string {
	switch {
	case spec != "":
		return spec
	case set:
		return "from " + placement
	}
	return none
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// measure runs d on real GPUs and adds the measurement to e.
func measure(ctx context.Context, e *placements.Eval, g *graph.Graph, c *roofline.Cluster, d decision.Decision, repeats int) error {
	ev, err := hw.NewEvaluator(g, c, hw.EvalOptions{Repeats: repeats})
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	defer ev.Close()
	_, rep, err := ev.Measure(ctx, d)
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	e.Measured = &placements.Measured{
		StepTime: median(rep.StepTimes), Runs: rep.StepTimes, Predicted: rep.Predicted,
		Mapping: rep.Mapping, Shared: rep.Shared, GPUs: rep.GPUs, Notes: rep.Notes,
	}
	for _, c := range rep.Classes {
		e.Measured.Classes = append(e.Measured.Classes, placements.ClassTime{Class: c.Class.String(), Kernels: c.Kernels, Predicted: c.Predicted, Measured: c.Measured})
	}
	return nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := append([]float64(nil), x...)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// execNote says how the step is costed where the graph records execution
// settings or --tf32 overrides them ("" otherwise): the settings, and
// which f32 ops run on TF32 tensor cores and who said so.
func execNote(g *graph.Graph, h *roofline.Hardware, override *roofline.TF32) string {
	e := g.Execution()
	if e == nil && override == nil {
		return ""
	}
	var parts []string
	if e != nil {
		if e.Device != "" {
			parts = append(parts, e.Device)
		}
		if e.OptimizerImpl != "" {
			parts = append(parts, strings.TrimSpace(e.OptimizerImpl+" "+e.Optimizer))
		}
		if dt, on := e.AutocastDType(); on {
			parts = append(parts, "autocast "+dt.String())
		}
		if e.CuDNNRNN {
			parts = append(parts, "cuDNN RNNs")
		}
		if e.CUDAGraphs {
			parts = append(parts, "CUDA graphs")
		}
		if e.Compile != "" {
			parts = append(parts, "torch.compile "+e.Compile)
		}
	}
	tf := roofline.ResolveTF32(g, h, override)
	from := "the hardware's"
	switch {
	case override != nil:
		from = "--tf32"
	case e != nil:
		from = "the graph's"
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	t := fmt.Sprintf("TF32 matmuls %s, convs %s (%s)", onOff(tf.MatMul), onOff(tf.Conv), from)
	if len(parts) == 0 {
		return t
	}
	return strings.Join(parts, ", ") + "; " + t
}

// reservedPerDevice fills each device's reserved memory (DeviceStats):
// PyTorch's caching allocator simulated (evaluate/alloc) on the device's
// allocation trace, the tensors' lifetimes in the order the simulation
// ran the ops (sc's schedule: its kernels by start), with and without
// expandable segments; only where the trace's peak of tensor bytes is
// the simulation's peak memory within 1% (transfers are timed in the
// simulation, not in the trace). A schedule that does not run every op
// once leaves them unset.
func reservedPerDevice(ctx context.Context, e *placements.Eval, sc evaluate.Scheduler, g *graph.Graph, d decision.Decision, devices int) error {
	_, sched, err := sc.Schedule(ctx, d)
	if err != nil {
		return err
	}
	ks := slices.Clone(sched.Kernels)
	slices.SortStableFunc(ks, func(a, b evaluate.Kernel) int { return cmp.Compare(a.Start, b.Start) })
	seen := make([]bool, g.NumOps())
	var order []int32
	for _, k := range ks {
		for _, v := range k.Ops {
			if int(v) >= len(seen) || v < 0 || seen[v] {
				return nil
			}
			seen[v] = true
			order = append(order, v)
		}
	}
	if len(order) != g.NumOps() || len(e.PerDevice) < devices {
		return nil
	}
	if order, err = alloc.Ordered(g, order); err != nil {
		return nil
	}
	traces, err := alloc.GraphTracesInOrder(g, d.Device, devices, order)
	if err != nil {
		return nil // a placement the trace cannot follow: no figure
	}
	for k, tr := range traces {
		seg, err1 := alloc.Replay(alloc.Config{}, tr)
		exp, err2 := alloc.Replay(alloc.Config{Expandable: true}, tr)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("eval: device %d's allocation trace: %w", k, errors.Join(err1, err2))
		}
		ds := &e.PerDevice[k]
		if d := float64(seg.PeakRequested) - float64(ds.PeakMemory); math.Abs(d) > 0.01*float64(ds.PeakMemory) {
			// The trace copies a tensor sent to another device at its
			// first consumer there and frees it on its own device at its
			// last consumer, where the simulation holds both for the
			// transfer's time: a device whose peak that moves gets no
			// figure.
			continue
		}
		ds.Reserved, ds.ReservedExpandable, ds.AllocatorAllocated = seg.PeakReserved, exp.PeakReserved, seg.PeakAllocated
	}
	return nil
}
