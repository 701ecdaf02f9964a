package roofline

import (
	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/graph"
)

// transposeBytes is the traffic of the layout transposes around op in
// the model's memory format (Options.MemoryFormat,
// convlayout.TransposeBytes), 0 where the hardware's measured
// convolutions price op: they were timed with whatever transposes their
// layout ran.
func (m *Model) transposeBytes(op *graph.Op) int64 {
	x := convlayout.TransposeBytes(op, m.Opts.MemoryFormat, m.tf32.Conv)
	if x == 0 {
		return 0
	}
	h, prec := m.hw, groupedPrecision(op, m.tf32)
	if op.GroupedFLOPs > 0 && h.Grouped != "" {
		if _, ok := GroupedTime(GroupedTables[h.Grouped], prec, op.Backward, op.GroupedFLOPs); ok {
			return 0
		}
	}
	if op.DenseConv != (graph.ConvShape{}) && h.DenseConv != "" {
		if _, ok := DenseTime(DenseTables[h.DenseConv], prec, op.Backward, op.DenseConv, op.FLOPs); ok {
			return 0
		}
	}
	return x
}

// cudnnDepthwise says whether depthwise convolution op (graph op i) runs
// cuDNN's kernels in the model's memory format
// (convlayout.CuDNNDepthwise): those are convolutions like the rest, not
// the kernels the hardware's depthwise rates were measured on
// (Hardware.Depthwise), and are priced by the roofline.
func (m *Model) cudnnDepthwise(i int, op *graph.Op) bool {
	if op.DepthwiseTaps <= 0 || m.Opts.MemoryFormat == convlayout.Unsaid {
		return false
	}
	d, ok := m.G.DepthwiseGeometry(i)
	return ok && convlayout.CuDNNDepthwise(d, op.DType, m.Opts.MemoryFormat)
}
