package hw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// ErrNoCUDA is returned by everything that needs the CUDA executor in a
// binary built without the `cuda` build tag.
var ErrNoCUDA = errors.New("hw: this placer was built without CUDA; build bin/placer-cuda with 'make cuda' on a machine with the CUDA headers and run that")

// EvalOptions configure the measuring Evaluator.
type EvalOptions struct {
	// Repeats is the number of timed runs of each decision after one
	// discarded warm-up run (default 5); the step time is their median.
	Repeats int
	// GPUs caps the physical GPUs used (0 = every GPU present, at most one
	// per device of the cluster). With fewer GPUs than devices, devices
	// run as streams on shared GPUs (see Plan.Mapping).
	GPUs int
	// FirstGPU is the CUDA ordinal of the first GPU used.
	FirstGPU int
}

// RunTimes is what an executor measured for one plan.
type RunTimes struct {
	// Step is the wall time of every run, warm-up first: from the first
	// enqueue to the completion of every stream, in seconds.
	Step []float64
	// Busy is, per logical device, the summed GPU time of its kernels in
	// one extra run with timing events around every kernel.
	Busy []float64
	// Kernel is, per kernel of the plan, its GPU time in that extra run
	// (nil if the executor did not time kernels one by one).
	Kernel []float64
	// Notes are what the executor had to change, e.g. a precision the GPU
	// lacks that ran as FP32.
	Notes []string
}

// executor runs plans on GPUs: the thin layer behind the `cuda` tag.
type executor interface {
	// GPUs is the number of physical GPUs it drives.
	GPUs() int
	// Run enqueues p runs times and measures it.
	Run(ctx context.Context, p *Plan, runs int) (RunTimes, error)
	Close() error
}

// Report describes one measured evaluation beyond evaluate.Result.
type Report struct {
	// StepTimes are the timed runs (warm-up excluded), seconds.
	StepTimes []float64
	// Warmup is the discarded first run, seconds.
	Warmup float64
	// Predicted is the roofline model's step time for the same plan.
	Predicted float64
	// Mapping says how logical devices map onto GPUs (see Plan.Mapping);
	// Shared is true when some GPU runs several devices as streams.
	Mapping string
	Shared  bool
	GPUs    int
	Kernels int
	Copies  int
	Notes   []string
	// Classes compares predicted and measured kernel time per op class
	// (a fused kernel counts under its dominant op's class).
	Classes []ClassTime
}

// ClassTime is the summed kernel time of one op class, as the roofline
// model predicts it and as the GPU measured it.
type ClassTime struct {
	Class     graph.Class
	Kernels   int
	Predicted float64 // seconds
	Measured  float64 // seconds
}

var _ evaluate.Evaluator = (*Evaluator)(nil)

// Evaluator measures decisions on real GPUs: it implements
// evaluate.Evaluator (a batch runs one decision after another). Each evaluation plans the decision (NewPlan), runs
// the plan Repeats+1 times and once more with per-kernel timing, and
// returns the roofline model's result with StepTime (median of the timed
// runs) and DeviceBusy replaced by measurements. Peak memory, OOM,
// co-location and bytes moved stay the model's: the executor moves the
// right number of bytes through scratch buffers, not the real tensors.
// An Evaluator is safe for concurrent use; evaluations run one at a time.
type Evaluator struct {
	m    *roofline.Model
	o    EvalOptions
	mu   sync.Mutex
	ex   executor
	last Report
}

// NewEvaluator returns an Evaluator of graph g on cluster c, driving the
// GPUs of this machine (ErrNoCUDA in a binary built without the `cuda`
// tag). Close it to release the GPUs.
func NewEvaluator(g *graph.Graph, c *roofline.Cluster, o EvalOptions) (*Evaluator, error) {
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		return nil, err
	}
	ex, err := newExecutor(o, c.Devices)
	if err != nil {
		return nil, err
	}
	return newEvaluatorWith(m, o, ex), nil
}

func newEvaluatorWith(m *roofline.Model, o EvalOptions, ex executor) *Evaluator {
	if o.Repeats <= 0 {
		o.Repeats = 5
	}
	return &Evaluator{m: m, o: o, ex: ex}
}

// Evaluate measures decision d (see Evaluator).
func (e *Evaluator) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	r, _, err := e.Measure(ctx, d)
	return r, err
}

// Measure is Evaluate that also returns the Report.
func (e *Evaluator) Measure(ctx context.Context, d decision.Decision) (evaluate.Result, Report, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ex == nil {
		return evaluate.Result{}, Report{}, errors.New("hw: evaluator is closed")
	}
	p, err := NewPlan(e.m, d, PlanOptions{GPUs: e.ex.GPUs()})
	if err != nil {
		return evaluate.Result{}, Report{}, err
	}
	times, err := e.ex.Run(ctx, p, e.o.Repeats+1)
	if err != nil {
		return evaluate.Result{}, Report{}, err
	}
	r, rep, err := assemble(p, times)
	if err != nil {
		return evaluate.Result{}, Report{}, err
	}
	e.last = rep
	return r, rep, nil
}

// assemble merges the plan's modelled result with the measurements.
func assemble(p *Plan, t RunTimes) (evaluate.Result, Report, error) {
	if len(t.Step) < 2 {
		return evaluate.Result{}, Report{}, fmt.Errorf("hw: %d runs measured, need a warm-up and at least one timed run", len(t.Step))
	}
	if len(t.Busy) != p.Devices {
		return evaluate.Result{}, Report{}, fmt.Errorf("hw: busy times for %d devices, plan has %d", len(t.Busy), p.Devices)
	}
	r := p.Model.Clone()
	timed := append([]float64(nil), t.Step[1:]...)
	r.StepTime = Median(timed)
	copy(r.DeviceBusy, t.Busy)
	rep := Report{
		StepTimes: timed, Warmup: t.Step[0], Predicted: p.Model.StepTime,
		Mapping: p.Mapping(), Shared: p.Shared(), GPUs: p.GPUs,
		Kernels: len(p.Kernels), Copies: len(p.Copies), Notes: t.Notes,
	}
	if len(t.Kernel) == len(p.Kernels) {
		var by [graph.NumClasses]ClassTime
		for k, kn := range p.Kernels {
			c := &by[kn.Class]
			c.Class = kn.Class
			c.Kernels++
			c.Predicted += kn.ModelEnd - kn.ModelStart
			c.Measured += t.Kernel[k]
		}
		for _, c := range by {
			if c.Kernels > 0 {
				rep.Classes = append(rep.Classes, c)
			}
		}
	}
	return r, rep, nil
}

// EvaluateBatch measures ds one after another (a GPU runs one decision
// at a time); out[i] receives the result of ds[i].
func (e *Evaluator) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	return evaluate.Serial(ctx, e, ds, out)
}

// Trace measures d and writes a Chrome trace of it: the roofline model's
// timeline of the plan, titled as predicted, and beside it a "measured"
// track with each timed run's step (back to back from 0) and its median.
func (e *Evaluator) Trace(ctx context.Context, d decision.Decision, w io.Writer) (evaluate.Result, error) {
	r, rep, err := e.Measure(ctx, d)
	if err != nil {
		return evaluate.Result{}, err
	}
	_, tl, err := roofline.Simulate(e.m, d)
	if err != nil {
		return evaluate.Result{}, err
	}
	var spans []roofline.Span
	t := 0.0
	for i, st := range rep.StepTimes {
		spans = append(spans, roofline.Span{Track: "timed runs", Name: fmt.Sprintf("run %d", i+1), Start: t, End: t + st})
		t += st
	}
	spans = append(spans, roofline.Span{Track: "median step", Name: "median", Start: 0, End: r.StepTime})
	title := fmt.Sprintf("predicted by the roofline model: %s x%d (%s)", e.m.Cluster.Hardware.Name, e.m.Devices(), e.m.G.Name())
	return r, roofline.WriteTraceWith(w, e.m, tl, title, spans)
}

// LastReport is the Report of the latest evaluation.
func (e *Evaluator) LastReport() Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

// Plan returns the kernel plan the evaluator would run for d, without
// running it.
func (e *Evaluator) Plan(d decision.Decision) (*Plan, error) {
	if !d.Strategy.IsZero() {
		return nil, fmt.Errorf("hw: strategy %s: measuring replicas and pipelines is not built yet; measure one replica's placement", d.Strategy)
	}
	gpus := 0
	e.mu.Lock()
	if e.ex != nil {
		gpus = e.ex.GPUs()
	}
	e.mu.Unlock()
	return NewPlan(e.m, d, PlanOptions{GPUs: gpus})
}

// Close releases the GPUs.
func (e *Evaluator) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ex == nil {
		return nil
	}
	err := e.ex.Close()
	e.ex = nil
	return err
}

// Median is the median of xs (the mean of the middle two for an even
// count; 0 for none). xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = append([]float64(nil), xs...)
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
