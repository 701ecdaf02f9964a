package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/placer/placer/graph"
)

// Graph is an undirected graph with weighted vertices and edges, in
// compressed (CSR) form: the neighbours of vertex v are
// Adj[XAdj[v]:XAdj[v+1]], with the weights EdgeWeight[XAdj[v]:XAdj[v+1]].
// Every edge appears in both directions with the same weight, and there
// are no self loops or duplicate edges.
type Graph struct {
	XAdj       []int32
	Adj        []int32
	EdgeWeight []int64
	// Weight is the balanced quantity of each vertex (compute time).
	Weight []float64
	// Memory is the capped quantity of each vertex (bytes); nil = none.
	Memory []int64
}

// NumVertices is the number of vertices.
func (g *Graph) NumVertices() int { return len(g.Weight) }

// Validate checks g's shape: array lengths, neighbour ranges, symmetric
// weights, no self loops, finite non-negative weights.
func (g *Graph) Validate() error {
	n := len(g.Weight)
	if len(g.XAdj) != n+1 || g.XAdj[0] != 0 || int(g.XAdj[n]) != len(g.Adj) || len(g.EdgeWeight) != len(g.Adj) {
		return errors.New("partition: inconsistent CSR arrays")
	}
	if g.Memory != nil && len(g.Memory) != n {
		return fmt.Errorf("partition: %d memory weights for %d vertices", len(g.Memory), n)
	}
	for v := 0; v < n; v++ {
		if w := g.Weight[v]; w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("partition: vertex %d has weight %g", v, w)
		}
		if g.XAdj[v] > g.XAdj[v+1] {
			return errors.New("partition: XAdj decreases")
		}
		for k := g.XAdj[v]; k < g.XAdj[v+1]; k++ {
			u := g.Adj[k]
			if u < 0 || int(u) >= n || int(u) == v {
				return fmt.Errorf("partition: vertex %d has neighbour %d", v, u)
			}
			if g.EdgeWeight[k] < 0 {
				return fmt.Errorf("partition: edge %d-%d has negative weight", v, u)
			}
		}
	}
	return nil
}

// Options configure KWay. The zero value of each field is its default.
type Options struct {
	// Parts is the number of parts (required, at least 1).
	Parts int
	// Imbalance is the allowed excess of a part's weight over the
	// average: at most (1+Imbalance) x total/Parts. 0 = 0.03 (METIS's
	// default load imbalance of 1.03).
	Imbalance float64
	// Capacity caps each part's memory (sum of Graph.Memory); 0 = no cap.
	Capacity int64
	// Seed drives the random visiting orders; same seed, same partition.
	Seed uint64
	// CoarsenTo stops coarsening at this many vertices. 0 = max(20 x Parts, 100).
	CoarsenTo int
	// Passes bounds the refinement passes per level. 0 = 8.
	Passes int
	// Tries is the number of greedy-growing starts per bisection of the
	// coarsest graph (the best is kept). 0 = 4.
	Tries int
}

func (o Options) withDefaults() Options {
	if o.Imbalance <= 0 {
		o.Imbalance = 0.03
	}
	if o.CoarsenTo <= 0 {
		o.CoarsenTo = max(20*o.Parts, 100)
	}
	if o.Passes <= 0 {
		o.Passes = 8
	}
	if o.Tries <= 0 {
		o.Tries = 4
	}
	return o
}

// Result is a partition and its measures.
type Result struct {
	Part   []int32   // vertex -> part
	Cut    int64     // total weight of the edges between parts
	Weight []float64 // per part: sum of vertex weights
	Memory []int64   // per part: sum of vertex memory
	// Imbalance is the heaviest part's weight over the average, minus 1.
	Imbalance float64
	// Levels is the number of coarsening levels used.
	Levels int
}

// Fits reports whether every part's memory is within capacity (always
// true when capacity is 0).
func (r *Result) Fits(capacity int64) bool {
	if capacity <= 0 {
		return true
	}
	for _, m := range r.Memory {
		if m > capacity {
			return false
		}
	}
	return true
}

// KWay partitions g into o.Parts parts (multilevel k-way: heavy-edge
// coarsening, recursive-bisection initial partition, greedy boundary
// refinement while uncoarsening). When balance or memory cannot be met
// (a vertex heavier than a part, or more memory than the parts hold) it
// returns its best effort; Result says how far off it is.
func KWay(g *Graph, o Options) (*Result, error) {
	if o.Parts < 1 {
		return nil, fmt.Errorf("partition: %d parts", o.Parts)
	}
	if o.Parts > math.MaxInt32 {
		return nil, fmt.Errorf("partition: %d parts is too many", o.Parts)
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	n := g.NumVertices()
	part := make([]int32, n)
	if o.Parts == 1 || n == 0 {
		return measure(g, part, o.Parts, 0), nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d65746973))

	// Coarsen.
	levels := []*Graph{g}
	var maps [][]int32 // maps[i]: vertex of levels[i] -> vertex of levels[i+1]
	total := sum(g.Weight)
	maxVW := 1.5 * total / float64(o.CoarsenTo)
	for {
		cur := levels[len(levels)-1]
		nv := cur.NumVertices()
		if nv <= o.CoarsenTo {
			break
		}
		cmap, coarse := coarsen(cur, maxVW, o.Capacity, nil, rng)
		if coarse.NumVertices() > nv*95/100 {
			break // matching no longer shrinks the graph
		}
		levels = append(levels, coarse)
		maps = append(maps, cmap)
	}

	// Initial partition of the coarsest graph.
	cg := levels[len(levels)-1]
	cpart := make([]int32, cg.NumVertices())
	all := make([]int32, cg.NumVertices())
	for i := range all {
		all[i] = int32(i)
	}
	recursiveBisect(cg, all, 0, o.Parts, cpart, o, rng)
	r := newRefiner(cg, cpart, o)
	r.refine(rng)

	// Uncoarsen and refine.
	for li := len(levels) - 2; li >= 0; li-- {
		fine := levels[li]
		fpart := make([]int32, fine.NumVertices())
		for v, cv := range maps[li] {
			fpart[v] = cpart[cv]
		}
		cpart = fpart
		r = newRefiner(fine, cpart, o)
		r.refine(rng)
	}
	res := measure(g, cpart, o.Parts, len(levels)-1)
	return res, nil
}

// measure computes a partition's cut, part weights and imbalance.
func measure(g *Graph, part []int32, k, levels int) *Result {
	r := &Result{Part: part, Weight: make([]float64, k), Memory: make([]int64, k), Levels: levels}
	for v := range g.Weight {
		p := part[v]
		r.Weight[p] += g.Weight[v]
		if g.Memory != nil {
			r.Memory[p] += g.Memory[v]
		}
		for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
			if u := g.Adj[e]; int(u) > v && part[u] != p {
				r.Cut += g.EdgeWeight[e]
			}
		}
	}
	total := sum(g.Weight)
	if total > 0 {
		r.Imbalance = slices.Max(r.Weight)/(total/float64(k)) - 1
	}
	return r
}

func sum(w []float64) float64 {
	s := 0.0
	for _, x := range w {
		s += x
	}
	return s
}

// FromComputation builds the partitioner's input for computation graph
// cg: one vertex per co-location group and one per op outside any group
// (so that groups are never split), with vertex weights and memory summed
// from the per-op weight and memory (memory may be nil), and an edge
// between two vertices weighted by the bytes of the tensors between their
// ops (a tensor counts once per consumer vertex). It returns the graph
// and the vertex of each op.
func FromComputation(cg *graph.Graph, weight []float64, memory []int64) (*Graph, []int32) {
	n := cg.NumOps()
	vertexOf := make([]int32, n)
	groupVertex := make([]int32, cg.NumColocationGroups())
	for i := range groupVertex {
		groupVertex[i] = -1
	}
	nv := int32(0)
	for i := 0; i < n; i++ {
		if c := cg.Colocation(i); c >= 0 {
			if groupVertex[c] < 0 {
				groupVertex[c] = nv
				nv++
			}
			vertexOf[i] = groupVertex[c]
			continue
		}
		vertexOf[i] = nv
		nv++
	}
	g := &Graph{Weight: make([]float64, nv)}
	if memory != nil {
		g.Memory = make([]int64, nv)
	}
	for i := 0; i < n; i++ {
		g.Weight[vertexOf[i]] += weight[i]
		if memory != nil {
			g.Memory[vertexOf[i]] += memory[i]
		}
	}
	// Directed contributions (a, b, bytes), both directions, then merged.
	type arc struct {
		a, b int32
		w    int64
	}
	var arcs []arc
	stamp := make([]int32, nv)
	for i := range stamp {
		stamp[i] = -1
	}
	for t := 0; t < cg.NumTensors(); t++ {
		ts := cg.Tensor(t)
		a := vertexOf[ts.Producer]
		stamp[a] = int32(t)
		for _, c := range ts.Consumers {
			b := vertexOf[c]
			if stamp[b] == int32(t) {
				continue
			}
			stamp[b] = int32(t)
			arcs = append(arcs, arc{a, b, ts.Bytes}, arc{b, a, ts.Bytes})
		}
	}
	slices.SortFunc(arcs, func(x, y arc) int {
		if x.a != y.a {
			return int(x.a - y.a)
		}
		return int(x.b - y.b)
	})
	g.XAdj = make([]int32, nv+1)
	for i := 0; i < len(arcs); {
		j := i
		w := int64(0)
		for j < len(arcs) && arcs[j].a == arcs[i].a && arcs[j].b == arcs[i].b {
			w += arcs[j].w
			j++
		}
		g.Adj = append(g.Adj, arcs[i].b)
		g.EdgeWeight = append(g.EdgeWeight, w)
		g.XAdj[arcs[i].a+1]++
		i = j
	}
	for v := int32(0); v < nv; v++ {
		g.XAdj[v+1] += g.XAdj[v]
	}
	return g, vertexOf
}
