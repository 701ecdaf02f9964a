package brkga

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
)

// TestSortProperty: the decoder's priority-broken topological sort
// equals a direct reading of its definition (repeatedly take the ready op
// of highest priority gene, ties by lower topological index), on random
// layered graphs with genes from a small range, so that ties are common.
func TestSortProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 40; trial++ {
		g := graphtest.LayeredDAG(graphtest.Layered{Ops: 20 + rng.IntN(300), Width: 1 + rng.IntN(12), Span: 1 + rng.IntN(3), Seed: uint64(trial)})
		n := g.NumOps()
		dc := newDecoder(Layout{Ops: n}, g, decision.Decision{}, nil)
		prio := make([]uint16, n)
		span := []int{2, 5, 1 << 16}[trial%3]
		for i := range prio {
			prio[i] = uint16(rng.IntN(span))
		}
		dc.sort(prio)

		indeg := make([]int, n)
		var ready []int32
		for v := 0; v < n; v++ {
			indeg[v] = len(g.Preds(v))
			if indeg[v] == 0 {
				ready = append(ready, int32(v))
			}
		}
		var want []int32
		for len(ready) > 0 {
			best := 0
			for k, v := range ready {
				b := ready[best]
				if prio[v] > prio[b] || prio[v] == prio[b] && g.TopoIndex(int(v)) < g.TopoIndex(int(b)) {
					best = k
				}
			}
			v := ready[best]
			ready = slices.Delete(ready, best, best+1)
			want = append(want, v)
			for _, s := range g.Succs(int(v)) {
				if indeg[s]--; indeg[s] == 0 {
					ready = append(ready, s)
				}
			}
		}
		if !slices.Equal(dc.order, want) {
			t.Fatalf("trial %d (%d ops): order %v, want %v", trial, n, dc.order, want)
		}
	}
}
