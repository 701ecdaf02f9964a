package graphsage

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// diamond builds a -> {b, c} -> d with b, c co-located.
func diamond(t *testing.T) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("diamond")
	a := b.AddOp(graph.Op{Name: "a", Type: "MatMul", Class: graph.ClassMatMul, Shape: []int64{8, 16}, FLOPs: 2048, BytesRead: 1024, BytesWritten: 512, ParamBytes: 4096})
	x := b.AddOp(graph.Op{Name: "b", Type: "Add", Class: graph.ClassElementwise, Shape: []int64{8, 16}, FLOPs: 128, Colocation: "g"})
	y := b.AddOp(graph.Op{Name: "c", Type: "Mul", Class: graph.ClassElementwise, Shape: []int64{8, 16}, FLOPs: 128, Colocation: "g", Backward: true})
	d := b.AddOp(graph.Op{Name: "d", Type: "Sum", Class: graph.ClassReduction, Shape: []int64{8}, FLOPs: 128})
	b.AddTensor(a, 512, x, y)
	b.AddTensor(x, 512, d)
	b.AddTensor(y, 512, d)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNodes(t *testing.T) {
	g := diamond(t)
	nd := NewNodes(g, false)
	if nd.N != 4 || nd.InDegree(3) != 2 || nd.OutDegree(0) != 2 || len(nd.Neighbors(1)) != 2 {
		t.Fatalf("ungrouped nodes wrong: N=%d in(d)=%d out(a)=%d nb(b)=%v", nd.N, nd.InDegree(3), nd.OutDegree(0), nd.Neighbors(1))
	}
	cd := NewNodes(g, true)
	if cd.N != 3 {
		t.Fatalf("coarsened: %d nodes, want 3", cd.N)
	}
	if cd.UnitOf[1] != cd.UnitOf[2] || cd.UnitOf[0] != 0 || cd.UnitOf[3] != 2 {
		t.Fatalf("coarsened UnitOf = %v", cd.UnitOf)
	}
	if m := cd.Members(1); len(m) != 2 || m[0] != 1 || m[1] != 2 {
		t.Fatalf("members of the group = %v", m)
	}
	if cd.InDegree(2) != 1 || cd.OutDegree(0) != 1 || len(cd.Neighbors(1)) != 2 {
		t.Fatalf("coarsened degrees: in(d)=%d out(a)=%d nb(g)=%v", cd.InDegree(2), cd.OutDegree(0), cd.Neighbors(1))
	}
}

func TestFeatures(t *testing.T) {
	g := diamond(t)
	fc := FeatureConfig{}
	F := NumFeatures(fc)
	nd := NewNodes(g, true)
	x, stats, err := Features(g, nd, []float64{1e-3, 2e-6, 2e-6, 1e-6}, fc, DefaultNormalization())
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != nd.N*F || len(stats) != NumGraphStats(fc) {
		t.Fatalf("sizes %d, %d", len(x), len(stats))
	}
	// The group averages its class one-hots.
	if x[1*F+int(graph.ClassElementwise)] != 1 || x[0*F+int(graph.ClassMatMul)] != 1 {
		t.Fatal("class histogram wrong")
	}
	offFrac := F - numPos - numFrac
	if x[1*F+offFrac] != 0.5 {
		t.Fatalf("backward fraction of the group = %v, want 0.5", x[1*F+offFrac])
	}
	// Positions: ranks in [-1, 1], the first node (in topological order)
	// before the last, sinusoids on the unit circle.
	offPos := F - numPos
	for v := range nd.N {
		r := x[v*F+offPos]
		if r < -1 || r > 1 {
			t.Fatalf("node %d: rank feature %v outside [-1, 1]", v, r)
		}
		for i := range posFreqs {
			sn, cs := x[v*F+offPos+2+2*i], x[v*F+offPos+3+2*i]
			if d := sn*sn + cs*cs - 1; d > 1e-12 || d < -1e-12 {
				t.Fatalf("node %d: sin^2+cos^2 = %v", v, sn*sn+cs*cs)
			}
		}
	}
	if x[0*F+offPos] >= x[(nd.N-1)*F+offPos] {
		t.Fatalf("rank of the first node %v not below the last's %v", x[offPos], x[(nd.N-1)*F+offPos])
	}
	// Standardized columns have mean 0 over the nodes.
	offMag := graph.NumClasses + graph.NumDTypes + 32
	for c := offMag; c < offMag+numMagBase+1; c++ {
		s := 0.0
		for v := range nd.N {
			s += x[v*F+c]
			if math.Abs(x[v*F+c]) > 5 {
				t.Fatalf("column %d not clipped", c)
			}
		}
		if math.Abs(s) > 1e-9 {
			t.Fatalf("column %d has mean %v", c, s/float64(nd.N))
		}
	}
	// Same graph, scaled: identical node features, different stats.
	if _, _, err := Features(g, nd, []float64{1}, fc, DefaultNormalization()); err == nil {
		t.Fatal("wrong number of hints accepted")
	}
	if _, _, err := Features(g, nd, []float64{1, -1, 0, 0}, fc, DefaultNormalization()); err == nil {
		t.Fatal("negative hint accepted")
	}
}

func TestSampleNeighborsDeterministic(t *testing.T) {
	g, err := nntest.RandomDAG("dag", 500, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	nd := NewNodes(g, false)
	a := SampleNeighbors(nd, 3, 2, 42)
	b := SampleNeighbors(nd, 3, 2, 42)
	c := SampleNeighbors(nd, 3, 2, 43)
	diff := 0
	for l := range a {
		for i := range a[l] {
			if a[l][i] != b[l][i] {
				t.Fatal("same seed, different sample")
			}
			if a[l][i] != c[l][i] {
				diff++
			}
		}
	}
	if diff == 0 {
		t.Fatal("different seeds, same sample")
	}
	for v := range nd.N {
		row := a[0][v*3 : v*3+3]
		nb := nd.Neighbors(v)
		seen := map[int32]bool{}
		for i, u := range row {
			if u < 0 {
				if i < min(3, len(nb)) {
					t.Fatalf("node %d: padding before its neighbours run out", v)
				}
				continue
			}
			if seen[u] {
				t.Fatalf("node %d: neighbour %d sampled twice", v, u)
			}
			seen[u] = true
			found := false
			for _, w := range nb {
				found = found || w == u
			}
			if !found {
				t.Fatalf("node %d: %d is not a neighbour", v, u)
			}
		}
	}
}

func TestLayerAndEncoderGradient(t *testing.T) {
	g, err := nntest.RandomDAG("dag", 40, 0.3, 2)
	if err != nil {
		t.Fatal(err)
	}
	nd := NewNodes(g, false)
	r := rand.New(rand.NewPCG(2, 3))
	in, dim, k := 6, 5, 3
	nbrs := SampleNeighbors(nd, k, 2, 1)
	enc := NewEncoder[float64]("sage", in, dim, 2, k, r)
	for _, p := range enc.Params() {
		for i := range p.W {
			p.W[i] += 0.3 * (r.Float64() - 0.5)
		}
	}
	x := nntest.Rand(r, nd.N*in)
	proj := nntest.Rand(r, nd.N*dim)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y, _ := enc.Forward(&ar, x, nd.N, nbrs)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	_, c := enc.Forward(&ar, x, nd.N, nbrs)
	dx := make([]float64, len(x))
	enc.Backward(&ar, c, proj, dx)
	ts := append(nntest.ParamTargets(enc.Params()), nntest.Target{Name: "x", X: x, Grad: dx})
	nntest.Check(t, loss, ts, 40, 1e-6, 1e-5, 1e-8)
}
