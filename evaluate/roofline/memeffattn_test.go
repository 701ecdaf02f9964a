package roofline

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// TestMemEffAttnF32Measured: the h100 and h200 presets' FP32
// memory-efficient attention rates are the lent H200's profiled GPT-2
// small step's (FLOPs over time_s): the one forward op matched, the
// median of the backward ones.
func TestMemEffAttnF32Measured(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "measurements", "2026-11-26-h200-b", "graphs", "gpt2_small-b8-fp32.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Ops []struct {
			Type  string   `json:"type"`
			DType string   `json:"dtype"`
			FLOPs float64  `json:"flops"`
			Time  *float64 `json:"time_s"`
		} `json:"ops"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var fwd, bwd []float64
	for _, o := range g.Ops {
		if o.Time == nil || o.DType != "f32" {
			continue
		}
		switch o.Type {
		case "_scaled_dot_product_efficient_attention":
			fwd = append(fwd, o.FLOPs / *o.Time)
		case "_scaled_dot_product_efficient_attention_backward":
			bwd = append(bwd, o.FLOPs / *o.Time)
		}
	}
	if len(fwd) != 1 || len(bwd) != 12 {
		t.Fatalf("%d forward and %d backward ops measured, want 1 and 12", len(fwd), len(bwd))
	}
	slices.Sort(bwd)
	median := (bwd[5] + bwd[6]) / 2
	for _, name := range []string{"h100", "h200"} {
		h, _ := Preset(name)
		if math.Abs(h.MemEffAttnF32-fwd[0]) > 0.001e12 || math.Abs(h.MemEffAttnF32Bwd-median) > 0.001e12 {
			t.Errorf("%s: %.3f / %.3f TFLOP/s, measured %.3f / %.3f", name, h.MemEffAttnF32/1e12, h.MemEffAttnF32Bwd/1e12, fwd[0]/1e12, median/1e12)
		}
	}
}

// TestMemEffAttnF32Time: an FP32 memory-efficient attention op's compute
// time is its FLOPs at the measured rate; other types, other precisions
// and GPUs without the rate keep the matmul roofline. Worked by hand:
//
//	h100 forward, 23.411 GFLOP at 23.411 TFLOP/s:          1.000 ms
//	h100 backward, 45.282 GFLOP at 22.641 TFLOP/s:         2.000 ms
//	h100 forward under a 1.25 compute slowdown:            1.250 ms
//	h200 forward (the same rate):                          1.000 ms
//	h100 BF16 forward (flash's type is not this; still a
//	  matmul): 23.411e9 / (989.4e12 x 0.75)               31.549 us
//	h100 FP32 mm, 23.411e9 / (66.9e12 x 0.75):             0.46659 ms
//	a100 (no rate), 23.411e9 / (19.5e12 x 0.75):           1.60075 ms
//	h100 BF16 flash forward, 331.197 GFLOP at 331.197:     1.000 ms
//	h100 BF16 flash backward, 205.984 GFLOP at 205.984:    1.000 ms
//	h200 FP16 flash forward (the same rate):               1.000 ms
//	h100 flash type on FP32 (not flash's): 331.197e9 /
//	  (66.9e12 x 0.75)                                     6.60084 ms
//	a100 BF16 flash (no rate), 331.197e9 / (312e12 x 0.75): 1.41537 ms
func TestMemEffAttnF32Time(t *testing.T) {
	for _, c := range []struct {
		hw       string
		typ      string
		dt       graph.DType
		bwd      bool
		flops    float64
		slowdown float64
		want     float64
	}{
		{"h100", "_scaled_dot_product_efficient_attention", graph.F32, false, 23.411e9, 0, 1.000e-3},
		{"h100", "_scaled_dot_product_efficient_attention_backward", graph.F32, true, 45.282e9, 0, 2.000e-3},
		{"h100", "_scaled_dot_product_efficient_attention", graph.F32, false, 23.411e9, 1.25, 1.250e-3},
		{"h200", "_scaled_dot_product_efficient_attention", graph.F32, false, 23.411e9, 0, 1.000e-3},
		{"h100", "_scaled_dot_product_efficient_attention", graph.BF16, false, 23.411e9, 0, 31.549e-6},
		{"h100", "mm", graph.F32, false, 23.411e9, 0, 0.46659e-3},
		{"a100", "_scaled_dot_product_efficient_attention", graph.F32, false, 23.411e9, 0, 1.60075e-3},
		{"h100", "_scaled_dot_product_flash_attention", graph.BF16, false, 331.197e9, 0, 1.000e-3},
		{"h100", "_scaled_dot_product_flash_attention_backward", graph.BF16, true, 205.984e9, 0, 1.000e-3},
		{"h200", "_scaled_dot_product_flash_attention", graph.F16, false, 331.197e9, 0, 1.000e-3},
		{"h100", "_scaled_dot_product_flash_attention", graph.F32, false, 331.197e9, 0, 6.60084e-3},
		{"a100", "_scaled_dot_product_flash_attention", graph.BF16, false, 331.197e9, 0, 1.41537e-3},
	} {
		h, _ := Preset(c.hw)
		h.ComputeSlowdown = c.slowdown
		op := &graph.Op{Name: "a", Type: c.typ, Class: graph.ClassMatMul, DType: c.dt, Backward: c.bwd, FLOPs: c.flops}
		_, got := opDuration(&h, op, 0, TF32{Conv: true})
		if math.Abs(got-c.want) > 1e-4*c.want {
			t.Errorf("%s %s %v: %.6g s, want %.6g", c.hw, c.typ, c.dt, got, c.want)
		}
	}
}

// TestMemEffAttnF32Validate: a hardware file with a negative or absurd
// attention rate is refused in one line naming the field.
func TestMemEffAttnF32Validate(t *testing.T) {
	for _, c := range []struct {
		fwd, bwd float64
		field    string
	}{{-1, 0, "mem_eff_attn_f32_flops"}, {0, 1e30, "mem_eff_attn_f32_bwd_flops"}, {-2, -1, "flash_attn_flops"}} {
		h, _ := Preset("h100")
		if c.field == "flash_attn_flops" {
			h.FlashAttn, h.FlashAttnBwd = c.fwd, c.bwd
		} else {
			h.MemEffAttnF32, h.MemEffAttnF32Bwd = c.fwd, c.bwd
		}
		err := h.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v/%v: %v, want one line naming %s", c.fwd, c.bwd, err, c.field)
		}
	}
}

// TestFlashAttnMeasured: the h100 and h200 presets' flash attention rates
// are the H100's non-causal 2,048-token flash row (longattn.jsonl): the
// forward's TFLOP/s, and the backward's with kernelbench's 2.5 x the
// forward's FLOPs recounted as the graph's 2 x.
func TestFlashAttnMeasured(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "measurements", "2026-11-27-h100", "longattn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var fwd, bwd float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Name   string  `json:"name"`
			Causal bool    `json:"causal"`
			FLOPs  float64 `json:"fwd_flops"`
			Fwd    float64 `json:"fwd_seconds"`
			Bwd    float64 `json:"bwd_seconds"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Name == "ring.full.c2048.flash" && !r.Causal {
			fwd, bwd = r.FLOPs/r.Fwd, 2*r.FLOPs/r.Bwd
		}
	}
	if fwd == 0 {
		t.Fatal("ring.full.c2048.flash: not in longattn.jsonl")
	}
	for _, name := range []string{"h100", "h200"} {
		h, _ := Preset(name)
		if math.Abs(h.FlashAttn-fwd) > 0.001e12 || math.Abs(h.FlashAttnBwd-bwd) > 0.001e12 {
			t.Errorf("%s: %.3f / %.3f TFLOP/s, measured %.3f / %.3f", name, h.FlashAttn/1e12, h.FlashAttnBwd/1e12, fwd/1e12, bwd/1e12)
		}
	}
}
