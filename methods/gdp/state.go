package gdp

import (
	"errors"
	"math"
	"sort"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn/graphsage"
	"github.com/placer/placer/optimize"
)

// NumStateHints is the number of per-op hints that describe a decision's
// schedule (stateHints), to let the policy see why its anchor is slow
// (docs/history.md, "State hints"). go-scored's state features read them; a
// policy whose HintDim is NumHints + NumStateHints has room for them after
// Hints'.
const NumStateHints = 6

// Columns of the state hints, per op. Every value is a non-negative
// magnitude that the policy's features log-scale and standardize per
// graph (times in microseconds, bytes in KiB, as Hints'). A unit's
// feature sums its ops' hints; the state hints are each op's value
// divided by its unit's op count, so that a unit sees its ops' mean.
const (
	stateSlack    = iota // total float of the op's kernel: how much later it could end without delaying the step
	stateCritical        // the kernel's duration if it is on the critical path (no float), else 0
	stateStart           // when the kernel started
	stateIdle            // how long the op's device is idle in the step
	stateHeadroom        // the op's device's free memory at its peak, KiB
	stateCross           // bytes the op receives from or sends to other devices, KiB
)

// usesState reports whether a policy with hintDim hints per op reads the
// state hints after the static ones.
func usesState(hintDim int) bool { return hintDim == NumHints+NumStateHints }

// hintsFor returns the hints a policy with hintDim hints per op is
// prepared with: Hints(p), followed by zero state hints when it has room
// for them.
func hintsFor(p *optimize.Problem, hintDim int) []float64 {
	static := Hints(p)
	if !usesState(hintDim) {
		return static
	}
	h := make([]float64, len(static)*hintDim)
	for i, v := range static {
		h[i*hintDim] = v
	}
	return h
}

// scheduler returns what reports a decision's schedule on problem p: its
// cost model (what methods plan with, and where Hints come from), else
// its evaluator.
func scheduler(p *optimize.Problem) (evaluate.Scheduler, error) {
	if s, ok := p.Cost.(evaluate.Scheduler); ok {
		return s, nil
	}
	if s, ok := p.Evaluator.(evaluate.Scheduler); ok {
		return s, nil
	}
	return nil, errors.New("learn: neither the cost model nor the evaluator reports schedules; state hints need one that does (the roofline model)")
}

// stateHints returns NumStateHints values per op (op-major) describing
// schedule sc of a decision placing op o on device[o], with result res,
// each divided by the op count of its node of nd (nil nd: not divided).
//
// Slack is the critical-path method's total float on the realized
// schedule: a DAG of the kernels whose edges are the data and control
// dependencies between kernels (with the tensor's arrival on the
// consumer's device as the earliest the consumer could start) and the
// order of kernels on each device. A kernel's float is the least, over
// its successors, of the gap before the successor plus the successor's
// float, and the step's end minus its end for the last kernels; kernels
// with no float form the critical path.
func stateHints(g *graph.Graph, nd *graphsage.Nodes, device []int, res *evaluate.Result, sc *evaluate.Schedule) []float64 {
	const us, kib = 1e6, 1.0 / 1024
	n := g.NumOps()
	K := len(sc.Kernels)
	step := res.StepTime
	kOf := make([]int32, n)
	for i := range kOf {
		kOf[i] = -1
	}
	minTopo := make([]int, K)
	for k, kr := range sc.Kernels {
		minTopo[k] = n
		for _, o := range kr.Ops {
			kOf[o] = int32(k)
			minTopo[k] = min(minTopo[k], g.TopoIndex(int(o)))
		}
	}
	// The kernels in the order they ran; edges are followed only forward
	// in it, so ties among zero-length kernels cannot form a cycle.
	order := make([]int32, K)
	for k := range order {
		order[k] = int32(k)
	}
	ks := sc.Kernels
	sort.Slice(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if ks[x].Start != ks[y].Start {
			return ks[x].Start < ks[y].Start
		}
		if ks[x].End != ks[y].End {
			return ks[x].End < ks[y].End
		}
		return minTopo[x] < minTopo[y]
	})
	rank := make([]int32, K)
	for i, k := range order {
		rank[k] = int32(i)
	}
	type edge struct {
		to  int32
		gap float64
	}
	succ := make([][]edge, K)
	add := func(from, to int32, ready float64) {
		if from < 0 || to < 0 || from == to || rank[to] <= rank[from] {
			return
		}
		succ[from] = append(succ[from], edge{to, math.Max(0, ks[to].Start-ready)})
	}
	arrival := make(map[[2]int]float64, len(sc.Transfers))
	for _, t := range sc.Transfers {
		key := [2]int{t.Tensor, t.Dst}
		arrival[key] = math.Max(arrival[key], t.End)
	}
	for ti, t := range g.Tensors() {
		pk := kOf[t.Producer]
		if pk < 0 {
			continue
		}
		for _, c := range t.Consumers {
			ck := kOf[c]
			if ck < 0 {
				continue
			}
			ready := ks[pk].End
			if a, ok := arrival[[2]int{ti, ks[ck].Device}]; ok && ks[ck].Device != ks[pk].Device {
				ready = math.Max(ready, a)
			}
			add(pk, ck, ready)
		}
	}
	for _, e := range g.Control() {
		if f := kOf[e.From]; f >= 0 {
			add(f, kOf[e.To], ks[f].End)
		}
	}
	last := make(map[int]int32) // device -> its latest kernel so far
	for _, k := range order {
		if prev, ok := last[ks[k].Device]; ok {
			add(prev, k, ks[prev].End)
		}
		last[ks[k].Device] = k
	}
	float := make([]float64, K)
	for i := K - 1; i >= 0; i-- {
		k := order[i]
		f := step - ks[k].End
		for _, e := range succ[k] {
			f = math.Min(f, e.gap+float[e.to])
		}
		float[k] = math.Max(0, f)
	}
	tol := 1e-6 * step
	out := make([]float64, n*NumStateHints)
	for o := range n {
		row := out[o*NumStateHints : (o+1)*NumStateHints]
		dev := device[o]
		if k := kOf[o]; k >= 0 {
			row[stateSlack] = float[k] * us
			if float[k] <= tol {
				row[stateCritical] = (ks[k].End - ks[k].Start) * us
			}
			row[stateStart] = ks[k].Start * us
		}
		if dev < len(res.DeviceBusy) {
			row[stateIdle] = math.Max(0, step-res.DeviceBusy[dev]) * us
		}
		if dev < len(res.PeakMemory) && dev < len(res.Capacity) {
			row[stateHeadroom] = math.Max(0, float64(res.Capacity[dev]-res.PeakMemory[dev])) * kib
		}
	}
	// Bytes crossing devices: a tensor counts once per device it is sent
	// to, for its producer and for each consumer on that device.
	for _, t := range g.Tensors() {
		b := float64(t.Bytes) * kib
		src := device[t.Producer]
		var sent [64]bool // devices it went to (at most 64 are tracked)
		for _, c := range t.Consumers {
			dst := device[c]
			if dst == src {
				continue
			}
			out[c*NumStateHints+stateCross] += b
			if dst < len(sent) && !sent[dst] {
				sent[dst] = true
				out[t.Producer*NumStateHints+stateCross] += b
			}
		}
	}
	if nd != nil {
		for v := range nd.N {
			ms := nd.Members(v)
			inv := 1 / float64(len(ms))
			for _, o := range ms {
				for j := range NumStateHints {
					out[int(o)*NumStateHints+j] *= inv
				}
			}
		}
	}
	return out
}
