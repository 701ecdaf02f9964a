package transformerxl

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Attention is multi-head self-attention with Transformer-XL segment-level
// recurrence and no positional encoding. Rows (nodes in topological order)
// are cut into segments of segLen rows; segment i attends to its own rows
// and to the rows of segment i-1 (the memory), with no mask. The memory's
// keys and values are computed from the same layer input, but no gradient
// flows back into the input through them (Transformer-XL's stop-gradient);
// the projection weights still receive their gradient.
type Attention[T nn.Float] struct {
	Dim, Heads, HeadDim int
	QKV                 *nn.Linear[T] // Dim -> 3 * Heads * HeadDim: queries, keys, values
	Out                 *nn.Linear[T] // Heads * HeadDim -> Dim

	// memoryGrad lets gradients flow into the input through the memory too
	// (no stop-gradient); tests use it to check the full derivative.
	memoryGrad bool
}

// NewAttention returns an attention layer with heads heads of headDim.
func NewAttention[T nn.Float](name string, dim, heads, headDim int, r *rand.Rand) *Attention[T] {
	hd := heads * headDim
	return &Attention[T]{
		Dim: dim, Heads: heads, HeadDim: headDim,
		QKV: nn.NewLinear[T](name+".qkv", dim, 3*hd, true, r),
		Out: nn.NewLinear[T](name+".out", hd, dim, true, r),
	}
}

// Params lists the parameters.
func (a *Attention[T]) Params() nn.Params[T] { return append(a.QKV.Params(), a.Out.Params()...) }

// ModDims are the sizes of the modulation vectors Forward takes (input of
// the QKV projection, input of the output projection).
func (a *Attention[T]) ModDims() []int { return []int{a.Dim, a.Heads * a.HeadDim} }

// AttnCache is what Attention.Backward needs.
type AttnCache[T nn.Float] struct {
	x, mem       []T
	rows, segLen int
	cQKV, cOut   []T
	wQKV, wOut   []T
	qkv          []T // rows x 3HD
	kvm          []T // rows x 2HD keys and values of mem; nil when mem is x
	o            []T // rows x HD, attention output before the output projection
	lse          []T // rows x Heads, log-sum-exp of each softmax row
}

// Forward attends the rows x Dim matrix x (rows in topological order) in
// segments of segLen and writes the result into y (overwritten). cQKV and
// cOut are modulation vectors (nil = none).
func (a *Attention[T]) Forward(ar *nn.Arena[T], x []T, rows, segLen int, cQKV, cOut, y []T) *AttnCache[T] {
	return a.forward(ar, x, nil, rows, segLen, cQKV, cOut, y)
}

// forward is Forward with the memory's keys and values taken from mem
// instead of x when mem is not nil (tests freeze the memory this way).
func (a *Attention[T]) forward(ar *nn.Arena[T], x, mem []T, rows, segLen int, cQKV, cOut, y []T) *AttnCache[T] {
	if segLen < 1 {
		panic(fmt.Sprintf("transformerxl: segment length %d", segLen))
	}
	hd := a.Heads * a.HeadDim
	c := &AttnCache[T]{x: x, mem: mem, rows: rows, segLen: segLen, cQKV: cQKV, cOut: cOut}
	c.wQKV = a.QKV.Modulated(ar, cQKV)
	c.wOut = a.Out.Modulated(ar, cOut)
	c.qkv = ar.AllocRaw(rows * 3 * hd)
	a.QKV.Forward(x, rows, c.wQKV, c.qkv, false)
	if mem != nil {
		full := ar.AllocRaw(rows * 3 * hd)
		a.QKV.Forward(mem, rows, c.wQKV, full, false)
		c.kvm = ar.AllocRaw(rows * 2 * hd)
		for i := range rows {
			copy(c.kvm[i*2*hd:(i+1)*2*hd], full[i*3*hd+hd:(i+1)*3*hd])
		}
	}
	c.o = ar.AllocRaw(rows * hd)
	c.lse = ar.AllocRaw(rows * a.Heads)
	kt, ktm := a.transposed(c, 1)
	nseg := (rows + segLen - 1) / segLen
	nn.ParallelFor(nseg, 1, func(lo, hi int) {
		sc := nn.GetScratch[T](segLen * 2 * segLen)
		for s := lo; s < hi; s++ {
			a.segmentForward(c, s, sc, kt, ktm)
		}
		nn.PutScratch(sc)
	})
	a.release(kt, ktm)
	a.Out.Forward(c.o, rows, c.wOut, y, false)
	return c
}

// transposed returns the keys (part 1) or values (part 2) of every head
// transposed, kt[(h*HeadDim + p)*rows + r], so that the products with
// them read rows in place, and the same for the memory (the same slice
// unless the memory is separate).
func (a *Attention[T]) transposed(c *AttnCache[T], part int) (kt, ktm []T) {
	hd := a.Heads * a.HeadDim
	tr := func(src []T, ld, off int) []T {
		dst := nn.GetScratch[T](hd * c.rows)
		nn.Transpose(dst, c.rows, src[off:], ld, c.rows, hd)
		return dst
	}
	kt = tr(c.qkv, 3*hd, part*hd)
	ktm = kt
	if c.kvm != nil {
		ktm = tr(c.kvm, 2*hd, (part-1)*hd)
	}
	return kt, ktm
}

func (a *Attention[T]) release(kt, ktm []T) {
	if &ktm[0] != &kt[0] {
		nn.PutScratch(ktm)
	}
	nn.PutScratch(kt)
}

// keys returns where the memory keys and values of the segment starting at
// s0 live: slice offset of K and V for head h at the first memory row, and
// the row stride.
func (a *Attention[T]) memKV(c *AttnCache[T], m0, h int) (buf []T, kOff, vOff, ld int) {
	hd := a.Heads * a.HeadDim
	if c.kvm != nil {
		return c.kvm, m0*2*hd + h*a.HeadDim, m0*2*hd + hd + h*a.HeadDim, 2 * hd
	}
	return c.qkv, m0*3*hd + hd + h*a.HeadDim, m0*3*hd + 2*hd + h*a.HeadDim, 3 * hd
}

func (a *Attention[T]) segBounds(c *AttnCache[T], s int) (m0, s0, s1 int) {
	s0 = s * c.segLen
	s1 = min(s0+c.segLen, c.rows)
	m0 = s0
	if s > 0 {
		m0 = s0 - c.segLen
	}
	return m0, s0, s1
}

func (a *Attention[T]) segmentForward(c *AttnCache[T], s int, sc, kt, ktm []T) {
	hd, dh := a.Heads*a.HeadDim, a.HeadDim
	ld := 3 * hd
	m0, s0, s1 := a.segBounds(c, s)
	rows, lm, ls := s1-s0, s0-m0, s1-s0
	L := lm + ls
	scale := 1 / nn.Sqrt(T(dh))
	sc = sc[:rows*L]
	for h := range a.Heads {
		q := c.qkv[s0*ld+h*dh:]
		vSelf := c.qkv[s0*ld+2*hd+h*dh:]
		if lm > 0 {
			nn.GemmSerial(false, false, rows, lm, dh, q, ld, ktm[h*dh*c.rows+m0:], c.rows, 0, sc, L)
		}
		nn.GemmSerial(false, false, rows, ls, dh, q, ld, kt[h*dh*c.rows+s0:], c.rows, 0, sc[lm:], L)
		for i := range rows {
			c.lse[(s0+i)*a.Heads+h] = nn.SoftmaxRow(sc[i*L:(i+1)*L], scale)
		}
		o := c.o[s0*hd+h*dh:]
		if lm > 0 {
			mb, _, vOff, ldm := a.memKV(c, m0, h)
			nn.GemmSerial(false, false, rows, dh, lm, sc, L, mb[vOff:], ldm, 0, o, hd)
			nn.GemmSerial(false, false, rows, dh, ls, sc[lm:], L, vSelf, ld, 1, o, hd)
		} else {
			nn.GemmSerial(false, false, rows, dh, ls, sc[lm:], L, vSelf, ld, 0, o, hd)
		}
	}
}

// Backward takes dy and adds the gradients of the parameters, the input dx
// and the modulation vectors dcQKV, dcOut (nil = skip).
func (a *Attention[T]) Backward(ar *nn.Arena[T], c *AttnCache[T], dy, dx, dcQKV, dcOut []T) {
	hd := a.Heads * a.HeadDim
	rows := c.rows
	do := ar.Alloc(rows * hd)
	a.Out.Backward(ar, c.o, rows, c.cOut, c.wOut, dy, do, dcOut)

	// Every row of dqkv is written by its own segment, every row of dkvm
	// but the last segment's by the next segment: no zeroing needed.
	dqkv := ar.AllocRaw(rows * 3 * hd) // gradients through the segments' own rows
	dkvm := ar.AllocRaw(rows * 2 * hd) // gradients through the memory rows
	nseg := (rows + c.segLen - 1) / c.segLen
	clear(dkvm[(nseg-1)*c.segLen*2*hd:])
	kt, ktm := a.transposed(c, 1)
	vt, vtm := a.transposed(c, 2)
	nn.ParallelFor(nseg, 1, func(lo, hi int) {
		L := c.segLen * 2 * c.segLen
		buf := nn.GetScratch[T](2*L + c.segLen)
		sc, dp, dsum := buf[:L], buf[L:2*L], buf[2*L:]
		for s := lo; s < hi; s++ {
			a.segmentBackward(c, s, do, dqkv, dkvm, sc, dp, dsum, [4][]T{kt, ktm, vt, vtm})
		}
		nn.PutScratch(buf)
	})
	a.release(kt, ktm)
	a.release(vt, vtm)
	addKV := func() {
		nn.ParallelFor(rows, nn.Grain(rows, 2*hd), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst := dqkv[i*3*hd+hd : (i+1)*3*hd]
				src := dkvm[i*2*hd : (i+1)*2*hd]
				for j, v := range src {
					dst[j] += v
				}
			}
		})
	}
	if c.mem != nil {
		a.QKV.Backward(ar, c.x, rows, c.cQKV, c.wQKV, dqkv, dx, dcQKV)
		full := ar.Alloc(rows * 3 * hd)
		for i := range rows {
			copy(full[i*3*hd+hd:(i+1)*3*hd], dkvm[i*2*hd:(i+1)*2*hd])
		}
		a.QKV.Backward(ar, c.mem, rows, c.cQKV, c.wQKV, full, nil, dcQKV)
		return
	}
	if a.memoryGrad {
		addKV()
		a.QKV.Backward(ar, c.x, rows, c.cQKV, c.wQKV, dqkv, dx, dcQKV)
		return
	}
	// Stop-gradient: dx sees only the segments' own rows; the weights see
	// both.
	if dx != nil {
		nn.Gemm(false, true, rows, a.Dim, 3*hd, dqkv, 3*hd, c.wQKV, 3*hd, 1, dx, a.Dim)
	}
	addKV()
	a.QKV.Backward(ar, c.x, rows, c.cQKV, c.wQKV, dqkv, nil, dcQKV)
}

func (a *Attention[T]) segmentBackward(c *AttnCache[T], s int, do, dqkv, dkvm, sc, dp, dsum []T, tr [4][]T) {
	kt, ktm, vt, vtm := tr[0], tr[1], tr[2], tr[3]
	hd, dh := a.Heads*a.HeadDim, a.HeadDim
	ld := 3 * hd
	m0, s0, s1 := a.segBounds(c, s)
	rows, lm, ls := s1-s0, s0-m0, s1-s0
	L := lm + ls
	scale := 1 / nn.Sqrt(T(dh))
	sc, dp = sc[:rows*L], dp[:rows*L]
	for h := range a.Heads {
		q := c.qkv[s0*ld+h*dh:]
		kSelf := c.qkv[s0*ld+hd+h*dh:]
		var mb []T
		var kOff, ldm int
		if lm > 0 {
			mb, kOff, _, ldm = a.memKV(c, m0, h)
			nn.GemmSerial(false, false, rows, lm, dh, q, ld, ktm[h*dh*c.rows+m0:], c.rows, 0, sc, L)
		}
		nn.GemmSerial(false, false, rows, ls, dh, q, ld, kt[h*dh*c.rows+s0:], c.rows, 0, sc[lm:], L)
		doh := do[s0*hd+h*dh:]
		oh := c.o[s0*hd+h*dh:]
		for i := range rows {
			r := sc[i*L : (i+1)*L]
			nn.ExpSum(r, scale, c.lse[(s0+i)*a.Heads+h])
			var d T
			dor, or := doh[i*hd:i*hd+dh], oh[i*hd:i*hd+dh]
			for j, v := range dor {
				d += v * or[j]
			}
			dsum[i] = d
		}
		// dV += P^T dO; dP = dO V^T.
		dqh := dqkv[s0*ld+h*dh:]
		dkSelf := dqkv[s0*ld+hd+h*dh:]
		dvSelf := dqkv[s0*ld+2*hd+h*dh:]
		nn.GemmSerial(true, false, ls, dh, rows, sc[lm:], L, doh, hd, 0, dvSelf, ld)
		nn.GemmSerial(false, false, rows, ls, dh, doh, hd, vt[h*dh*c.rows+s0:], c.rows, 0, dp[lm:], L)
		if lm > 0 {
			dm := dkvm[m0*2*hd:]
			nn.GemmSerial(true, false, lm, dh, rows, sc, L, doh, hd, 0, dm[hd+h*dh:], 2*hd)
			nn.GemmSerial(false, false, rows, lm, dh, doh, hd, vtm[h*dh*c.rows+m0:], c.rows, 0, dp, L)
		}
		// dS = P ⊙ (dP - D) * scale, in dp.
		for i := range rows {
			p := sc[i*L : (i+1)*L]
			g := dp[i*L : (i+1)*L]
			d := dsum[i]
			for j := range g {
				g[j] = p[j] * (g[j] - d) * scale
			}
		}
		// dQ = dS K; dK += dS^T Q.
		nn.GemmSerial(false, false, rows, dh, ls, dp[lm:], L, kSelf, ld, 0, dqh, ld)
		nn.GemmSerial(true, false, ls, dh, rows, dp[lm:], L, q, ld, 0, dkSelf, ld)
		if lm > 0 {
			dm := dkvm[m0*2*hd:]
			nn.GemmSerial(false, false, rows, dh, lm, dp, L, mb[kOff:], ldm, 1, dqh, ld)
			nn.GemmSerial(true, false, lm, dh, rows, dp, L, q, ld, 0, dm[h*dh:], 2*hd)
		}
	}
}

// SetMemoryGradient makes a's backward pass let gradients flow into the
// input through the memory too (no Transformer-XL stop-gradient). It
// exists for gradient checks, where the analytic gradient must be the
// full derivative; policies never set it.
func SetMemoryGradient[T nn.Float](a *Attention[T], on bool) { a.memoryGrad = on }
