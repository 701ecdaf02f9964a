package partition

import "math/rand/v2"

// coarsen contracts a heavy-edge matching of g: vertices are visited in
// random order, and each unmatched vertex is matched with the unmatched
// neighbour joined by the heaviest edge, unless the pair would weigh more
// than maxVW, hold more memory than capacity (0 = no cap), or join two
// vertices of different labels (label nil = no labels). It returns
// the map from g's vertices to the coarse graph's and the coarse graph,
// whose vertex and edge weights are the sums of their constituents'.
func coarsen(g *Graph, maxVW float64, capacity int64, label []int32, rng *rand.Rand) ([]int32, *Graph) {
	n := g.NumVertices()
	match := make([]int32, n)
	for i := range match {
		match[i] = -1
	}
	perm := rng.Perm(n)
	for _, vi := range perm {
		v := int32(vi)
		if match[v] >= 0 {
			continue
		}
		best, bestW := int32(-1), int64(-1)
		for e := g.XAdj[v]; e < g.XAdj[v+1]; e++ {
			u := g.Adj[e]
			if match[u] >= 0 || g.EdgeWeight[e] <= bestW {
				continue
			}
			if g.Weight[v]+g.Weight[u] > maxVW {
				continue
			}
			if capacity > 0 && g.Memory != nil && g.Memory[v]+g.Memory[u] > capacity {
				continue
			}
			if label != nil && label[u] != label[v] {
				continue
			}
			best, bestW = u, g.EdgeWeight[e]
		}
		if best < 0 {
			match[v] = v
			continue
		}
		match[v], match[best] = best, v
	}
	cmap := make([]int32, n)
	nc := int32(0)
	for v := int32(0); v < int32(n); v++ {
		if u := match[v]; u >= v { // v leads its pair (or is alone)
			cmap[v] = nc
			cmap[u] = nc
			nc++
		}
	}
	c := &Graph{XAdj: make([]int32, nc+1), Weight: make([]float64, nc)}
	if g.Memory != nil {
		c.Memory = make([]int64, nc)
	}
	c.Adj = make([]int32, 0, len(g.Adj)/2)
	c.EdgeWeight = make([]int64, 0, len(g.Adj)/2)
	slot := make([]int32, nc) // coarse neighbour -> index in c.Adj, for the vertex being built
	for i := range slot {
		slot[i] = -1
	}
	for v := int32(0); v < int32(n); v++ {
		u := match[v]
		if u < v {
			continue
		}
		cv := cmap[v]
		start := int32(len(c.Adj))
		members := [2]int32{v, u}
		cnt := 2
		if u == v {
			cnt = 1
		}
		for _, x := range members[:cnt] {
			c.Weight[cv] += g.Weight[x]
			if g.Memory != nil {
				c.Memory[cv] += g.Memory[x]
			}
			for e := g.XAdj[x]; e < g.XAdj[x+1]; e++ {
				cu := cmap[g.Adj[e]]
				if cu == cv {
					continue
				}
				if s := slot[cu]; s >= start {
					c.EdgeWeight[s] += g.EdgeWeight[e]
					continue
				}
				slot[cu] = int32(len(c.Adj))
				c.Adj = append(c.Adj, cu)
				c.EdgeWeight = append(c.EdgeWeight, g.EdgeWeight[e])
			}
		}
		c.XAdj[cv+1] = int32(len(c.Adj))
	}
	return cmap, c
}
