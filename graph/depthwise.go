package graph

// DepthwiseShape is the geometry of a depthwise convolution that a
// library's choice of kernel reads (PyTorch's between cuDNN's depthwise
// kernels and its own): the forward input's batch, channels and width,
// the kernel's height and width, and the stride along the width.
type DepthwiseShape struct {
	Batch, Channels, Width, KH, KW, Stride int64
}

// DepthwiseGeometry is depthwise convolution op i's geometry (op.DepthwiseTaps
// above 0), and false where it cannot be read. Its weight is [C x m, 1,
// kh, kw] (weightShape). Forward: its one 4-D activation input is the
// input [N, C, H, W] and its output [N, C x m, Ho, Wo]. Backward (the
// input's and the weight's gradients): its output, the input's gradient,
// has the input's shape (the input's batch and the output gradient's
// agree), and the output's gradient is the smallest 4-D
// input of C x m channels. The stride is W / Wo rounded to the nearest
// whole number (a padded convolution's Wo is ceil(W / stride)).
func (g *Graph) DepthwiseGeometry(i int) (DepthwiseShape, bool) {
	op := &g.ops[i]
	if op.DepthwiseTaps <= 0 {
		return DepthwiseShape{}, false
	}
	w, acts := g.convOperands(i)
	if len(w) != 4 || len(op.Shape) != 4 {
		return DepthwiseShape{}, false
	}
	numel := func(s []int64) int64 { return s[0] * s[1] * s[2] * s[3] }
	var in, out []int64
	if !op.Backward {
		if len(acts) != 1 {
			return DepthwiseShape{}, false
		}
		in, out = acts[0], op.Shape
	} else {
		in = op.Shape
		for _, a := range acts {
			if a[1] == w[0] && (out == nil || numel(a) < numel(out)) {
				out = a
			}
		}
	}
	if out == nil || out[1] != w[0] || in[0] != out[0] || in[1] <= 1 || w[0]%in[1] != 0 || out[3] <= 0 || in[3] <= 0 {
		return DepthwiseShape{}, false
	}
	stride := (2*in[3] + out[3]) / (2 * out[3])
	return DepthwiseShape{Batch: in[0], Channels: in[1], Width: in[3], KH: w[2], KW: w[3], Stride: max(stride, 1)}, true
}
