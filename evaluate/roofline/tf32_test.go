package roofline

import (
	"testing"

	"github.com/placer/placer/graph"
)

// tf32Graph: an f32 matmul, an f32 convolution, a bf16 matmul and an f32
// elementwise op, each of 1e12 FLOPs and 1 KB of traffic (compute-bound
// on an H100 at any of its peaks).
func tf32Graph(t *testing.T, e *graph.Execution) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("tf32")
	b.AddOp(graph.Op{Name: "mm", Type: "mm", Class: graph.ClassMatMul, DType: graph.F32, FLOPs: 1e12, BytesRead: 1024})
	b.AddOp(graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1e12, BytesRead: 1024})
	b.AddOp(graph.Op{Name: "mm16", Type: "mm", Class: graph.ClassMatMul, DType: graph.BF16, FLOPs: 1e12, BytesRead: 1024})
	b.AddOp(graph.Op{Name: "add", Type: "add", Class: graph.ClassElementwise, DType: graph.F32, FLOPs: 1e12, BytesRead: 1024})
	b.SetExecution(e)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTF32PerClass: an f32 matmul or convolution runs at the H100's TF32
// peak (494.7 TFLOP/s) where the setting allows it and at its FP32 peak
// (66.9) where not, so that its compute time changes by 494.7 / 66.9 =
// 7.395x; the bf16 matmul (989.4, tensor cores) and the elementwise op
// (66.9, CUDA cores) never change. Who decides: the user's override, else
// the graph's recorded tf32_matmul / tf32_cudnn, else the hardware's
// AllowTF32.
func TestTF32PerClass(t *testing.T) {
	h, err := Preset("h100")
	if err != nil {
		t.Fatal(err)
	}
	const fp32, tf32, bf16 = 66.9e12, 494.7e12, 989.4e12
	pyDefaults := &graph.Execution{Device: "cuda", TF32CuDNN: true} // matmul off, cuDNN on
	allOn := &graph.Execution{Device: "cuda", TF32MatMul: true, TF32CuDNN: true}
	tests := []struct {
		name      string
		exec      *graph.Execution
		allow     bool // the hardware's AllowTF32
		override  string
		mm, conv  float64 // the peaks the f32 matmul and convolution run at
		wantModel TF32
	}{
		{"no settings, preset", nil, false, "", fp32, fp32, TF32{}},
		{"no settings, profile with TF32", nil, true, "", tf32, tf32, TF32{MatMul: true, Conv: true}},
		{"PyTorch's defaults", pyDefaults, false, "", fp32, tf32, TF32{MatMul: false, Conv: true}},
		{"recorded settings beat the hardware's", pyDefaults, true, "", fp32, tf32, TF32{MatMul: false, Conv: true}},
		{"both recorded on", allOn, false, "", tf32, tf32, TF32{MatMul: true, Conv: true}},
		{"--tf32 off", allOn, true, "off", fp32, fp32, TF32{}},
		{"--tf32 on", nil, false, "on", tf32, tf32, TF32{MatMul: true, Conv: true}},
		{"--tf32 matmul", pyDefaults, false, "matmul", tf32, fp32, TF32{MatMul: true, Conv: false}},
		{"--tf32 conv", nil, true, "conv", fp32, tf32, TF32{MatMul: false, Conv: true}},
		{"--tf32 graph", pyDefaults, true, "graph", fp32, tf32, TF32{MatMul: false, Conv: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hh := h
			hh.AllowTF32 = tc.allow
			c, err := NewCluster(hh, 1, "nvswitch")
			if err != nil {
				t.Fatal(err)
			}
			o, err := ParseTF32(tc.override)
			if err != nil {
				t.Fatal(err)
			}
			g := tf32Graph(t, tc.exec)
			m := mustModel(t, g, c, Options{TF32: o})
			if m.TF32() != tc.wantModel {
				t.Fatalf("model TF32 %+v, want %+v", m.TF32(), tc.wantModel)
			}
			want := []float64{
				hh.Launch + 1e12/(tc.mm*hh.ComputeEff[graph.ClassMatMul]),
				hh.Launch + 1e12/(tc.conv*hh.ComputeEff[graph.ClassConv]),
				hh.Launch + 1e12/(bf16*hh.ComputeEff[graph.ClassMatMul]),
				hh.Launch + 1e12/(fp32*hh.ComputeEff[graph.ClassElementwise]),
			}
			for i, w := range want {
				if got := m.OpTime(i); !near(got, w) {
					t.Errorf("op %s: %v s, want %v", g.Op(i).Name, got, w)
				}
				if got := m.TimeOf(g.Op(i)); !near(got, w) {
					t.Errorf("TimeOf(%s): %v s, want %v", g.Op(i).Name, got, w)
				}
			}
		})
	}
	// The ratio itself, on the matmul: on / off = 494.7 / 66.9.
	c, _ := NewCluster(h, 1, "nvswitch")
	on, _ := ParseTF32("on")
	off, _ := ParseTF32("off")
	g := tf32Graph(t, nil)
	ton := mustModel(t, g, c, Options{TF32: on}).OpTime(0) - h.Launch
	toff := mustModel(t, g, c, Options{TF32: off}).OpTime(0) - h.Launch
	if !near(toff/ton, tf32/fp32) {
		t.Errorf("off/on = %v, want %v", toff/ton, tf32/fp32)
	}
	if _, err := ParseTF32("sometimes"); err == nil {
		t.Error("ParseTF32 took \"sometimes\"")
	}
}
