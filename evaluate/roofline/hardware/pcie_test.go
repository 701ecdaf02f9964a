package hardware

import (
	"math"
	"testing"

	"github.com/placer/placer/graph"
)

// TestPCIePresets: each preset of pcie.go validates and holds its
// datasheet's dense peaks, worked by hand from the tables (pcie.go names
// them): a figure printed only with sparsity halved (H100 PCIe BF16
// 1,513* -> 756.5; L4 BF16 242* -> 121; L40S FP8 1,466* -> 733), the
// dense one where printed (L40S BF16 362.05, not 733* / 2 = 366.5; A30
// TF32 82, not 165* / 2 = 82.5), memory
// and bandwidth as printed, no NVLink (bridges not modelled: topology
// pcie) but on the 40 GB SXM, whose 12 NVLink 3 links of 25 GB/s a
// direction are the 80 GB SXM's 600 GB/s both ways.
func TestPCIePresets(t *testing.T) {
	const tf = 1e12
	for _, c := range []struct {
		name                        string
		bf16, tf32, fp32, fp8, fp64 float64 // TFLOP/s, dense
		mem                         int64   // bytes
		bwGBs                       float64 // GB/s
		nvlinkGBs                   float64 // a direction, all links
		topology                    string
	}{
		{"a100-40gb", 312, 156, 19.5, 0, 9.7, 40 << 30, 1555, 300, "nvswitch"},
		{"a100-pcie", 312, 156, 19.5, 0, 9.7, 80 << 30, 1935, 0, "pcie"},
		{"h100-pcie", 1513.0 / 2, 756.0 / 2, 51, 3026.0 / 2, 26, 80 << 30, 2000, 0, "pcie"},
		{"l40s", 362.05, 366.0 / 2, 91.6, 1466.0 / 2, 1.431, 48e9, 864, 0, "pcie"},
		{"l40", 362.1 / 2, 181.0 / 2, 90.5, 724.0 / 2, 1.414, 48e9, 864, 0, "pcie"},
		{"l4", 242.0 / 2, 120.0 / 2, 30.3, 485.0 / 2, 0.4733, 24e9, 300, 0, "pcie"},
		{"a30", 330.0 / 2, 82, 10.3, 0, 5.2, 24 << 30, 933, 0, "pcie"},
	} {
		h, err := Preset(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		for _, f := range []struct {
			what      string
			got, want float64
		}{
			{"bf16 matmul peak", h.PeakFLOPS(graph.ClassMatMul, graph.BF16), c.bf16 * tf},
			{"f16 matmul peak", h.PeakFLOPS(graph.ClassMatMul, graph.F16), c.bf16 * tf},
			{"tf32", h.TF32, c.tf32 * tf},
			{"fp32", h.FP32, c.fp32 * tf},
			{"fp8", h.FP8Tensor, c.fp8 * tf},
			{"fp64", h.FP64, c.fp64 * tf},
			{"memory", float64(h.Memory), float64(c.mem)},
			{"bandwidth", h.MemBandwidth, c.bwGBs * 1e9},
			{"nvlink a direction", h.NVLinkBandwidth * float64(h.NVLinks), c.nvlinkGBs * 1e9},
		} {
			// 0.1% over the datasheets' rounding (L40's 181.05 against
			// 362.1 / 2, 90.5 against 181 / 2).
			if math.Abs(f.got-f.want) > 1e-3*f.want || (f.want == 0 && f.got != 0) {
				t.Errorf("%s %s = %g, want %g", c.name, f.what, f.got, f.want)
			}
		}
		if h.Topology != c.topology {
			t.Errorf("%s topology %q, want %q", c.name, h.Topology, c.topology)
		}
	}
}
