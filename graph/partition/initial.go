package partition

import (
	"math/rand/v2"

	"github.com/placer/placer/internal/heap"
)

// recursiveBisect assigns the vertices vs of g to parts first ..
// first+k-1: it bisects them in proportion k/2 : k-k/2 (greedy graph
// growing plus FM refinement, the best of o.Tries starts) and recurses on
// each side.
func recursiveBisect(g *Graph, vs []int32, first, k int, part []int32, o Options, rng *rand.Rand) {
	if k == 1 || len(vs) == 0 {
		for _, v := range vs {
			part[v] = int32(first)
		}
		return
	}
	k0 := k / 2
	sub := induced(g, vs)
	frac := float64(k0) / float64(k)
	var cap0, cap1 int64
	if o.Capacity > 0 {
		cap0, cap1 = o.Capacity*int64(k0), o.Capacity*int64(k-k0)
	}
	side := bisect(sub, frac, cap0, cap1, o, rng)
	var left, right []int32
	for i, v := range vs {
		if side[i] == 0 {
			left = append(left, v)
		} else {
			right = append(right, v)
		}
	}
	recursiveBisect(g, left, first, k0, part, o, rng)
	recursiveBisect(g, right, first+k0, k-k0, part, o, rng)
}

// induced is the subgraph of g on the vertices vs, renumbered 0..len-1 in
// the order of vs.
func induced(g *Graph, vs []int32) *Graph {
	pos := make(map[int32]int32, len(vs))
	for i, v := range vs {
		pos[v] = int32(i)
	}
	s := &Graph{XAdj: make([]int32, len(vs)+1), Weight: make([]float64, len(vs))}
	if g.Memory != nil {
		s.Memory = make([]int64, len(vs))
	}
	for i, v := range vs {
		s.Weight[i] = g.Weight[v]
		if g.Memory != nil {
			s.Memory[i] = g.Memory[v]
		}
		for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
			if u, ok := pos[g.Adj[e]]; ok {
				s.Adj = append(s.Adj, u)
				s.EdgeWeight = append(s.EdgeWeight, g.EdgeWeight[e])
			}
		}
		s.XAdj[i+1] = int32(len(s.Adj))
	}
	return s
}

// bisection is a two-way split under construction or refinement.
type bisection struct {
	g        *Graph
	side     []int8
	w        [2]float64
	m        [2]int64
	maxW     [2]float64
	capacity [2]int64 // 0 = none
	cut      int64
}

// violation measures how far b is from its constraints: memory over the
// capacities first (it makes a decision invalid), then weight over the
// balance limits.
func (b *bisection) violation() (int64, float64) {
	var mo int64
	var wo float64
	for s := 0; s < 2; s++ {
		if b.capacity[s] > 0 && b.m[s] > b.capacity[s] {
			mo += b.m[s] - b.capacity[s]
		}
		if b.w[s] > b.maxW[s] {
			wo += b.w[s] - b.maxW[s]
		}
	}
	return mo, wo
}

// betterThan orders bisections by memory violation, then weight
// violation, then cut.
func (b *bisection) betterThan(mo int64, wo float64, cut int64) bool {
	m, w := b.violation()
	if m != mo {
		return m < mo
	}
	if w != wo {
		return w < wo
	}
	return b.cut < cut
}

func (b *bisection) mem(v int32) int64 {
	if b.g.Memory == nil {
		return 0
	}
	return b.g.Memory[v]
}

// fits reports whether v may join side s without breaking its limits.
func (b *bisection) fits(v int32, s int8) bool {
	if b.w[s]+b.g.Weight[v] > b.maxW[s] {
		return false
	}
	return b.capacity[s] == 0 || b.m[s]+b.mem(v) <= b.capacity[s]
}

func (b *bisection) move(v int32) {
	s := b.side[v]
	b.w[s] -= b.g.Weight[v]
	b.w[1-s] += b.g.Weight[v]
	b.m[s] -= b.mem(v)
	b.m[1-s] += b.mem(v)
	b.side[v] = 1 - s
}

// bisect splits g into side 0 holding about frac of the weight and side 1
// the rest, minimising the cut; the best of o.Tries greedy-growing starts,
// each refined by FM.
func bisect(g *Graph, frac float64, cap0, cap1 int64, o Options, rng *rand.Rand) []int8 {
	n := g.NumVertices()
	total := sum(g.Weight)
	t0 := frac * total
	var best *bisection
	for try := 0; try < o.Tries; try++ {
		b := &bisection{g: g, side: make([]int8, n), capacity: [2]int64{cap0, cap1}}
		b.maxW = [2]float64{(1 + o.Imbalance) * t0, (1 + o.Imbalance) * (total - t0)}
		b.grow(t0, rng)
		b.fm(o.Passes)
		if best == nil {
			best = b
			continue
		}
		mo, wo := best.violation()
		if b.betterThan(mo, wo, best.cut) {
			best = b
		}
	}
	return best.side
}

// grow is greedy graph growing: side 0 starts from a random vertex and
// repeatedly absorbs the boundary vertex whose move cuts the least (the
// highest gain), until it holds its target weight. A vertex that does
// not fit is skipped; when the region has no boundary left (a
// disconnected graph), a new random seed is taken.
func (b *bisection) grow(target float64, rng *rand.Rand) {
	g := b.g
	n := g.NumVertices()
	for v := 0; v < n; v++ {
		b.side[v] = 1
		b.w[1] += g.Weight[v]
		b.m[1] += b.mem(int32(v))
	}
	gain := make([]int64, n) // cut decrease if v moves to side 0
	for v := 0; v < n; v++ {
		for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
			gain[v] -= g.EdgeWeight[e]
		}
	}
	b.cut = 0
	for e := range g.Adj {
		b.cut += g.EdgeWeight[e]
	}
	b.cut /= 2
	h := &gainHeap{}
	ver := make([]int32, n)
	dead := make([]bool, n) // skipped: does not fit, never will
	for b.w[0] < target {
		v := int32(-1)
		for h.len() > 0 {
			e := h.pop()
			if e.ver != ver[e.v] || b.side[e.v] == 0 || dead[e.v] {
				continue
			}
			if !b.fits(e.v, 0) {
				dead[e.v] = true
				continue
			}
			v = e.v
			break
		}
		if v < 0 { // no boundary: a new seed
			start := rng.IntN(n)
			for i := 0; i < n; i++ {
				u := int32((start + i) % n)
				if b.side[u] == 1 && !dead[u] && b.fits(u, 0) {
					v = u
					break
				}
			}
			if v < 0 {
				break
			}
		}
		b.cut -= gain[v]
		b.move(v)
		for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
			u := g.Adj[e]
			if b.side[u] == 0 {
				continue
			}
			gain[u] += 2 * g.EdgeWeight[e]
			ver[u]++
			h.push(gainEntry{gain: gain[u], v: u, ver: ver[u]})
		}
	}
}

// fm is Fiduccia-Mattheyses refinement: each pass moves vertices one at a
// time, each the unlocked vertex of highest gain whose move keeps the
// limits (or relieves an overloaded side), locks it, and at the end rolls
// back to the best prefix of moves. Passes stop when one gains nothing.
func (b *bisection) fm(passes int) {
	g := b.g
	n := g.NumVertices()
	gain := make([]int64, n)
	ver := make([]int32, n)
	locked := make([]bool, n)
	var moves []int32
	for pass := 0; pass < passes; pass++ {
		var heaps [2]gainHeap
		for v := 0; v < n; v++ {
			gain[v] = 0
			locked[v] = false
			boundary := false
			for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
				if b.side[g.Adj[e]] != b.side[v] {
					gain[v] += g.EdgeWeight[e]
					boundary = true
				} else {
					gain[v] -= g.EdgeWeight[e]
				}
			}
			ver[v]++
			if boundary {
				heaps[b.side[v]].push(gainEntry{gain: gain[v], v: int32(v), ver: ver[v]})
			}
		}
		bestMO, bestWO := b.violation()
		bestCut := b.cut
		moves = moves[:0]
		bestLen := 0
		for len(moves)-bestLen < 64 {
			// The best movable candidate from each side.
			var cand [2]int32
			for s := int8(0); s < 2; s++ {
				cand[s] = -1
				h := &heaps[s]
				for h.len() > 0 {
					e := h.top()
					if e.ver != ver[e.v] || locked[e.v] || b.side[e.v] != s {
						h.pop()
						continue
					}
					if !b.fits(e.v, 1-s) && !b.overloaded(s) {
						h.pop()
						locked[e.v] = true // cannot move this pass
						continue
					}
					cand[s] = e.v
					break
				}
			}
			v := cand[0]
			if v < 0 || (cand[1] >= 0 && gain[cand[1]] > gain[v]) {
				v = cand[1]
			}
			if b.overloaded(0) && cand[0] >= 0 {
				v = cand[0]
			} else if b.overloaded(1) && cand[1] >= 0 {
				v = cand[1]
			}
			if v < 0 {
				break
			}
			heaps[b.side[v]].pop()
			locked[v] = true
			b.cut -= gain[v]
			b.move(v)
			moves = append(moves, v)
			for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
				u := g.Adj[e]
				if locked[u] {
					continue
				}
				if b.side[u] == b.side[v] {
					gain[u] -= 2 * g.EdgeWeight[e]
				} else {
					gain[u] += 2 * g.EdgeWeight[e]
				}
				ver[u]++
				heaps[b.side[u]].push(gainEntry{gain: gain[u], v: u, ver: ver[u]})
			}
			if b.betterThan(bestMO, bestWO, bestCut) {
				bestMO, bestWO = b.violation()
				bestCut = b.cut
				bestLen = len(moves)
			}
		}
		for i := len(moves) - 1; i >= bestLen; i-- {
			v := moves[i]
			gv := int64(0)
			for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
				if b.side[g.Adj[e]] != b.side[v] {
					gv += g.EdgeWeight[e]
				} else {
					gv -= g.EdgeWeight[e]
				}
			}
			b.cut -= gv
			b.move(v)
		}
		if bestLen == 0 {
			break
		}
	}
}

// overloaded reports whether side s is over its weight or memory limit.
func (b *bisection) overloaded(s int8) bool {
	return b.w[s] > b.maxW[s] || (b.capacity[s] > 0 && b.m[s] > b.capacity[s])
}

// gainEntry is a vertex in a gain heap; entries whose version is not the
// vertex's current one are stale and skipped.
type gainEntry struct {
	gain int64
	v    int32
	ver  int32
}

// gainHeap is a max-heap on gain (ties by lower vertex id, for
// determinism) with lazy deletion.
type gainHeap struct{ e []gainEntry }

func (h *gainHeap) len() int { return len(h.e) }

// gainAbove is the gain heap's order: a above b.
func gainAbove(a, b gainEntry) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	return a.v < b.v
}

func (h *gainHeap) push(x gainEntry) { heap.PushFunc(&h.e, x, gainAbove) }

func (h *gainHeap) top() gainEntry { return h.e[0] }

func (h *gainHeap) pop() gainEntry { return heap.PopFunc(&h.e, gainAbove) }
