package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// BuildRNNLM builds the training step of an LSTM language model
// (Zaremba et al. 2014; Jozefowicz et al. 2016; GDP appendix 6.3.3): an
// embedding, Layers LSTM layers statically unrolled over SeqLen steps (a
// grid of cells), dropout on the embedded input and on every layer's
// output, a softmax per step, and the mean cross-entropy.
//
// Forward op scopes: embedding/..., lstm_<l>/t_<t>/..., softmax/t_<t>/...,
// loss/....
func BuildRNNLM(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyRNNLM)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "rnnlm" + strconv.Itoa(c.Layers)
	}
	B, H, T, V, L := int64(c.Batch), int64(c.Hidden), c.SeqLen, int64(c.Vocab), c.Layers
	n := newNet(name, c.DType, B, 120*T*L+1000)

	o := n.enter("embedding")
	ids := n.input("inputs", graph.I32, batchDim(0), B, int64(T))
	emb := n.param("embedding", V, H)
	xs := n.unstack(1, n.dropout(n.gather(emb, ids), c.KeepProb))
	n.leave(o)

	layers := make([]lstmLayer, L)
	hs := make([]tid, L)
	cs := make([]tid, L)
	lnames := make([]string, L)
	for l := 0; l < L; l++ {
		lnames[l] = "lstm_" + strconv.Itoa(l)
		o := n.enter(lnames[l])
		layers[l] = n.lstmWeights(H, H)
		hs[l] = n.zeros("zeros", batchDim(0), B, H)
		cs[l] = n.zeros("zeros", batchDim(0), B, H)
		n.leave(o)
	}
	o = n.enter("softmax")
	sw := n.param("softmax_w", H, V)
	sb := n.param("softmax_b", V)
	targets := n.unstack(1, n.input("targets", graph.I32, batchDim(0), B, int64(T)))
	n.leave(o)

	losses := make([]tid, T)
	for t := 0; t < T; t++ {
		ts := "/t_" + strconv.Itoa(t)
		x := xs[t]
		for l := 0; l < L; l++ {
			o := n.enter(lnames[l] + ts)
			hs[l], cs[l] = n.lstmCell(x, hs[l], cs[l], layers[l].kernel, layers[l].bias)
			x = n.dropout(hs[l], c.KeepProb)
			n.leave(o)
		}
		o := n.enter("softmax" + ts)
		logits := n.biasAdd(n.matmul(x, sw, false, false), sb)
		losses[t] = n.xent(logits, targets[t])
		n.leave(o)
	}
	o = n.enter("loss")
	loss := n.reduce(kMean, n.addN(losses...), nil, false)
	n.leave(o)
	n.minimize(loss, c.Optimizer, !c.NoClip)
	return n.build()
}

// BuildGNMT builds the training step of Google's NMT (Wu et al. 2016; the
// tensorflow/nmt GNMT model; GDP appendix 6.3.4), statically unrolled over
// SeqLen source and target steps: a bidirectional bottom encoder layer,
// Layers-1 unidirectional encoder layers, Layers decoder layers whose
// inputs are concatenated with the attention context, residual
// connections from the third layer up, input dropout on every cell,
// Bahdanau attention queried by the bottom decoder layer, and a softmax
// per target step.
//
// Forward op scopes: embedding_encoder/..., embedding_decoder/...,
// encoder/layer_<l>[_fw|_bw]/t_<t>/..., decoder/layer_<l>/t_<t>/...,
// attention/t_<t>/..., softmax/t_<t>/..., loss/....
func BuildGNMT(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyGNMT)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "gnmt" + strconv.Itoa(c.Layers)
	}
	B, H, S, V, L := int64(c.Batch), int64(c.Hidden), c.SeqLen, int64(c.Vocab), c.Layers
	T := S
	n := newNet(name, c.DType, B, 2*(120*S*(2*L+1)+60*T)+1000)
	keep := c.KeepProb
	stepNames := make([]string, max(S, T))
	for t := range stepNames {
		stepNames[t] = "/t_" + strconv.Itoa(t)
	}

	// Embeddings.
	o := n.enter("embedding_encoder")
	src := n.unstack(1, n.gather(n.param("embedding", V, H), n.input("source", graph.I32, batchDim(0), B, int64(S))))
	n.leave(o)
	o = n.enter("embedding_decoder")
	tgtIn := n.unstack(1, n.gather(n.param("embedding", V, H), n.input("target_input", graph.I32, batchDim(0), B, int64(T))))
	n.leave(o)

	// Encoder: bidirectional bottom layer.
	type state struct{ h, c tid }
	layerWeights := func(scope string, in int64) (lstmLayer, state) {
		o := n.enter(scope)
		w := n.lstmWeights(in, H)
		s := state{n.zeros("zeros", batchDim(0), B, H), n.zeros("zeros", batchDim(0), B, H)}
		n.leave(o)
		return w, s
	}
	fw, fs := layerWeights("encoder/layer_0_fw", H)
	bw, bs := layerWeights("encoder/layer_0_bw", H)
	fwOut := make([]tid, S)
	bwOut := make([]tid, S)
	for t := 0; t < S; t++ {
		o := n.enter("encoder/layer_0_fw" + stepNames[t])
		fs.h, fs.c = n.lstmCell(n.dropout(src[t], keep), fs.h, fs.c, fw.kernel, fw.bias)
		fwOut[t] = fs.h
		n.leave(o)
		r := S - 1 - t
		o = n.enter("encoder/layer_0_bw" + stepNames[r])
		bs.h, bs.c = n.lstmCell(n.dropout(src[r], keep), bs.h, bs.c, bw.kernel, bw.bias)
		bwOut[r] = bs.h
		n.leave(o)
	}
	enc := make([]tid, S)
	for t := 0; t < S; t++ {
		o := n.enter("encoder/layer_0" + stepNames[t])
		enc[t] = n.concat(1, fwOut[t], bwOut[t])
		n.leave(o)
	}
	finals := []state{fs}
	// Unidirectional encoder layers.
	for l := 1; l < L; l++ {
		scope := "encoder/layer_" + strconv.Itoa(l)
		in := H
		if l == 1 {
			in = 2 * H
		}
		w, s := layerWeights(scope, in)
		for t := 0; t < S; t++ {
			o := n.enter(scope + stepNames[t])
			s.h, s.c = n.lstmCell(n.dropout(enc[t], keep), s.h, s.c, w.kernel, w.bias)
			out := s.h
			if l >= 2 {
				out = n.binary(kAdd, enc[t], s.h)
			}
			enc[t] = out
			n.leave(o)
		}
		finals = append(finals, s)
	}

	// Attention memory and keys.
	o = n.enter("attention")
	memory := n.pack(1, enc...)
	keys := n.reshape(n.matmul(n.reshape(memory, B*int64(S), H), n.param("memory_layer/kernel", H, H), false, false), B, int64(S), H)
	wq := n.param("query_layer/kernel", H, H)
	v := n.param("attention_v", H)
	n.leave(o)

	// Decoder.
	dw := make([]lstmLayer, L)
	ds := make([]state, L)
	dnames := make([]string, L)
	for l := 0; l < L; l++ {
		dnames[l] = "decoder/layer_" + strconv.Itoa(l)
		in := 2 * H
		dw[l], _ = layerWeights(dnames[l], in)
		ds[l] = finals[min(l, len(finals)-1)]
	}
	o = n.enter("attention")
	ctx := n.zeros("zeros", batchDim(0), B, H)
	n.leave(o)
	o = n.enter("softmax")
	proj := n.param("output_projection/kernel", H, V)
	targets := n.unstack(1, n.input("target_output", graph.I32, batchDim(0), B, int64(T)))
	n.leave(o)
	losses := make([]tid, T)
	for t := 0; t < T; t++ {
		x := tgtIn[t]
		for l := 0; l < L; l++ {
			o := n.enter(dnames[l] + stepNames[t])
			in := n.dropout(n.concat(1, x, ctx), keep)
			ds[l].h, ds[l].c = n.lstmCell(in, ds[l].h, ds[l].c, dw[l].kernel, dw[l].bias)
			out := ds[l].h
			if l >= 2 {
				out = n.binary(kAdd, x, out)
			}
			x = out
			n.leave(o)
			if l == 0 {
				o := n.enter("attention" + stepNames[t])
				ctx = n.attend(ds[0].h, wq, v, keys, memory)
				n.leave(o)
			}
		}
		o := n.enter("softmax" + stepNames[t])
		losses[t] = n.xent(n.matmul(x, proj, false, false), targets[t])
		n.leave(o)
	}
	o = n.enter("loss")
	loss := n.reduce(kMean, n.addN(losses...), nil, false)
	n.leave(o)
	n.minimize(loss, c.Optimizer, !c.NoClip)
	return n.build()
}

// attend is additive (Bahdanau) attention: score = v . tanh(keys + q Wq),
// alignments = softmax(score), context = alignments x memory.
func (n *net) attend(query, wq, v, keys, memory tid) tid {
	q := n.expandDims(n.matmul(query, wq, false, false), 1)
	s := n.reduce(kSum, n.binary(kMul, v, n.unary("Tanh", n.binary(kAdd, keys, q))), []int{2}, false)
	a := n.expandDims(n.softmax(s), 1)
	return n.squeeze(n.batchMatMul(a, memory, false, false), 1)
}
