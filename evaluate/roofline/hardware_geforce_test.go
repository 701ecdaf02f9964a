package roofline

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

// TestRTX3090Preset: the preset validates and holds its sources' figures
// (hardware/geforce.go), worked by hand: 82 SMs x 4 tensor cores x 256
// FLOPs x 1.695 GHz = 142.33 TFLOP/s with FP16 accumulation, half that
// (71.16) for an FP16 or BF16 matmul, which accumulates in FP32, a quarter
// (35.58) for TF32; 35.58 TFLOP/s FP32 and FP16 without tensor cores; 936
// GB/s; 24 GiB.
func TestRTX3090Preset(t *testing.T) {
	h, err := Preset("rtx3090")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		what      string
		got, want float64
	}{
		{"fp16 tensor (fp32 accumulate)", h.PeakFLOPS(graph.ClassMatMul, graph.F16), 71.16288e12},
		{"bf16 conv", h.PeakFLOPS(graph.ClassConv, graph.BF16), 71.16288e12},
		{"tf32 conv", h.Peak(graph.ClassConv, graph.F32, TF32{Conv: true}), 35.58144e12},
		{"fp32 matmul (strict)", h.Peak(graph.ClassMatMul, graph.F32, TF32{}), 35.58e12},
		{"fp16 elementwise", h.PeakFLOPS(graph.ClassElementwise, graph.F16), 35.58e12},
		{"int8 tensor", h.INT8Tensor, 284.65152e12},
		{"bandwidth", h.MemBandwidth, 936e9},
		{"memory", float64(h.Memory), 24 * 1024 * 1024 * 1024},
	} {
		if math.Abs(f.got-f.want) > 1e-9*f.want {
			t.Errorf("%s = %g, want %g", f.what, f.got, f.want)
		}
	}
	if h.NVLinkGen != 0 || h.Topology != "pcie" || h.PCIeGen != 4 {
		t.Errorf("interconnect: nvlink %d, topology %s, pcie %d: want none, pcie, 4", h.NVLinkGen, h.Topology, h.PCIeGen)
	}
}

// TestRTX3090GEMMRoofline: an FP16 GEMM of 4,096^3 (2 x 4,096^3 =
// 1.37439e11 FLOPs, 3 x 4,096^2 x 2 = 100.66 MB) at the H100's measured
// matmul efficiency 0.909335 takes 1.37439e11 / (71.16288e12 x 0.909335)
// = 2,123.89 us of compute, above 100.66e6 / (936e9 x 0.8) = 134.4 us of
// traffic, plus the 5 us launch: 2,128.89 us (2,580.11 at the default
// 0.75 before).
func TestRTX3090GEMMRoofline(t *testing.T) {
	n := 4096.0
	op := graph.Op{Class: graph.ClassMatMul, DType: graph.F16, FLOPs: 2 * n * n * n, BytesRead: int64(2 * n * n * 2), BytesWritten: int64(n * n * 2)}
	h, _ := Preset("rtx3090")
	if got, want := KernelTime(&h, &op), 2128.89e-6; math.Abs(got-want) > 0.01e-6 {
		t.Errorf("%.6g s, want %.6g", got, want)
	}
}

// TestRTX3090GEMMEffMeasured: the rtx3090's matmul efficiency is the one
// placer hw bench measured on the H100 (its profile's compute_eff[matmul],
// 0.9093 to four places); skipped where the shared data is absent.
func TestRTX3090GEMMEffMeasured(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "h100", "hw-bench-2026-11-25.json"))
	if err != nil {
		t.Skip("shared data absent: ", err)
	}
	var p struct {
		ComputeEff []float64 `json:"compute_eff"`
	}
	if err := json.Unmarshal(data, &p); err != nil || len(p.ComputeEff) <= int(graph.ClassMatMul) {
		t.Fatalf("profile: %v (%d efficiencies)", err, len(p.ComputeEff))
	}
	h, _ := Preset("rtx3090")
	if got, want := h.ComputeEff[graph.ClassMatMul], p.ComputeEff[graph.ClassMatMul]; got != want || math.Abs(want-0.9093) > 5e-5 {
		t.Errorf("rtx3090 matmul efficiency %v, the H100's measured %v (0.9093)", got, want)
	}
}

// TestRTX3090DenseConv: a dense convolution runs at the GEMM's measured
// efficiency (Hardware.DenseConvEff, 0.9093), a grouped or unshaped one
// at the default 0.6, worked by hand for a compute-bound FP16 op of 1
// TFLOP: 5 us + 1e12 / (71.16288e12 x 0.9093349 = 64.71089e12) = 15.4583
// ms dense; 5 us + 1e12 / (71.16288e12 x 0.6) = 23.4254 ms grouped. The
// a100 preset has no DenseConvEff: its dense convolution keeps 0.6
// (5 us + 1e12 / (312e12 x 0.6) = 5.3469 ms).
func TestRTX3090DenseConv(t *testing.T) {
	dense := graph.Op{Class: graph.ClassConv, DType: graph.F16, FLOPs: 1e12, BytesRead: 1e6, BytesWritten: 1e6,
		DenseConv: graph.ConvShape{Batch: 256, Cin: 256, Cout: 256, Taps: 9, Pixels: 784}}
	grouped := dense
	grouped.DenseConv, grouped.GroupedFLOPs = graph.ConvShape{}, 1e12
	h, _ := Preset("rtx3090")
	a, _ := Preset("a100")
	for _, c := range []struct {
		name string
		h    Hardware
		op   graph.Op
		want float64
	}{
		{"rtx3090 dense", h, dense, 15.45835e-3},
		{"rtx3090 grouped", h, grouped, 23.42545e-3},
		{"a100 dense", a, dense, 5.346880e-3},
	} {
		if got := KernelTime(&c.h, &c.op); math.Abs(got-c.want) > 1e-8 {
			t.Errorf("%s: %.7g s, want %.7g", c.name, got, c.want)
		}
	}
	if h.DenseConvEff != h.ComputeEff[graph.ClassMatMul] {
		t.Errorf("dense convolution efficiency %v, the GEMM's %v", h.DenseConvEff, h.ComputeEff[graph.ClassMatMul])
	}
}
