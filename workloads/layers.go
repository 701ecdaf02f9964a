package workloads

import (
	"github.com/placer/placer/graph"
)

// placeholder adds an input op without a batch (no inputs, not
// differentiable); input adds one with a batch.
func (n *net) placeholder(base string, dt graph.DType, shape ...int64) tid {
	return n.input(base, dt, noBatch, shape...)
}

// zeros adds a zero-filled constant (an RNN's initial state) that holds
// the batch at at.
func (n *net) zeros(base string, at batchAt, shape ...int64) tid {
	op := n.addOp(opSpec{base: base, typ: "Fill", cls: graph.ClassElementwise, dt: n.dt, shape: shape, wr: numel(shape) * n.dt.Size()})
	return n.out(op, shape, n.dt, at)
}

// dropout is TensorFlow 1.x's tf.nn.dropout: a random mask
// floor(keep + U[0,1)) and x / keep * mask. keep >= 1 is the identity.
func (n *net) dropout(x tid, keep float64) tid {
	if keep >= 1 {
		return x
	}
	old := n.enter("dropout")
	kp := n.scalar("keep_prob")
	sh := n.shapeOf(x)
	ru := n.addOp(opSpec{base: "random_uniform/RandomUniform", typ: "RandomUniform", cls: graph.ClassElementwise, dt: n.dt,
		shape: n.shape(x), flops: float64(n.numel(x)), wr: n.bytes(x)}, sh)
	r := n.out(ru, n.shape(x), n.dt, n.ts[x].at)
	mx, mn := n.scalar("random_uniform/max"), n.scalar("random_uniform/min")
	rng := n.binary(kSub, mx, mn)
	r = n.binary(kAdd, n.binary(kMul, r, rng), mn)
	r = n.binary(kAdd, kp, r)
	mask := n.unary("Floor", r)
	y := n.binary(kMul, n.binary(kDiv, x, kp), mask)
	n.leave(old)
	return y
}

// lstmCell is TensorFlow's BasicLSTMCell: [x,h] x W + b split into the
// gates i, j, f, o; c' = c*sigmoid(f+forget_bias) + sigmoid(i)*tanh(j);
// h' = tanh(c')*sigmoid(o). Forward FLOPs: 8*B*H*(in+H) + 29*B*H.
func (n *net) lstmCell(x, h, c, kernel, bias tid) (h2, c2 tid) {
	xh := n.concat(1, x, h)
	z := n.biasAdd(n.matmul(xh, kernel, false, false), bias)
	g := n.split(1, 4, z)
	f := n.binary(kAdd, g[2], n.scalar("add/y"))
	c1 := n.binary(kMul, c, n.unary("Sigmoid", f))
	ij := n.binary(kMul, n.unary("Sigmoid", g[0]), n.unary("Tanh", g[1]))
	c2 = n.binary(kAdd, c1, ij)
	h2 = n.binary(kMul, n.unary("Tanh", c2), n.unary("Sigmoid", g[3]))
	return h2, c2
}

// LSTMCellFLOPs is the forward FLOPs of one BasicLSTMCell step with batch
// b, input size in and hidden size h: the gate matmul 2*b*(in+h)*4h, the
// bias add 4bh, the forget-bias add bh, three sigmoids and two tanh at 4
// flops per element, three multiplies and one add.
func LSTMCellFLOPs(b, in, h int64) float64 {
	bf, hf := float64(b), float64(h)
	return 2*bf*float64(in+h)*4*hf + 4*bf*hf + bf*hf + 5*4*bf*hf + 3*bf*hf + bf*hf
}

// lstmLayer holds the weights of one LSTM layer.
type lstmLayer struct{ kernel, bias tid }

func (n *net) lstmWeights(in, h int64) lstmLayer {
	return lstmLayer{kernel: n.param("kernel", in+h, 4*h), bias: n.param("bias", 4*h)}
}

// dense is x W (+ b) for a 2-D x.
func (n *net) dense(x tid, units int64, bias bool) tid {
	w := n.param("kernel", n.shape(x)[1], units)
	y := n.matmul(x, w, false, false)
	if bias {
		y = n.biasAdd(y, n.param("bias", units))
	}
	return y
}

// layerNorm is tf.contrib.layers.layer_norm over the last axis (TF 1.x:
// nn.moments then nn.batch_normalization).
func (n *net) layerNorm(x tid) tid {
	old := n.enter("LayerNorm")
	d := n.shape(x)[len(n.shape(x))-1]
	beta := n.param("beta", d)
	gamma := n.param("gamma", d)
	mean := n.reduce(kMean, x, []int{-1}, true)
	v := n.reduce(kMean, n.binary(kSqDiff, x, n.stopGradient(mean)), []int{-1}, true)
	y := n.batchNormalize(x, mean, v, gamma, beta)
	n.leave(old)
	return y
}

// batchNormalize is TF 1.x nn.batch_normalization:
// inv = rsqrt(var + eps) [* gamma]; x*inv + (beta - mean*inv).
func (n *net) batchNormalize(x, mean, variance, gamma, beta tid) tid {
	old := n.enter("batchnorm")
	inv := n.unary("Rsqrt", n.binary(kAdd, variance, n.scalar("add/y")))
	if gamma >= 0 {
		inv = n.binary(kMul, inv, gamma)
	}
	y := n.binary(kAdd, n.binary(kMul, x, inv), n.binary(kSub, beta, n.binary(kMul, mean, inv)))
	n.leave(old)
	return y
}

// batchNorm is the non-fused batch norm of the 2016 Inception trainer in
// training mode (no scale): TF <= 1.1 nn.moments through sufficient
// statistics around a gradient-stopped shift, moving-average updates of
// the moving mean and variance, and nn.batch_normalization.
func (n *net) batchNorm(x tid) tid {
	old := n.enter("BatchNorm")
	c := n.shape(x)[3]
	beta := n.param("beta", c)
	mm := n.stateVariable("moving_mean", c)
	mv := n.stateVariable("moving_variance", c)
	o2 := n.enter("moments")
	axes := []int{0, 1, 2}
	shift := n.stopGradient(n.reduce(kMean, x, axes, true))
	o3 := n.enter("sufficient_statistics")
	mss := n.reduce(kSum, n.binary(kSub, x, shift), axes, false)
	vss := n.reduce(kSum, n.binary(kSqDiff, x, shift), axes, false)
	n.leave(o3)
	o3 = n.enter("normalize")
	div := n.constant("divisor", n.dt)
	sm := n.binary(kMul, mss, div)
	mean := n.binary(kAdd, sm, n.squeeze4(shift))
	v := n.binary(kSub, n.binary(kMul, vss, div), n.unary("Square", sm))
	n.leave(o3)
	n.leave(o2)
	n.movingAverage(mm, mean)
	n.movingAverage(mv, v)
	y := n.batchNormalize(x, mean, v, -1, beta)
	n.leave(old)
	return y
}

// squeeze4 squeezes [1,1,1,C] to [C].
func (n *net) squeeze4(x tid) tid {
	s := n.shape(x)
	return n.alias(kSqueeze, "Squeeze", x, []int64{s[len(s)-1]}, attrs{})
}

// fusedBatchNorm is tf.layers.batch_normalization(fused=True) in training
// mode, with its moving-average updates.
func (n *net) fusedBatchNorm(x tid) tid {
	old := n.enter("batch_normalization")
	c := n.shape(x)[3]
	gamma := n.param("gamma", c)
	beta := n.param("beta", c)
	mm := n.stateVariable("moving_mean", c)
	mv := n.stateVariable("moving_variance", c)
	y, mean, v := n.fusedBN(x, gamma, beta)
	n.movingAverage(mm, mean)
	n.movingAverage(mv, v)
	n.leave(old)
	return y
}
