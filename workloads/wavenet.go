package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// BuildWaveNet builds the training step of WaveNet (van den Oord et al.
// 2016; GDP appendix 6.3.6): a one-hot input and a causal 2-tap
// convolution, Stacks stacks of LayersPer dilated residual layers
// (dilations 1, 2, ..., 2^(LayersPer-1); 9 layers give a 512-sample
// receptive field per stack), each a causal dilated convolution (filter and
// gate computed by one convolution and split), tanh(filter) *
// sigmoid(gate), a 1x1 residual and a 1x1 skip convolution; the summed
// skips go through ReLU, 1x1, ReLU, 1x1 to Vocab-way logits per sample.
// Activations are [Batch, 1, SeqLen, channels] (conv1d as Conv2D);
// dilations use SpaceToBatchND/BatchToSpaceND as tf.nn.convolution does.
//
// Forward op scopes: input/..., stack_<s>/layer_<i>/..., postprocess/...,
// loss/....
func BuildWaveNet(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyWaveNet)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "wavenet" + strconv.Itoa(c.Stacks) + "x" + strconv.Itoa(c.Stacks*c.LayersPer)
	}
	B, T, R, Sk, Q := int64(c.Batch), int64(c.SeqLen), int64(c.Hidden), int64(c.Skip), int64(c.Vocab)
	n := newNet(name, c.DType, B, 100*c.Stacks*c.LayersPer+500)

	o := n.enter("input")
	ids := n.input("audio", graph.I32, batchDim(0), B, T)
	oh := n.addOp(opSpec{base: "one_hot", typ: "OneHot", cls: graph.ClassEmbedding, dt: n.dt, shape: []int64{B, 1, T, Q},
		rd: B * T * 4, wr: B * T * Q * n.dt.Size()}, ids)
	x := n.out(oh, []int64{B, 1, T, Q}, n.dt, batchDim(0))
	x = n.causalConv("causal_layer", x, R, 1)
	n.leave(o)

	var skip tid = -1
	for s := 0; s < c.Stacks; s++ {
		for i := 0; i < c.LayersPer; i++ {
			o := n.enter("stack_" + strconv.Itoa(s) + "/layer_" + strconv.Itoa(i))
			d := int64(1) << uint(i)
			f := n.causalConv("filter", x, R, d)
			g := n.causalConv("gate", x, R, d)
			out := n.binary(kMul, n.unary("Tanh", f), n.unary("Sigmoid", g))
			o2 := n.enter("dense")
			w := n.param("weights", 1, 1, R, R)
			res := n.conv2d(out, w, 1, true)
			n.leave(o2)
			o2 = n.enter("skip")
			ws := n.param("weights", 1, 1, R, Sk)
			sk := n.conv2d(out, ws, 1, true)
			n.leave(o2)
			x = n.binary(kAdd, x, res)
			if skip < 0 {
				skip = sk
			} else {
				skip = n.binary(kAdd, skip, sk)
			}
			n.leave(o)
		}
	}

	o = n.enter("postprocess")
	y := n.unary("Relu", skip)
	o2 := n.enter("postprocess1")
	y = n.biasAdd(n.conv2d(y, n.param("weights", 1, 1, Sk, Sk), 1, true), n.param("biases", Sk))
	n.leave(o2)
	y = n.unary("Relu", y)
	o2 = n.enter("postprocess2")
	y = n.biasAdd(n.conv2d(y, n.param("weights", 1, 1, Sk, Q), 1, true), n.param("biases", Q))
	n.leave(o2)
	logits := n.reshape(y, B*T, Q)
	n.leave(o)
	o = n.enter("loss")
	targets := n.input("targets", graph.I32, batchAt{dim: 0, inner: T}, B*T)
	loss := n.reduce(kMean, n.xent(logits, targets), nil, false)
	n.leave(o)
	n.minimize(loss, c.Optimizer, false)
	return n.build()
}

// causalConv is a causal 2-tap convolution of x [B,1,T,C] to out channels
// with dilation d: left zero-padding by d, then (for d > 1)
// SpaceToBatchND, a VALID Conv2D and BatchToSpaceND.
func (n *net) causalConv(scope string, x tid, out, d int64) tid {
	o := n.enter(scope)
	defer n.leave(o)
	s := n.shape(x)
	w := n.param("weights", 1, 2, s[3], out)
	p := n.pad(x, []int64{s[0], 1, s[2] + d, s[3]})
	if d == 1 {
		return n.conv2d(p, w, 1, false)
	}
	bs := n.constant("block_shape", graph.I32, 1)
	pd := n.constant("paddings", graph.I32, 1, 2)
	t := n.move(kSpaceToBatch, "SpaceToBatchND", []int64{s[0] * d, 1, (s[2] + d) / d, s[3]}, n.bytes(p), attrs{}, p, bs, pd)
	y := n.conv2d(t, w, 1, false)
	return n.move(kBatchToSpace, "BatchToSpaceND", []int64{s[0], 1, s[2], out}, n.bytes(y), attrs{}, y, bs, pd)
}
