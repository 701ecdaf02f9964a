package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestBlockScaledPrimaryWeights: fp8-params=on under fp4=nvfp4 or
// fp8=mxfp8 is Transformer Engine's quantized_model_init with that
// recipe (TransformerEngine d0067d0 quantization.py): the blocks' linear
// weights are their quantized copies alone, no BF16 weight. By hand, a
// Llama block of hidden 1024, 8 heads, FFN 4096 has linear weights
// 1024 x 3072 (QKV) + 1024 x 1024 (proj) + 1024 x 8192 (fc1) + 4096 x
// 1024 (fc2) = 16,777,216; two blocks 33,554,432, and their two norm
// vectors of 1024 each, which the memory model counts with the blocks'
// weights (as the FP8 recipes' copies always have: 4,096 elements, a
// 0.01% overcount), 33,558,528. Their BF16 copy, 67,117,056 bytes,
// leaves the weights; the quantized copies stay: NVFP4 2 x (1/2 +
// 1/16) = 1.125 bytes an element (37,753,344 bytes), MXFP8 2 x (1 +
// 1/32) = 2.0625 (69,214,464). The embedding and output
// layer stay BF16. A LoRA run's adapters are BF16 with their masters
// as before. fp8-transpose-cache=off with a block-scaled recipe, and
// fp8-dpa=on with one, are refused in one line.
func TestBlockScaledPrimaryWeights(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	const linear = 33554432 + 4096
	for _, c := range []struct {
		base  string
		copyB int64
	}{
		{"dp=8,mbs=1,fp4=nvfp4", linear * 9 / 8},
		{"dp=8,mbs=1,fp8=mxfp8", linear * 33 / 16},
		{"dp=8,mbs=1,fp4=nvfp4,peft=lora,lora-rank=16,lora-targets=qkv+proj", linear * 9 / 8},
	} {
		without, err := plan.ParseStrategy(c.base)
		if err != nil {
			t.Fatal(err)
		}
		with, err := plan.ParseStrategy(c.base + ",fp8-params=on")
		if err != nil {
			t.Fatal(err)
		}
		a, err := Evaluate(m, without, p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Evaluate(m, with, p)
		if err != nil {
			t.Fatalf("%s,fp8-params=on: %v", c.base, err)
		}
		if d := a.Weights - b.Weights; d != 2*linear {
			t.Errorf("%s: fp8-params=on takes %d bytes off the weights, want 2 x %d", c.base, d, linear)
		}
		if ca, cb := memPart(a, "FP8 weight copies"), memPart(b, "FP8 weight copies"); ca != c.copyB || cb != c.copyB {
			t.Errorf("%s: quantized copies %d and %d bytes, want %d", c.base, ca, cb, c.copyB)
		}
		if a.Grads != b.Grads || a.OptState != b.OptState || a.Activations != b.Activations {
			t.Errorf("%s: fp8-params=on changed gradients, optimizer state or activations", c.base)
		}
	}
	for _, c := range []struct{ strategy, err string }{
		{"dp=8,fp4=nvfp4,fp8-params=on,fp8-transpose-cache=off", "fp8-transpose-cache=off with fp8=nvfp4"},
		{"dp=8,fp8=mxfp8,fp8-params=on,fp8-dpa=on", "fp8-dpa=on with fp8=mxfp8"},
		{"dp=8,fp8=mxfp8,fp8-params=on,fsdp=on", "fp8-params=on with fsdp=on"},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err == nil {
			_, err = Evaluate(m, s, p)
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.strategy, err, c.err)
		}
	}
}

// TestBlockScaledFP8Activation: fp8-activation=on under fp4=nvfp4 is
// Megatron-Core's plain FP8 cast of the activation's saved input
// (fused_bias_swiglu.py), whatever the GEMMs' recipe: by hand, a SwiGLU
// block's saved input is its fc1 output, 2 x 4096 elements a token in
// BF16 (4 bytes x 4096 = 16,384 bytes), FP8 halves it: 8,192 bytes a
// token saved less in each block. One micro-batch of 2,048 tokens on
// each of 2 blocks, all in flight without a pipeline: 2 x 2,048 x
// 8,192 = 33,554,432 bytes.
func TestBlockScaledFP8Activation(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	var got [2]Result
	for i, text := range []string{"dp=8,mbs=1,fp4=nvfp4,recompute=none", "dp=8,mbs=1,fp4=nvfp4,recompute=none,fp8-activation=on"} {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		if got[i], err = Evaluate(m, s, p); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if d := got[0].Activations - got[1].Activations; d != 2*2048*8192 {
		t.Errorf("fp8-activation=on under fp4=nvfp4 saves %d bytes of activations, want 2 x 2048 x 8192 = %d", d, 2*2048*8192)
	}
}

// memPart is the bytes of r's memory part named name (0 if none).
func memPart(r Result, name string) int64 {
	for _, mp := range r.MemoryParts {
		if mp.Name == name {
			return mp.Bytes
		}
	}
	return 0
}
