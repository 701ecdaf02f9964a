package workloads

import (
	"github.com/placer/placer/graph"
)

// The backward pass follows TensorFlow 1.x's tf.gradients (the graph
// generation of the GDP/GO/HDP papers): one gradient function per forward
// op, emitted in reverse creation order under the name scope
// "gradients/<forward op>_grad", with AddN where a tensor has several
// consumers. Binary elementwise ops always build the broadcast machinery
// (Shape, Shape, BroadcastGradientArgs, Sum, Reshape per input) as
// TensorFlow did before its equal-shape fast path. Gradient ops that feed
// only constants or random masks are not emitted: TensorFlow creates them
// but prunes them at run time.

// addGrad adds a gradient contribution to tensor t. A gradient holds the
// batch where t does (it has t's shape).
func (n *net) addGrad(t, g tid) {
	if n.ts[t].diff {
		n.ts[g].at = n.ts[t].at
		n.grads[t] = append(n.grads[t], g)
	}
}

// backward emits the gradient of the scalar loss with respect to every
// trainable variable; each variable's gradient ends in vars[i].grad.
func (n *net) backward(loss tid) {
	n.bwd = true
	n.grads = make([][]tid, len(n.ts))
	old := n.scope
	// The seed gradient (ones) is named after the loss op.
	n.scope = "gradients/" + n.b.Op(int(n.ts[loss].op)).Name + "_grad"
	c := n.constant("grad_ys_0", n.dt)
	op := n.addOp(opSpec{base: "Fill", typ: "Fill", cls: graph.ClassElementwise, dt: n.dt, shape: n.shape(loss), wr: n.bytes(loss)}, c)
	n.grads[loss] = append(n.grads[loss], n.out(op, n.shape(loss), n.dt, n.ts[loss].at))

	var gs []tid
	for i := len(n.tape) - 1; i >= 0; i-- {
		nd := &n.tape[i]
		have := false
		for _, t := range nd.out {
			if len(n.grads[t]) > 0 {
				have = true
				break
			}
		}
		if !have {
			continue
		}
		n.scope = "gradients/" + n.b.Op(int(nd.op)).Name + "_grad"
		gs = gs[:0]
		for _, t := range nd.out {
			switch l := n.grads[t]; len(l) {
			case 0:
				gs = append(gs, -1)
			case 1:
				gs = append(gs, l[0])
			default:
				gs = append(gs, n.addN(l...))
			}
			n.grads[t] = nil
		}
		n.gradOf(nd, gs)
	}
	n.scope = old
	n.bwd = false
}

// zerosFor returns g, or a ZerosLike of the forward output t if g is missing.
func (n *net) zerosFor(g, t tid) tid {
	if g >= 0 {
		return g
	}
	return n.elementwise("ZerosLike", t)
}

// reshapeTo reshapes v to shape, given as the tensor shapeT, with the
// batch at at.
func (n *net) reshapeTo(v, shapeT tid, shape []int64, at batchAt) tid {
	op := n.addOp(opSpec{base: "Reshape", typ: "Reshape", cls: graph.ClassDataMovement, dt: n.ts[v].dt, shape: shape}, v, shapeT)
	return n.out(op, shape, n.ts[v].dt, at)
}

// sumBy reduces v over the axes held in tensor axes down to shape, with
// the batch at at: an alias when nothing is reduced.
func (n *net) sumBy(v, axes tid, shape []int64, at batchAt) tid {
	s := opSpec{base: "Sum", typ: "Sum", cls: graph.ClassDataMovement, dt: n.ts[v].dt, shape: shape}
	if numel(shape) != n.numel(v) {
		s.cls = graph.ClassReduction
		s.flops = float64(n.numel(v))
		s.rd = n.bytes(v)
		s.wr = numel(shape) * s.dt.Size()
	}
	op := n.addOp(s, v, axes)
	return n.out(op, shape, s.dt, at)
}

// gradBinary is TensorFlow 1.x's _AddGrad/_SubGrad/_MulGrad/_RealDivGrad/
// _SquaredDifferenceGrad.
func (n *net) gradBinary(k kind, x, y, g, z tid) {
	dx, dy := n.ts[x].diff, n.ts[y].diff
	if n.tf113 && k != kDiv && k != kSqDiff && sameShape(n.shape(x), n.shape(y)) && sameShape(n.shape(x), n.shape(g)) {
		switch k {
		case kAdd:
			n.addGrad(x, g)
			n.addGrad(y, g)
		case kSub:
			n.addGrad(x, g)
			if dy {
				n.addGrad(y, n.unary("Neg", g))
			}
		case kMul:
			if dx {
				n.addGrad(x, n.binary(kMul, g, y))
			}
			if dy {
				n.addGrad(y, n.binary(kMul, g, x))
			}
		}
		return
	}
	sx := n.shapeOf(x)
	sy := n.shapeOf(y)
	r := n.meta("BroadcastGradientArgs", int64(len(n.shape(z))), 2, sx, sy)
	red := func(v, t, ax, st tid) tid {
		return n.reshapeTo(n.sumBy(v, ax, n.shape(t), n.ts[t].at), st, n.shape(t), n.ts[t].at)
	}
	switch k {
	case kAdd:
		if dx {
			n.addGrad(x, red(g, x, r[0], sx))
		}
		if dy {
			n.addGrad(y, red(g, y, r[1], sy))
		}
	case kSub:
		if dx {
			n.addGrad(x, red(g, x, r[0], sx))
		}
		if dy {
			s := n.sumBy(g, r[1], n.shape(y), n.ts[y].at)
			n.addGrad(y, n.reshapeTo(n.unary("Neg", s), sy, n.shape(y), n.ts[y].at))
		}
	case kMul:
		if dx {
			n.addGrad(x, red(n.binary(kMul, g, y), x, r[0], sx))
		}
		if dy {
			n.addGrad(y, red(n.binary(kMul, x, g), y, r[1], sy))
		}
	case kDiv:
		if dx {
			n.addGrad(x, red(n.binary(kDiv, g, y), x, r[0], sx))
		}
		if dy {
			t := n.binary(kDiv, n.unary("Neg", x), y)
			t = n.binary(kMul, g, n.binary(kDiv, t, y))
			n.addGrad(y, red(t, y, r[1], sy))
		}
	case kSqDiff:
		two := n.scalar("scalar")
		xg := n.binary(kMul, n.binary(kMul, two, g), n.binary(kSub, x, y))
		if dx {
			n.addGrad(x, red(xg, x, r[0], sx))
		}
		if dy {
			n.addGrad(y, n.unary("Neg", red(xg, y, r[1], sy)))
		}
	}
}

// gradReshape is the gradient of Reshape, ExpandDims and Squeeze.
func (n *net) gradReshape(x, g tid) {
	n.addGrad(x, n.reshapeTo(g, n.shapeOf(x), n.shape(x), n.ts[x].at))
}

// gradSum is TensorFlow 1.x's _SumGrad: Reshape+Tile when every axis is
// reduced, else the dynamic reduced_shape computation.
func (n *net) gradSum(x, axes, g tid, full bool) tid {
	xs := n.shape(x)
	r := int64(len(xs))
	kept := make([]int64, r)
	for i := range kept {
		kept[i] = 1
	}
	var rs, ts tid
	if full || n.tf113 {
		rs = n.constant("Reshape/shape", graph.I32, r)
		ts = n.constant("Tile/multiples", graph.I32, r)
	} else {
		sh := n.shapeOf(x)
		size := n.meta("Size", 1, 1, sh)[0]
		add := n.meta("add", r, 1, axes, size)[0]
		mod := n.meta("mod", r, 1, add, size)[0]
		sa := n.meta("Shape", 1, 1, mod)[0]
		start := n.constant("range/start", graph.I32)
		delta := n.constant("range/delta", graph.I32)
		rng := n.meta("range", r, 1, start, size, delta)[0]
		one := n.constant("Fill/value", graph.I32)
		fill := n.meta("Fill", r, 1, sa, one)[0]
		rs = n.meta("DynamicStitch", r, 1, rng, mod, sh, fill)[0]
		m1 := n.constant("Maximum/y", graph.I32)
		mx := n.meta("Maximum", r, 1, rs, m1)[0]
		ts = n.meta("floordiv", r, 1, sh, mx)[0]
	}
	// kept stands for the reduced shape (g's, with 1s for the reduced
	// axes): the reshape holds no batch, the Tile reads g and writes x.
	rg := n.reshapeTo(g, rs, kept, noBatch)
	fixed := &fixedParts{}
	if n.ts[g].at.dim < 0 {
		fixed.rd = n.bytes(g)
	}
	if n.ts[x].at.dim < 0 {
		fixed.wr = n.bytes(x)
	}
	op := n.addOp(opSpec{base: "Tile", typ: "Tile", cls: graph.ClassDataMovement, dt: n.ts[g].dt, shape: xs, rd: n.bytes(g), wr: n.bytes(x), fixed: fixed}, rg, ts)
	return n.out(op, xs, n.ts[g].dt, n.ts[x].at)
}

// gradOf emits the gradient ops of one tape node given the gradients of
// its outputs (-1 where an output has none).
func (n *net) gradOf(nd *node, gs []tid) {
	in := nd.in
	g := gs[0]
	y := nd.out[0]
	switch nd.k {
	case kAdd, kSub, kMul, kDiv, kSqDiff:
		n.gradBinary(nd.k, in[0], in[1], g, y)
	case kSigmoid:
		n.addGrad(in[0], n.elementwise("SigmoidGrad", y, g))
	case kTanh:
		n.addGrad(in[0], n.elementwise("TanhGrad", y, g))
	case kRelu:
		n.addGrad(in[0], n.elementwise("ReluGrad", g, y))
	case kRsqrt:
		n.addGrad(in[0], n.elementwise("RsqrtGrad", y, g))
	case kNeg:
		n.addGrad(in[0], n.unary("Neg", g))
	case kSquare:
		m := n.binary(kMul, in[0], n.scalar("Const"))
		n.addGrad(in[0], n.binary(kMul, g, m))
	case kIdentity, kAddN:
		for _, x := range in {
			n.addGrad(x, g)
		}
	case kVarRead:
		n.vars[nd.attr.variable].grad = g
	case kMatMul, kBatchMatMul:
		a, b := in[0], in[1]
		mm := n.matmul
		if nd.k == kBatchMatMul {
			mm = n.batchMatMul
		}
		ta, tb := nd.attr.ta, nd.attr.tb
		if n.ts[a].diff {
			switch {
			case !ta && !tb:
				n.addGrad(a, mm(g, b, false, true))
			case !ta && tb:
				n.addGrad(a, mm(g, b, false, false))
			case ta && !tb:
				n.addGrad(a, mm(b, g, false, true))
			default:
				n.addGrad(a, mm(b, g, true, true))
			}
		}
		if n.ts[b].diff {
			switch {
			case !ta && !tb:
				n.addGrad(b, mm(a, g, true, false))
			case !ta && tb:
				n.addGrad(b, mm(g, a, true, false))
			case ta && !tb:
				n.addGrad(b, mm(a, g, false, false))
			default:
				n.addGrad(b, mm(g, a, true, true))
			}
		}
	case kBiasAdd:
		n.addGrad(in[0], g)
		if n.ts[in[1]].diff {
			bs := n.shape(in[1])
			op := n.addOp(opSpec{base: "BiasAddGrad", typ: "BiasAddGrad", cls: graph.ClassReduction, dt: n.ts[g].dt, shape: bs,
				flops: float64(n.numel(g)), rd: n.bytes(g), wr: n.bytes(in[1])}, g)
			n.addGrad(in[1], n.out(op, bs, n.ts[g].dt, noBatch))
		}
	case kConcat:
		xs := in[:len(in)-1]
		axis := nd.attr.aux[0]
		r := int64(len(n.shape(xs[0])))
		rank := n.meta("Rank", 0, 1, xs[0])[0]
		mod := n.meta("mod", 0, 1, axis, rank)[0]
		shapes := n.meta("ShapeN", r, len(xs), xs...)
		offs := n.meta("ConcatOffset", r, len(xs), append([]tid{mod}, shapes...)...)
		for i, x := range xs {
			if n.ts[x].diff {
				n.addGrad(x, n.move(kStridedSlice, "Slice", n.shape(x), n.bytes(x), attrs{}, g, offs[i], shapes[i]))
			}
		}
	case kSplit:
		parts := make([]tid, 0, len(gs)+1)
		for i, gi := range gs {
			parts = append(parts, n.zerosFor(gi, nd.out[i]))
		}
		n.addGrad(in[0], n.concatWith(nd.attr.aux[0], n.shape(in[0]), parts...))
	case kStridedSlice:
		x := in[0]
		sh := n.shapeOf(x)
		n.addGrad(x, n.move(kStridedSlice, "StridedSliceGrad", n.shape(x), n.bytes(g), attrs{}, g, sh, in[1]))
	case kReshape, kExpandDims, kSqueeze:
		n.gradReshape(in[0], g)
	case kTranspose:
		inv := n.meta("InvertPermutation", int64(len(n.shape(y))), 1, nd.attr.aux[0])[0]
		n.addGrad(in[0], n.move(kTranspose, "Transpose", n.shape(in[0]), n.bytes(g), attrs{}, g, inv))
	case kUnstack:
		parts := make([]tid, len(gs))
		for i, gi := range gs {
			parts[i] = n.zerosFor(gi, nd.out[i])
		}
		n.addGrad(in[0], n.move(kPack, "Pack", n.shape(in[0]), n.bytes(in[0]), attrs{}, parts...))
	case kPack:
		op := n.addOp(opSpec{base: "unstack", typ: "Unpack", cls: graph.ClassDataMovement, dt: n.ts[g].dt, shape: n.shape(in[0]), rd: n.bytes(g), wr: n.bytes(g)}, g)
		for _, x := range in {
			t := n.out(op, n.shape(x), n.ts[g].dt, n.ts[x].at)
			n.addGrad(x, t)
		}
	case kSum:
		n.addGrad(in[0], n.gradSum(in[0], in[1], g, nd.attr.full))
	case kMean:
		s := n.gradSum(in[0], in[1], g, nd.attr.full)
		f := n.constant("Const", n.dt)
		n.addGrad(in[0], n.binary(kDiv, s, f))
	case kSoftmax:
		m := n.binary(kMul, g, y)
		s := n.reduce(kSum, m, []int{-1}, false)
		sh := append(append([]int64(nil), n.shape(s)...), 1)
		r := n.reshape(s, sh...)
		n.addGrad(in[0], n.binary(kMul, n.binary(kSub, g, r), y))
	case kXent:
		bp := nd.out[1]
		pg := n.addOp(opSpec{base: "PreventGradient", typ: "PreventGradient", cls: graph.ClassDataMovement, dt: n.ts[bp].dt, shape: n.shape(bp)}, bp)
		pt := n.out(pg, n.shape(bp), n.ts[bp].dt, n.ts[bp].at)
		e := n.expandDims(g, -1)
		n.addGrad(in[0], n.binary(kMul, e, pt))
	case kGather:
		params, ids := in[0], in[1]
		if !n.ts[params].diff {
			return
		}
		ps := n.shapeOf(params)
		size := n.meta("Size", 0, 1, ids)[0]
		es := n.meta("ExpandDims", 1, 1, size, n.constant("ExpandDims/dim", graph.I32))[0]
		sl := n.meta("strided_slice", int64(len(n.shape(params))-1), 1, ps, n.constant("strided_slice/stack", graph.I32, 1))[0]
		vs := n.meta("concat", int64(len(n.shape(params))), 1, es, sl, n.constant("concat/axis", graph.I32))[0]
		vshape := []int64{n.numel(ids), n.shape(params)[1]}
		vals := n.reshapeTo(g, vs, vshape, n.reshaped(g, vshape))
		idx := n.reshapeTo(ids, es, []int64{n.numel(ids)}, n.reshaped(ids, []int64{n.numel(ids)}))
		dt := n.ts[params].dt
		op := n.addOp(opSpec{base: "UnsortedSegmentSum", typ: "UnsortedSegmentSum", cls: graph.ClassEmbedding, dt: dt, shape: n.shape(params),
			flops: float64(n.numel(g)), rd: n.bytes(g) + n.bytes(idx), wr: n.bytes(params)}, vals, idx, ps)
		n.addGrad(params, n.out(op, n.shape(params), dt, noBatch))
	case kConv2D, kDepthwise:
		x, w := in[0], in[1]
		f := n.b.Op(int(nd.op)).FLOPs
		dt := n.ts[g].dt
		typ := "Conv2D"
		var sx, sw tid
		if nd.k == kConv2D {
			sh := n.meta("ShapeN", 4, 2, x, w)
			sx, sw = sh[0], sh[1]
		} else {
			typ = "DepthwiseConv2dNative"
			sx = n.shapeOf(x)
			sw = n.shapeOf(w)
		}
		if n.ts[x].diff {
			op := n.addOp(opSpec{base: typ + "BackpropInput", typ: typ + "BackpropInput", cls: graph.ClassConv, dt: dt, shape: n.shape(x),
				flops: f, rd: n.bytes(g) + n.bytes(w), wr: n.bytes(x)}, sx, w, g)
			n.addGrad(x, n.out(op, n.shape(x), dt, n.ts[x].at))
		}
		if n.ts[w].diff {
			op := n.addOp(opSpec{base: typ + "BackpropFilter", typ: typ + "BackpropFilter", cls: graph.ClassConv, dt: dt, shape: n.shape(w),
				flops: f, rd: n.bytes(g) + n.bytes(x), wr: n.bytes(w)}, x, sw, g)
			n.addGrad(w, n.out(op, n.shape(w), dt, noBatch))
		}
	case kMaxPool:
		x := in[0]
		op := n.addOp(opSpec{base: "MaxPoolGrad", typ: "MaxPoolGrad", cls: graph.ClassReduction, dt: n.ts[x].dt, shape: n.shape(x),
			flops: float64(n.numel(g) * nd.attr.window * nd.attr.window), rd: n.bytes(x) + n.bytes(y) + n.bytes(g), wr: n.bytes(x)}, x, y, g)
		n.addGrad(x, n.out(op, n.shape(x), n.ts[x].dt, n.ts[x].at))
	case kAvgPool:
		x := in[0]
		sh := n.shapeOf(x)
		op := n.addOp(opSpec{base: "AvgPoolGrad", typ: "AvgPoolGrad", cls: graph.ClassReduction, dt: n.ts[x].dt, shape: n.shape(x),
			flops: float64(n.numel(g) * nd.attr.window * nd.attr.window), rd: n.bytes(g), wr: n.bytes(x)}, sh, g)
		n.addGrad(x, n.out(op, n.shape(x), n.ts[x].dt, n.ts[x].at))
	case kFusedBN:
		x, scale, offset := in[0], in[1], in[2]
		dt := n.ts[x].dt
		c := n.shape(scale)
		op := n.addOp(opSpec{base: "FusedBatchNormGrad", typ: "FusedBatchNormGrad", cls: graph.ClassReduction, dt: dt, shape: n.shape(x),
			flops: 10 * float64(n.numel(x)), rd: 2*n.bytes(x) + 3*n.bytes(scale), wr: n.bytes(x) + 2*n.bytes(scale)},
			g, x, scale, nd.attr.aux[0], nd.attr.aux[1])
		dx := n.out(op, n.shape(x), dt, n.ts[x].at)
		ds := n.out(op, c, dt, noBatch)
		do := n.out(op, c, dt, noBatch)
		n.addGrad(x, dx)
		n.addGrad(scale, ds)
		n.addGrad(offset, do)
	case kL2Loss:
		n.addGrad(in[0], n.binary(kMul, in[0], g))
	case kPad:
		x := in[0]
		rank := n.meta("Rank", 0, 1, x)[0]
		pk := n.meta("stack", 2, 1, rank, n.constant("stack/1", graph.I32))[0]
		sl := n.meta("Slice", 1, 1, nd.attr.aux[0], n.constant("Slice/begin", graph.I32, 2), pk)[0]
		rs := n.meta("Reshape", 1, 1, sl, n.constant("Reshape/shape", graph.I32, 1))[0]
		sh := n.shapeOf(x)
		n.addGrad(x, n.move(kStridedSlice, "Slice_1", n.shape(x), n.bytes(x), attrs{}, g, rs, sh))
	case kSpaceToBatch:
		n.addGrad(in[0], n.move(kBatchToSpace, "BatchToSpaceND", n.shape(in[0]), n.bytes(g), attrs{}, g, in[1], in[2]))
	case kBatchToSpace:
		n.addGrad(in[0], n.move(kSpaceToBatch, "SpaceToBatchND", n.shape(in[0]), n.bytes(g), attrs{}, g, in[1], in[2]))
	default:
		panic("workloads: no gradient for kind")
	}
}

// concatWith is ConcatV2 with an existing axis tensor and a known output shape.
func (n *net) concatWith(axis tid, shape []int64, xs ...tid) tid {
	var rd int64
	for _, x := range xs {
		rd += n.bytes(x)
	}
	ins := append(append([]tid(nil), xs...), axis)
	return n.move(kConcat, "concat", shape, rd, attrs{}, ins...)
}
