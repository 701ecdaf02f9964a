package strategy

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
)

// Phase of an op in a pipelined step: the forward and backward passes
// run once per micro-batch; the update (ops whose work does not scale
// with the batch: optimizer steps, parameter ops) once per step.
const (
	phaseForward = iota
	phaseBackward
	phaseUpdate
)

func phaseOf(op *graph.Op) int {
	switch {
	case op.FLOPs <= op.FixedFLOPs && op.BytesRead <= op.FixedBytesRead && op.BytesWritten <= op.FixedBytesWritten:
		return phaseUpdate
	case op.Backward:
		return phaseBackward
	}
	return phaseForward
}

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
		if first[d] < 0 && phaseOf(g.Op(int(i))) == phaseForward {
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
		if phaseOf(g.Op(p)) != phaseForward {
			continue
		}
		for _, c := range ts.Consumers {
			a, b := device[p], device[c]
			if a != b && phaseOf(g.Op(c)) == phaseForward && !arcs[a][b] {
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
			pp, pc := phaseOf(g.Op(p)), phaseOf(g.Op(c))
			switch {
			case pp == phaseForward && pc == phaseForward && (stage[a] < 0 || stage[b] < 0 || stage[b] < stage[a]):
				return nil, 0, fmt.Errorf("not a pipeline: the forward pass goes from device %d to %d and back (op %q reads %q)", b, a, g.Op(c).Name, g.Op(p).Name)
			case pp == phaseBackward && pc == phaseBackward && stage[b] > stage[a]:
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

// phaseRec records, per device, the busy time of each phase, and per
// stage boundary the time forward and backward transfers take.
type phaseRec struct {
	g      *graph.Graph
	busy   [][3]float64 // device -> phase -> seconds
	sendF  map[[2]int]float64
	sendB  map[[2]int]float64
	finish []float64
}

func newPhaseRec(g *graph.Graph, devices int) *phaseRec {
	return &phaseRec{g: g, busy: make([][3]float64, devices), sendF: map[[2]int]float64{}, sendB: map[[2]int]float64{}, finish: make([]float64, g.NumOps())}
}

func (r *phaseRec) Kernel(dev int, ops []int32, start, end float64) {
	r.busy[dev][phaseOf(r.g.Op(int(ops[0])))] += end - start
	for _, i := range ops {
		r.finish[i] = end
	}
}

func (r *phaseRec) Transfer(_, src, dst, tensor int, _ int64, start, end float64) {
	if phaseOf(r.g.Op(r.g.Tensor(tensor).Producer)) == phaseBackward {
		r.sendB[[2]int{src, dst}] += end - start
	} else {
		r.sendF[[2]int{src, dst}] += end - start
	}
}

func (r *phaseRec) Memory(int, float64, int64) {}

// pipelined costs decision d (M micro-batches of b examples through the
// placement's stages, R replicas) from one simulation of one micro-batch:
// each stage's forward and backward time per micro-batch and the sends
// between stages go through the schedule (Pipeline); the update runs once
// after the last micro-batch; with replicas, the gradient all-reduce runs
// after it too, exposed whole (the last micro-batch's backward could hide
// part of it: not counted). Memory: a stage holds its parameter state
// and, per micro-batch in flight, one micro-batch's activations (the
// simulation's peak less the parameter state).
func (e *Evaluator) pipelined(d decision.Decision, devices, R, M int) (evaluate.Result, error) {
	s := d.Strategy
	B := e.g.Batch()
	b := (B + R*M - 1) / (R * M)
	rep, err := e.replicaAt(b, devices)
	if err != nil {
		return evaluate.Result{}, err
	}
	g := rep.m.G
	stage, S, err := Stages(g, d.Device, devices)
	if err != nil {
		return evaluate.Result{}, fmt.Errorf("strategy %s: %w", s, err)
	}
	one := d
	one.Strategy = decision.Strategy{}
	rec := newPhaseRec(g, devices)
	sim := newSim(rep, rec)
	res, err := sim.Run(one)
	if err != nil {
		return evaluate.Result{}, err
	}
	order := make([]int, S) // stage -> device
	for k, st := range stage {
		if st >= 0 {
			order[st] = k
		}
	}
	stages := make([]Stage, S)
	update := 0.0
	for st, k := range order {
		stages[st] = Stage{Forward: rec.busy[k][phaseForward], Backward: rec.busy[k][phaseBackward]}
		update = max(update, rec.busy[k][phaseUpdate])
		if st+1 < S {
			stages[st].SendForward = rec.sendF[[2]int{k, order[st+1]}]
			stages[st].SendBackward = rec.sendB[[2]int{order[st+1], k}]
		}
	}
	pr, err := Pipeline(stages, M, s.Sched())
	if err != nil {
		return evaluate.Result{}, err
	}
	step := pr.Makespan + update
	grads := make([]Gradient, len(rep.grads))
	for i, t := range rep.grads {
		ts := g.Tensor(int(t))
		grads[i] = Gradient{Device: d.Device[ts.Producer], Bytes: ts.Bytes}
	}
	var ar float64
	if R > 1 {
		a, err := DDPAllReduce(e.c, devices, R, grads, s.Bucket())
		if err != nil {
			return evaluate.Result{}, err
		}
		ar = a.Done[0]
		for _, t := range a.Done {
			ar = max(ar, t)
		}
	}
	state := make([]int64, devices)
	for i := range g.NumOps() {
		state[d.Device[i]] += g.Op(i).ParamBytes
	}
	n := devices * R
	out := evaluate.Result{
		StepTime: step + ar, DeviceBusy: make([]float64, n), PeakMemory: make([]int64, n), Capacity: make([]int64, n),
		ColocationViolations: res.ColocationViolations, Transfers: res.Transfers * M * R, Kernels: res.Kernels * M * R,
		BytesMoved: res.BytesMoved * int64(M*R),
	}
	for r := 0; r < R; r++ {
		for k := 0; k < devices; k++ {
			i := r*devices + k
			bz := rec.busy[k]
			out.DeviceBusy[i] = float64(M)*(bz[phaseForward]+bz[phaseBackward]) + bz[phaseUpdate]
			act := max(res.PeakMemory[k]-state[k], 0)
			held := int64(1)
			if st := stage[k]; st >= 0 {
				held = int64(pr.InFlight[st])
			}
			out.PeakMemory[i] = state[k] + held*act
			out.Capacity[i] = res.Capacity[k]
			out.OOM = out.OOM || out.PeakMemory[i] > out.Capacity[i]
		}
	}
	return out, nil
}
