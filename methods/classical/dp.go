package classical

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// DP is the contiguous-split dynamic program of pipeline partitioners
// (PipeDream, Narayanan et al., SOSP 2019, §3.1; the msr-fiddle planner):
// the ops, in a topological order, are cut into at most N consecutive
// blocks and block k goes to device k. Co-location groups are the atoms:
// a group takes the place in the order of its first op, so that no cut
// can split it.
//
// A split is costed with placer's model: a block's compute is the sum of
// its ops' times (Model.OpTime), its memory is memoryEstimate's parameters
// and share of the activations and must stay under the capacity less
// MemoryHeadroom, and each cut costs the transfer time of the tensors
// that cross it (Cluster.TransferTime, averaged over the links between
// consecutive devices, one latency per tensor; a measured transfer time
// replaces the link model). Two objectives are solved:
//
//   - bottleneck (PipeDream's): minimise the largest block cost, compute
//     plus the transfer into it, with at most k blocks for k = 2..N. The
//     smallest feasible bottleneck is found by bisection; each test is an
//     O(n log n) sweep (the blocks from a cut form an interval found by
//     binary search on prefix sums, and the fewest blocks reaching each
//     cut is kept per block count), so a solve is O(n (log n + N) x 60);
//   - sum: minimise the total compute and transfer (one training step
//     runs the blocks mostly one after another), which splits only as
//     far as memory forces; an O(N n) dynamic program with a sliding-window
//     minimum over the cuts memory allows.
//
// Every candidate split (both objectives on each order: the graph's
// topological order and two depth-first ones, each also with gradient ops
// moved to their forward ops, which makes a block a run of layers with
// their backward passes, PipeDream's stages; see dpOrders) and the single
// block are evaluated, as one parallel batch, and the best by the
// evaluator wins: costed with the model, chosen by evaluation. When no split fits the
// memory estimate, the splits are made without it and the evaluator
// judges. DP decides placement only; scheduling and fusion are the
// problem's Base. At most 6N + 1 evaluations.
type DP struct{}

var _ optimize.Optimizer = DP{}

// Name returns "dp".
func (DP) Name() string { return "dp" }

// Optimize builds the candidate splits and evaluates them.
func (o DP) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	tr := optimize.NewTracker(o.Name(), p, s, 0)
	fallback := p.Complete(p.Start())
	if ctx.Err() != nil {
		return tr.Result(ctx, fallback)
	}
	var cands []decision.Decision
	if p.EffectiveTasks().Placement && p.Devices() > 1 {
		devs, err := dpSplits(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, dev := range devs {
			d := p.Start()
			d.Device = dev
			cands = append(cands, p.Complete(d))
		}
	} else {
		cands = append(cands, fallback)
	}
	if ctx.Err() != nil {
		return tr.Result(ctx, fallback)
	}
	out := make([]evaluate.Result, len(cands))
	if _, err := tr.EvaluateBatch(ctx, cands, out); err != nil && !errors.Is(err, optimize.ErrStopped) {
		return nil, err
	}
	tr.Step()
	return tr.Result(ctx, cands[0])
}

// dpSplits returns the distinct candidate placements: the single block
// first, then each order's bottleneck splits (most blocks first) and its
// sum split.
func dpSplits(ctx context.Context, p *optimize.Problem) ([][]int, error) {
	g := p.Graph
	mem, err := memoryEstimate(ctx, p)
	if err != nil {
		return nil, err
	}
	nd := p.Devices()
	perTensor, perByte := linkCosts(p)
	out := [][]int{decision.Single(g)}
	seen := func(dev []int) bool {
		for _, d := range out {
			if slices.Equal(d, dev) {
				return true
			}
		}
		return false
	}
	// Each order's chain, then its splits, solved in parallel.
	orders := dpOrders(g)
	times := p.Cost.OpTimes()
	limit := float64(memoryLimit(p))
	if limit <= 0 {
		limit = math.Inf(1)
	}
	splits := make([][][]int, len(orders))
	var wg sync.WaitGroup
	for o, order := range orders {
		ch := newChain(g, order, times, mem, perTensor, perByte)
		splits[o] = make([][]int, nd)
		for k := nd; k >= 1; k-- { // k = 1: the sum objective
			wg.Go(func() {
				solve := func(l float64) []int {
					if k == 1 {
						return ch.sum(nd, l)
					}
					return ch.bottleneck(k, l)
				}
				cuts := solve(limit)
				if cuts == nil && !math.IsInf(limit, 1) {
					cuts = solve(math.Inf(1)) // nothing fits the estimate: let the evaluator judge
				}
				splits[o][nd-k] = ch.placement(cuts)
			})
		}
	}
	wg.Wait()
	for _, devs := range splits {
		for _, dev := range devs {
			if !seen(dev) {
				out = append(out, dev)
			}
		}
	}
	return out, nil
}

// dpOrders are the orders DP splits: the graph's topological order, the
// depth-first order of gp-dfs (the lowest-numbered ready successor
// first) and the depth-first order that takes the highest-numbered
// first; and, when the graph has gradient ops, each of these with every
// gradient op moved to its forward op (gradientPaired).
func dpOrders(g *graph.Graph) [][]int32 {
	orders := [][]int32{g.Topo(), dfsOrder(g), dfsOrderHigh(g)}
	for _, o := range orders[:3] {
		if q, ok := gradientPaired(g, o); ok {
			orders = append(orders, q)
		}
	}
	return orders
}

// dfsOrderHigh is Kahn's algorithm with a stack, the highest-numbered
// ready op taken first.
func dfsOrderHigh(g *graph.Graph) []int32 {
	n := g.NumOps()
	indeg := make([]int32, n)
	var stack []int32
	for i := 0; i < n; i++ {
		indeg[i] = int32(len(g.Preds(i)))
		if indeg[i] == 0 {
			stack = append(stack, int32(i))
		}
	}
	order := make([]int32, 0, n)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, v)
		for _, s := range g.Succs(int(v)) {
			if indeg[s]--; indeg[s] == 0 {
				stack = append(stack, s)
			}
		}
	}
	return order
}

// gradientPaired reorders order so that every gradient op follows its
// forward op: an op named as TensorFlow names gradients
// ("gradients/<forward>_grad/...", the convention of the built-in
// workloads and of imported TensorFlow graphs) takes the place of its
// forward op, the others keep theirs (a stable sort). A block of the
// result holds layers with their backward passes, PipeDream's stages.
// ok is false when no op is a gradient of an op of the graph.
func gradientPaired(g *graph.Graph, order []int32) ([]int32, bool) {
	n := g.NumOps()
	pos := make([]int, n)
	for k, v := range order {
		pos[v] = k
	}
	key := make([]int, n)
	found := false
	for v := 0; v < n; v++ {
		key[v] = pos[v]
		rest, ok := strings.CutPrefix(g.Op(v).Name, "gradients/")
		if !ok {
			continue
		}
		if i := strings.Index(rest, "_grad/"); i > 0 {
			if f, ok := g.Lookup(rest[:i]); ok {
				key[v], found = pos[f], true
			}
		}
	}
	if !found {
		return nil, false
	}
	out := append([]int32(nil), order...)
	slices.SortStableFunc(out, func(a, b int32) int { return key[a] - key[b] })
	return out, true
}

// linkCosts are the mean latency and seconds per byte of the links
// between consecutive devices (k to k+1).
func linkCosts(p *optimize.Problem) (perTensor, perByte float64) {
	c := p.Cost
	nd := p.Devices()
	const probe = 1 << 30
	for k := 0; k+1 < nd; k++ {
		lat := c.TransferTime(k, k+1, 0)
		perTensor += lat
		perByte += (c.TransferTime(k, k+1, probe) - lat) / probe
	}
	if nd > 1 {
		perTensor /= float64(nd - 1)
		perByte /= float64(nd - 1)
	}
	return perTensor, perByte
}

// chain is the graph seen as a sequence of atoms (co-location groups and
// lone ops) for the split: prefix sums of compute (time) and memory, and
// the cost of a cut before each atom.
type chain struct {
	atoms [][]int32 // the ops of each atom, in sequence
	time  []float64 // prefix sums: time[i] = compute of atoms 0..i-1
	mem   []float64 // prefix sums of memory
	cut   []float64 // cut[i]: transfer time of the tensors crossing the cut before atom i (cut[0] = 0)
}

func newChain(g *graph.Graph, order []int32, times []float64, mem []int64, perTensor, perByte float64) *chain {
	u := newUnits(g)
	na := len(u.members)
	first := make([]int, na)
	for i := range first {
		first[i] = math.MaxInt
	}
	for pos, v := range order {
		a := u.unitOf[v]
		first[a] = min(first[a], pos)
	}
	seq := make([]int32, na)
	for i := range seq {
		seq[i] = int32(i)
	}
	sort.Slice(seq, func(i, j int) bool { return first[seq[i]] < first[seq[j]] })
	posOf := make([]int, na)
	ch := &chain{atoms: make([][]int32, na), time: make([]float64, na+1), mem: make([]float64, na+1), cut: make([]float64, na+1)}
	for k, a := range seq {
		posOf[a] = k
		ch.atoms[k] = u.members[a]
		t, m := 0.0, 0.0
		for _, v := range u.members[a] {
			t += times[v]
			m += float64(mem[v])
		}
		ch.time[k+1] = ch.time[k] + t
		ch.mem[k+1] = ch.mem[k] + m
	}
	// A tensor crosses every cut between the first and the last atom it
	// touches (its producer and consumers): difference arrays.
	diff := make([]float64, na+2)
	for t := 0; t < g.NumTensors(); t++ {
		tn := g.Tensor(t)
		lo := posOf[u.unitOf[tn.Producer]]
		hi := lo
		for _, c := range tn.Consumers {
			q := posOf[u.unitOf[c]]
			lo, hi = min(lo, q), max(hi, q)
		}
		if lo == hi {
			continue
		}
		cost := perTensor + perByte*float64(tn.Bytes)
		if tn.HasTransferTime {
			cost = tn.TransferTime
		}
		diff[lo+1] += cost
		diff[hi+1] -= cost
	}
	run := 0.0
	for i := 1; i < na; i++ {
		run += diff[i]
		ch.cut[i] = max(run, 0)
	}
	return ch
}

// n is the number of atoms.
func (ch *chain) n() int { return len(ch.atoms) }

// reach is the last cut j such that the block of atoms i..j-1 costs at
// most b and holds at most limit bytes (i itself when none).
func (ch *chain) reach(i int, b, limit float64) int {
	n := ch.n()
	tmax := b + ch.time[i] - ch.cut[i]
	mmax := ch.mem[i] + limit
	// the first j in (i, n] that breaks a bound, less one
	j := i + 1 + sort.Search(n-i, func(k int) bool {
		j := i + 1 + k
		return ch.time[j] > tmax || ch.mem[j] > mmax
	})
	return j - 1
}

// blocksFor returns the cuts of a split into at most k blocks each
// costing at most b (compute plus the transfer into it) and holding at
// most limit (empty for one block), or nil when there is none. It sweeps the cuts in order,
// keeping, for each block count s, the cut that ends a split into s
// blocks and reaches farthest.
func (ch *chain) blocksFor(k int, b, limit float64) []int {
	n := ch.n()
	far := make([]int, k+1) // far[s]: how far a block from best[s] reaches
	best := make([]int, k+1)
	for s := range far {
		far[s] = -1
	}
	parent := make([]int, n+1)
	count := make([]int, n+1)
	far[0], best[0] = ch.reach(0, b, limit), 0
	for j := 1; j <= n; j++ {
		count[j] = -1
		for s := 0; s < k; s++ {
			if far[s] >= j {
				count[j], parent[j] = s+1, best[s]
				break
			}
		}
		if count[j] < 0 {
			continue
		}
		if j == n {
			break
		}
		if r := ch.reach(j, b, limit); r > far[count[j]] {
			far[count[j]], best[count[j]] = r, j
		}
	}
	if count[n] < 0 {
		return nil
	}
	var cuts []int
	for j := n; j > 0; j = parent[j] {
		cuts = append(cuts, j)
	}
	slices.Reverse(cuts)
	return cuts[:len(cuts)-1] // the block ends but the last: the cuts
}

// bottleneck returns the cuts of a split into at most k blocks that
// minimises the largest block cost (to a relative 1e-7, by bisection), or
// nil when memory allows none.
func (ch *chain) bottleneck(k int, limit float64) []int {
	n := ch.n()
	total, maxCut := ch.time[n], 0.0
	for i := 1; i <= n; i++ {
		maxCut = max(maxCut, ch.cut[i-1])
	}
	// Every block meets hi: only memory can leave no split.
	lo, hi := total/float64(k), total+maxCut+math.SmallestNonzeroFloat64
	for i := 1; i <= n; i++ {
		lo = max(lo, ch.time[i]-ch.time[i-1])
	}
	cuts := ch.blocksFor(k, hi, limit)
	if cuts == nil {
		return nil
	}
	for it := 0; it < 60 && hi-lo > 1e-7*hi; it++ {
		mid := (lo + hi) / 2
		if c := ch.blocksFor(k, mid, limit); c != nil {
			hi, cuts = mid, c
		} else {
			lo = mid
		}
	}
	return cuts
}

// sum returns the cuts of a split into at most k blocks minimising the
// total of compute and cut transfers under the memory limit: the fewest
// and cheapest cuts memory allows (nil when memory allows none).
func (ch *chain) sum(k int, limit float64) []int {
	n := ch.n()
	inf := math.Inf(1)
	h := make([]float64, n+1) // h[j]: best cost of atoms 0..j-1 in s blocks
	for j := range h {
		h[j] = inf
	}
	h[0] = 0
	par := make([][]int32, k+1)
	bestS, bestCost := -1, inf
	for s := 1; s <= k; s++ {
		next := make([]float64, n+1)
		par[s] = make([]int32, n+1)
		next[0] = inf
		var dq []int // cuts i with increasing h[i]+cut[i]
		lo := 0
		for j := 1; j <= n; j++ {
			i := j - 1
			if v := h[i] + ch.cut[i]; v < inf {
				for len(dq) > 0 && h[dq[len(dq)-1]]+ch.cut[dq[len(dq)-1]] >= v {
					dq = dq[:len(dq)-1]
				}
				dq = append(dq, i)
			}
			for ch.mem[j]-ch.mem[lo] > limit {
				lo++
			}
			for len(dq) > 0 && dq[0] < lo {
				dq = dq[1:]
			}
			next[j] = inf
			if len(dq) > 0 {
				next[j] = h[dq[0]] + ch.cut[dq[0]]
				par[s][j] = int32(dq[0])
			}
		}
		h = next
		if h[n] < bestCost {
			bestS, bestCost = s, h[n]
		}
	}
	if bestS < 0 {
		return nil
	}
	cuts := []int{}
	for j, s := n, bestS; s > 1; s-- {
		j = int(par[s][j])
		cuts = append(cuts, j)
	}
	slices.Reverse(cuts)
	return cuts
}

// placement puts the atoms before cuts[0] on device 0, those up to
// cuts[1] on device 1, and so on (nil cuts: one device).
func (ch *chain) placement(cuts []int) []int {
	var n int
	for _, a := range ch.atoms {
		n += len(a)
	}
	dev := make([]int, n)
	k := 0
	for i, a := range ch.atoms {
		for k < len(cuts) && i >= cuts[k] {
			k++
		}
		for _, v := range a {
			dev[v] = k
		}
	}
	return dev
}
