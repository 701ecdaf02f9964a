package graph

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// AtBatch returns g at micro-batch b: the same ops, tensors and edges,
// with every cost that scales with the batch taken at b examples instead
// of g.Batch() = B. An op's FLOPs, BytesRead, BytesWritten and TempBytes
// become their fixed part (FixedFLOPs, ...) plus the rest times b/B;
// ParamBytes stays. A convolution's derived DenseConv batch and
// GroupedFLOPs (what the roofline prices measured convolutions by) scale
// by b/B too. A tensor with a batch dimension has b/B of its bytes,
// and so has that dimension of its producer's Shape when the tensor is
// the producer's first output. Byte counts and dimensions are rounded up
// to whole numbers (exact when B divides them times b, as it does for a
// batch dimension of B examples). Measured times scale linearly with the
// rest: an op's Time keeps the fixed share of its FLOPs (of its bytes
// read and written, when it has no FLOPs; all of it, when it has
// neither) and scales the rest by b/B; a batched tensor's TransferTime
// scales by b/B. The result has batch b, shares g's adjacency (g is
// read-only) and is not validated again: every number is at most g's.
// AtBatch(g, B) is g.
//
// A graph without batch information (Batch() == 0) has no micro-batch,
// and b must lie in 1..B: otherwise AtBatch says why in one line. It
// costs O(ops + tensors) time and four allocations.
func AtBatch(g *Graph, b int) (*Graph, error) {
	if g.batch == 0 {
		return nil, fmt.Errorf("graph %q has no batch information (no tensor says which dimension is the batch), so it has no micro-batch of %d", g.name, b)
	}
	if b < 1 || b > g.batch {
		return nil, fmt.Errorf("graph %q: micro-batch %d is out of range: its batch is %d examples (want 1 to %d)", g.name, b, g.batch, g.batch)
	}
	B := g.batch
	if b == B {
		return g, nil
	}
	ng := new(Graph)
	*ng = *g
	ng.batch = b
	ng.ops = slices.Clone(g.ops)
	ng.tensors = slices.Clone(g.tensors)

	// The new shapes of ops whose first output is batched, cut from one
	// slice.
	n := 0
	for i := range g.ops {
		if d := g.shapeBatchDim(i); d >= 0 {
			n += len(g.ops[i].Shape)
		}
	}
	shapes := make([]int64, 0, n)
	fb := float64(b) / float64(B)
	for i := range ng.ops {
		op := &ng.ops[i]
		if d := g.shapeBatchDim(i); d >= 0 {
			s := append(shapes, op.Shape...)
			s[len(shapes)+d] = scaleUp(op.Shape[d], b, B)
			op.Shape = s[len(shapes):len(s):len(s)]
			shapes = s
		}
		if op.HasTime {
			f := fixedShare(op)
			op.Time *= f + (1-f)*fb
		}
		op.FLOPs = op.FixedFLOPs + (op.FLOPs-op.FixedFLOPs)*fb
		op.BytesRead = op.FixedBytesRead + scaleUp(op.BytesRead-op.FixedBytesRead, b, B)
		op.BytesWritten = op.FixedBytesWritten + scaleUp(op.BytesWritten-op.FixedBytesWritten, b, B)
		op.TempBytes = op.FixedTempBytes + scaleUp(op.TempBytes-op.FixedTempBytes, b, B)
		// A convolution's derived shape and grouped FLOPs are its
		// activations' (Build reads them from the shapes at B): b/B of
		// the batch, as its FLOPs.
		if op.DenseConv.Batch > 0 {
			op.DenseConv.Batch = scaleUp(op.DenseConv.Batch, b, B)
		}
		op.GroupedFLOPs *= fb
	}
	for t := range ng.tensors {
		ts := &ng.tensors[t]
		if ts.BatchDim == NoBatch {
			continue
		}
		ts.Bytes = scaleUp(ts.Bytes, b, B)
		if ts.HasTransferTime {
			ts.TransferTime *= fb
		}
	}
	return ng, nil
}

// shapeBatchDim is the dimension of op i's Shape that holds the batch: its
// first output's, when the shape has it; -1 otherwise.
func (g *Graph) shapeBatchDim(i int) int {
	outs := g.Outputs(i)
	if len(outs) == 0 {
		return -1
	}
	d := g.tensors[outs[0]].BatchDim
	if d < 0 || d >= len(g.ops[i].Shape) {
		return -1
	}
	return d
}

// fixedShare is the part of op's cost that does not scale with the batch:
// of its FLOPs, else of its bytes read and written, else all of it.
func fixedShare(op *Op) float64 {
	if op.FLOPs > 0 {
		return op.FixedFLOPs / op.FLOPs
	}
	if all := op.BytesRead + op.BytesWritten; all > 0 {
		return float64(op.FixedBytesRead+op.FixedBytesWritten) / float64(all)
	}
	return 1
}

// scaleUp is ceil(x * b / B) for 0 <= x and 1 <= b <= B, exact for any
// int64 x.
func scaleUp(x int64, b, B int) int64 {
	hi, lo := bits.Mul64(uint64(x), uint64(b))
	q, r := bits.Div64(hi, lo, uint64(B)) // hi < B: the quotient is at most x
	if r != 0 {
		q++
	}
	return int64(q)
}

// ScaleOps returns g with the costs of the ops where f is not 1 scaled by
// f[op] (0 < f <= 1): FLOPs, bytes read and written and temporary bytes,
// their fixed parts, and a measured Time. Tensors, ParamBytes and the
// adjacency are g's (shared: g is read-only). It models work split over
// GPUs that the graph records whole: the optimizer step of one GPU's
// shard of the parameters (ZeRO, FSDP). len(f) must be g.NumOps().
func ScaleOps(g *Graph, f []float64) (*Graph, error) {
	if len(f) != len(g.ops) {
		return nil, fmt.Errorf("graph %q: %d scale factors for %d ops", g.name, len(f), len(g.ops))
	}
	ng := new(Graph)
	*ng = *g
	ng.ops = slices.Clone(g.ops)
	for i, x := range f {
		if x == 1 {
			continue
		}
		if !(x > 0 && x <= 1) {
			return nil, fmt.Errorf("graph %q: op %q: scale factor %v: want one in (0, 1]", g.name, g.ops[i].Name, x)
		}
		op := &ng.ops[i]
		sc := func(v int64) int64 { return int64(math.Ceil(float64(v) * x)) }
		op.FLOPs *= x
		op.FixedFLOPs *= x
		op.BytesRead, op.FixedBytesRead = sc(op.BytesRead), sc(op.FixedBytesRead)
		op.BytesWritten, op.FixedBytesWritten = sc(op.BytesWritten), sc(op.FixedBytesWritten)
		op.TempBytes, op.FixedTempBytes = sc(op.TempBytes), sc(op.FixedTempBytes)
		if op.HasTime {
			op.Time *= x
		}
	}
	return ng, nil
}

// WithTimes returns g with op i given the measured time times[i] where
// that is 0 or more (HasTime set); ops where it is negative keep theirs.
// Tensors and the adjacency are g's (shared: g is read-only). It fills a
// graph from a table of measured op costs. len(times) must be
// g.NumOps().
func WithTimes(g *Graph, times []float64) (*Graph, error) {
	if len(times) != len(g.ops) {
		return nil, fmt.Errorf("graph %q: %d times for %d ops", g.name, len(times), len(g.ops))
	}
	ng := new(Graph)
	*ng = *g
	ng.ops = slices.Clone(g.ops)
	for i, x := range times {
		if x < 0 {
			continue
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || x > MaxTime {
			return nil, fmt.Errorf("graph %q: op %q: time %v s: want a finite one of at most %g s", g.name, g.ops[i].Name, x, MaxTime)
		}
		ng.ops[i].HasTime, ng.ops[i].Time = true, x
	}
	return ng, nil
}

// WithDispatch returns g with op i given the measured dispatch time
// disp[i] where that is 0 or more (HasDispatch set); ops where it is
// negative keep theirs. As WithTimes, g is shared and read-only;
// len(disp) must be g.NumOps().
func WithDispatch(g *Graph, disp []float64) (*Graph, error) {
	if len(disp) != len(g.ops) {
		return nil, fmt.Errorf("graph %q: %d dispatch times for %d ops", g.name, len(disp), len(g.ops))
	}
	ng := new(Graph)
	*ng = *g
	ng.ops = slices.Clone(g.ops)
	for i, x := range disp {
		if x < 0 {
			continue
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || x > MaxTime {
			return nil, fmt.Errorf("graph %q: op %q: dispatch %v s: want a finite one of at most %g s", g.name, g.ops[i].Name, x, MaxTime)
		}
		ng.ops[i].HasDispatch, ng.ops[i].Dispatch = true, x
	}
	return ng, nil
}
