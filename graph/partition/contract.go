package partition

import (
	"fmt"
	"math/rand/v2"
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
