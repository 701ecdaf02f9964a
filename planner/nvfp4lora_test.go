package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestNVFP4FP8AttentionAndDropoutRecompute: a 2-block Llama (hidden
// 1,024, 8 heads and as many key-value heads, FFN 4,096) at seq 2,048,
// one micro-batch of one sequence on each of 8 B200s (dp=8, no
// recomputation): n = 2,048 tokens. By hand:
//   - fp8-dpa=on under fp4=nvfp4 (Megatron-Core's NVFP4BlockScaling(fp8_dpa=...),
//     TE v2.8's per-tensor FP8 attention beside NVFP4 linears) keeps Q,
//     K, V and the output in FP8: 4 x n x 1,024 elements a block at 1
//     byte instead of 2, 2 blocks: 16,777,216 bytes less;
//   - lora-dropout-recompute=on (NeMo's thunder dropout) keeps no mask:
//     LoRA on qkv and proj, one byte an element of each adapter's input
//     (qkv's: the norm's output, n x 1,024; proj's: the attention's
//     output, n x 1,024), 2 blocks: 8,388,608 bytes less; on every
//     linear (qkv, proj, fc1 of n x 1,024, fc2 of n x 4,096): 7 x n x
//     1,024 x 2 = 29,360,128.
func TestNVFP4FP8AttentionAndDropoutRecompute(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	acts := func(text string) int64 {
		t.Helper()
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return r.Activations
	}
	const base = "dp=8,mbs=1,fp4=nvfp4,recompute=none"
	const lora = ",fp8-params=on,peft=lora,lora-rank=16,lora-dropout=0.1"
	for _, c := range []struct {
		name, without, with string
		less                int64
	}{
		{"fp8-dpa under nvfp4", base, base + ",fp8-dpa=on", 2 * 4 * 2048 * 1024},
		{"fp8-dpa under nvfp4, LoRA", base + lora + ",lora-targets=qkv+proj", base + lora + ",lora-targets=qkv+proj,fp8-dpa=on", 2 * 4 * 2048 * 1024},
		{"dropout recompute, qkv+proj", base + lora + ",lora-targets=qkv+proj", base + lora + ",lora-targets=qkv+proj,lora-dropout-recompute=on", 2 * 2 * 2048 * 1024},
		{"dropout recompute, every linear", base + lora, base + lora + ",lora-dropout-recompute=on", 2 * 7 * 2048 * 1024},
	} {
		if d := acts(c.without) - acts(c.with); d != c.less {
			t.Errorf("%s: %d bytes of activations less, want %d", c.name, d, c.less)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"dp=8,fp8=mxfp8,fp8-dpa=on", "fp8-dpa=on with fp8=mxfp8"},
		{"dp=8,peft=lora,lora-dropout-recompute=on", "without lora-dropout above 0"},
		{"dp=8,lora-dropout-recompute=on", "without peft=lora"},
	} {
		if _, err := plan.ParseStrategy(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.text, err, c.want)
		}
	}
}
