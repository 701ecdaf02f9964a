package graphsage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// TestEncoderMatchesGorgonia builds two GraphSAGE layers in gorgonia: the
// sampled neighbours become one-hot selection matrices S_s (one per
// sample slot, an empty slot a zero row), and the max-pool is
// MaxBetween over the slots.
func TestEncoderMatchesGorgonia(t *testing.T) {
	g, err := nntest.RandomDAG("dag", 30, 0.3, 5)
	if err != nil {
		t.Fatal(err)
	}
	nd := NewNodes(g, false)
	n := nd.N
	r := rand.New(rand.NewPCG(5, 1))
	in, dim, k := 4, 5, 3
	nbrs := SampleNeighbors(nd, k, 2, 9)
	enc := NewEncoder[float64]("sage", in, dim, 2, k, r)
	for _, p := range enc.Params() {
		for i := range p.W {
			p.W[i] += 0.4 * (r.Float64() - 0.5)
		}
	}
	x := nntest.Rand(r, n*in)
	proj := nntest.Rand(r, n*dim)

	ref := nntest.NewRef(t)
	xn := ref.Mat("x", n, in, x)
	var wrt []*G.Node
	wrt = append(wrt, xn)
	node := func(p *nn.Param[float64]) *G.Node {
		var v *G.Node
		if p.Rows == 1 {
			v = ref.Vec(p.Name, p.W)
		} else {
			v = ref.Mat(p.Name, p.Rows, p.Cols, p.W)
		}
		wrt = append(wrt, v)
		return v
	}
	h := xn
	for l, layer := range enc.Layers {
		wp, bp := node(layer.Pool.W), node(layer.Pool.B)
		ws, bs := node(layer.Self.W), node(layer.Self.B)
		wn := node(layer.Neigh.W)
		z := ref.Must(G.Sigmoid(ref.Linear(h, nil, wp, bp)))
		var agg *G.Node
		for s := range k {
			sel := make([]float64, n*n)
			for v := range n {
				if u := nbrs[l][v*k+s]; u >= 0 {
					sel[v*n+int(u)] = 1
				}
			}
			picked := ref.Must(G.Mul(ref.Mat(fmt.Sprintf("sel%d.%d", l, s), n, n, sel), z))
			if agg == nil {
				agg = picked
			} else {
				agg = ref.Must(G.MaxBetween(agg, picked))
			}
		}
		pre := ref.Must(G.Add(ref.Linear(h, nil, ws, bs), ref.Must(G.Mul(agg, wn))))
		h = ref.Must(G.Rectify(pre))
	}
	want, grads := ref.Run(h, proj, wrt...)

	var ar nn.Arena[float64]
	got, c := enc.Forward(&ar, x, n, nbrs)
	nntest.Close(t, "h", got, want, 1e-9)
	dx := make([]float64, n*in)
	enc.Backward(&ar, c, proj, dx)
	nntest.Close(t, "dx", dx, grads[0], 1e-9)
	for i, p := range enc.Params() {
		nntest.Close(t, p.Name, p.G, grads[i+1], 1e-9)
	}
}
