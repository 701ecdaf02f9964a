package workloads

import "github.com/placer/placer/graph"

// Batch information. Every builder knows its batch B (net.batch) and
// marks where each tensor holds it (tinfo.at): the inputs and the RNN
// states say so where they are made (input, zeros); every other op's
// outputs follow from its inputs by the op's shape rule (like, reshaped,
// permuted, packed, unstacked, reduced, multiplied, prefixed), the
// variables, their reads, the optimizer's state and the shape metadata
// have none, and a gradient has the batch of the tensor it is the
// gradient of (addGrad). net.build then gives each op its fixed parts
// (graph.Op.FixedFLOPs, ...): bytes read from unbatched inputs and
// written to unbatched outputs, and all of its FLOPs when no input or
// output is batched; the few ops whose reads are not their inputs (a
// gather reads rows, not the table) say theirs (opSpec.fixed). Every
// cost is then linear in B, as TestBatchExact checks against the same
// workload built at half the batch.

// batchAt says where a tensor holds the batch: in dimension dim (-1:
// none), whose size is outer x B x inner (inner: the dimensions merged
// into it after the batch, as reshaping [B,T,H] to [B*T,H] merges T).
type batchAt struct {
	dim   int8
	inner int64
}

// noBatch is the batchAt of a tensor without a batch dimension.
var noBatch = batchAt{dim: -1}

// batchDim is the batch in dimension d, on its own there.
func batchDim(d int) batchAt { return batchAt{dim: int8(d), inner: 1} }

// fixedParts are an op's batch-independent bytes read and written and
// FLOPs, when net.build's rule does not give them.
type fixedParts struct {
	rd, wr int64
	flops  float64
}

// opBatch is what net knows about one op's batch when it is added.
type opBatch struct {
	rd    int64 // bytes of its batched inputs (counted as often as given)
	in    bool  // it reads a batched input
	fixed *fixedParts
}

// fixedIf is all of rd, wr and flops fixed when unbatched, none of them
// otherwise.
func (n *builder) fixedIf(unbatched bool, rd, wr int64, flops float64) *fixedParts {
	if unbatched {
		return &fixedParts{rd: rd, wr: wr, flops: flops}
	}
	return &fixedParts{}
}

// noteInputs records the batched inputs of the op just added.
func (n *builder) noteInputs(s opSpec, ins []tid) {
	o := opBatch{fixed: s.fixed}
	for _, t := range ins {
		if n.ts[t].at.dim >= 0 {
			o.rd += n.bytes(t)
			o.in = true
		}
	}
	n.obat = append(n.obat, o)
}

// input adds a placeholder that holds the batch at at.
func (n *builder) input(base string, dt graph.DType, at batchAt, shape ...int64) tid {
	op := n.addOp(opSpec{base: base, typ: "Placeholder", cls: graph.ClassDataMovement, dt: dt, shape: shape})
	return n.out(op, shape, dt, at)
}

// outer is the factor of x's batch dimension before the batch.
func (n *builder) outer(x tid) int64 {
	at := n.ts[x].at
	return n.shape(x)[at.dim] / (n.batch * at.inner)
}

// atDim is the batch in dimension d of shape, which came from a batch
// dimension with outer factor outer and inner factor inner: outer kept
// where the size allows (a slice of the inner part), else inner kept (a
// slice of the outer part), else the batch first.
func (n *builder) atDim(shape []int64, d int, outer, inner int64) batchAt {
	if d < 0 || d >= len(shape) || shape[d] == 0 {
		return noBatch
	}
	s := shape[d]
	switch {
	case s%(outer*n.batch) == 0:
		return batchAt{dim: int8(d), inner: s / (outer * n.batch)}
	case s%(inner*n.batch) == 0:
		return batchAt{dim: int8(d), inner: inner}
	case s%n.batch == 0:
		return batchAt{dim: int8(d), inner: s / n.batch}
	}
	return noBatch
}

// like is the batch of an output shaped as its first batched input,
// dimensions aligned from the right (elementwise ops and their
// broadcasts, concatenation, slices, pads, convolutions, pools).
func (n *builder) like(shape []int64, ins ...tid) batchAt {
	for _, x := range ins {
		at := n.ts[x].at
		if at.dim < 0 {
			continue
		}
		d := int(at.dim) + len(shape) - len(n.shape(x))
		return n.atDim(shape, d, n.outer(x), at.inner)
	}
	return noBatch
}

// reshaped is the batch of x reshaped to shape: the dimension that holds
// x's batch elements (row-major) whole.
func (n *builder) reshaped(x tid, shape []int64) batchAt {
	at := n.ts[x].at
	if at.dim < 0 {
		return noBatch
	}
	// Batch index i moves by stride elements in the flat order.
	stride := at.inner * numel(n.shape(x)[at.dim+1:])
	tail := int64(1) // numel(shape[j+1:])
	for j := len(shape) - 1; j >= 0 && tail <= stride; j-- {
		if stride%tail == 0 && shape[j]*tail%(stride*n.batch) == 0 {
			return batchAt{dim: int8(j), inner: stride / tail}
		}
		tail *= shape[j]
	}
	return noBatch
}

// permuted is the batch of x transposed by perm.
func (n *builder) permuted(x tid, perm []int) batchAt {
	at := n.ts[x].at
	for i, p := range perm {
		if at.dim >= 0 && p == int(at.dim) {
			return batchAt{dim: int8(i), inner: at.inner}
		}
	}
	return noBatch
}

// packed is the batch of xs stacked along a new axis.
func (n *builder) packed(xs []tid, axis int) batchAt {
	for _, x := range xs {
		if at := n.ts[x].at; at.dim >= 0 {
			if axis <= int(at.dim) {
				at.dim++
			}
			return at
		}
	}
	return noBatch
}

// unstacked is the batch of the parts of x unstacked along axis.
func (n *builder) unstacked(x tid, axis int) batchAt {
	at := n.ts[x].at
	switch {
	case at.dim < 0 || axis == int(at.dim):
		return noBatch
	case axis < int(at.dim):
		at.dim--
	}
	return at
}

// reduced is the batch of x reduced over the axes red (all when full),
// keeping them as 1s when keep.
func (n *builder) reduced(x tid, red []bool, full, keep bool) batchAt {
	at := n.ts[x].at
	if at.dim < 0 || full || red[at.dim] {
		return noBatch
	}
	if !keep {
		for _, r := range red[:at.dim] {
			if r {
				at.dim--
			}
		}
	}
	return at
}

// multiplied is the batch of a (batch) matmul's output: a's rows or b's
// columns, or the matrices' batch; none when the batch is contracted (a
// weight gradient).
func (n *builder) multiplied(a, b tid, ta, tb, batched bool) batchAt {
	off := int8(0)
	if batched {
		off = 1
	}
	if at := n.ts[a].at; at.dim >= 0 {
		m := off
		if ta {
			m++
		}
		switch {
		case batched && at.dim == 0:
			return at
		case at.dim == m:
			return batchAt{dim: off, inner: at.inner}
		}
	}
	if at := n.ts[b].at; at.dim >= 0 {
		c := off + 1
		if tb {
			c--
		}
		switch {
		case batched && at.dim == 0:
			return at
		case at.dim == c:
			return batchAt{dim: off + 1, inner: at.inner}
		}
	}
	return noBatch
}

// prefixed is the batch of an output whose first k dimensions are x's.
func (n *builder) prefixed(x tid, k int) batchAt {
	if at := n.ts[x].at; at.dim >= 0 && int(at.dim) < k {
		return at
	}
	return noBatch
}

// build marks the batch in the graph and builds it.
func (n *builder) build() (*graph.Graph, error) {
	n.b.SetBatch(int(n.batch))
	wr := make([]int64, len(n.obat)) // bytes of batched outputs
	out := make([]bool, len(n.obat))
	for i := range n.ts {
		ti := &n.ts[i]
		n.b.Tensor(int(ti.gt)).BatchDim = int(ti.at.dim)
		if ti.at.dim >= 0 {
			wr[ti.op] += numel(ti.shape) * ti.dt.Size()
			out[ti.op] = true
		}
	}
	for i, o := range n.obat {
		op := n.b.Op(i)
		if o.fixed != nil {
			op.FixedBytesRead, op.FixedBytesWritten, op.FixedFLOPs = o.fixed.rd, o.fixed.wr, o.fixed.flops
			continue
		}
		op.FixedBytesRead = op.BytesRead - min(op.BytesRead, o.rd)
		op.FixedBytesWritten = op.BytesWritten - min(op.BytesWritten, wr[i])
		if !o.in && !out[i] {
			op.FixedFLOPs = op.FLOPs
		}
	}
	return n.b.Build()
}
