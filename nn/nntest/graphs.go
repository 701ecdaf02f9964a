package nntest

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/graph"
)

var opTypes = []struct {
	name  string
	class graph.Class
}{
	{"MatMul", graph.ClassMatMul}, {"Conv2D", graph.ClassConv}, {"Add", graph.ClassElementwise},
	{"Mul", graph.ClassElementwise}, {"Sigmoid", graph.ClassElementwise}, {"Tanh", graph.ClassElementwise},
	{"Sum", graph.ClassReduction}, {"Softmax", graph.ClassReduction}, {"Reshape", graph.ClassDataMovement},
	{"ConcatV2", graph.ClassDataMovement}, {"Gather", graph.ClassEmbedding}, {"ApplyAdam", graph.ClassElementwise},
}

// RandomDAG builds a random layered DAG of n ops named name: layers of
// about sqrt(n)/2 ops, each op consuming the outputs of one to three ops
// of the previous three layers, with random types, shapes, FLOPs and
// bytes. A fraction coloc of the ops is put into co-location groups of
// three consecutive ops of one layer (like a variable and the ops that
// update it).
func RandomDAG(name string, n int, coloc float64, seed uint64) (*graph.Graph, error) {
	r := rand.New(rand.NewPCG(seed, 0xda6))
	b := graph.NewBuilder(name)
	width := max(2, int(sqrtInt(n)/2))
	var layers [][]int
	groups := 0
	for i := 0; i < n; {
		w := min(n-i, 1+r.IntN(2*width))
		var layer []int
		for j := 0; j < w; j++ {
			t := opTypes[r.IntN(len(opTypes))]
			shape := []int64{64, int64(1 << (4 + r.IntN(8)))}
			if r.IntN(3) == 0 {
				shape = append(shape, int64(1+r.IntN(64)))
			}
			numel := int64(1)
			for _, d := range shape {
				numel *= d
			}
			op := graph.Op{
				Name: fmt.Sprintf("op%d", i+j), Type: t.name, Class: t.class, DType: graph.F32, Shape: shape,
				FLOPs: float64(numel) * float64(1+r.IntN(512)), BytesRead: 4 * numel * int64(1+r.IntN(3)), BytesWritten: 4 * numel,
				Backward: r.IntN(2) == 0,
			}
			if t.class == graph.ClassMatMul || t.class == graph.ClassEmbedding {
				op.ParamBytes = 4 * numel
			}
			layer = append(layer, b.AddOp(op))
		}
		// Co-location groups of three consecutive ops.
		for j := 0; j+3 <= len(layer); j += 3 {
			if r.Float64() < coloc {
				gname := fmt.Sprintf("g%d", groups)
				groups++
				for _, o := range layer[j : j+3] {
					b.Op(o).Colocation = gname
				}
			}
		}
		if len(layers) > 0 {
			for _, o := range layer {
				k := 1 + r.IntN(3)
				for range k {
					back := 1 + r.IntN(min(3, len(layers)))
					pl := layers[len(layers)-back]
					p := pl[r.IntN(len(pl))]
					b.AddTensor(p, b.Op(p).BytesWritten, o)
				}
			}
		}
		layers = append(layers, layer)
		i += w
	}
	// Duplicate consumers of one tensor are not allowed, but separate
	// tensors between the same pair are; Build deduplicates dependencies.
	return b.Build()
}

func sqrtInt(n int) float64 {
	x := float64(n)
	g := x / 2
	for range 30 {
		if g == 0 {
			return 0
		}
		g = (g + x/g) / 2
	}
	return g
}
