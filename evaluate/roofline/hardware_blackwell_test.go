package roofline

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// tera and giga are the units of the tables below.
const (
	tera = 1e12
	giga = 1e9
)

// TestBlackwellPresets: each Blackwell preset validates, and holds the
// dense peaks its sources state per GPU (hardware/blackwell.go), worked
// by hand from the tables: a sparse figure halved, a system's over its
// GPUs; NVLink 5 is 18 links of 50 GB/s a direction, 900 GB/s.
func TestBlackwellPresets(t *testing.T) {
	for _, c := range []struct {
		name                       string
		bf16, fp8, fp4, tf32, fp32 float64 // TFLOP/s
		memGB, bwTBs               float64
	}{
		{"b200", 36e3 / 8 / 2, 72e3 / 8 / 2, 72e3 / 8, 18e3 / 8 / 2, 600.0 / 8, 180, 8},   // HGX B200, 8 GPUs
		{"b300", 36e3 / 8 / 2, 72e3 / 8 / 2, 105e3 / 8, 18e3 / 8 / 2, 600.0 / 8, 270, 8},  // HGX B300
		{"gb200", 5000.0 / 2, 10000.0 / 2, 20000.0 / 2, 2500.0 / 2, 90, 186, 576.0 / 72},  // brief's sparse column
		{"gb300", 360e3 / 72 / 2, 720e3 / 72 / 2, 1080e3 / 72, 1250, 80, 279, 576.0 / 72}, // GB300 NVL72 rack / 72
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
			{"bf16 tensor", h.PeakFLOPS(graph.ClassMatMul, graph.BF16), c.bf16 * tera},
			{"fp8 tensor", h.FP8Tensor, c.fp8 * tera},
			{"fp4 tensor", h.FP4Tensor, c.fp4 * tera},
			{"tf32 tensor", h.TF32, c.tf32 * tera},
			{"fp32", h.FP32, c.fp32 * tera},
			{"memory", float64(h.Memory), c.memGB * giga},
			{"bandwidth", h.MemBandwidth, c.bwTBs * 1000 * giga},
			{"nvlink per direction", h.NVLinkBandwidth * float64(h.NVLinks), 900 * giga},
		} {
			if math.Abs(f.got-f.want) > 1e-9*f.want {
				t.Errorf("%s %s = %g, want %g", c.name, f.what, f.got, f.want)
			}
		}
	}
}

// TestB200GEMMRoofline: a BF16 GEMM of 8,192 x 8,192 x 8,192 (2 x 8,192^3
// = 1.0995e12 FLOPs, 3 x 8,192^2 x 2 bytes = 402.65 MB) on a B200 at
// the default matmul efficiency 0.75 takes 1.0995e12 / (2.25e15 x 0.75)
// = 651.56 us of compute, above its 402.65e6 / (8e12 x 0.8) = 62.9 us of
// traffic, plus the 5 us launch: 656.56 us; the same GEMM on an H100
// (989.4 TF) 1,481.72 + 5 us.
func TestB200GEMMRoofline(t *testing.T) {
	n := 8192.0
	op := graph.Op{Class: graph.ClassMatMul, DType: graph.BF16, FLOPs: 2 * n * n * n, BytesRead: int64(2 * n * n * 2), BytesWritten: int64(n * n * 2)}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"b200", 656.56e-6},
		{"h100", 1486.72e-6},
	} {
		h, _ := Preset(c.name)
		if got := KernelTime(&h, &op); math.Abs(got-c.want) > 0.01e-6 {
			t.Errorf("%s: %.6g s, want %.6g", c.name, got, c.want)
		}
	}
}

// TestFP8PeakValidated: a profile's FP8 and FP4 peaks are read as the
// other rates are: a value replaces the base preset's, a negative one is
// refused naming its field and range.
func TestFP8PeakValidated(t *testing.T) {
	h, err := DecodeHardware([]byte(`{"base": "h100", "fp8_tensor_flops": 1.5e15, "fp4_tensor_flops": 3e15}`))
	if err != nil || h.FP8Tensor != 1.5e15 || h.FP4Tensor != 3e15 {
		t.Errorf("decoded fp8 %g, fp4 %g (%v): want 1.5e15, 3e15", h.FP8Tensor, h.FP4Tensor, err)
	}
	for _, field := range []string{"fp8_tensor_flops", "fp4_tensor_flops"} {
		_, err := DecodeHardware([]byte(`{"base": "b200", "` + field + `": -1}`))
		if err == nil || !strings.Contains(err.Error(), field+" = -1: want a rate") {
			t.Errorf("%s = -1: %v, want an error naming it and its range", field, err)
		}
	}
}
