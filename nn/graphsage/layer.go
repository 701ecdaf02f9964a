package graphsage

import (
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Layer is one GraphSAGE layer with the max-pool aggregator:
//
//	z_u    = sigmoid(h_u Pool + b)
//	h_N(v) = max over sampled neighbours u of z_u   (0 if v has none)
//	h_v'   = relu(h_v Self + h_N(v) Neigh + c)
//
// (Self and Neigh are the two halves of the dense layer on
// concat(h_v, h_N(v))).
type Layer[T nn.Float] struct {
	In, Out, PoolDim int
	Pool             *nn.Linear[T] // In -> PoolDim
	Self             *nn.Linear[T] // In -> Out, with the bias
	Neigh            *nn.Linear[T] // PoolDim -> Out, no bias
}

// NewLayer returns a layer from in to out features with a pool of poolDim.
func NewLayer[T nn.Float](name string, in, out, poolDim int, r *rand.Rand) *Layer[T] {
	return &Layer[T]{
		In: in, Out: out, PoolDim: poolDim,
		Pool:  nn.NewLinear[T](name+".pool", in, poolDim, true, r),
		Self:  nn.NewLinear[T](name+".self", in, out, true, r),
		Neigh: nn.NewLinear[T](name+".neigh", poolDim, out, false, r),
	}
}

// Params lists the parameters.
func (l *Layer[T]) Params() nn.Params[T] {
	return append(append(l.Pool.Params(), l.Self.Params()...), l.Neigh.Params()...)
}

// LayerCache is what Layer.Backward needs.
type LayerCache[T nn.Float] struct {
	h    []T
	n, k int
	nbrs []int32
	z    []T     // n x PoolDim sigmoid outputs
	agg  []T     // n x PoolDim pooled neighbourhoods
	win  []int32 // n x PoolDim: the sample slot that won the max (-1 = none)
	out  []T     // n x Out
}

// Forward computes the layer for the n x In matrix h, with nbrs the N x k
// sampled neighbours (-1 = none), and returns the n x Out output.
func (l *Layer[T]) Forward(ar *nn.Arena[T], h []T, n int, nbrs []int32, k int) ([]T, *LayerCache[T]) {
	P := l.PoolDim
	c := &LayerCache[T]{h: h, n: n, k: k, nbrs: nbrs}
	c.z = ar.AllocRaw(n * P)
	l.Pool.Forward(h, n, l.Pool.W.W, c.z, false)
	nn.ParallelFor(len(c.z), 1<<14, func(lo, hi int) {
		s := c.z[lo:hi]
		nn.ExpSum(s, -1, 0) // e^-x, saturating instead of overflowing
		for i, e := range s {
			s[i] = 1 / (1 + e)
		}
	})
	c.agg = ar.AllocRaw(n * P)
	c.win = nn.Int32s(ar, n*P)
	nn.ParallelFor(n, nn.Grain(n, k*P), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			a := c.agg[v*P : (v+1)*P]
			w := c.win[v*P : (v+1)*P]
			nb := nbrs[v*k : (v+1)*k]
			if len(nb) == 0 || nb[0] < 0 {
				clear(a)
				for j := range w {
					w[j] = -1
				}
				continue
			}
			copy(a, c.z[int(nb[0])*P:(int(nb[0])+1)*P])
			clear(w)
			for s := 1; s < len(nb) && nb[s] >= 0; s++ {
				u := int(nb[s])
				nn.MaxSlot(a, c.z[u*P:(u+1)*P], w, int32(s)) // the first slot wins ties
			}
		}
	})
	c.out = ar.AllocRaw(n * l.Out)
	l.Self.Forward(h, n, l.Self.W.W, c.out, false)
	l.Neigh.Forward(c.agg, n, l.Neigh.W.W, c.out, true)
	nn.ReLU(c.out)
	return c.out, c
}

// Backward takes the gradient of the output and adds the gradients of the
// parameters and of the input dh (skipped if nil).
func (l *Layer[T]) Backward(ar *nn.Arena[T], c *LayerCache[T], dout, dh []T) {
	n, P, k := c.n, l.PoolDim, c.k
	dpre := ar.AllocRaw(n * l.Out)
	copy(dpre, dout)
	nn.ReLUBackward(dpre, c.out)
	dagg := ar.Alloc(n * P)
	l.Neigh.Backward(ar, c.agg, n, nil, l.Neigh.W.W, dpre, dagg, nil)
	l.Self.Backward(ar, c.h, n, nil, l.Self.W.W, dpre, dh, nil)
	// Route each pooled gradient to the neighbour that won the max:
	// gather, for every u, the gradients of the nodes whose max it won,
	// through the reverse of the sample. Workers write only their own
	// rows: no conflicts and a fixed order.
	win := c.win
	revStart, rev := reverse(c.nbrs, n, k)
	dz := ar.AllocRaw(n * P)
	nn.ParallelFor(n, nn.Grain(n, k*P), func(lo, hi int) {
		for u := lo; u < hi; u++ {
			du := dz[u*P : (u+1)*P]
			clear(du)
			for _, e := range rev[revStart[u]:revStart[u+1]] {
				v, s := int(e/256), int32(e%256)
				nn.AddWhere(du, dagg[v*P:(v+1)*P], win[v*P:(v+1)*P], s)
			}
		}
	})
	nn.ParallelFor(len(dz), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z := c.z[i]
			dz[i] *= z * (1 - z)
		}
	})
	l.Pool.Backward(ar, c.h, n, nil, l.Pool.W.W, dz, dh, nil)
}

// Encoder is a stack of GraphSAGE layers.
type Encoder[T nn.Float] struct {
	K      int // neighbours sampled per node and layer
	Layers []*Layer[T]
}

// NewEncoder returns layers GraphSAGE layers from in features to dim,
// aggregating over up to k neighbours, with pools of width dim.
func NewEncoder[T nn.Float](name string, in, dim, layers, k int, r *rand.Rand) *Encoder[T] {
	e := &Encoder[T]{K: k}
	for i := range layers {
		e.Layers = append(e.Layers, NewLayer[T](name+"."+itoa(i), in, dim, dim, r))
		in = dim
	}
	return e
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Params lists the parameters.
func (e *Encoder[T]) Params() nn.Params[T] {
	var ps nn.Params[T]
	for _, l := range e.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// EncoderCache is what Encoder.Backward needs.
type EncoderCache[T nn.Float] struct {
	layers []*LayerCache[T]
}

// Forward encodes the n x In features x with nbrs[l] the sampled
// neighbours of layer l (from SampleNeighbors with K) and returns the
// n x dim embeddings.
func (e *Encoder[T]) Forward(ar *nn.Arena[T], x []T, n int, nbrs [][]int32) ([]T, *EncoderCache[T]) {
	c := &EncoderCache[T]{}
	h := x
	for i, l := range e.Layers {
		var lc *LayerCache[T]
		h, lc = l.Forward(ar, h, n, nbrs[i], e.K)
		c.layers = append(c.layers, lc)
	}
	return h, c
}

// Backward takes the gradient of the embeddings and adds the gradients of
// the parameters and, if dx is not nil, of the input features.
func (e *Encoder[T]) Backward(ar *nn.Arena[T], c *EncoderCache[T], dout, dx []T) {
	// Gradients between layers ping-pong between two buffers; each layer's
	// temporaries are released when it is done.
	var carry [2][]T
	if len(e.Layers) > 1 {
		w := 0
		for _, l := range e.Layers[1:] {
			w = max(w, l.In)
		}
		n := c.layers[0].n
		carry = [2][]T{ar.AllocRaw(n * w), ar.AllocRaw(n * w)}
	}
	d := dout
	for i := len(e.Layers) - 1; i >= 0; i-- {
		l := e.Layers[i]
		dh := dx
		if i > 0 {
			dh = carry[i%2][:c.layers[i].n*l.In]
			clear(dh)
		}
		mark := ar.Mark()
		l.Backward(ar, c.layers[i], d, dh)
		ar.Release(mark)
		d = dh
	}
}

// reverse inverts an n x k neighbour sample: for every node u, the entries
// v*256+slot of the nodes v that sampled u in that slot, in increasing v.
func reverse(nbrs []int32, n, k int) (start []int32, rev []int64) {
	start = make([]int32, n+1)
	for _, u := range nbrs[:n*k] {
		if u >= 0 {
			start[u+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	rev = make([]int64, start[n])
	fill := append([]int32(nil), start[:n]...)
	for v := range n {
		for s, u := range nbrs[v*k : (v+1)*k] {
			if u >= 0 {
				rev[fill[u]] = int64(v)*256 + int64(s)
				fill[u]++
			}
		}
	}
	return start, rev
}
