package planner

import (
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// TestMXFP8OutputProjTime: Llama 3 8B's output layer on one B200 (T =
// 1), one micro-batch of 8,192 tokens, hidden 4,096, 128,256 logits,
// under fp8=mxfp8. With fp8-output-proj=on its logits GEMM (2 x 8,192 x
// 4,096 x 128,256 FLOPs, reading 8,192 x 4,096 and 4,096 x 128,256
// BF16 elements, writing 8,192 x 128,256) runs as the blocks' MXFP8
// GEMMs do: forward its FLOPs over the recipe's forward speedup at the
// BF16 rate, its inputs read at one byte; its two backward GEMMs the
// same kernel at the backward speedup. Added: the MXFP8 casts of its
// input (8,192 x 4,096) and weight (4,096 x 128,256) forward and of the
// logits' gradient (8,192 x 128,256) backward, each reading 2 bytes and
// writing 2 x (1 + 1/32) an element. Launches: two more forward, one
// more backward.
func TestMXFP8OutputProjTime(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32}}
	pl.FP8 = plan.FP8MX
	bf := newCoster(m, pl, &p, 1, 8192)
	pl.FP8OutputProj = true
	mx := newCoster(m, pl, &p, 1, 8192)
	if mx.FP8Fwd <= 0 || mx.FP8Bwd <= 0 {
		t.Fatalf("MXFP8's speedups %g, %g: not set", mx.FP8Fwd, mx.FP8Bwd)
	}
	bff, bfb := bf.fusedOutput()
	mxf, mxb := mx.fusedOutput()
	n, h, V := 8192.0, 4096.0, 128256.0
	t16 := func(flops, read, write float64) float64 {
		return kernel{Class: graph.ClassMatMul, FLOPs: flops, Read: read, Writes: write}.Time(bf.H)
	}
	cast := func(e float64) float64 {
		return kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e * 2 * (1 + 1.0/32)}.Time(bf.H)
	}
	flops, read, write := 2*n*h*V, (n*h+h*V)*2, n*V*2
	gemm := t16(flops, read, write)
	fwd8 := t16(flops*mx.FP8Fwd, read/2, write)
	bwd8 := t16(flops*mx.FP8Bwd, read/2, write)
	wantF := bff.Busy - gemm + fwd8 + cast(n*h) + cast(h*V)
	wantB := bfb.Busy - 2*gemm + 2*bwd8 + cast(n*V)
	if !near(mxf.Busy, wantF) || !near(mxb.Busy, wantB) {
		t.Errorf("MXFP8 output layer: %g s forward, %g backward; want %g, %g", mxf.Busy, mxb.Busy, wantF, wantB)
	}
	if mxf.Launches-bff.Launches != 2 || mxb.Launches-bfb.Launches != 1 {
		t.Errorf("launches %g -> %g forward, %g -> %g backward; want 2 and 1 more", bff.Launches, mxf.Launches, bfb.Launches, mxb.Launches)
	}
}

// TestMXFP8OutputProjMemory: a 2-block Llama (hidden 1,024, vocabulary
// 32,000) at one micro-batch of 2,048 tokens on each of 8 B200s: with
// fp8-output-proj=on the output layer keeps the columnwise MXFP8 copies
// of its input and weight, (2,048 x 1,024 + 1,024 x 32,000) x (1 +
// 1/32) = 35,954,688 bytes more; refused without fp8=mxfp8.
func TestMXFP8OutputProjMemory(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	var got [2]Result
	for i, text := range []string{"dp=8,mbs=1,fp8=mxfp8", "dp=8,mbs=1,fp8=mxfp8,fp8-output-proj=on"} {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		if got[i], err = Evaluate(m, s, p); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if d := got[1].Activations - got[0].Activations; d != 35954688 {
		t.Errorf("fp8-output-proj=on keeps %d bytes more, want 35,954,688", d)
	}
	if _, err := plan.ParseStrategy("dp=8,fp8=delayed,fp8-output-proj=on"); err == nil {
		t.Error("fp8-output-proj=on with fp8=delayed: taken, want refused (Megatron-Core: fp8_recipe='mxfp8')")
	}
}
