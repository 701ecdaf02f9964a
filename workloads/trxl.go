package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// BuildTRXL builds the training step of a Transformer-XL language model
// (Dai et al. 2019; GDP appendix 6.3.5). The SeqLen tokens of a step are
// processed as SeqLen/Segment segments; at every layer a segment attends
// over itself and the previous segment's layer input (the memory, gradient
// stopped; placeholders for the first segment) with relative positional
// attention (r_w_bias, r_r_bias, rel_shift). Each layer: fused QKV
// projection, positional key projection, multi-head attention with Heads
// heads of HeadDim, output projection, residual + layer norm, a ReLU
// feed-forward of FF units, residual + layer norm; dropout after the
// attention output and both feed-forward matmuls. The softmax is tied to
// the embedding.
//
// Forward op scopes: embedding/..., pos_emb/..., layer_<l>/seg_<s>/...,
// softmax/seg_<s>/..., loss/....
func BuildTRXL(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyTRXL)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "trxl" + strconv.Itoa(c.Layers)
	}
	B, D, Hh, dh, FF, V := int64(c.Batch), int64(c.Hidden), int64(c.Heads), int64(c.HeadDim), int64(c.FF), int64(c.Vocab)
	S := int64(c.Segment)
	if c.SeqLen%c.Segment != 0 {
		S = int64(c.SeqLen)
	}
	nseg := int64(c.SeqLen) / S
	M := S // memory length
	K := M + S
	HD := Hh * dh
	L := c.Layers
	n := newNet(name, c.DType, B, 400*L*int(nseg)+1000)
	keep := c.KeepProb
	n.tf113 = true

	o := n.enter("embedding")
	table := n.param("lookup_table", V, D)
	ids := n.input("inputs", graph.I32, batchDim(1), int64(c.SeqLen), B)
	x := n.binary(kMul, n.gather(table, ids), n.scalar("mul/y"))
	x = n.dropout(x, keep)
	var segs []tid
	if nseg > 1 {
		segs = n.split(0, int(nseg), x)
	} else {
		segs = []tid{x}
	}
	n.leave(o)

	o = n.enter("pos_emb")
	pos := n.meta("range", K, 1, n.constant("range/start", graph.I32), n.constant("range/limit", graph.I32), n.constant("range/delta", graph.I32))[0]
	posF := n.cast(pos, n.dt)
	invFreq := n.constant("inv_freq", n.dt, D/2)
	sinusoid := n.binary(kMul, n.expandDims(posF, 1), n.expandDims(invFreq, 0))
	posEmb := n.concat(-1, n.unary("Sin", sinusoid), n.unary("Cos", sinusoid))
	posEmb = n.dropout(posEmb, keep)
	n.leave(o)

	type layerW struct {
		qkv, rk, out, rw, rr tid
	}
	ws := make([]layerW, L)
	lnames := make([]string, L)
	mems := make([]tid, L)
	for l := 0; l < L; l++ {
		lnames[l] = "layer_" + strconv.Itoa(l)
		o := n.enter(lnames[l])
		ws[l] = layerW{
			qkv: n.param("rel_attn/qkv/kernel", D, 3*HD),
			out: n.param("rel_attn/o/kernel", HD, D),
			rw:  n.param("r_w_bias", Hh, dh),
			rr:  n.param("r_r_bias", Hh, dh),
		}
		// The positional keys depend only on the layer: computed once and
		// shared by the segments.
		o2 := n.enter("rel_attn/r")
		rk := n.reshape(n.matmul(posEmb, n.param("kernel", D, HD), false, false), K, Hh, dh)
		ws[l].rk = n.transpose(rk, 1, 0, 2)
		n.leave(o2)
		mems[l] = n.input("mems", n.dt, batchDim(1), M, B, D)
		n.leave(o)
	}
	o = n.enter("softmax")
	sb := n.param("bias", V)
	targets := n.input("target", graph.I32, batchDim(0), int64(c.SeqLen)*B) // time-major: [SeqLen x B]
	var tsegs []tid
	if nseg > 1 {
		tsegs = n.split(0, int(nseg), targets)
	} else {
		tsegs = []tid{targets}
	}
	mask := n.constant("attn_mask", n.dt, S, K)
	inv := n.binary(kSub, n.scalar("sub/x"), mask)
	big := n.binary(kMul, n.scalar("mul/x"), mask)
	n.leave(o)

	losses := make([]tid, nseg)
	for s := int64(0); s < nseg; s++ {
		ss := "/seg_" + strconv.FormatInt(s, 10)
		h := segs[s]
		for l := 0; l < L; l++ {
			o := n.enter(lnames[l] + ss)
			mem := mems[l]
			if s > 0 {
				mem = n.stopGradient(mems[l])
			}
			mems[l] = h
			h = n.trxlLayer(h, mem, ws[l].rk, inv, big, ws[l].qkv, ws[l].out, ws[l].rw, ws[l].rr, B, S, K, D, Hh, dh, FF, keep)
			n.leave(o)
		}
		o := n.enter("softmax" + ss)
		h = n.dropout(h, keep)
		logits := n.biasAdd(n.matmul(n.reshape(h, S*B, D), table, false, true), sb)
		losses[s] = n.reduce(kMean, n.xent(logits, tsegs[s]), nil, false)
		n.leave(o)
	}
	o = n.enter("loss")
	loss := n.addN(losses...)
	n.leave(o)
	n.minimize(loss, c.Optimizer, false)
	return n.build()
}

// trxlLayer is one Transformer-XL decoder layer on a segment h [S,B,D]
// with memory mem [M,B,D]; rb [H,K,dh] are the layer's positional keys,
// inv = 1-mask and big = 1e30*mask the attention mask terms.
func (n *net) trxlLayer(h, mem, rb, inv, big, wqkv, wo, rw, rr tid, B, S, K, D, H, dh, FF int64, keep float64) tid {
	HD := H * dh
	o := n.enter("rel_attn")
	cat := n.concat(0, mem, h)
	heads := n.reshape(n.matmul(n.reshape(cat, K*B, D), wqkv, false, false), K, B, 3*HD)
	qkv := n.split(-1, 3, heads)
	q := n.reshape(n.stridedSlice(qkv[0], []int64{S, B, HD}), S, B, H, dh)
	k := n.reshape(qkv[1], K, B, H, dh)
	v := n.reshape(qkv[2], K, B, H, dh)
	rwq := n.binary(kAdd, q, rw)
	rrq := n.binary(kAdd, q, rr)
	// AC = einsum('ibnd,jbnd->ijbn'), kept as [B*H, S, K].
	qa := n.reshape(n.transpose(rwq, 1, 2, 0, 3), B*H, S, dh)
	ka := n.reshape(n.transpose(k, 1, 2, 0, 3), B*H, K, dh)
	ac := n.batchMatMul(qa, ka, false, true)
	// BD = einsum('ibnd,jnd->ijbn') then rel_shift.
	qb := n.reshape(n.transpose(rrq, 2, 0, 1, 3), H, S*B, dh)
	bd := n.reshape(n.batchMatMul(qb, rb, false, true), H, S, B, K)
	bd = n.pad(bd, []int64{H, S, B, K + 1})
	bd = n.reshape(bd, H, S*B*(K+1))
	bd = n.stridedSlice(bd, []int64{H, S * B * K})
	bd = n.reshape(n.transpose(n.reshape(bd, H, S, B, K), 2, 0, 1, 3), B*H, S, K)
	score := n.binary(kMul, n.binary(kAdd, ac, bd), n.scalar("scale"))
	score = n.binary(kSub, n.binary(kMul, score, inv), big)
	prob := n.softmax(score)
	va := n.reshape(n.transpose(v, 1, 2, 0, 3), B*H, K, dh)
	vec := n.batchMatMul(prob, va, false, false)
	vec = n.reshape(n.transpose(n.reshape(vec, B, H, S, dh), 2, 0, 1, 3), S*B, HD)
	out := n.reshape(n.matmul(vec, wo, false, false), S, B, D)
	out = n.dropout(out, keep)
	h = n.layerNorm(n.binary(kAdd, out, h))
	n.leave(o)

	o = n.enter("ff")
	x := n.reshape(h, S*B, D)
	o1 := n.enter("layer_1")
	y := n.unary("Relu", n.dense(x, FF, true))
	n.leave(o1)
	y = n.dropout(y, keep)
	o2 := n.enter("layer_2")
	y = n.dense(y, D, true)
	n.leave(o2)
	y = n.dropout(n.reshape(y, S, B, D), keep)
	h = n.layerNorm(n.binary(kAdd, y, h))
	n.leave(o)
	return h
}
