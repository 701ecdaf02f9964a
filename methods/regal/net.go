package regal

import (
	"math/rand/v2"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/graphsage"
)

// Net is the network: placer's GraphSAGE encoder (Config.Layers layers of
// width Config.Dim) and a head shared by all nodes,
//
//	logits_v = relu(h_v W1 + b1) W2 + b2
//
// with Config.Outputs() logits per node: per gene group (devices, then
// the priority), MeanBuckets mean logits and VarBuckets variance logits.
// It is generic over float32 (the fast path) and float64 (gradient
// checks), with hand-derived backward passes.
type Net[T nn.Float] struct {
	Cfg Config
	Enc *graphsage.Encoder[T]
	Hid *nn.Linear[T] // Dim -> Hidden
	Out *nn.Linear[T] // Hidden -> Outputs
}

// NewNet returns a network with weights drawn from seed. The output
// bias favours the uniform buckets by Config.UniformLogit.
func NewNet[T nn.Float](cfg Config, seed uint64) *Net[T] {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(seed, 0x726567616c))
	n := &Net[T]{Cfg: cfg,
		Enc: graphsage.NewEncoder[T]("regal.sage", NumFeatures(), cfg.Dim, cfg.Layers, cfg.Neighbors, r),
		Hid: nn.NewLinear[T]("regal.head.hidden", cfg.Dim, cfg.Hidden, true, r),
		Out: nn.NewLinear[T]("regal.head.out", cfg.Hidden, cfg.Outputs(), true, r),
	}
	if m, v, ok := uniformBuckets(cfg); ok && cfg.UniformLogit > 0 {
		C := cfg.Choices()
		for g := range cfg.Groups() {
			n.Out.B.W[g*C+m] = T(cfg.UniformLogit)
			n.Out.B.W[g*C+cfg.MeanBuckets+v] = T(cfg.UniformLogit)
		}
	}
	return n
}

// uniformBuckets returns the mean and variance buckets whose Beta is the
// uniform distribution (mean 1/2, variance 1/12), if the quantization
// has them.
func uniformBuckets(cfg Config) (m, v int, ok bool) {
	km, kv := cfg.MeanBuckets, cfg.VarBuckets
	// (m+1)/(km+1) = 1/2 and (v+1)/(kv+1) = 1/3.
	if (km+1)%2 != 0 || (kv+1)%3 != 0 {
		return 0, 0, false
	}
	return (km+1)/2 - 1, (kv+1)/3 - 1, true
}

// Params lists the parameters in a fixed order.
func (n *Net[T]) Params() nn.Params[T] {
	return append(append(n.Enc.Params(), n.Hid.Params()...), n.Out.Params()...)
}

// Cache is what Backward needs of a forward pass.
type Cache[T nn.Float] struct {
	n      int
	enc    *graphsage.EncoderCache[T]
	h, hid []T
}

// Forward computes the N x Outputs logits of the input x (N x
// NumFeatures, in the element type) with the layers' neighbour samples.
func (n *Net[T]) Forward(ar *nn.Arena[T], x []T, N int, nbrs [][]int32) ([]T, *Cache[T]) {
	h, ec := n.Enc.Forward(ar, x, N, nbrs)
	hid := ar.AllocRaw(N * n.Cfg.Hidden)
	n.Hid.Forward(h, N, n.Hid.W.W, hid, false)
	nn.ReLU(hid)
	out := ar.AllocRaw(N * n.Cfg.Outputs())
	n.Out.Forward(hid, N, n.Out.W.W, out, false)
	return out, &Cache[T]{n: N, enc: ec, h: h, hid: hid}
}

// Backward takes the gradient of the logits and adds the gradients of
// every parameter.
func (n *Net[T]) Backward(ar *nn.Arena[T], c *Cache[T], dlogits []T) {
	dhid := ar.Alloc(c.n * n.Cfg.Hidden)
	n.Out.Backward(ar, c.hid, c.n, nil, n.Out.W.W, dlogits, dhid, nil)
	nn.ReLUBackward(dhid, c.hid)
	dh := ar.Alloc(c.n * n.Cfg.Dim)
	n.Hid.Backward(ar, c.h, c.n, nil, n.Hid.W.W, dhid, dh, nil)
	n.Enc.Backward(ar, c.enc, dh, nil)
}
