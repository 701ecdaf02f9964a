package roofline

import (
	"math"
	"testing"

	"github.com/placer/placer/graph"
)

// TestInstinctPresets: each AMD Instinct preset validates, and holds the
// dense peaks of its compute units x peak engine clock x FLOPs a clock
// and unit (hardware/instinct.go), worked by hand: MI300X and MI325X
// 304 x 2,100 MHz x 2,048 BF16 = 1,307.44 TF (AMD's tables: 1,307.4),
// FP8 twice that, 2,614.9; MI355X 256 x 2,400 MHz x 4,096 = 2,516.58 TF
// BF16, x 8,192 = 5,033.16 FP8, x 16,384 = 10,066.33 MXFP4, no TF32
// tensor rate (0); memory 192, 256 and 288 GB at 5.3, 6.0 and 8.0 TB/s;
// Infinity Fabric 7 links of 64 GB/s a direction (448 GB/s), 76.8 on
// the MI355X (537.6).
func TestInstinctPresets(t *testing.T) {
	for _, c := range []struct {
		name                       string
		bf16, fp8, fp4, tf32, fp32 float64 // TFLOP/s
		memGB, bwTBs, link         float64
	}{
		{"mi300x", 304 * 2.1 * 2048 / 1e3, 304 * 2.1 * 4096 / 1e3, 0, 653.7, 163.4, 192, 5.3, 448},
		{"mi325x", 304 * 2.1 * 2048 / 1e3, 304 * 2.1 * 4096 / 1e3, 0, 653.7, 163.4, 256, 6.0, 448},
		{"mi355x", 256 * 2.4 * 4096 / 1e3, 256 * 2.4 * 8192 / 1e3, 256 * 2.4 * 16384 / 1e3, 0, 157.3, 288, 8.0, 537.6},
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
			rel       float64
		}{
			{"bf16 tensor", h.PeakFLOPS(graph.ClassMatMul, graph.BF16), c.bf16 * tera, 5e-5}, // the tables' one decimal
			{"fp8 tensor", h.FP8Tensor, c.fp8 * tera, 5e-5},
			{"fp4 tensor", h.FP4Tensor, c.fp4 * tera, 5e-5},
			{"tf32 tensor", h.TF32, c.tf32 * tera, 1e-9},
			{"fp32", h.FP32, c.fp32 * tera, 1e-9},
			{"memory", float64(h.Memory), c.memGB * giga, 1e-9},
			{"bandwidth", h.MemBandwidth, c.bwTBs * 1000 * giga, 1e-9},
			{"infinity fabric per direction", h.NVLinkBandwidth * float64(h.NVLinks), c.link * giga, 1e-9},
		} {
			if math.Abs(f.got-f.want) > f.rel*f.want {
				t.Errorf("%s %s = %g, want %g", c.name, f.what, f.got, f.want)
			}
		}
	}
}
