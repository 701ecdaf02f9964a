package partition

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/graph"
)

// Contract groups g's vertices into about target groups by KWay's
// coarsening: rounds of heavy-edge matching, each contracting pairs joined
// by the heaviest edges, so that the bytes between groups stay small. Two
// vertices of different labels never share a group (label nil = no
// labels; otherwise one label per vertex), and no group weighs more than
// 1.5 times the average weight of target groups. Rounds stop at target
// groups or once a round shrinks the graph by less than 5%, so fewer
// groups than target are not guaranteed. It returns each vertex's group,
// numbered from 0, and the number of groups. target <= 0 or at least the
// vertex count leaves every vertex alone. The same seed gives the same
// groups.
func Contract(g *Graph, target int, label []int32, seed uint64) ([]int32, int, error) {
	if err := g.Validate(); err != nil {
		return nil, 0, err
	}
	n := g.NumVertices()
	if label != nil && len(label) != n {
		return nil, 0, fmt.Errorf("partition: %d labels for %d vertices", len(label), n)
	}
	group := make([]int32, n)
	for v := range group {
		group[v] = int32(v)
	}
	if target <= 0 || n <= target {
		return group, n, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f6e7472616374)) // "contract"
	maxVW := 1.5 * sum(g.Weight) / float64(target)
	cur, lab := g, label
	for cur.NumVertices() > target {
		cmap, coarse := coarsen(cur, maxVW, 0, lab, rng)
		if coarse.NumVertices() > cur.NumVertices()*95/100 {
			break // labels or weights stop the matching
		}
		if lab != nil {
			cl := make([]int32, coarse.NumVertices())
			for v, cv := range cmap {
				cl[cv] = lab[v]
			}
			lab = cl
		}
		for v := range group {
			group[v] = cmap[group[v]]
		}
		cur = coarse
	}
	return group, cur.NumVertices(), nil
}

// ContractOps groups computation graph cg's ops into about target units:
// FromComputation's vertices (a co-location group or a lone op, weighted
// by weight, an op's time) contracted by Contract on the bytes between
// them, never joining two vertices whose keys differ (a vertex's key is
// its first op's). It returns each op's unit and the number of units, or
// nil and the vertex count when there are at most target vertices
// already (the caller keeps its own units then).
func ContractOps[K comparable](cg *graph.Graph, weight []float64, target int, key func(op int) K, seed uint64) ([]int32, int, error) {
	pg, vertexOf := FromComputation(cg, weight, nil)
	if pg.NumVertices() <= target {
		return nil, pg.NumVertices(), nil
	}
	ids := map[K]int32{}
	label := make([]int32, pg.NumVertices())
	seen := make([]bool, pg.NumVertices())
	for op, v := range vertexOf {
		if seen[v] {
			continue // a co-location group takes its first op's label
		}
		seen[v] = true
		k := key(op)
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		label[v] = id
	}
	group, ng, err := Contract(pg, target, label, seed)
	if err != nil {
		return nil, 0, err
	}
	unit := make([]int32, len(vertexOf))
	for op, v := range vertexOf {
		unit[op] = group[v]
	}
	return unit, ng, nil
}
