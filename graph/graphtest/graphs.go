package graphtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/graph"
)

// Layered describes a random layered DAG: Ops ops in layers of Width;
// each op reads one or two tensors of the previous layer within Span
// columns of its own (as in a grid of LSTM cells), and now and then a
// tensor of an earlier layer (a skip connection). A fifth of the ops are
// matmuls that own parameters; the matmuls of one column within a band of
// 16 layers form a co-location group (ops sharing weights). Elementwise,
// reduction and data-movement ops give fusion work to do.
type Layered struct {
	Ops, Width int
	Span       int // 0 = 2
	Seed       uint64
	// Measured gives every op a measured time instead of a roofline cost
	// (such ops never fuse).
	Measured bool
	// ParamScale multiplies every op's parameter bytes (0 = 1).
	ParamScale float64
	// Batch > 0 gives the graph batch information for a batch of Batch
	// examples (the same costs otherwise): every tensor is an activation
	// with its batch in dimension 0, a matmul's weight read is a fixed
	// part, and every tenth elementwise op (by index) stands for a
	// parameter update: all its costs are fixed and its output has no
	// batch dimension.
	Batch int
}

// LayeredDAG builds the graph o describes. It panics on nonsensical
// options (a test helper).
func LayeredDAG(o Layered) *graph.Graph {
	if o.Ops < 1 || o.Width < 1 {
		panic("graphtest: Layered needs Ops and Width")
	}
	span := o.Span
	if span == 0 {
		span = 2
	}
	scale := o.ParamScale
	if scale == 0 {
		scale = 1
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6c61796572))
	b := graph.NewBuilder(fmt.Sprintf("layered-%d-w%d-s%d", o.Ops, o.Width, o.Seed))
	b.SetBatch(o.Batch)
	outs := make([]int, 0, o.Ops) // tensor of op i
	for i := 0; i < o.Ops; i++ {
		layer, col := i/o.Width, i%o.Width
		op := graph.Op{Name: fmt.Sprintf("L%d/c%d", layer, col), DType: graph.F16}
		x := rng.Float64()
		switch {
		case layer == 0:
			op.Class, op.Type = graph.ClassDataMovement, "Placeholder"
		case x < 0.2:
			op.Class, op.Type = graph.ClassMatMul, "MatMul"
			k := float64(int(256) << rng.IntN(4))
			op.FLOPs = 2 * 64 * k * k
			op.ParamBytes = int64(scale * k * k * 2 * 3) // weight, gradient, one slot
			op.Colocation = fmt.Sprintf("w%d/b%d", col, layer/16)
		case x < 0.7:
			op.Class, op.Type = graph.ClassElementwise, "Mul"
		case x < 0.8:
			op.Class, op.Type = graph.ClassReduction, "Sum"
		default:
			op.Class, op.Type = graph.ClassDataMovement, "Reshape"
		}
		out := int64(64 * 1024 << rng.IntN(5)) // 64 KiB .. 1 MiB
		op.BytesWritten = out
		op.BytesRead = out + op.ParamBytes/3
		if op.FLOPs == 0 {
			op.FLOPs = float64(out)
		}
		update := o.Batch > 0 && op.Class == graph.ClassElementwise && i%10 == 9
		if o.Batch > 0 {
			op.FixedBytesRead = op.ParamBytes / 3
			if update {
				op.FixedFLOPs, op.FixedBytesRead, op.FixedBytesWritten = op.FLOPs, op.BytesRead, op.BytesWritten
			}
		}
		if o.Measured {
			op.Class, op.HasTime = graph.ClassUnknown, true
			op.Time = float64(1+rng.IntN(64)) * 1e-5
		}
		v := b.AddOp(op)
		if layer > 0 {
			prev := (layer - 1) * o.Width
			k := 1 + rng.IntN(2)
			first := -1
			for j := 0; j < k; j++ {
				c := min(o.Width-1, max(0, col+rng.IntN(2*span+1)-span))
				if c == first {
					continue
				}
				first = c
				b.Consume(outs[prev+c], v)
			}
			if layer > 2 && rng.IntN(20) == 0 {
				back := 2 + rng.IntN(min(layer-1, 4))
				c := rng.IntN(o.Width)
				t := outs[(layer-back)*o.Width+c]
				b.Consume(t, v)
			}
		}
		t := b.AddTensor(v, out)
		if o.Batch > 0 && !update {
			b.Tensor(t).BatchDim = 0
		}
		outs = append(outs, t)
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// Chains builds k independent chains of length ops each, every op with a
// measured time of opTime seconds (so nothing fuses) and every tensor of
// the given size. Chain c holds the ops c*length .. (c+1)*length-1, in
// order. With tiny tensors the best placement on k devices puts one chain
// on each, and the step is length x opTime.
func Chains(k, length int, opTime float64, bytes int64) *graph.Graph {
	b := graph.NewBuilder(fmt.Sprintf("chains-%dx%d", k, length))
	for c := 0; c < k; c++ {
		prev := -1
		for i := 0; i < length; i++ {
			v := b.AddOp(graph.Op{Name: fmt.Sprintf("c%d/op%d", c, i), Type: "Op", HasTime: true, Time: opTime, BytesWritten: bytes})
			if prev >= 0 {
				b.AddTensor(prev, bytes, v)
			}
			prev = v
		}
		b.AddTensor(prev, bytes)
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// MemoryBound builds a graph whose parameters fit on devices devices only
// when spread: devices+1 parameter-holding ops, each of 0.4 x capacity
// bytes, joined by heavy tensors (a min-cut partition wants them
// together), followed by two compute-heavy ops. It returns the graph and
// the device capacity to give the cluster.
func MemoryBound(devices int) (*graph.Graph, int64) {
	const capacity = int64(1) << 30
	b := graph.NewBuilder(fmt.Sprintf("memory-bound-%d", devices))
	prev := -1
	for i := 0; i <= devices; i++ {
		v := b.AddOp(graph.Op{Name: fmt.Sprintf("param%d", i), Type: "Variable", HasTime: true, Time: 1e-4,
			ParamBytes: capacity * 2 / 5, BytesWritten: 1 << 20})
		if prev >= 0 {
			b.AddTensor(prev, 1<<20, v)
		}
		prev = v
	}
	x := b.AddOp(graph.Op{Name: "heavy0", Type: "MatMul", HasTime: true, Time: 1e-2, BytesWritten: 1 << 10})
	y := b.AddOp(graph.Op{Name: "heavy1", Type: "MatMul", HasTime: true, Time: 1e-2, BytesWritten: 1 << 10})
	b.AddTensor(prev, 1<<20, x, y)
	b.AddTensor(x, 1<<10)
	b.AddTensor(y, 1<<10)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g, capacity
}

// TwoWeights is the graph where the objectives disagree: ops a, c, b, d
// of 1 ms each; a and b hold 256 MiB of parameters each; a's 64 MiB
// output feeds c, b and d; c's 1 KiB output feeds b; b writes 1 KiB out;
// d writes nothing. (a feeds two groups, {c, b} and {d}, so that grouping
// as rl17's "a group feeding exactly one other joins it" keeps a apart
// from b.) One GPU gives the shortest step (any split moves a's 64 MiB),
// a and b apart the smaller peak.
func TwoWeights() *graph.Graph {
	b := graph.NewBuilder("two-weights")
	x := b.AddOp(graph.Op{Name: "a", Type: "MatMul", HasTime: true, Time: 1e-3, ParamBytes: 1 << 28, BytesWritten: 1 << 26})
	z := b.AddOp(graph.Op{Name: "c", Type: "MatMul", HasTime: true, Time: 1e-3, BytesWritten: 1 << 10})
	y := b.AddOp(graph.Op{Name: "b", Type: "MatMul", HasTime: true, Time: 1e-3, ParamBytes: 1 << 28, BytesWritten: 1 << 10})
	w := b.AddOp(graph.Op{Name: "d", Type: "MatMul", HasTime: true, Time: 1e-3})
	b.AddTensor(x, 1<<26, z, y, w)
	b.AddTensor(z, 1<<10, y)
	b.AddTensor(y, 1<<10)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}
