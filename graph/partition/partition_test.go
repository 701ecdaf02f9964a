package partition

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/placer/placer/graph/graphtest"
)

// grid builds a w x h grid graph with unit vertex weights and unit edges.
func grid(w, h int) *Graph {
	n := w * h
	g := &Graph{XAdj: make([]int32, n+1), Weight: make([]float64, n)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := y*w + x
			g.Weight[v] = 1
			for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				nx, ny := x+d[0], y+d[1]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				g.Adj = append(g.Adj, int32(ny*w+nx))
				g.EdgeWeight = append(g.EdgeWeight, 1)
			}
			g.XAdj[v+1] = int32(len(g.Adj))
		}
	}
	return g
}

func TestGridBalancedAndSmallCut(t *testing.T) {
	g := grid(64, 64)
	for _, k := range []int{2, 3, 4, 8} {
		r, err := KWay(g, Options{Parts: k, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Imbalance > 0.03+1e-9 {
			t.Errorf("k=%d: imbalance %.3f", k, r.Imbalance)
		}
		// A k-way split of a 64x64 grid by straight cuts costs about
		// 64 x (k-1); allow twice that.
		if limit := int64(2 * 64 * (k - 1)); r.Cut > limit {
			t.Errorf("k=%d: cut %d > %d", k, r.Cut, limit)
		}
		if r.Levels == 0 {
			t.Errorf("k=%d: no coarsening", k)
		}
		t.Logf("k=%d cut %d imbalance %.4f levels %d", k, r.Cut, r.Imbalance, r.Levels)
	}
}

func TestComponentsSplitWithoutCut(t *testing.T) {
	g := graphtest.Chains(4, 50, 1e-3, 1<<20)
	w := make([]float64, g.NumOps())
	for i := range w {
		w[i] = 1
	}
	pg, _ := FromComputation(g, w, nil)
	r, err := KWay(pg, Options{Parts: 4, Seed: 7, CoarsenTo: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cut != 0 || r.Imbalance > 1e-9 {
		t.Fatalf("4 chains on 4 parts: cut %d, imbalance %g", r.Cut, r.Imbalance)
	}
}

func TestMemoryCapacity(t *testing.T) {
	// A path of 8 vertices, each holding 1/3 of a part's memory, with
	// heavy edges: without the cap 2 parts of 4 would do; with it, the
	// parts must still fit, which they can (3 per part on 3 parts).
	g := grid(8, 1)
	g.Memory = make([]int64, 8)
	for i := range g.Memory {
		g.Memory[i] = 100
	}
	r, err := KWay(g, Options{Parts: 3, Capacity: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fits(300) {
		t.Fatalf("memory per part %v over 300", r.Memory)
	}
}

func TestDeterministic(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 3000, Width: 30, Seed: 5})
	w := make([]float64, g.NumOps())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range w {
		w[i] = rng.Float64()
	}
	pg, vertexOf := FromComputation(g, w, nil)
	if err := pg.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < g.NumOps(); i++ {
		for j := 0; j < g.NumOps(); j += 97 {
			if c := g.Colocation(i); c >= 0 && g.Colocation(j) == c && vertexOf[i] != vertexOf[j] {
				t.Fatalf("ops %d and %d of one group on two vertices", i, j)
			}
		}
	}
	a, err := KWay(pg, Options{Parts: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KWay(pg, Options{Parts: 4, Seed: 3})
	if !reflect.DeepEqual(a.Part, b.Part) {
		t.Fatal("same seed, different partitions")
	}
	if a.Imbalance > 0.03+1e-9 {
		t.Errorf("imbalance %.4f", a.Imbalance)
	}
}

func TestBadInput(t *testing.T) {
	g := grid(2, 2)
	if _, err := KWay(g, Options{Parts: 0}); err == nil {
		t.Error("0 parts accepted")
	}
	bad := *g
	bad.Adj = append([]int32(nil), g.Adj...)
	bad.Adj[0] = 0 // self loop
	if _, err := KWay(&bad, Options{Parts: 2}); err == nil {
		t.Error("self loop accepted")
	}
	one, err := KWay(g, Options{Parts: 1})
	if err != nil || one.Cut != 0 {
		t.Errorf("1 part: %v %v", one, err)
	}
}

func BenchmarkKWay80k(b *testing.B) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 80000, Width: 200, Seed: 1})
	w := make([]float64, g.NumOps())
	for i := range w {
		w[i] = 1
	}
	pg, _ := FromComputation(g, w, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := KWay(pg, Options{Parts: 8, Seed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(r.Cut), "cut-bytes")
			b.ReportMetric(r.Imbalance, "imbalance")
		}
	}
}

func ExampleKWay() {
	// Two triangles joined by one light edge split along that edge.
	g := &Graph{
		XAdj:       []int32{0, 2, 4, 7, 10, 12, 14},
		Adj:        []int32{1, 2, 0, 2, 0, 1, 3, 2, 4, 5, 3, 5, 3, 4},
		EdgeWeight: []int64{9, 9, 9, 9, 9, 9, 1, 1, 9, 9, 9, 9, 9, 9},
		Weight:     []float64{1, 1, 1, 1, 1, 1},
	}
	r, err := KWay(g, Options{Parts: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Cut, r.Part[0] == r.Part[2], r.Part[2] != r.Part[3])
	// Output: 1 true true
}
