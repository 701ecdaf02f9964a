package classical

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

// chainLayer is one layer of a hand-made chain: its forward and backward
// times at the full batch (ms), its weight gradient (bytes), its parameter
// state (bytes), and the measured time its activation takes to the next
// layer (ms, at the full batch).
type chainLayer struct {
	fwd, bwd    float64
	grad, state int64
	send        float64
}

// chainGraph builds a training step of a chain of layers at batch 4:
// layer u is a forward op l<u>/fwd reading the previous layer's output and
// its weight (l<u>/param), a backward op l<u>/bwd reading its forward
// output and the next layer's backward output and writing its input's
// gradient and its weight's, and an update l<u>/adam co-located with the
// weight. Times are measured (they scale with the batch), the update and
// the parameter take none; skip adds a tensor from layer u to layer u+2
// for each u in it.
func chainGraph(t testing.TB, layers []chainLayer, skip []int) *graph.Graph {
	t.Helper()
	const B = 4
	b := graph.NewBuilder("chain")
	b.SetBatch(B)
	L := len(layers)
	fwd := make([]int, L)
	bwd := make([]int, L)
	for u, l := range layers {
		p := b.AddOp(graph.Op{Name: fmt.Sprintf("l%d/param", u), Type: "Parameter", ParamBytes: l.state, HasTime: true, Colocation: fmt.Sprintf("l%d", u)})
		fwd[u] = b.AddOp(graph.Op{Name: fmt.Sprintf("l%d/fwd", u), Type: "F", Class: graph.ClassMatMul, FLOPs: 1, HasTime: true, Time: l.fwd * 1e-3})
		b.AddTensorFull(graph.Tensor{Producer: p, Consumers: []int{fwd[u]}, Bytes: 8, BatchDim: graph.NoBatch, HasTransferTime: true})
	}
	for u := L - 1; u >= 0; u-- {
		bwd[u] = b.AddOp(graph.Op{Name: fmt.Sprintf("l%d/bwd", u), Type: "G", Class: graph.ClassMatMul, FLOPs: 1, HasTime: true, Time: layers[u].bwd * 1e-3, Backward: true})
	}
	for u, l := range layers {
		// The activation: to the next layer and to this layer's backward.
		cons := []int{bwd[u]}
		if u+1 < L {
			cons = append(cons, fwd[u+1])
		} else {
			cons = append(cons, bwd[u]) // the loss: the last forward feeds the backward
			cons = cons[:1]
		}
		b.AddTensorFull(graph.Tensor{Producer: fwd[u], Consumers: cons, Bytes: 4, BatchDim: 0, HasTransferTime: true, TransferTime: l.send * 1e-3})
		if u > 0 {
			b.AddTensorFull(graph.Tensor{Producer: bwd[u], Consumers: []int{bwd[u-1]}, Bytes: 4, BatchDim: 0, HasTransferTime: true, TransferTime: l.send * 1e-3})
		}
		a := b.AddOp(graph.Op{Name: fmt.Sprintf("l%d/adam", u), Type: "Adam", HasTime: true, Colocation: fmt.Sprintf("l%d", u), Backward: true})
		b.AddTensorFull(graph.Tensor{Producer: bwd[u], Consumers: []int{a}, Bytes: l.grad, BatchDim: graph.NoBatch, HasTransferTime: true})
	}
	for _, u := range skip {
		b.AddTensorFull(graph.Tensor{Producer: fwd[u], Consumers: []int{fwd[u+2]}, Bytes: 4, BatchDim: 0, HasTransferTime: true, TransferTime: layers[u].send * 1e-3})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPipeDreamHand: four layers of 1 ms forward and 2 ms backward at
// batch 4 (3 ms a layer, 12 ms in all; a layer takes 3b/4 ms at
// micro-batch b) on 4 GPUs, nothing to send. The plans' estimates (the
// first micro-batch through every stage, M-1 more at the slowest stage,
// then the slowest stage's all-reduce):
//
//   - R=4, M=1 (b=1): 3 ms + the all-reduce of all four gradients, A4;
//   - R=2, M=2 (b=1), two stages of two layers: 3 + 1.5 + A2 = 4.5 ms + the
//     all-reduce of two gradients over two replicas;
//   - R=1, M=4 (b=1), four stages of one layer: 3 + 3 x 0.75 = 5.25 ms (two
//     stages: 3 + 3 x 1.5 = 7.5);
//   - R=1, M=2 (b=2), four stages: 6 + 1.5 = 7.5 ms; R=1, M=1: 12 ms.
//
// Without gradients (A = 0) data parallelism wins (R=4, one stage); with
// 1 GB gradients (an all-reduce of seconds over PCIe) replication loses
// and the pipeline of four one-layer stages at M=4 wins; with no
// gradients but memory for only three layers' state (90% of 3.33 units),
// no stage may hold all four: R=2 with two stages of two layers.
func TestPipeDreamHand(t *testing.T) {
	const w = 1 << 30 // a layer's parameter state in the memory case
	for _, c := range []struct {
		name     string
		grad     int64
		capacity int64 // 0 = the preset's
		R, M     int
		cuts     []int
		estimate float64 // ms; < 0 = not checked
	}{
		{"no gradients: ddp", 0, 0, 4, 1, nil, 3},
		{"1 GB gradients: a pipeline", 1 << 30, 0, 1, 4, []int{1, 2, 3}, 5.25},
		{"memory for three layers", 0, 10 * w / 3, 2, 2, []int{2}, 4.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := make([]chainLayer, 4)
			for u := range ls {
				ls[u] = chainLayer{fwd: 1, bwd: 2, grad: c.grad}
				if c.capacity > 0 {
					ls[u].state = w
				}
			}
			g := chainGraph(t, ls, nil)
			p, err := methodstest.NewProblem(g, 4, c.capacity)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := newPDPlanner(context.Background(), p, 256)
			if err != nil {
				t.Fatal(err)
			}
			if pl.L != 4 {
				t.Fatalf("%d layers, want 4", pl.L)
			}
			plans, err := pl.plans(32)
			if err != nil {
				t.Fatal(err)
			}
			best := plans[0]
			if best.R != c.R || best.M != c.M || fmt.Sprint(best.Cuts) != fmt.Sprint(c.cuts) || !best.Fits {
				t.Errorf("best plan R=%d M=%d cuts %v fits %v, want R=%d M=%d cuts %v", best.R, best.M, best.Cuts, best.Fits, c.R, c.M, c.cuts)
			}
			if c.estimate >= 0 && math.Abs(best.Estimate*1e3-c.estimate) > 1e-9 {
				t.Errorf("estimate %.6f ms, want %.6f", best.Estimate*1e3, c.estimate)
			}
			// The method evaluates it among the others and returns a valid
			// pipeline.
			res, err := PipeDream{}.Optimize(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkPipeline(t, g, res, 4)
		})
	}
}

// checkPipeline fails t unless res's decision is a pipeline that the
// strategy evaluator accepts on gpus GPUs.
func checkPipeline(t *testing.T, g *graph.Graph, res *optimize.Result, gpus int) {
	t.Helper()
	d := res.Decision
	if err := d.Strategy.CheckFor(g.Batch(), gpus/d.Strategy.R(), gpus); err != nil {
		t.Errorf("strategy %s: %v", d.Strategy, err)
	}
	if _, _, err := strategy.Stages(g, d.Device, gpus/d.Strategy.R()); err != nil {
		t.Errorf("strategy %s: %v", d.Strategy, err)
	}
	if v := decision.ColocationViolations(g, d.Device); v != 0 {
		t.Errorf("%d co-location violations", v)
	}
}

// directObjective is the dynamic program's objective of a placement
// computed from the ops and tensors themselves, not from the layers'
// sums: per stage, its forward and backward time, the time of the
// tensors it sends out (once to later stages, once to earlier ones), and
// its update and all-reduce over M; +Inf when a stage holds more than
// limit (its state and min(S-s, M) micro-batches' activations).
func directObjective(pl *pdPlanner, dev []int, S, M, b int, ar func(int64) float64) float64 {
	p, g := pl.p, pl.p.Graph
	gb, _ := graph.AtBatch(g, b)
	bt := p.Cost.(batchTimer)
	comp := make([]float64, S)
	once := make([]float64, S)
	grad := make([]int64, S)
	state := make([]int64, S)
	act := make([]int64, S)
	for i := range g.NumOps() {
		t := bt.TimeOf(gb.Op(i))
		if g.Op(i).Phase() == graph.PhaseUpdate {
			once[dev[i]] += t
		} else {
			comp[dev[i]] += t
		}
		state[dev[i]] += g.Op(i).ParamBytes
	}
	for t := range gb.NumTensors() {
		ts := gb.Tensor(t)
		s := dev[ts.Producer]
		prod := g.Op(ts.Producer)
		if ts.BatchDim == graph.NoBatch && prod.FLOPs > prod.FixedFLOPs {
			grad[s] += ts.Bytes
		}
		if !prod.Alias {
			act[s] += int64(pl.ratio * float64(ts.Bytes))
		}
		later, earlier := false, false
		for _, c := range ts.Consumers {
			later = later || dev[c] > s
			earlier = earlier || dev[c] < s
		}
		x := ts.TransferTime
		if !ts.HasTransferTime {
			x = p.Cost.TransferTime(0, 1, ts.Bytes)
		}
		if later {
			comp[s] += x
		}
		if earlier {
			comp[s] += x
		}
	}
	obj := 0.0
	for s := range S {
		if pl.limit > 0 && state[s]+int64(min(S-s, M))*act[s] > pl.limit {
			return math.Inf(1)
		}
		o := once[s]
		if ar != nil {
			o += ar(grad[s])
		}
		obj = max(obj, comp[s]+o/float64(M))
	}
	return obj
}

// compositions calls f with every split of L layers into k non-empty
// contiguous stages (the cuts).
func compositions(L, k int, f func(cuts []int)) {
	var rec func(from, left int, cuts []int)
	rec = func(from, left int, cuts []int) {
		if left == 1 {
			f(cuts)
			return
		}
		for c := from + 1; c <= L-left+1; c++ {
			rec(c, left-1, append(cuts, c))
		}
	}
	rec(0, k, nil)
}

// TestPipeDreamMatchesBruteForce: on random chains (3 to 7 layers, random
// times, sends, gradients, state and skip connections), for every R, M
// and number of stages, the dynamic program's least objective equals the
// least over every split of the objective computed from the split's
// placement op by op, and its split attains it.
func TestPipeDreamMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 30; trial++ {
		L := 3 + rng.IntN(5)
		ls := make([]chainLayer, L)
		for u := range ls {
			ls[u] = chainLayer{fwd: 0.1 + rng.Float64(), bwd: 0.2 + 2*rng.Float64(), grad: rng.Int64N(200 << 20), state: rng.Int64N(4 << 30), send: rng.Float64() * 0.5}
		}
		var skip []int
		for u := 0; u+2 < L; u++ {
			if rng.IntN(3) == 0 {
				skip = append(skip, u)
			}
		}
		g := chainGraph(t, ls, skip)
		var capacity int64
		if trial%2 == 1 {
			capacity = 6 << 30
		}
		p, err := methodstest.NewProblem(g, 4, capacity)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := newPDPlanner(context.Background(), p, 256)
		if err != nil {
			t.Fatal(err)
		}
		if pl.L != L {
			t.Fatalf("trial %d: %d layers, want %d", trial, pl.L, L)
		}
		for _, R := range []int{1, 2, 4} {
			ar := pl.allReduce(R)
			for _, M := range []int{1, 2, 4 / R} {
				b := (g.Batch() + R*M - 1) / (R * M)
				c, err := pl.costs(b)
				if err != nil {
					t.Fatal(err)
				}
				prob := &pdProblem{Units: c.units, Egress: c.egress, M: M, Stages: 4 / R, Limit: pl.limit, AllReduce: ar}
				best, cuts := pdSolve(prob)
				for k := 1; k <= min(4/R, L); k++ {
					brute := math.Inf(1)
					compositions(L, k, func(cs []int) {
						dev := pl.decision(pdPlan{R: R, M: M, Cuts: cs}).Device
						brute = min(brute, directObjective(pl, dev, k, M, b, ar))
					})
					if !close(best[k], brute) {
						t.Fatalf("trial %d R=%d M=%d k=%d: dynamic program %v, brute force %v", trial, R, M, k, best[k], brute)
					}
					if !math.IsInf(best[k], 1) {
						dev := pl.decision(pdPlan{R: R, M: M, Cuts: cuts[k]}).Device
						if got := directObjective(pl, dev, k, M, b, ar); !close(got, best[k]) {
							t.Fatalf("trial %d R=%d M=%d k=%d: its split %v costs %v, want %v", trial, R, M, k, cuts[k], got, best[k])
						}
					}
				}
			}
		}
	}
}

func close(a, b float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-9)
}

// TestPipeDreamWorkload: on trxl2 (a transformer with batch marks) at 4
// and 8 GPUs over NVSwitch and PCIe, the result is a pipeline the
// strategy evaluator accepts, and never slower than gpipe's, 1f1b's or
// ddp's.
func TestPipeDreamWorkload(t *testing.T) {
	g, err := workloads.Build("trxl2")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{4, 8} {
		for _, topo := range []string{"nvswitch", "pcie"} {
			h, _ := roofline.Preset("v100")
			c, err := roofline.NewCluster(h, n, topo)
			if err != nil {
				t.Fatal(err)
			}
			p, err := methodstest.RooflineProblem(g, c, roofline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := PipeDream{}.Optimize(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkPipeline(t, g, res, n)
			for _, o := range []optimize.Optimizer{Pipeline{Schedule: decision.GPipe}, Pipeline{Schedule: decision.OneFOneB}, DDP{}} {
				r, err := o.Optimize(context.Background(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				// gpipe's M = 1 placement is a single-replica one whose
				// branches the simulator overlaps; pipedream's M = 1 plan
				// with every GPU differs from it by 0.01 ms on trxl2.
				if res.Eval.StepTime > r.Eval.StepTime*1.001 {
					t.Errorf("%d GPUs %s: pipedream %.3f ms (%s), %s %.3f ms", n, topo, res.Eval.StepTime*1e3, res.Decision.Strategy, o.Name(), r.Eval.StepTime*1e3)
				}
			}
		}
	}
}

// TestPipeDreamNoBatch: a graph without batch information is ErrNoBatch.
func TestPipeDreamNoBatch(t *testing.T) {
	b := graph.NewBuilder("nobatch")
	b.AddOp(graph.Op{Name: "a", Type: "A", Class: graph.ClassMatMul, FLOPs: 1})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (PipeDream{}).Optimize(context.Background(), p, nil); err != ErrNoBatch {
		t.Errorf("error %v, want ErrNoBatch", err)
	}
}
