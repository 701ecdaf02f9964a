package strategy

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// Stages orders the devices of a placement as pipeline stages: a
// topological order of the devices by the forward tensors that cross
// between them (ties by each device's first forward op). The placement is
// a pipeline when that order exists (no forward tensor goes back to an
// earlier stage) and no backward tensor goes to a later one; the error
// names the first tensor that breaks it. stage[k] is device k's stage
// (-1: unused).
func Stages(g *graph.Graph, device []int, devices int) (stage []int, n int, err error) {
	first := make([]int, devices) // device -> topological index of its first forward op
	for k := range first {
		first[k] = -1
	}
	used := make([]bool, devices)
	for pos, i := range g.Topo() {
		d := device[i]
		used[d] = true
		if first[d] < 0 && g.Op(int(i)).Phase() == graph.PhaseForward {
			first[d] = pos
		}
	}
	arcs := make([][]bool, devices)
	for k := range arcs {
		arcs[k] = make([]bool, devices)
	}
	indeg := make([]int, devices)
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		p := ts.Producer
		if g.Op(p).Phase() != graph.PhaseForward {
			continue
		}
		for _, c := range ts.Consumers {
			a, b := device[p], device[c]
			if a != b && g.Op(c).Phase() == graph.PhaseForward && !arcs[a][b] {
				arcs[a][b] = true
				indeg[b]++
			}
		}
	}
	stage = make([]int, devices)
	for k := range stage {
		stage[k] = -1
	}
	for {
		best := -1
		for k := 0; k < devices; k++ {
			if used[k] && stage[k] < 0 && indeg[k] == 0 && (best < 0 || less(first[k], first[best])) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		stage[best] = n
		n++
		for k := 0; k < devices; k++ {
			if arcs[best][k] {
				indeg[k]--
			}
		}
	}
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		p := ts.Producer
		for _, c := range ts.Consumers {
			a, b := device[p], device[c]
			if a == b {
				continue
			}
			pp, pc := g.Op(p).Phase(), g.Op(c).Phase()
			switch {
			case pp == graph.PhaseForward && pc == graph.PhaseForward && (stage[a] < 0 || stage[b] < 0 || stage[b] < stage[a]):
				return nil, 0, fmt.Errorf("not a pipeline: the forward pass goes from device %d to %d and back (op %q reads %q)", b, a, g.Op(c).Name, g.Op(p).Name)
			case pp == graph.PhaseBackward && pc == graph.PhaseBackward && stage[b] > stage[a]:
				return nil, 0, fmt.Errorf("not a pipeline: backward op %q on device %d (stage %d) reads %q from device %d (stage %d)", g.Op(c).Name, b, stage[b], g.Op(p).Name, a, stage[a])
			}
		}
	}
	return stage, n, nil
}

// less orders first-forward-op indices, -1 (none) last.
func less(a, b int) bool {
	switch {
	case a < 0:
		return false
	case b < 0:
		return true
	}
	return a < b
}

// The kinds of transfer a pipelined evaluation tells apart (phaseRec.xfer).
const (
	xForward  = iota // produced by the forward pass
	xBackward        // produced by the backward pass, read by it
	xWeights         // produced by an update op (a weight), read in the passes
	xGrads           // read only by update ops (a gradient to its optimizer)
	xKinds
)

// phaseRec records, per device, the busy time of each phase (and, with a
// host model, its host thread's dispatch time), per pair of devices the
// time each kind of transfer takes, and per op when its kernel ends: its
// finish time, and how much backward work its device had done by then
// (for when its gradient is ready inside a stage's last backward).
type phaseRec struct {
	phase   []graph.Phase
	devices int
	busy    [][3]float64 // device -> phase -> seconds
	// disp is each graph op's dispatch time (roofline.Options.Host; a
	// kernel is dispatched at its first op's), nil without a host model;
	// host is, like busy, device -> phase -> seconds of dispatch.
	disp   []float64
	host   [][3]float64
	xfer   []float64 // ((src*devices+dst)*xKinds + kind) -> seconds
	finish []float64
	bwdAt  []float64
	g      *graph.Graph
	dev    []int // the run's placement
}

func newPhaseRec(phase []graph.Phase, g *graph.Graph, devices int, disp []float64) *phaseRec {
	r := &phaseRec{phase: phase, devices: devices, g: g, busy: make([][3]float64, devices),
		xfer:   make([]float64, devices*devices*xKinds),
		finish: make([]float64, len(phase)), bwdAt: make([]float64, len(phase))}
	if disp != nil {
		r.disp, r.host = disp, make([][3]float64, devices)
	}
	return r
}

// span is how long device k takes for phase ph of one micro-batch: its
// kernels' time, or with a host model the longer of that and its host
// thread's dispatch time for them (a host-bound stage waits for its
// host: the thread dispatches every micro-batch's kernels again).
func (r *phaseRec) span(k int, ph graph.Phase) float64 {
	if r.host == nil {
		return r.busy[k][ph]
	}
	return max(r.busy[k][ph], r.host[k][ph])
}

// reset clears what the last run recorded (finish and bwdAt are
// overwritten for every op a run places) and takes the next run's
// placement.
func (r *phaseRec) reset(dev []int) {
	clear(r.busy)
	clear(r.host)
	clear(r.xfer)
	r.dev = dev
}

// Kernel books a kernel's time to the earliest phase among its ops
// (forward, then backward, then update): a fused kernel that holds one
// op of a pass runs once per micro-batch, whatever else it absorbed.
func (r *phaseRec) Kernel(dev int, ops []int32, start, end float64) {
	ph := r.phase[ops[0]]
	for _, i := range ops[1:] {
		ph = min(ph, r.phase[i])
	}
	r.busy[dev][ph] += end - start
	if r.disp != nil {
		r.host[dev][ph] += r.disp[ops[0]]
	}
	for _, i := range ops {
		r.finish[i] = end
		r.bwdAt[i] = r.busy[dev][graph.PhaseBackward]
	}
}

func (r *phaseRec) Transfer(_, src, dst, tensor int, _ int64, start, end float64) {
	ts := r.g.Tensor(tensor)
	kind := xForward
	switch r.phase[ts.Producer] {
	case graph.PhaseBackward:
		kind = xBackward
	case graph.PhaseUpdate:
		kind = xWeights
	}
	if kind != xWeights {
		grads := true // every reader on dst is an update op
		for _, c := range ts.Consumers {
			if r.dev[c] == dst && r.phase[c] != graph.PhaseUpdate {
				grads = false
				break
			}
		}
		if grads {
			kind = xGrads
		}
	}
	r.xfer[(src*r.devices+dst)*xKinds+kind] += end - start
}

func (r *phaseRec) Memory(int, float64, int64) {}

type pipeSim struct {
	s   *roofline.Simulator
	rec *phaseRec
}

// pipelined costs decision d (M micro-batches of b examples, R replicas)
// from one simulation of one micro-batch. When the placement is a
// pipeline (Stages), each stage's forward and backward time per
// micro-batch and the sends between stages go through the schedule
// (Pipeline). Each stage steps its optimizer (the update: ops whose work
// does not scale with the batch) once its last backward is done and, with
// replicas, once its gradients are all-reduced among the R GPUs holding
// the stage: its gradients become ready during its last micro-batch's
// backward, in the order and at the share of that backward the simulation
// produced them, and fill DDP's buckets (DDPAllReduce), so the all-reduce
// of a late stage overlaps the backward passes of the stages before it.
// Memory: a stage holds its parameter state, its DDP buckets with
// replicas, and per micro-batch in flight one micro-batch's activations
// (the simulation's peak less the parameter state).
//
// A placement that is not a pipeline runs its micro-batches one after
// another (gradient accumulation): M times the micro-batch's step, the
// all-reduce overlapping the last one's backward only.
func (e *Evaluator) pipelined(d decision.Decision, devices, R, M int) (evaluate.Result, error) {
	s := d.Strategy
	B := e.g.Batch()
	b := (B + R*M - 1) / (R * M)
	rep, err := e.replicaAt(b, devices, 1)
	if err != nil {
		return evaluate.Result{}, err
	}
	g := rep.m.G
	one := d
	one.Strategy = decision.Strategy{}
	ps := rep.pipes.Get().(*pipeSim)
	defer rep.pipes.Put(ps)
	rec := ps.rec
	rec.reset(d.Device)
	res, err := ps.s.Run(one)
	if err != nil {
		return evaluate.Result{}, err
	}
	grads := make([]Gradient, len(rep.grads))
	for i, t := range rep.grads {
		p := g.Tensor(int(t)).Producer
		grads[i] = Gradient{Device: d.Device[p], Bytes: g.Tensor(int(t)).Bytes, Ready: rec.finish[p]}
	}
	stage, S, err := Stages(g, d.Device, devices)
	if err != nil {
		return e.accumulated(res, grads, devices, R, M, s.Bucket())
	}
	order := make([]int, S) // stage -> device
	for k, st := range stage {
		if st >= 0 {
			order[st] = k
		}
	}
	stages := make([]Stage, S)
	for st, k := range order {
		stages[st] = Stage{Forward: rec.span(k, graph.PhaseForward), Backward: rec.span(k, graph.PhaseBackward)}
	}
	prologue, epilogue := rec.crossings(stage, devices, stages)
	pr, err := Pipeline(stages, M, s.Sched())
	if err != nil {
		return evaluate.Result{}, err
	}
	// Each stage's last backward (micro-batch M-1 under both schedules).
	lastStart := make([]float64, devices)
	lastEnd := make([]float64, devices)
	for st, k := range order {
		i := (st*M+M-1)*2 + 1
		lastStart[k], lastEnd[k] = pr.Start[i], pr.Finish[i]
	}
	done, bucket, err := e.replicaReduce(rec, g, rep.grads, grads, lastStart, lastEnd, R, s.Bucket())
	if err != nil {
		return evaluate.Result{}, err
	}
	step := pr.Makespan
	for k := range devices {
		step = max(step, max(lastEnd[k], done[k])+rec.span(k, graph.PhaseUpdate))
	}
	step += prologue + epilogue
	state := make([]int64, devices)
	for i := range g.NumOps() {
		state[d.Device[i]] += g.Op(i).ParamBytes
	}
	n := devices * R
	out := evaluate.Result{
		StepTime: step, DeviceBusy: make([]float64, n), PeakMemory: make([]int64, n), Capacity: make([]int64, n),
		ColocationViolations: res.ColocationViolations, Transfers: res.Transfers * M * R, Kernels: res.Kernels * M * R,
	}
	share := make([]int64, devices)
	for k, b := range bucket { // the replicas' ring all-reduce of each GPU's gradients
		share[k] = ringShare(2, R, b)
	}
	traffic(&out, res, devices, R, M, share)
	for r := 0; r < R; r++ {
		for k := 0; k < devices; k++ {
			i := r*devices + k
			bz := rec.busy[k]
			out.DeviceBusy[i] = float64(M)*(bz[graph.PhaseForward]+bz[graph.PhaseBackward]) + bz[graph.PhaseUpdate]
			act := max(res.PeakMemory[k]-state[k], 0)
			held := int64(1)
			if st := stage[k]; st >= 0 {
				held = int64(pr.InFlight[st])
			}
			out.PeakMemory[i] = state[k] + held*act + bucket[k]
			out.Capacity[i] = res.Capacity[k]
			out.OOM = out.OOM || out.PeakMemory[i] > out.Capacity[i]
		}
	}
	return out, nil
}

// crossings adds to stages' sends what crosses between stages per micro-
// batch, from the transfers rec recorded between devices (stage: each
// device's stage, -1 none), and returns the prologue and the epilogue. A
// tensor from stage a to stage c is passed along every stage between (as
// the torch-plan runner does), so it is charged on every boundary it
// crosses: with the forward sends when it goes to a later stage, with
// the backward sends when it goes to an earlier one (an activation read
// by an earlier stage's backward, a gradient). Weights read on another
// stage are sent once per step before the first micro-batch, and
// gradients to an optimizer on another stage once after the last
// (prologue, epilogue: each GPU's sends one after another).
func (rec *phaseRec) crossings(stage []int, devices int, stages []Stage) (prologue, epilogue float64) {
	for a := range devices {
		var pro, epi float64
		for c := range devices {
			sa, sc := stage[a], stage[c]
			if a == c || sa < 0 || sc < 0 {
				continue
			}
			x := rec.xfer[(a*devices+c)*xKinds:]
			pro += x[xWeights]
			epi += x[xGrads]
			t := x[xForward] + x[xBackward]
			for cut := min(sa, sc); cut < max(sa, sc); cut++ {
				if sa < sc {
					stages[cut].SendForward += t
				} else {
					stages[cut].SendBackward += t
				}
			}
		}
		prologue, epilogue = max(prologue, pro), max(epilogue, epi)
	}
	return prologue, epilogue
}

// replicaReduce is when each device's gradients are all-reduced among
// the R replicas (none with R = 1) and the bytes of its DDP buckets: a
// gradient (grads, of tensors tensors) becomes ready in its device's last
// backward (lastStart to lastEnd) at the share of that backward the
// simulation produced it, and fills DDP's buckets of bucketSize bytes.
func (e *Evaluator) replicaReduce(rec *phaseRec, g *graph.Graph, tensors []int32, grads []Gradient, lastStart, lastEnd []float64, R int, bucketSize int64) ([]float64, []int64, error) {
	devices := len(lastStart)
	done := make([]float64, devices)
	bucket := make([]int64, devices)
	if R > 1 {
		for i := range grads {
			k := grads[i].Device
			frac := 1.0
			if bw := rec.busy[k][graph.PhaseBackward]; bw > 0 {
				frac = min(rec.bwdAt[g.Tensor(int(tensors[i])).Producer]/bw, 1)
			}
			grads[i].Ready = lastStart[k] + frac*(lastEnd[k]-lastStart[k])
			bucket[k] += grads[i].Bytes
		}
		ar, err := DDPAllReduce(e.c, devices, R, grads, bucketSize)
		if err != nil {
			return nil, nil, err
		}
		copy(done, ar.Done)
	}
	return done, bucket, nil
}

// accumulated costs M micro-batches run one after another through a
// placement that is not a pipeline (gradient accumulation): the step is
// M micro-batch steps, the last one's with its replicas' all-reduce
// overlapped (compose); memory as one micro-batch's, plus the buckets.
func (e *Evaluator) accumulated(one *evaluate.Result, grads []Gradient, devices, R, M int, bucket int64) (evaluate.Result, error) {
	ar, err := DDPAllReduce(e.c, devices, R, grads, bucket)
	if err != nil {
		return evaluate.Result{}, err
	}
	out := e.compose(one, ar, devices, R, grads)
	out.StepTime += float64(M-1) * one.StepTime
	out.Transfers *= M
	out.Kernels *= M
	out.BytesMoved += one.BytesMoved * int64((M-1)*R)
	for i := range out.LinkBytes {
		out.LinkBytes[i] *= int64(M)
	}
	for i := range out.DeviceBusy {
		out.DeviceBusy[i] *= float64(M)
	}
	return out, nil
}
