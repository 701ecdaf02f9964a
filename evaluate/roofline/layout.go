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
	x := convlayout.TransposeBytes(op, m.Opts.MemoryFormat)
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
