package partition

import (
	"math"
	"math/rand/v2"
	"slices"
)

// refiner improves a k-way partition of one level: greedy boundary
// refinement (move a vertex to the neighbouring part that cuts the most,
// when the move keeps the limits) interleaved with balancing (move
// vertices out of parts over their weight or memory limit, cutting as
// little as possible).
type refiner struct {
	g        *Graph
	part     []int32
	k        int
	passes   int
	w        []float64
	m        []int64
	maxW     float64
	capacity int64

	conn    []int64 // per part: edge weight from the vertex at hand
	seen    []bool  // per part: in touched
	touched []int32
}

func newRefiner(g *Graph, part []int32, o Options) *refiner {
	r := &refiner{g: g, part: part, k: o.Parts, passes: o.Passes, capacity: o.Capacity,
		w: make([]float64, o.Parts), m: make([]int64, o.Parts),
		conn: make([]int64, o.Parts), seen: make([]bool, o.Parts)}
	for v := range g.Weight {
		r.w[part[v]] += g.Weight[v]
		r.m[part[v]] += r.mem(int32(v))
	}
	r.maxW = (1 + o.Imbalance) * sum(g.Weight) / float64(o.Parts)
	return r
}

func (r *refiner) mem(v int32) int64 {
	if r.g.Memory == nil {
		return 0
	}
	return r.g.Memory[v]
}

func (r *refiner) fitsMem(v, p int32) bool {
	return r.capacity <= 0 || r.m[p]+r.mem(v) <= r.capacity
}

func (r *refiner) fits(v, p int32) bool {
	return r.w[p]+r.g.Weight[v] <= r.maxW && r.fitsMem(v, p)
}

func (r *refiner) overMem(p int32) bool { return r.capacity > 0 && r.m[p] > r.capacity }

func (r *refiner) moveTo(v, p int32) {
	a := r.part[v]
	r.w[a] -= r.g.Weight[v]
	r.m[a] -= r.mem(v)
	r.w[p] += r.g.Weight[v]
	r.m[p] += r.mem(v)
	r.part[v] = p
}

// connect fills conn and touched with v's edge weight to each part.
func (r *refiner) connect(v int32) {
	g := r.g
	for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
		p := r.part[g.Adj[e]]
		if !r.seen[p] {
			r.seen[p] = true
			r.touched = append(r.touched, p)
		}
		r.conn[p] += g.EdgeWeight[e]
	}
}

func (r *refiner) reset() {
	for _, p := range r.touched {
		r.conn[p] = 0
		r.seen[p] = false
	}
	r.touched = r.touched[:0]
}

func (r *refiner) refine(rng *rand.Rand) {
	g := r.g
	n := g.NumVertices()
	r.balance()
	for pass := 0; pass < r.passes; pass++ {
		moved := 0
		for _, vi := range rng.Perm(n) {
			v := int32(vi)
			a := r.part[v]
			r.connect(v)
			if len(r.touched) == 0 || (len(r.touched) == 1 && r.touched[0] == a) {
				r.reset() // interior vertex
				continue
			}
			internal := r.conn[a]
			best, bestGain := int32(-1), int64(math.MinInt64)
			for _, p := range r.touched {
				if p == a || !r.fits(v, p) {
					continue
				}
				gain := r.conn[p] - internal
				if best < 0 || gain > bestGain || (gain == bestGain && r.w[p] < r.w[best]) {
					best, bestGain = p, gain
				}
			}
			r.reset()
			if best < 0 {
				continue
			}
			if bestGain > 0 || (bestGain == 0 && r.w[best]+g.Weight[v] < r.w[a]) {
				r.moveTo(v, best)
				moved++
			}
		}
		r.balance()
		if moved == 0 {
			break
		}
	}
}

// balance moves vertices out of every part over its memory capacity or
// weight limit: the part's vertices are taken in order of the cut their
// best move adds (least first), each to the part that takes it with the
// least cut among those it fits. Memory is the hard limit: to relieve a
// part over capacity a vertex may go to a part with memory to spare even
// if that part ends up over the weight limit.
func (r *refiner) balance() {
	g := r.g
	type cand struct {
		v    int32
		gain int64
	}
	var cs []cand
	for a := int32(0); a < int32(r.k); a++ {
		if !r.overMem(a) && r.w[a] <= r.maxW {
			continue
		}
		cs = cs[:0]
		for v := int32(0); v < int32(g.NumVertices()); v++ {
			if r.part[v] != a {
				continue
			}
			if _, gain := r.bestTarget(v, a); gain != math.MinInt64 {
				cs = append(cs, cand{v, gain})
			}
		}
		slices.SortFunc(cs, func(x, y cand) int {
			if x.gain != y.gain {
				if x.gain > y.gain {
					return -1
				}
				return 1
			}
			return int(x.v - y.v)
		})
		for _, c := range cs {
			if !r.overMem(a) && r.w[a] <= r.maxW {
				break
			}
			if p, gain := r.bestTarget(c.v, a); gain != math.MinInt64 {
				r.moveTo(c.v, p)
			}
		}
	}
}

// bestTarget is the part, other than a, that v can move to with the
// least added cut (the highest gain), or gain math.MinInt64 if none can
// take it. While a is over its memory capacity, parts with memory to
// spare are acceptable whatever their weight, those within the weight
// limit preferred.
func (r *refiner) bestTarget(v, a int32) (int32, int64) {
	r.connect(v)
	internal := r.conn[a]
	best, bestGain, bestFull := int32(-1), int64(math.MinInt64), false
	memOnly := r.overMem(a)
	for p := int32(0); p < int32(r.k); p++ {
		if p == a {
			continue
		}
		full := r.fits(v, p)
		if !full && !(memOnly && r.fitsMem(v, p) && r.mem(v) > 0) {
			continue
		}
		gain := r.conn[p] - internal
		if best < 0 || (full && !bestFull) || (full == bestFull && (gain > bestGain || (gain == bestGain && r.w[p] < r.w[best]))) {
			best, bestGain, bestFull = p, gain, full
		}
	}
	r.reset()
	return best, bestGain
}
