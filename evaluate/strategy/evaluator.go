package strategy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// ErrNotYet is the error for the parts of a strategy this evaluator does
// not cost yet: micro-batches through pipeline stages and FSDP's sharding
// (their schedules and collectives are in this package; composing them
// with the replica's simulation is the next step).
var ErrNotYet = errors.New("strategy: not costed yet")

// Evaluator scores decisions with strategies on a cluster of GPUs. A
// decision without a strategy is the roofline model's on the whole
// cluster. With R data-parallel replicas (DDP), the decision's placement
// is one replica's on the first devices = GPUs / R GPUs: it is simulated
// once, on its share of the global batch (graph.AtBatch, ceil(B / R)
// examples), and the replicas' gradient all-reduce is costed over the
// cluster's links (DDPAllReduce: buckets in the order the gradients are
// ready, overlapped with the backward pass); the step is the replica's
// plus what the all-reduce runs past the last gradient, since the
// optimizer step waits for it (PyTorch DDP's semantics). Evaluating R
// replicas costs one replica's simulation, never R.
type Evaluator struct {
	g    *graph.Graph
	c    *roofline.Cluster
	opts roofline.Options
	// whole scores decisions without a strategy: the roofline model's
	// evaluator on the whole cluster (its batches on every core).
	whole *roofline.Evaluator

	mu       sync.Mutex
	replicas map[[3]int]*replica // by (micro-batch, devices, optimizer shards)
}

var _ evaluate.Evaluator = (*Evaluator)(nil)

// NewEvaluator returns an evaluator for graph g on cluster c.
func NewEvaluator(g *graph.Graph, c *roofline.Cluster, opts roofline.Options) (*Evaluator, error) {
	m, err := roofline.NewModel(g, c, opts)
	if err != nil {
		return nil, err
	}
	return Wrap(m), nil
}

// Wrap returns the evaluator of m's graph on m's cluster: decisions
// without a strategy are m's (roofline.Evaluator), the others composed
// around one replica's model.
func Wrap(m *roofline.Model) *Evaluator {
	return &Evaluator{g: m.G, c: m.Cluster, opts: m.Opts, whole: roofline.NewEvaluator(m), replicas: map[[3]int]*replica{}}
}

// replica is one replica's model at one micro-batch on one device count,
// its gradients, and a pool of simulators with their recorders.
type replica struct {
	m     *roofline.Model
	grads []int32       // tensors that are parameter gradients
	phase []graph.Phase // each op's phase (graph.PhaseForward, graph.PhaseBackward, graph.PhaseUpdate)
	pool  sync.Pool
	// pipes are simulators recording phases, for micro-batched
	// decisions (pipelined).
	pipes sync.Pool
}

// finishRec records each op's finish time (a roofline.Recorder).
type finishRec struct{ finish []float64 }

func (f *finishRec) Kernel(_ int, ops []int32, _, end float64) {
	for _, i := range ops {
		f.finish[i] = end
	}
}
func (f *finishRec) Transfer(int, int, int, int, int64, float64, float64) {}
func (f *finishRec) Memory(int, float64, int64)                           {}

type simRec struct {
	s   *roofline.Simulator
	rec *finishRec
}

// Gradients lists g's parameter gradients, each once and complete: what
// data parallelism exchanges. In a graph with an optimizer step
// (OptimizerOps) whose updates own their parameters' state (ParamBytes:
// TensorFlow's ApplyAdam, the exporter's optimizer ops) a gradient is a
// tensor without a batch dimension that such an update reads from the
// backward pass or from an optimizer op on its way (a recurrent graph's
// sum of its time steps' partial weight gradients, a weight decay's
// term added, a reshape): the weight's gradient as the update reads it,
// once, never the partials before it. Otherwise, the tensors without a
// batch dimension that an op whose work scales with the batch produces
// (a weight's gradient: its bytes are the weight's, its FLOPs sum over
// the batch).
func Gradients(g *graph.Graph) []int32 {
	opt := OptimizerOps(g)
	var out []int32
	seen := make([]bool, g.NumTensors())
	for i, o := range opt {
		if !o || g.Op(i).ParamBytes == 0 {
			continue
		}
		for _, t := range g.Inputs(i) {
			ts := g.Tensor(int(t))
			if p := ts.Producer; seen[t] || ts.BatchDim != graph.NoBatch || (!opt[p] && g.Op(p).Phase() != graph.PhaseBackward) {
				continue
			}
			seen[t] = true
			out = append(out, int32(t))
		}
	}
	if out != nil {
		slices.Sort(out)
		return out
	}
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		if ts.BatchDim != graph.NoBatch {
			continue
		}
		if op := g.Op(ts.Producer); op.FLOPs > op.FixedFLOPs {
			out = append(out, int32(t))
		}
	}
	return out
}

// replicaAt is one replica's model at micro-batch b on devices GPUs,
// its optimizer step split over shards GPUs (ZeRO, FSDP: each steps
// 1/shards of the parameters; 1 = the whole step, DDP).
func (e *Evaluator) replicaAt(b, devices, shards int) (*replica, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := [3]int{b, devices, shards}
	if r, ok := e.replicas[key]; ok {
		return r, nil
	}
	g := e.g
	if b != g.Batch() {
		var err error
		if g, err = graph.AtBatch(e.g, b); err != nil {
			return nil, err
		}
	}
	if shards > 1 {
		f := make([]float64, g.NumOps())
		for i, opt := range OptimizerOps(g) {
			f[i] = 1
			if opt {
				f[i] = 1 / float64(shards)
			}
		}
		var err error
		if g, err = graph.ScaleOps(g, f); err != nil {
			return nil, err
		}
	}
	c := e.c
	if devices != e.c.Devices {
		var err error
		if c, err = roofline.NewCluster(e.c.Hardware, devices, e.c.Topology); err != nil {
			return nil, err
		}
	}
	m, err := roofline.NewModel(g, c, e.opts)
	if err != nil {
		return nil, err
	}
	r := &replica{m: m, grads: Gradients(g), phase: make([]graph.Phase, g.NumOps())}
	for i := range r.phase {
		r.phase[i] = g.Op(i).Phase()
	}
	r.pool.New = func() any {
		rec := &finishRec{finish: make([]float64, g.NumOps())}
		return &simRec{roofline.NewSimulator(m, rec), rec}
	}
	disp := m.DispatchTimes() // nil without a host model
	r.pipes.New = func() any {
		rec := newPhaseRec(r.phase, g, devices, disp)
		return &pipeSim{roofline.NewSimulator(m, rec), rec}
	}
	e.replicas[key] = r
	return r, nil
}

// Evaluate scores one decision with its strategy.
func (e *Evaluator) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Result{}, err
	}
	s := d.Strategy
	if s.IsZero() {
		return e.whole.Evaluate(ctx, d)
	}
	R := s.R()
	if e.c.Devices%R != 0 {
		return evaluate.Result{}, fmt.Errorf("strategy %s: %d replicas do not divide %d GPUs", s, R, e.c.Devices)
	}
	devices := e.c.Devices / R
	if err := s.CheckFor(e.g.Batch(), devices, e.c.Devices); err != nil {
		return evaluate.Result{}, err
	}
	if s.M() > 1 {
		if s.Shard != decision.NoShard && R > 1 {
			return evaluate.Result{}, fmt.Errorf("%w: micro-batches with sharding (strategy %s)", ErrNotYet, s)
		}
		return e.pipelined(d, devices, R, s.M())
	}
	b := (e.g.Batch() + R - 1) / R
	shards := 1
	if s.Shard != decision.NoShard {
		shards = R
	}
	rep, err := e.replicaAt(b, devices, shards)
	if err != nil {
		return evaluate.Result{}, err
	}
	one := d
	one.Strategy = decision.Strategy{}
	sr := rep.pool.Get().(*simRec)
	defer rep.pool.Put(sr)
	res, err := sr.s.Run(one)
	if err != nil {
		return evaluate.Result{}, err
	}
	g := rep.m.G
	grads := make([]Gradient, len(rep.grads))
	for i, t := range rep.grads {
		ts := g.Tensor(int(t))
		grads[i] = Gradient{Device: d.Device[ts.Producer], Bytes: ts.Bytes, Ready: sr.rec.finish[ts.Producer]}
	}
	if s.Shard == decision.FullShard {
		fwdEnd := 0.0 // when the replica's forward pass ends
		for i := range g.NumOps() {
			if !g.Op(i).Backward {
				fwdEnd = max(fwdEnd, sr.rec.finish[i])
			}
		}
		return e.fsdp(res, g, d.Device, devices, R, grads, fwdEnd)
	}
	if s.Shard == decision.GradShard {
		return e.zero2(res, g, d.Device, devices, R, grads, s.Bucket())
	}
	ar, err := DDPAllReduce(e.c, devices, R, grads, s.Bucket())
	if err != nil {
		return evaluate.Result{}, err
	}
	return e.compose(res, ar, devices, R, grads), nil
}

// OptimizerOps marks g's optimizer step: the ops whose work does not scale
// with the batch (update phase) that read, directly or through other such
// ops, what the backward pass produced (a gradient). Parameters and what
// prepares them for the forward pass are not in it.
func OptimizerOps(g *graph.Graph) []bool {
	opt := make([]bool, g.NumOps())
	for _, v := range g.Topo() {
		i := int(v)
		if g.Op(i).Phase() != graph.PhaseUpdate {
			continue
		}
		for _, t := range g.Inputs(i) {
			p := g.Tensor(int(t)).Producer
			if opt[p] || g.Op(p).Phase() == graph.PhaseBackward {
				opt[i] = true
				break
			}
		}
	}
	return opt
}

// zero2 composes ZeRO-2 (DeepSpeed stage 2, FSDP's SHARD_GRAD_OP) around
// one replica whose optimizer step is already split R ways (replicaAt):
// the gradients are reduce-scattered in DDP's buckets, overlapped with the
// backward pass as DDP's all-reduce is; the updated parameters are then
// all-gathered, exposed at the end of the step (DeepSpeed gathers them
// after the optimizer step). Memory: the replica's peak less (R-1)/R of
// its parameter state beyond the weights (gradients and optimizer state;
// a weight's bytes are its gradient's).
func (e *Evaluator) zero2(one *evaluate.Result, g *graph.Graph, dev []int, devices, R int, grads []Gradient, bucket int64) (evaluate.Result, error) {
	rs, err := BucketCollective(e.c, devices, R, grads, bucket, roofline.ReduceScatter)
	if err != nil {
		return evaluate.Result{}, err
	}
	weights := make([]int64, devices)
	for _, gr := range grads {
		weights[gr.Device] += gr.Bytes
	}
	gather := 0.0
	group := make([]int, R)
	for k, w := range weights {
		for i := range group {
			group[i] = i*devices + k
		}
		t, _, err := e.c.CollectiveTime(roofline.AllGather, group, w)
		if err != nil {
			return evaluate.Result{}, err
		}
		gather = max(gather, t)
	}
	state := make([]int64, devices)
	for i := range g.NumOps() {
		state[dev[i]] += g.Op(i).ParamBytes
	}
	n := devices * R
	out := evaluate.Result{
		StepTime: one.StepTime + rs.Exposed + gather, DeviceBusy: make([]float64, n), PeakMemory: make([]int64, n), Capacity: make([]int64, n),
		ColocationViolations: one.ColocationViolations, Transfers: one.Transfers * R, Kernels: one.Kernels * R,
		BytesMoved: one.BytesMoved * int64(R),
	}
	share := make([]int64, devices)
	for k, w := range weights {
		// A reduce-scatter and an all-gather each send (R-1)/R of the
		// bytes from every GPU.
		share[k] = ringShare(2, R, w)
	}
	traffic(&out, one, devices, R, 1, share)
	for r := 0; r < R; r++ {
		for k := 0; k < devices; k++ {
			i := r*devices + k
			sharded := max(state[k]-weights[k], 0)
			out.DeviceBusy[i] = one.DeviceBusy[k]
			out.PeakMemory[i] = one.PeakMemory[k] - sharded*int64(R-1)/int64(R)
			out.Capacity[i] = one.Capacity[k]
			out.OOM = out.OOM || out.PeakMemory[i] > out.Capacity[i]
		}
	}
	return out, nil
}

// fsdp composes FSDP (ZeRO-3) around one replica's result: each GPU keeps
// 1/R of its device's parameter state (weights, gradients, optimizer
// state: the ops' ParamBytes); every weight is all-gathered before its
// forward use and again before its backward use, and its gradient
// reduce-scattered after, among the R GPUs holding that device's part,
// one collective per weight (FSDP wraps layers; a weight is the finest
// unit). The forward's all-gathers overlap the forward pass, the
// backward's all-gathers and reduce-scatters the backward pass (FSDP
// prefetches the next unit); the step grows by what each phase's
// collectives take beyond the phase, plus the first weight's all-gather
// and the last gradient's reduce-scatter, which nothing hides. Memory: the
// replica's
// peak less (R-1)/R of the parameter state, plus the largest weight
// gathered whole.
func (e *Evaluator) fsdp(one *evaluate.Result, g *graph.Graph, dev []int, devices, R int, grads []Gradient, fwdEnd float64) (evaluate.Result, error) {
	state := make([]int64, devices)
	for i := range g.NumOps() {
		state[dev[i]] += g.Op(i).ParamBytes
	}
	gather := make([]float64, devices)  // one all-gather of every weight
	scatter := make([]float64, devices) // one reduce-scatter of every gradient
	first := make([]float64, devices)
	last := make([]float64, devices) // the reduce-scatter of the last gradient ready
	lastReady := make([]float64, devices)
	largest := make([]int64, devices)
	group := make([]int, R)
	for _, gr := range grads {
		k := gr.Device
		for i := range group {
			group[i] = i*devices + k
		}
		ag, _, err := e.c.CollectiveTime(roofline.AllGather, group, gr.Bytes)
		if err != nil {
			return evaluate.Result{}, err
		}
		rs, _, err := e.c.CollectiveTime(roofline.ReduceScatter, group, gr.Bytes)
		if err != nil {
			return evaluate.Result{}, err
		}
		gather[k] += ag
		scatter[k] += rs
		if first[k] == 0 {
			first[k] = ag
		}
		if gr.Ready >= lastReady[k] {
			last[k], lastReady[k] = rs, gr.Ready
		}
		largest[k] = max(largest[k], gr.Bytes)
	}
	exposed := 0.0
	for k := range gather {
		fwd := max(0, gather[k]-fwdEnd)
		bwd := max(0, gather[k]+scatter[k]-(one.StepTime-fwdEnd))
		exposed = max(exposed, first[k]+fwd+bwd+last[k])
	}
	n := devices * R
	out := evaluate.Result{
		StepTime: one.StepTime + exposed, DeviceBusy: make([]float64, n), PeakMemory: make([]int64, n), Capacity: make([]int64, n),
		ColocationViolations: one.ColocationViolations, Transfers: one.Transfers * R, Kernels: one.Kernels * R,
		BytesMoved: one.BytesMoved * int64(R),
	}
	share := make([]int64, devices)
	for _, gr := range grads {
		share[gr.Device] += gr.Bytes
	}
	for k, w := range share {
		// Each weight crosses (R-1)/R of its bytes per GPU three times.
		share[k] = ringShare(3, R, w)
	}
	traffic(&out, one, devices, R, 1, share)
	for r := 0; r < R; r++ {
		for k := 0; k < devices; k++ {
			i := r*devices + k
			out.DeviceBusy[i] = one.DeviceBusy[k]
			out.PeakMemory[i] = one.PeakMemory[k] - state[k] + (state[k]+int64(R)-1)/int64(R) + largest[k]
			out.Capacity[i] = one.Capacity[k]
			out.OOM = out.OOM || out.PeakMemory[i] > out.Capacity[i]
		}
	}
	return out, nil
}

// ringShare is what each of R GPUs sends, and receives, in times ring
// passes over b bytes: times (R-1)/R of them (an all-reduce is a
// reduce-scatter and an all-gather, 2 passes).
func ringShare(times, R int, b int64) int64 {
	return int64(times) * int64(R-1) * b / int64(R)
}

// traffic fills out's transfers and collectives for R replicas of one
// replica's result one on devices GPUs each: every replica's links as
// one's, m times (its micro-batches), and each GPU in the place of device
// k sending and receiving share[k] bytes in collectives; BytesMoved is
// their sum.
func traffic(out, one *evaluate.Result, devices, R, m int, share []int64) {
	n := devices * R
	out.LinkBytes = make([]int64, n*n)
	out.BytesMoved = one.BytesMoved * int64(R*m)
	if len(one.LinkBytes) == devices*devices {
		for r := range R {
			o := r * devices
			for s := range devices {
				for d := range devices {
					out.LinkBytes[(o+s)*n+o+d] = one.LinkBytes[s*devices+d] * int64(m)
				}
			}
		}
	}
	out.Collective, out.CollectiveBytes = nil, 0
	for _, b := range share {
		out.CollectiveBytes += b * int64(R)
	}
	if out.CollectiveBytes == 0 {
		return
	}
	out.Collective = make([]int64, n)
	for i := range out.Collective {
		out.Collective[i] = share[i%devices]
	}
	out.BytesMoved += out.CollectiveBytes
}

// compose builds the whole cluster's result from one replica's: every
// replica's devices as the first's, each holding its DDP buckets (a copy
// of its gradients: PyTorch's default, gradient_as_bucket_view off) on
// top of the replica's peak, the step longer by the exposed all-reduce,
// and the all-reduce's bytes counted as moved (a ring moves 2(R-1)/R of a
// bucket per GPU).
func (e *Evaluator) compose(one *evaluate.Result, ar *AllReduceResult, devices, R int, grads []Gradient) evaluate.Result {
	n := devices * R
	out := evaluate.Result{
		StepTime:             one.StepTime + ar.Exposed,
		DeviceBusy:           make([]float64, n),
		PeakMemory:           make([]int64, n),
		Capacity:             make([]int64, n),
		ColocationViolations: one.ColocationViolations,
		Transfers:            one.Transfers * R,
		Kernels:              one.Kernels * R,
	}
	bucket := make([]int64, devices)
	if R > 1 { // one replica has nothing to all-reduce, so no buckets
		for _, g := range grads {
			bucket[g.Device] += g.Bytes
		}
	}
	share := make([]int64, devices)
	for k, b := range bucket {
		share[k] = ringShare(2, R, b)
	}
	traffic(&out, one, devices, R, 1, share)
	for r := 0; r < R; r++ {
		for k := 0; k < devices; k++ {
			i := r*devices + k
			out.DeviceBusy[i] = one.DeviceBusy[k]
			out.PeakMemory[i] = one.PeakMemory[k] + bucket[k]
			out.Capacity[i] = one.Capacity[k]
			if out.PeakMemory[i] > out.Capacity[i] {
				out.OOM = true
			}
		}
	}
	return out
}

// EvaluateBatch scores ds: decisions without a strategy through the
// roofline evaluator's batch, the others on every core too (each worker
// takes the next decision; the replicas' simulators are pooled).
func (e *Evaluator) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	plain := true
	for i := range ds {
		plain = plain && ds[i].Strategy.IsZero()
	}
	if plain {
		return e.whole.EvaluateBatch(ctx, ds, out)
	}
	return evaluate.Workers(ctx, len(ds), func() (func(int) error, func()) {
		return func(i int) error {
			r, err := e.Evaluate(ctx, ds[i])
			out[i] = r
			return err
		}, nil
	})
}

// Trace writes d's timeline. With replicas it is one replica's (its GPUs,
// at its share of the batch; the gradient all-reduce is not drawn yet),
// and the result returned is the whole step's, as Evaluate's.
func (e *Evaluator) Trace(ctx context.Context, d decision.Decision, w io.Writer) (evaluate.Result, error) {
	s := d.Strategy
	if s.IsZero() {
		return e.whole.Trace(ctx, d, w)
	}
	res, err := e.Evaluate(ctx, d)
	if err != nil {
		return res, err
	}
	R := s.R()
	shards := 1
	if s.Shard != decision.NoShard {
		shards = R
	}
	rep, err := e.replicaAt((e.g.Batch()+R-1)/R, e.c.Devices/R, shards)
	if err != nil {
		return res, err
	}
	one := d
	one.Strategy = decision.Strategy{}
	if _, err := roofline.NewEvaluator(rep.m).Trace(ctx, one, w); err != nil {
		return res, err
	}
	return res, nil
}

// LowerBound is a step time no decision with strategy s beats on this
// evaluator's cluster (with or without fusion): the bound of one replica
// at its share of the batch on its GPUs, all-reduce left out.
func (e *Evaluator) LowerBound(s decision.Strategy, fusion bool) (float64, error) {
	R := s.R()
	if e.c.Devices%R != 0 || (R > 1 && e.g.Batch() == 0) {
		return 0, s.CheckFor(e.g.Batch(), e.c.Devices/max(R, 1), e.c.Devices)
	}
	b := e.g.Batch()
	if R > 1 {
		b = (b + R - 1) / R
	}
	r, err := e.replicaAt(b, e.c.Devices/R, 1)
	if err != nil {
		return 0, err
	}
	return r.m.LowerBound(fusion), nil
}
