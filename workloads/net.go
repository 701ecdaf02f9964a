package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// tid is a handle to a tensor of the graph under construction.
type tid int32

// tinfo is what the builder knows about a tensor.
type tinfo struct {
	gt    int32 // graph tensor index
	op    int32 // producing graph op
	shape []int64
	dt    graph.DType
	diff  bool  // depends on a trainable variable: gradients flow into it
	node  int32 // tape node that produced it, -1 if none
	at    batchAt
}

// kind is the differentiable op kind recorded on the tape.
type kind uint8

const (
	kAdd kind = iota
	kSub
	kMul
	kDiv
	kSqDiff
	kSigmoid
	kTanh
	kRelu
	kRsqrt
	kNeg
	kSquare
	kIdentity
	kVarRead
	kMatMul
	kBatchMatMul
	kBiasAdd
	kConcat
	kSplit
	kStridedSlice
	kReshape
	kTranspose
	kExpandDims
	kSqueeze
	kUnstack
	kPack
	kSum
	kMean
	kSoftmax
	kXent
	kGather
	kConv2D
	kDepthwise
	kMaxPool
	kAvgPool
	kFusedBN
	kL2Loss
	kAddN
	kPad
	kSpaceToBatch
	kBatchToSpace
)

// node is one differentiable forward op on the tape.
type node struct {
	k    kind
	op   int32 // forward graph op
	in   []tid
	out  []tid
	attr attrs
}

// attrs holds the few attributes gradient rules need.
type attrs struct {
	ta, tb   bool  // matmul transposes
	full     bool  // reduction over all axes
	aux      []tid // extra tensors the gradient reads (axis const, indices, saved stats)
	window   int64 // pooling window
	stride   int64
	nSplit   int
	variable int // variable index for kVarRead
}

// A training-step graph is built in three layers, each a type of its own
// over the one before it:
//   - builder: the graph under construction, its tensors, scopes and op
//     names, the tape of differentiable ops and what of each op scales
//     with the batch (batch.go);
//   - ops: TensorFlow's op vocabulary (elementwise, data movement,
//     MatMul, reductions, convolutions, ...) emitted through the builder
//     with each op's FLOPs and bytes;
//   - net: what a model is written in: layers (layers.go), the backward
//     pass generated from the tape (grad.go) and the optimizer's update
//     ops (opt.go), in the ops.
//
// net builds one training-step graph: forward ops recorded on a tape,
// gradients generated from the tape, and the optimizer's update ops.
type net struct {
	ops
	vars []variable
	// tf113 selects TensorFlow >= 1.13 gradient functions: no broadcast
	// machinery when both inputs and the gradient have one shape, and
	// Reshape+Tile for every reduction with static shapes.
	tf113 bool
	grads [][]tid
}

// ops is TensorFlow's op vocabulary over a builder.
type ops struct {
	builder
}

// builder is the graph under construction and the tape of its
// differentiable ops.
type builder struct {
	b     *graph.Builder
	dt    graph.DType
	batch int64 // examples per step (batch.go)
	ts    []tinfo
	obat  []opBatch // per graph op: what of it scales with the batch
	tape  []node
	scope string
	used  map[string]int32
	bwd   bool // emitting backward ops

	consts map[string]tid // shared optimizer constants
	nb     []byte         // scratch for names
}

func newNet(name string, dt graph.DType, batch int64, sizeHint int) *net {
	n := &net{ops: ops{builder{b: graph.NewBuilder(name), dt: dt, batch: batch, used: make(map[string]int32, sizeHint)}}}
	n.ts = make([]tinfo, 0, sizeHint*2)
	n.obat = make([]opBatch, 0, sizeHint)
	n.tape = make([]node, 0, sizeHint/2)
	n.consts = map[string]tid{}
	return n
}

// enter opens a sub-scope and returns the scope to restore with leave.
func (n *builder) enter(s string) string {
	old := n.scope
	if old == "" {
		n.scope = s
	} else {
		n.scope = old + "/" + s
	}
	return old
}

func (n *builder) leave(old string) { n.scope = old }

// uname returns a unique op name for base in the current scope (TF style:
// base, base_1, base_2, ...).
func (n *builder) uname(base string) string {
	nb := n.nb[:0]
	if n.scope != "" {
		nb = append(nb, n.scope...)
		nb = append(nb, '/')
	}
	nb = append(nb, base...)
	n.nb = nb
	c, ok := n.used[string(nb)]
	if !ok {
		s := string(nb)
		n.used[s] = 1
		return s
	}
	full := len(nb)
	for {
		nb = append(nb[:full], '_')
		nb = strconv.AppendInt(nb, int64(c), 10)
		c++
		if _, ok := n.used[string(nb)]; !ok {
			s := string(nb)
			n.used[s] = 1
			n.used[string(nb[:full])] = c
			n.nb = nb
			return s
		}
	}
}

func numel(s []int64) int64 {
	e := int64(1)
	for _, d := range s {
		e *= d
	}
	return e
}

func (n *builder) bytes(t tid) int64   { return numel(n.ts[t].shape) * n.ts[t].dt.Size() }
func (n *builder) numel(t tid) int64   { return numel(n.ts[t].shape) }
func (n *builder) shape(t tid) []int64 { return n.ts[t].shape }

// opSpec describes one op to add.
type opSpec struct {
	base, typ string
	cls       graph.Class
	dt        graph.DType
	shape     []int64
	flops     float64
	rd, wr    int64
	coloc     string
	param     int64
	alias     bool // outputs are views of the first input (graph.Op.Alias)
	// fixed, when set, gives the op's batch-independent parts instead of
	// net.build's rule (batch.go).
	fixed *fixedParts
}

// addOp adds an op consuming ins (duplicates are consumed once).
func (n *builder) addOp(s opSpec, ins ...tid) int32 {
	i := n.b.AddOp(graph.Op{
		Name: n.uname(s.base), Type: s.typ, Class: s.cls, DType: s.dt, Shape: s.shape,
		FLOPs: s.flops, BytesRead: s.rd, BytesWritten: s.wr, ParamBytes: s.param,
		Colocation: s.coloc, Backward: n.bwd, Alias: s.alias,
	})
	n.noteInputs(s, ins)
	for k, t := range ins {
		dup := false
		for _, u := range ins[:k] {
			if n.ts[u].gt == n.ts[t].gt {
				dup = true
				break
			}
		}
		if !dup {
			n.b.Consume(int(n.ts[t].gt), i)
		}
	}
	return int32(i)
}

// out adds an output tensor of op whose batch is at.
func (n *builder) out(op int32, shape []int64, dt graph.DType, at batchAt) tid {
	gt := n.b.AddTensor(int(op), numel(shape)*dt.Size())
	n.ts = append(n.ts, tinfo{gt: int32(gt), op: op, shape: shape, dt: dt, node: -1, at: at})
	return tid(len(n.ts) - 1)
}

// anyDiff reports whether any tensor needs a gradient (never while
// emitting the backward pass).
func (n *builder) anyDiff(ts ...tid) bool {
	if n.bwd {
		return false
	}
	for _, t := range ts {
		if n.ts[t].diff {
			return true
		}
	}
	return false
}

// record puts a differentiable op on the tape and marks its outputs.
func (n *builder) record(k kind, op int32, in, out []tid, a attrs) {
	n.tape = append(n.tape, node{k: k, op: op, in: in, out: out, attr: a})
	id := int32(len(n.tape) - 1)
	for _, t := range out {
		n.ts[t].diff = true
		n.ts[t].node = id
	}
}

// simple adds a one-output op shaped like its batched inputs (elementwise,
// broadcasting; net.like) and records it when differentiable.
func (n *builder) simple(k kind, s opSpec, a attrs, ins ...tid) tid {
	return n.simpleAt(k, s, a, n.like(s.shape, ins...), ins...)
}

// simpleAt is simple with the output's batch at.
func (n *builder) simpleAt(k kind, s opSpec, a attrs, at batchAt, ins ...tid) tid {
	op := n.addOp(s, ins...)
	t := n.out(op, s.shape, s.dt, at)
	if n.anyDiff(ins...) {
		n.record(k, op, append([]tid(nil), ins...), []tid{t}, a)
	}
	return t
}

// ---- constants and metadata ops ----

// constant adds a Const op of the given shape and dtype.
func (n *builder) constant(base string, dt graph.DType, shape ...int64) tid {
	op := n.addOp(opSpec{base: base, typ: "Const", cls: graph.ClassDataMovement, dt: dt, shape: shape})
	return n.out(op, shape, dt, noBatch)
}

func (n *builder) scalar(base string) tid { return n.constant(base, n.dt) }

// sharedConst returns a constant shared by every op that asks for key.
func (n *builder) sharedConst(key string, dt graph.DType) tid {
	if t, ok := n.consts[key]; ok {
		return t
	}
	old, bwd := n.scope, n.bwd
	n.scope, n.bwd = "", false
	t := n.constant(key, dt)
	n.scope, n.bwd = old, bwd
	n.consts[key] = t
	return t
}

// meta adds a small int32 metadata op (Shape, Rank, BroadcastGradientArgs,
// ...) with nout outputs of length l (l = 0: a scalar; shape vectors of
// scalars are counted as scalars so that every tensor has a size).
func (n *builder) meta(typ string, l int64, nout int, ins ...tid) []tid {
	sh := []int64{l}
	if l == 0 {
		sh = []int64{}
	}
	op := n.addOp(opSpec{base: typ, typ: typ, cls: graph.ClassDataMovement, dt: graph.I32, shape: sh}, ins...)
	outs := make([]tid, nout)
	for i := range outs {
		outs[i] = n.out(op, sh, graph.I32, noBatch)
	}
	return outs
}

func (n *builder) shapeOf(x tid) tid { return n.meta("Shape", int64(len(n.shape(x))), 1, x)[0] }

// ---- elementwise ----

var binaryType = map[kind]string{kAdd: "Add", kSub: "Sub", kMul: "Mul", kDiv: "RealDiv", kSqDiff: "SquaredDifference"}

func broadcast(a, b []int64) []int64 {
	r := len(a)
	if len(b) > r {
		r = len(b)
	}
	out := make([]int64, r)
	for i := 0; i < r; i++ {
		var x, y int64 = 1, 1
		if j := len(a) - r + i; j >= 0 {
			x = a[j]
		}
		if j := len(b) - r + i; j >= 0 {
			y = b[j]
		}
		out[i] = max(x, y)
	}
	return out
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// binary adds a broadcasting elementwise op (1 flop per output element,
// 2 for SquaredDifference).
func (n *ops) binary(k kind, x, y tid) tid {
	sh := n.shape(x)
	if !sameShape(sh, n.shape(y)) {
		sh = broadcast(sh, n.shape(y))
	}
	e := numel(sh)
	f := float64(e)
	if k == kSqDiff {
		f *= 2
	}
	dt := n.ts[x].dt
	return n.simple(k, opSpec{base: binaryType[k], typ: binaryType[k], cls: graph.ClassElementwise, dt: dt, shape: sh,
		flops: f, rd: n.bytes(x) + n.bytes(y), wr: e * dt.Size()}, attrs{}, x, y)
}

// flops per element of the unary ops.
var unaryFlops = map[string]float64{
	"Sigmoid": 4, "Tanh": 4, "Relu": 1, "Rsqrt": 4, "Neg": 1, "Square": 1, "Floor": 1, "Exp": 4, "Sqrt": 4,
	"Reciprocal": 1, "Cast": 1, "Sin": 4, "Cos": 4, "SigmoidGrad": 3, "TanhGrad": 3, "ReluGrad": 1, "RsqrtGrad": 4, "ZerosLike": 0,
}

var unaryKind = map[string]kind{"Sigmoid": kSigmoid, "Tanh": kTanh, "Relu": kRelu, "Rsqrt": kRsqrt, "Neg": kNeg, "Square": kSquare}

// unary adds an elementwise op of one input.
func (n *ops) unary(typ string, x tid) tid {
	e := n.numel(x)
	k, diff := unaryKind[typ]
	s := opSpec{base: typ, typ: typ, cls: graph.ClassElementwise, dt: n.ts[x].dt, shape: n.shape(x),
		flops: unaryFlops[typ] * float64(e), rd: n.bytes(x), wr: n.bytes(x)}
	if !diff {
		op := n.addOp(s, x)
		return n.out(op, s.shape, s.dt, n.ts[x].at)
	}
	return n.simple(k, s, attrs{}, x)
}

// cast converts x to dt (not differentiable).
func (n *ops) cast(x tid, dt graph.DType) tid {
	e := n.numel(x)
	op := n.addOp(opSpec{base: "Cast", typ: "Cast", cls: graph.ClassElementwise, dt: dt, shape: n.shape(x),
		flops: float64(e), rd: n.bytes(x), wr: e * dt.Size()}, x)
	return n.out(op, n.shape(x), dt, n.ts[x].at)
}

// elementwise adds a non-differentiable elementwise op over ins with the
// shape of the first input (gradient kernels such as SigmoidGrad).
func (n *ops) elementwise(typ string, ins ...tid) tid {
	x := ins[0]
	var rd int64
	for _, t := range ins {
		rd += n.bytes(t)
	}
	s := opSpec{base: typ, typ: typ, cls: graph.ClassElementwise, dt: n.ts[x].dt, shape: n.shape(x),
		flops: unaryFlops[typ] * float64(n.numel(x)), rd: rd, wr: n.bytes(x)}
	op := n.addOp(s, ins...)
	return n.out(op, s.shape, s.dt, n.like(s.shape, ins...))
}

// alias adds an op that only relabels its input (Reshape, Identity, ...):
// no memory traffic.
func (n *ops) alias(k kind, typ string, x tid, shape []int64, a attrs, extra ...tid) tid {
	ins := append([]tid{x}, extra...)
	return n.simpleAt(k, opSpec{base: typ, typ: typ, cls: graph.ClassDataMovement, dt: n.ts[x].dt, shape: shape, alias: true}, a, n.reshaped(x, shape), ins...)
}

func (n *ops) identity(x tid) tid { return n.alias(kIdentity, "Identity", x, n.shape(x), attrs{}) }

// stopGradient passes x but cuts the gradient.
func (n *ops) stopGradient(x tid) tid {
	op := n.addOp(opSpec{base: "StopGradient", typ: "StopGradient", cls: graph.ClassDataMovement, dt: n.ts[x].dt, shape: n.shape(x)}, x)
	return n.out(op, n.shape(x), n.ts[x].dt, n.ts[x].at)
}

func (n *ops) reshape(x tid, shape ...int64) tid {
	c := n.constant("Reshape/shape", graph.I32, int64(len(shape)))
	return n.alias(kReshape, "Reshape", x, shape, attrs{}, c)
}

func (n *ops) expandDims(x tid, axis int) tid {
	s := n.shape(x)
	if axis < 0 {
		axis += len(s) + 1
	}
	out := make([]int64, 0, len(s)+1)
	out = append(out, s[:axis]...)
	out = append(out, 1)
	out = append(out, s[axis:]...)
	c := n.constant("ExpandDims/dim", graph.I32)
	return n.alias(kExpandDims, "ExpandDims", x, out, attrs{}, c)
}

func (n *ops) squeeze(x tid, axis int) tid {
	s := n.shape(x)
	if axis < 0 {
		axis += len(s)
	}
	out := make([]int64, 0, len(s)-1)
	out = append(out, s[:axis]...)
	out = append(out, s[axis+1:]...)
	return n.alias(kSqueeze, "Squeeze", x, out, attrs{})
}

// ---- data movement ----

// move adds a data-movement op that reads rd bytes and writes its output,
// shaped like its batched inputs (net.like).
func (n *ops) move(k kind, typ string, shape []int64, rd int64, a attrs, ins ...tid) tid {
	return n.moveAt(k, typ, shape, rd, a, n.like(shape, ins...), ins...)
}

// moveAt is move with the output's batch at.
func (n *ops) moveAt(k kind, typ string, shape []int64, rd int64, a attrs, at batchAt, ins ...tid) tid {
	dt := n.ts[ins[0]].dt
	return n.simpleAt(k, opSpec{base: typ, typ: typ, cls: graph.ClassDataMovement, dt: dt, shape: shape, rd: rd, wr: numel(shape) * dt.Size()}, a, at, ins...)
}

func (n *ops) transpose(x tid, perm ...int) tid {
	s := n.shape(x)
	out := make([]int64, len(s))
	for i, p := range perm {
		out[i] = s[p]
	}
	c := n.constant("transpose/perm", graph.I32, int64(len(perm)))
	return n.moveAt(kTranspose, "Transpose", out, n.bytes(x), attrs{aux: []tid{c}}, n.permuted(x, perm), x, c)
}

// concat adds a ConcatV2 along axis.
func (n *ops) concat(axis int, xs ...tid) tid {
	s := append([]int64(nil), n.shape(xs[0])...)
	if axis < 0 {
		axis += len(s)
	}
	var rd int64
	for i, x := range xs {
		rd += n.bytes(x)
		if i > 0 {
			s[axis] += n.shape(x)[axis]
		}
	}
	c := n.constant("concat/axis", graph.I32)
	ins := append(append([]tid(nil), xs...), c)
	return n.move(kConcat, "ConcatV2", s, rd, attrs{aux: []tid{c}}, ins...)
}

// split adds a Split of x into k equal parts along axis.
func (n *ops) split(axis, k int, x tid) []tid {
	s := append([]int64(nil), n.shape(x)...)
	if axis < 0 {
		axis += len(s)
	}
	s[axis] /= int64(k)
	c := n.constant("split/split_dim", graph.I32)
	op := n.addOp(opSpec{base: "split", typ: "Split", cls: graph.ClassDataMovement, dt: n.ts[x].dt, shape: s, rd: n.bytes(x), wr: n.bytes(x)}, c, x)
	outs := make([]tid, k)
	at := n.like(s, x)
	for i := range outs {
		outs[i] = n.out(op, s, n.ts[x].dt, at)
	}
	if n.anyDiff(x) {
		n.record(kSplit, op, []tid{x}, outs, attrs{aux: []tid{c}, nSplit: k})
	}
	return outs
}

// unstack adds an Unstack of x along axis.
func (n *ops) unstack(axis int, x tid) []tid {
	s := n.shape(x)
	if axis < 0 {
		axis += len(s)
	}
	k := int(s[axis])
	out := make([]int64, 0, len(s)-1)
	out = append(out, s[:axis]...)
	out = append(out, s[axis+1:]...)
	op := n.addOp(opSpec{base: "unstack", typ: "Unpack", cls: graph.ClassDataMovement, dt: n.ts[x].dt, shape: out, rd: n.bytes(x), wr: n.bytes(x)}, x)
	outs := make([]tid, k)
	at := n.unstacked(x, axis)
	for i := range outs {
		outs[i] = n.out(op, out, n.ts[x].dt, at)
	}
	if n.anyDiff(x) {
		n.record(kUnstack, op, []tid{x}, outs, attrs{})
	}
	return outs
}

// pack stacks xs along a new axis.
func (n *ops) pack(axis int, xs ...tid) tid {
	s := n.shape(xs[0])
	if axis < 0 {
		axis += len(s) + 1
	}
	out := make([]int64, 0, len(s)+1)
	out = append(out, s[:axis]...)
	out = append(out, int64(len(xs)))
	out = append(out, s[axis:]...)
	var rd int64
	for _, x := range xs {
		rd += n.bytes(x)
	}
	return n.moveAt(kPack, "Pack", out, rd, attrs{}, n.packed(xs, axis), xs...)
}

// stridedSlice takes a slice of x with the given output shape.
func (n *ops) stridedSlice(x tid, out []int64) tid {
	b := n.constant("strided_slice/stack", graph.I32, int64(len(out)))
	return n.move(kStridedSlice, "StridedSlice", out, numel(out)*n.ts[x].dt.Size(), attrs{}, x, b)
}

// pad zero-pads x to the shape out.
func (n *ops) pad(x tid, out []int64) tid {
	c := n.constant("Pad/paddings", graph.I32, int64(len(out)), 2)
	return n.move(kPad, "Pad", out, n.bytes(x), attrs{aux: []tid{c}}, x, c)
}

// ---- matmul, reductions, nn ----

// matmul adds a MatMul of 2-D tensors with optional transposes.
func (n *ops) matmul(a, b tid, ta, tb bool) tid {
	sa, sb := n.shape(a), n.shape(b)
	m, k := sa[0], sa[1]
	if ta {
		m, k = k, m
	}
	nn := sb[1]
	if tb {
		nn = sb[0]
	}
	out := []int64{m, nn}
	dt := n.ts[a].dt
	return n.simpleAt(kMatMul, opSpec{base: "MatMul", typ: "MatMul", cls: graph.ClassMatMul, dt: dt, shape: out,
		flops: 2 * float64(m) * float64(k) * float64(nn), rd: n.bytes(a) + n.bytes(b), wr: m * nn * dt.Size()}, attrs{ta: ta, tb: tb}, n.multiplied(a, b, ta, tb, false), a, b)
}

// batchMatMul adds a BatchMatMul of 3-D tensors [b,m,k] x [b,k,n].
func (n *ops) batchMatMul(a, b tid, ta, tb bool) tid {
	sa, sb := n.shape(a), n.shape(b)
	bt, m, k := sa[0], sa[1], sa[2]
	if ta {
		m, k = k, m
	}
	nn := sb[2]
	if tb {
		nn = sb[1]
	}
	out := []int64{bt, m, nn}
	dt := n.ts[a].dt
	return n.simpleAt(kBatchMatMul, opSpec{base: "MatMul", typ: "BatchMatMul", cls: graph.ClassMatMul, dt: dt, shape: out,
		flops: 2 * float64(bt) * float64(m) * float64(k) * float64(nn), rd: n.bytes(a) + n.bytes(b), wr: bt * m * nn * dt.Size()}, attrs{ta: ta, tb: tb}, n.multiplied(a, b, ta, tb, true), a, b)
}

func (n *ops) biasAdd(x, b tid) tid {
	return n.simple(kBiasAdd, opSpec{base: "BiasAdd", typ: "BiasAdd", cls: graph.ClassElementwise, dt: n.ts[x].dt, shape: n.shape(x),
		flops: float64(n.numel(x)), rd: n.bytes(x) + n.bytes(b), wr: n.bytes(x)}, attrs{}, x, b)
}

// reduce adds a Sum or Mean of x over axes (nil = all axes).
func (n *ops) reduce(k kind, x tid, axes []int, keep bool) tid {
	s := n.shape(x)
	red := make([]bool, len(s))
	full := axes == nil
	for _, a := range axes {
		if a < 0 {
			a += len(s)
		}
		red[a] = true
	}
	if len(axes) == len(s) {
		full = true
	}
	var out []int64
	for i, d := range s {
		switch {
		case full || red[i]:
			if keep {
				out = append(out, 1)
			}
		default:
			out = append(out, d)
		}
	}
	if out == nil {
		out = []int64{}
	}
	typ := "Sum"
	if k == kMean {
		typ = "Mean"
	}
	nax := int64(len(axes))
	if axes == nil {
		nax = int64(len(s))
	}
	c := n.constant(typ+"/reduction_indices", graph.I32, nax)
	dt := n.ts[x].dt
	return n.simpleAt(k, opSpec{base: typ, typ: typ, cls: graph.ClassReduction, dt: dt, shape: out,
		flops: float64(n.numel(x)), rd: n.bytes(x), wr: numel(out) * dt.Size()}, attrs{full: full}, n.reduced(x, red, full, keep), x, c)
}

func (n *ops) softmax(x tid) tid {
	e := n.numel(x)
	return n.simple(kSoftmax, opSpec{base: "Softmax", typ: "Softmax", cls: graph.ClassReduction, dt: n.ts[x].dt, shape: n.shape(x),
		flops: 5 * float64(e), rd: n.bytes(x), wr: n.bytes(x)}, attrs{}, x)
}

// xent adds SparseSoftmaxCrossEntropyWithLogits; it returns the per-example loss.
func (n *ops) xent(logits, labels tid) tid {
	s := n.shape(logits)
	e := numel(s)
	dt := n.ts[logits].dt
	lossShape := s[:len(s)-1]
	op := n.addOp(opSpec{base: "SparseSoftmaxCrossEntropyWithLogits", typ: "SparseSoftmaxCrossEntropyWithLogits", cls: graph.ClassReduction,
		dt: dt, shape: lossShape, flops: 6 * float64(e), rd: n.bytes(logits) + n.bytes(labels), wr: (e + numel(lossShape)) * dt.Size()}, logits, labels)
	at := n.ts[logits].at
	loss := n.out(op, lossShape, dt, n.prefixed(logits, len(lossShape)))
	backprop := n.out(op, s, dt, at)
	if n.anyDiff(logits) {
		n.record(kXent, op, []tid{logits}, []tid{loss, backprop}, attrs{})
	}
	return loss
}

// gather adds an embedding lookup of ids in params.
func (n *ops) gather(params, ids tid) tid {
	out := append(append([]int64(nil), n.shape(ids)...), n.shape(params)[1:]...)
	dt := n.ts[params].dt
	c := n.constant("GatherV2/axis", graph.I32)
	b := numel(out) * dt.Size()
	// It reads the rows the ids pick: as many as the ids, batched with them.
	at := n.prefixed(ids, len(n.shape(ids)))
	return n.simpleAt(kGather, opSpec{base: "GatherV2", typ: "GatherV2", cls: graph.ClassEmbedding, dt: dt, shape: out,
		rd: b + n.bytes(ids), wr: b, fixed: n.fixedIf(at.dim < 0, b+n.bytes(ids), b, 0)}, attrs{aux: []tid{ids}}, at, params, ids, c)
}

func (n *ops) addN(xs ...tid) tid {
	if len(xs) == 1 {
		return xs[0]
	}
	e := n.numel(xs[0])
	var rd int64
	for _, x := range xs {
		rd += n.bytes(x)
	}
	return n.simple(kAddN, opSpec{base: "AddN", typ: "AddN", cls: graph.ClassElementwise, dt: n.ts[xs[0]].dt, shape: n.shape(xs[0]),
		flops: float64(e) * float64(len(xs)-1), rd: rd, wr: n.bytes(xs[0])}, attrs{}, xs...)
}

func (n *ops) l2loss(x tid) tid {
	return n.simple(kL2Loss, opSpec{base: "L2Loss", typ: "L2Loss", cls: graph.ClassReduction, dt: n.ts[x].dt, shape: []int64{},
		flops: 2 * float64(n.numel(x)), rd: n.bytes(x), wr: n.ts[x].dt.Size()}, attrs{}, x)
}

// ---- convolutions (NHWC) ----

func convOut(in, k, stride int64, same bool) int64 {
	if same {
		return (in + stride - 1) / stride
	}
	return (in-k)/stride + 1
}

// conv2d adds a Conv2D of x [N,H,W,C] with filter w [kh,kw,C,O].
func (n *ops) conv2d(x, w tid, stride int64, same bool) tid {
	sx, sw := n.shape(x), n.shape(w)
	ho := convOut(sx[1], sw[0], stride, same)
	wo := convOut(sx[2], sw[1], stride, same)
	out := []int64{sx[0], ho, wo, sw[3]}
	dt := n.ts[x].dt
	f := 2 * float64(numel(out)) * float64(sw[0]*sw[1]*sw[2])
	return n.simple(kConv2D, opSpec{base: "Conv2D", typ: "Conv2D", cls: graph.ClassConv, dt: dt, shape: out,
		flops: f, rd: n.bytes(x) + n.bytes(w), wr: numel(out) * dt.Size()}, attrs{stride: stride}, x, w)
}

// depthwise adds a DepthwiseConv2dNative of x with filter w [kh,kw,C,1].
func (n *ops) depthwise(x, w tid, stride int64) tid {
	sx, sw := n.shape(x), n.shape(w)
	out := []int64{sx[0], convOut(sx[1], sw[0], stride, true), convOut(sx[2], sw[1], stride, true), sx[3] * sw[3]}
	dt := n.ts[x].dt
	f := 2 * float64(numel(out)) * float64(sw[0]*sw[1])
	return n.simple(kDepthwise, opSpec{base: "depthwise", typ: "DepthwiseConv2dNative", cls: graph.ClassConv, dt: dt, shape: out,
		flops: f, rd: n.bytes(x) + n.bytes(w), wr: numel(out) * dt.Size()}, attrs{stride: stride}, x, w)
}

// pool adds a MaxPool or AvgPool with a square window.
func (n *ops) pool(k kind, x tid, window, stride int64, same bool) tid {
	sx := n.shape(x)
	out := []int64{sx[0], convOut(sx[1], window, stride, same), convOut(sx[2], window, stride, same), sx[3]}
	typ := "MaxPool"
	if k == kAvgPool {
		typ = "AvgPool"
	}
	dt := n.ts[x].dt
	return n.simple(k, opSpec{base: typ, typ: typ, cls: graph.ClassReduction, dt: dt, shape: out,
		flops: float64(numel(out)) * float64(window*window), rd: n.bytes(x), wr: numel(out) * dt.Size()}, attrs{window: window, stride: stride}, x)
}

// fusedBN adds a FusedBatchNorm (training mode) of x [...,C] with scale
// and offset; it returns y, batch mean and batch variance.
func (n *ops) fusedBN(x, scale, offset tid) (y, mean, variance tid) {
	s := n.shape(x)
	c := s[len(s)-1]
	dt := n.ts[x].dt
	at := n.ts[x].at
	var fixed *fixedParts
	if at.dim >= 0 { // x is read twice; the scale, the offset and the statistics are not batched
		fixed = &fixedParts{rd: 2 * c * dt.Size(), wr: 4 * c * dt.Size()}
	}
	op := n.addOp(opSpec{base: "FusedBatchNorm", typ: "FusedBatchNorm", cls: graph.ClassReduction, dt: dt, shape: s,
		flops: 8 * float64(numel(s)), rd: 2*n.bytes(x) + 2*c*dt.Size(), wr: n.bytes(x) + 4*c*dt.Size(), fixed: fixed}, x, scale, offset)
	y = n.out(op, s, dt, at)
	mean = n.out(op, []int64{c}, dt, noBatch)
	variance = n.out(op, []int64{c}, dt, noBatch)
	r1 := n.out(op, []int64{c}, dt, noBatch) // reserve_space_1 (saved mean)
	r2 := n.out(op, []int64{c}, dt, noBatch) // reserve_space_2 (saved inverse std)
	if n.anyDiff(x, scale, offset) {
		n.record(kFusedBN, op, []tid{x, scale, offset}, []tid{y}, attrs{aux: []tid{r1, r2}})
	}
	return y, mean, variance
}
