package graph

import (
	"slices"
	"strconv"
	"strings"
)

// rnnTypes are the op types of a whole recurrent layer stack that PyTorch
// runs as one cuDNN call forward and one backward (Execution.CuDNNRNN):
// LSTM, GRU and plain RNN layers alike.
var rnnTypes = map[string]bool{"_cudnn_rnn": true, "_cudnn_rnn_backward": true} // matmul-class ops (the exporter's class)

// deriveKernels sets what the cost model reads of an op's kernel beyond
// its counts: DepthwiseTaps of a depthwise convolution (depthwiseTaps),
// and Steps of every op whose type is a cuDNN RNN: the
// sequence length times the layers. cuDNN runs a layer's time steps one
// after another (each needs the last one's hidden state) and, measured on
// an H100 (measurements/2026-11-26-h100-c/shapes.jsonl, kind lstm), a
// stack of layers as layers x sequence steps: 35 steps of 2 layers and 128
// of 1 take 24.7 and 20.1 us a step whatever their width. The layers are
// the op's parameter inputs named as torch.nn.RNNBase names them,
// "weight_hh_l<k>" (a bidirectional layer's "_reverse" weights run beside
// the forward ones, not after them); the sequence is the output's
// dimension beside the batch's (batch_first or not). An op whose layers
// or sequence cannot be read keeps Steps 0: no serial floor.
func (g *Graph) deriveKernels() {
	for i := range g.ops {
		op := &g.ops[i]
		if op.Class == ClassConv && op.DepthwiseTaps == 0 {
			op.DepthwiseTaps = g.depthwiseTaps(i)
		}
		if op.Class == ClassConv && op.DepthwiseTaps == 0 && op.GroupedFLOPs == 0 {
			op.GroupedFLOPs = g.groupedFLOPs(i)
		}
		if op.Class == ClassConv && op.DepthwiseTaps == 0 && op.GroupedFLOPs == 0 && op.DenseConv == (ConvShape{}) {
			op.DenseConv = g.denseConv(i)
		}
		if op.Class != ClassMatMul || op.Steps > 0 || !rnnTypes[op.Type] {
			continue
		}
		layers := map[int]bool{}
		for _, p := range g.Preds(i) {
			q := &g.ops[p]
			if q.Type != "Parameter" {
				continue
			}
			_, suffix, ok := strings.Cut(q.Name, "weight_hh_l")
			if !ok || strings.HasSuffix(suffix, "_reverse") {
				continue
			}
			if k, err := strconv.Atoi(suffix); err == nil && k >= 0 {
				layers[k] = true
			}
		}
		if seq := g.rnnSeq(op); seq > 0 && len(layers) > 0 {
			op.Steps = seq * len(layers)
		}
	}
}

// rnnSeq is an RNN op's sequence length: of its output's first two
// dimensions, the one that is not the graph's batch (0 if the graph has
// no batch, the shape is not [batch, seq, ...] or [seq, batch, ...], or
// both are the batch's size, so that which is which cannot be told).
func (g *Graph) rnnSeq(op *Op) int {
	if g.batch <= 0 || len(op.Shape) < 3 {
		return 0
	}
	b := int64(g.batch)
	switch a, c := op.Shape[0], op.Shape[1]; {
	case a == b && c != b:
		return int(c)
	case c == b && a != b:
		return int(a)
	}
	return 0
}

// depthwiseTaps is the kernel taps of convolution op i if it is
// depthwise: one of its parameter inputs is a weight of shape [C, 1, kh,
// kw] with C > 1 (PyTorch's Conv2d with groups = in_channels =
// out_channels / multiplier); 0 otherwise.
func (g *Graph) depthwiseTaps(i int) int {
	for _, p := range g.Preds(i) {
		if s := g.weightShape(int(p)); len(s) == 4 && s[0] > 1 && s[1] == 1 && s[2] > 0 && s[3] > 0 {
			return int(s[2] * s[3])
		}
	}
	return 0
}

// weightShape is the shape of op p if p gives a convolution its weight: a
// Parameter, or autocast's cast of one (torch.autocast casts an FP32
// weight to BF16 or FP16 before a convolution on its low-precision list:
// an ATen _to_copy op whose one input is the Parameter, of the
// Parameter's shape, as placer_torch.exporter records it); nil otherwise.
func (g *Graph) weightShape(p int) []int64 {
	q := &g.ops[p]
	if q.Type == "Parameter" {
		return q.Shape
	}
	if q.Type != "_to_copy" {
		return nil
	}
	in := g.Preds(p)
	if len(in) != 1 {
		return nil
	}
	w := &g.ops[in[0]]
	if w.Type != "Parameter" || !slices.Equal(w.Shape, q.Shape) {
		return nil
	}
	return w.Shape
}

// groupedFLOPs is the forward FLOPs of convolution op i if it is grouped
// and not depthwise (GroupedFLOPs), else 0. Its weight is its parameter
// input of shape [Cout, cpg, kh, kw] with cpg > 1; its input channels
// Cin are those of its activation input (forward: the only 4-D input
// besides the weight) or of its output (backward: the input's gradient,
// [N, Cin, H, W]); it is grouped where Cin is a multiple of cpg above it.
// Its forward output is its own output (forward) or, backward, the
// output gradient among its inputs: the smallest 4-D one of Cout
// channels.
func (g *Graph) groupedFLOPs(i int) float64 {
	op := &g.ops[i]
	w, acts := g.convOperands(i)
	if w == nil || w[1] <= 1 || w[2] <= 0 || w[3] <= 0 || len(op.Shape) != 4 {
		return 0
	}
	numel := func(s []int64) int64 { return s[0] * s[1] * s[2] * s[3] }
	var cin, out int64
	if !op.Backward {
		if len(acts) != 1 || op.Shape[1] != w[0] {
			return 0
		}
		cin, out = acts[0][1], numel(op.Shape)
	} else {
		cin = op.Shape[1]
		for _, a := range acts {
			if a[1] == w[0] && (out == 0 || numel(a) < out) {
				out = numel(a)
			}
		}
	}
	if out <= 0 || cin <= w[1] || cin%w[1] != 0 {
		return 0
	}
	return 2 * float64(out) * float64(w[1]*w[2]*w[3])
}

// convOperands is convolution op i's 4-D weight (its parameter input,
// or autocast's cast of it: weightShape) and the shapes of its other
// 4-D inputs, its activations.
func (g *Graph) convOperands(i int) (w []int64, acts [][]int64) {
	for _, p := range g.Preds(i) {
		switch ws := g.weightShape(int(p)); {
		case len(ws) == 4:
			w = ws
		case ws == nil && len(g.ops[p].Shape) == 4:
			acts = append(acts, g.ops[p].Shape)
		}
	}
	return w, acts
}

// denseConv is the forward shape of convolution op i if it is dense (one
// group), else zero. Its weight is its parameter input (or autocast's
// cast of it) of shape [Cout, Cin, kh, kw]. Forward: its one 4-D
// activation input has Cin channels and its output [N, Cout, H, W] is
// the forward output. Backward (the input's and the weight's gradients):
// among its 4-D inputs the forward input [N, Cin, ...] and the output's
// gradient, the smallest of Cout channels, which gives N, H and W.
func (g *Graph) denseConv(i int) ConvShape {
	op := &g.ops[i]
	w, acts := g.convOperands(i)
	if w == nil || w[0] <= 0 || w[1] <= 0 || w[2] <= 0 || w[3] <= 0 {
		return ConvShape{}
	}
	numel := func(s []int64) int64 { return s[0] * s[1] * s[2] * s[3] }
	var out []int64
	hasIn := false
	if !op.Backward {
		if len(acts) != 1 || len(op.Shape) != 4 || op.Shape[1] != w[0] {
			return ConvShape{}
		}
		out, hasIn = op.Shape, acts[0][1] == w[1]
	} else {
		for _, a := range acts {
			if a[1] == w[0] && (out == nil || numel(a) < numel(out)) {
				out = a
			}
		}
		for _, a := range acts {
			hasIn = hasIn || (out != nil && a[1] == w[1] && a[0] == out[0] && numel(a) >= numel(out)*w[1]/w[0])
		}
	}
	if out == nil || !hasIn {
		return ConvShape{}
	}
	return ConvShape{Batch: out[0], Cin: w[1], Cout: w[0], Taps: w[2] * w[3], Pixels: out[2] * out[3]}
}
