package roofline

import (
	"io"

	"github.com/placer/placer/evaluate/roofline/hardware"
	"github.com/placer/placer/graph"
)

// The hardware a model costs on is evaluate/roofline/hardware's: its
// figures, presets and measured tables. The names below keep roofline's
// clients (roofline.Hardware, roofline.Preset, ...) as they were.
type (
	Hardware     = hardware.Hardware
	TF32         = hardware.TF32
	GroupedConv  = hardware.GroupedConv
	DenseConvRow = hardware.DenseConvRow
)

// The presets' names and a profile's ranges (hardware's).
const (
	DefaultHardware   = hardware.DefaultHardware
	GraphFileHardware = hardware.GraphFileHardware
	MinRate           = hardware.MinRate
	MaxRate           = hardware.MaxRate
	MaxLatency        = hardware.MaxLatency
	MinEff            = hardware.MinEff
	MaxMemory         = hardware.MaxMemory
)

// GroupedTables and DenseTables are hardware's measured convolutions.
var (
	GroupedTables = hardware.GroupedTables
	DenseTables   = hardware.DenseTables
)

// Presets is hardware.Presets.
func Presets() []string { return hardware.Presets() }

// Preset is hardware.Preset.
func Preset(name string) (Hardware, error) { return hardware.Preset(name) }

// LoadHardware is hardware.LoadHardware.
func LoadHardware(nameOrFile string) (Hardware, error) { return hardware.LoadHardware(nameOrFile) }

// DecodeHardware is hardware.DecodeHardware.
func DecodeHardware(data []byte) (Hardware, error) { return hardware.DecodeHardware(data) }

// WriteHardware is hardware.WriteHardware.
func WriteHardware(w io.Writer, h Hardware) error { return hardware.WriteHardware(w, h) }

// ParseTF32 is hardware.ParseTF32.
func ParseTF32(s string) (*TF32, error) { return hardware.ParseTF32(s) }

// ResolveTF32 is hardware.ResolveTF32.
func ResolveTF32(g *graph.Graph, h *Hardware, override *TF32) TF32 {
	return hardware.ResolveTF32(g, h, override)
}

// GroupedTime is hardware.GroupedTime.
func GroupedTime(rows []GroupedConv, prec string, backward bool, flops float64) (float64, bool) {
	return hardware.GroupedTime(rows, prec, backward, flops)
}

// DenseTime is hardware.DenseTime.
func DenseTime(rows []DenseConvRow, prec string, backward bool, s graph.ConvShape, opFLOPs float64) (float64, bool) {
	return hardware.DenseTime(rows, prec, backward, s, opFLOPs)
}

// KernelTime is how long op takes alone on one GPU of hardware h,
// unfused: its launch plus the larger of its compute and its memory
// traffic at its class's attainable rates, or its measured time. It is
// what a Model charges an op of its graph.
func KernelTime(h *Hardware, op *graph.Op) float64 {
	rate := 0.0
	if int(op.Class) < len(h.MemEff) && h.MemBandwidth > 0 && h.MemEff[op.Class] > 0 {
		rate = 1 / (h.MemBandwidth * h.MemEff[op.Class])
	}
	dur, _ := opDuration(h, op, rate, TF32{MatMul: h.AllowTF32, Conv: h.AllowTF32})
	return dur
}

// hostHardware is the hardware a model with the host modelled (host)
// costs kernels on: the cluster's, its kernel floor in place of its
// launch where it has one.
func (c *Cluster) hostHardware(host bool) *Hardware {
	if !host || c.Hardware.KernelFloor <= 0 {
		return &c.Hardware
	}
	h := c.Hardware
	h.Launch = h.KernelFloor
	return &h
}

// groupedPrecision is the precision an op runs in, as Hardware.Grouped
// names it: "tf32" for an f32 convolution on TF32 tensor cores, "bf16",
// else "" (FP32 without TF32 and FP16 are not measured).
func groupedPrecision(op *graph.Op, tf TF32) string {
	switch {
	case op.DType == graph.F32 && tf.Conv:
		return "tf32"
	case op.DType == graph.BF16:
		return "bf16"
	}
	return ""
}
