package classical

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// MemoryHeadroom is the fraction of each device's memory the
// memory-aware heuristics (metis, gp-dfs, m-topo, m-etf) leave free when
// they plan: they place by an estimate (parameters plus a share of the
// activations), and received tensors and concurrency make the true peak
// somewhat higher.
const MemoryHeadroom = 0.10

// heuristic runs a one-shot method: build computes the decision (already
// honouring the tasks through complete), which is evaluated once. When ctx
// is cancelled before build finishes, the problem's Base is returned with
// status Cancelled.
func heuristic(ctx context.Context, name string, p *optimize.Problem, s *optimize.Settings, build func() (decision.Decision, error)) (*optimize.Result, error) {
	tr := optimize.NewTracker(name, p, s, 0)
	if ctx.Err() != nil {
		return tr.Result(ctx, p.Start())
	}
	d, err := build()
	if err != nil {
		return nil, err
	}
	d = p.Complete(d)
	if ctx.Err() != nil {
		return tr.Result(ctx, p.Start())
	}
	if _, err := tr.Evaluate(ctx, d); err != nil && !errors.Is(err, optimize.ErrStopped) {
		return nil, err
	}
	tr.Step()
	return tr.Result(ctx, d)
}

// groups lists the members of each co-location group, in op order.
func groups(g *graph.Graph) [][]int32 {
	gs := make([][]int32, g.NumColocationGroups())
	for i := 0; i < g.NumOps(); i++ {
		if c := g.Colocation(i); c >= 0 {
			gs[c] = append(gs[c], int32(i))
		}
	}
	return gs
}

// units are the things a placement moves: one per co-location group and
// one per op outside any group. unitOf maps an op to its unit; members
// lists each unit's ops.
type units struct {
	unitOf  []int32
	members [][]int32
}

func newUnits(g *graph.Graph) *units {
	u := &units{unitOf: make([]int32, g.NumOps())}
	gs := groups(g)
	groupUnit := make([]int32, len(gs))
	for i := range groupUnit {
		groupUnit[i] = -1
	}
	for i := 0; i < g.NumOps(); i++ {
		c := g.Colocation(i)
		if c < 0 {
			u.unitOf[i] = int32(len(u.members))
			u.members = append(u.members, []int32{int32(i)})
			continue
		}
		if groupUnit[c] < 0 {
			groupUnit[c] = int32(len(u.members))
			u.members = append(u.members, gs[c])
		}
		u.unitOf[i] = groupUnit[c]
	}
	return u
}

// colocate moves every op of a co-location group to the device of the
// group's first op (the convention of decision.ColocationViolations), so
// that any placement honours co-location.
func colocate(g *graph.Graph, device []int) {
	first := make([]int, g.NumColocationGroups())
	for i := range first {
		first[i] = -1
	}
	for i := range device {
		c := g.Colocation(i)
		if c < 0 {
			continue
		}
		if first[c] < 0 {
			first[c] = device[i]
		} else {
			device[i] = first[c]
		}
	}
}

// randomPlacement draws a device uniformly for every unit.
func randomPlacement(u *units, devices int, rng *rand.Rand, device []int) {
	for _, ms := range u.members {
		d := rng.IntN(devices)
		for _, v := range ms {
			device[v] = d
		}
	}
}

// topoPriority is the priority that runs ops in topological order (the
// graph's, ties by index): higher first.
func topoPriority(g *graph.Graph) []int {
	n := g.NumOps()
	pr := make([]int, n)
	for i := range pr {
		pr[i] = n - g.TopoIndex(i)
	}
	return pr
}

// orderPriority turns an order of all ops into priorities: the first op
// gets the highest.
func orderPriority(order []int32) []int {
	n := len(order)
	pr := make([]int, n)
	for k, v := range order {
		pr[v] = n - k
	}
	return pr
}

// memoryEstimate estimates the bytes each op holds on its device while a
// step runs: its parameters and scratch, plus a share of the activations
// in proportion to the bytes it produces. The activation total is taken
// from one evaluation of the whole graph on one device (FIFO, no fusion)
// by the problem's evaluator: the peak minus the parameters. The
// heuristics use it as their cost oracle; it is not counted as an
// evaluation of the method.
func memoryEstimate(ctx context.Context, p *optimize.Problem) ([]int64, error) {
	g := p.Graph
	n := g.NumOps()
	r, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), decision.Decision{Device: decision.Single(g)})
	if err != nil {
		return nil, err
	}
	var params, out int64
	produced := make([]int64, n)
	for i := 0; i < n; i++ {
		params += g.Op(i).ParamBytes
		for _, t := range g.Outputs(i) {
			produced[i] += g.Tensor(int(t)).Bytes
		}
		out += produced[i]
	}
	act := max(0, r.PeakMemory[0]-params)
	mem := make([]int64, n)
	for i := 0; i < n; i++ {
		mem[i] = g.Op(i).ParamBytes
		if out > 0 {
			mem[i] += int64(float64(act) * float64(produced[i]) / float64(out))
		}
	}
	return mem, nil
}

// memoryLimit is the per-device budget the memory-aware heuristics plan
// to (0 = no limit, when the model ignores memory).
func memoryLimit(p *optimize.Problem) int64 {
	if p.Cost.IgnoresMemory() {
		return 0
	}
	return int64(float64(p.Capacity()) * (1 - MemoryHeadroom))
}

// newRand is the method's random source for seed.
func newRand(seed uint64, method string) *rand.Rand {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(method); i++ {
		h = (h ^ uint64(method[i])) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}
