package planner

import (
	"testing"

	"github.com/placer/placer/graph"
)

// TestExpertWgrad: the experts' weight gradients accumulated into FP32
// main gradients on Megatron's layers, by hand. Qwen3-235B-A22B (hidden
// 4,096, 128 experts of 1,536, top 8) at TP 4, EP 8 (16 local experts):
// 1,024 tokens a GPU, 8,192 rows, 512 an expert. FC1's weight gradient
// reads the 8,192 x 4,096 input and the 8,192 x 3,072 output gradient
// (BF16) and reads and writes the 16 x 4,096 x 3,072 main gradient (FP32):
// 2 x (33.55M + 25.17M) + 2 x 4 x 201.3M bytes, 1.728 GB; FC2's the
// 8,192 x 1,536 input, the 8,192 x 4,096 output gradient and the
// 16 x 1,536 x 4,096 main gradient: 2 x 46.14M + 8 x 100.7M, 0.898 GB.
// Each then takes its bytes at the H100's BF16 GEMM memory rate (the
// roofline's max): longer than its FLOPs, so longer than the data
// gradient of the same FLOPs. With grads=bf16 the main gradient is 2
// bytes. At TP 2, EP 32 (4 local experts, 4,096 rows each) the weight
// gradient's FLOPs outweigh its bytes: as long as the data gradient.
// Off Megatron's layers (torchtitan) the kernel as before: the data
// gradient's.
func TestExpertWgrad(t *testing.T) {
	const w = "qwen3-235b-a22b:seq=4096,batch=2048"
	for _, c := range []struct {
		name, strategy string
		in, out, wt    float64 // FC1's elements: input, output gradient, weights
		gb             float64
		memoryBound    bool
	}{
		{"tp4 ep8", "tp=4,ep=8,etp=1,dp=64,mbs=1,sp=on,stack=model-zoo-moe-dev", 8192 * 4096, 8192 * 3072, 16 * 4096 * 3072, 4, true},
		{"tp4 ep8 grads=bf16", "tp=4,ep=8,etp=1,dp=64,mbs=1,sp=on,grads=bf16,stack=model-zoo-moe-dev", 8192 * 4096, 8192 * 3072, 16 * 4096 * 3072, 2, true},
		{"tp2 ep32", "tp=2,ep=32,etp=1,dp=128,mbs=1,sp=on,stack=model-zoo-moe-dev", 16384 * 4096, 16384 * 3072, 4 * 4096 * 3072, 4, false},
	} {
		cc := stackCoster(t, w, c.strategy, "dgx-h100:32")
		fc1 := cc.LGEMM(2*c.in*3072, c.in*bf16+c.wt*bf16, c.out*bf16)
		g := cc.Back(fc1)
		wg := cc.expertWgrad(g, c.in, c.out, c.wt)
		if want := 2*(c.in+c.out) + 2*c.gb*c.wt; !near(wg.Read+wg.Writes, want) || wg.FLOPs != g.FLOPs {
			t.Errorf("%s: %g bytes, %g FLOPs; want %g, %g", c.name, wg.Read+wg.Writes, wg.FLOPs, want, g.FLOPs)
		}
		h := cc.H
		mem := h.Launch + (wg.Read+wg.Writes)/(h.MemBandwidth*h.MemEff[graph.ClassMatMul])
		got, data := wg.Time(h), g.Time(h)
		if c.memoryBound && (!near(got, mem) || !(got > data)) {
			t.Errorf("%s: %g s, want the bytes' %g, above the data gradient's %g", c.name, got, mem, data)
		}
		if !c.memoryBound && !near(got, data) {
			t.Errorf("%s: %g s, want the data gradient's %g (FLOP-bound)", c.name, got, data)
		}
	}
	tt := stackCoster(t, w, "ep=8,dp=256,mbs=1,stack=torchtitan-0.2,compile=on", "dgx-h100:32")
	g := kernel{Class: graph.ClassMatMul, FLOPs: 1e9, Read: 3e6, Writes: 1e6}
	if got := tt.expertWgrad(g, 1e6, 1e6, 5e5); got != g {
		t.Errorf("torchtitan: %+v, want %+v", got, g)
	}
}
