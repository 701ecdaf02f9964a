package search

import (
	"context"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestSearchLoRAWithExperts: LoRA on a model with experts has plans that
// fit, as Megatron-Bridge runs its recipes: Qwen3-30B-A3B with its
// recipe's adapters (rank 8, alpha 16, qkv+proj: the experts frozen) on
// one 8-GPU H100 node, and GPT-OSS 20B with Bridge's default targets
// (the experts adapted) on 8 GB200 GPUs. The answer keeps the LoRA keys
// and names expert parallelism, and is faster than training the same
// plan in full (the base's weight gradients gone).
func TestSearchLoRAWithExperts(t *testing.T) {
	for _, c := range []struct {
		model, cluster string
		gpus           int
		lora           string
		targets        plan.LoRATargets
	}{
		{"qwen3-30b-a3b:seq=2048,batch=32", "dgx-h100", 8, "peft=lora,lora-rank=8,lora-alpha=16,lora-targets=qkv+proj", plan.LoRAQKV | plan.LoRAProj},
		{"hf:../../graph/transformer/testdata/hf/gpt-oss-20b.json:seq=2048,batch=128", "gb200-nvl72", 8, "peft=lora", plan.LoRAAll},
	} {
		m := specOf(t, c.model)
		p, err := plan.PodOf(c.cluster, c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SpaceOf(c.lora)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Search(context.Background(), m, p, sp)
		if err != nil || !got.Found || !got.Best.Fits {
			t.Fatalf("%s on %d %s: %+v, %v", c.model, c.gpus, c.cluster, got.Best, err)
		}
		best := got.Best.Plan
		if !best.LoRA() || best.Targets() != c.targets || best.EP < 2 {
			t.Errorf("%s: best plan %s, want LoRA on %s with expert parallelism", c.model, best, c.targets)
		}
		full := best.Strategy
		full.FineTune = plan.FineTune{}
		full.DistOpt = true
		if r := evaluated(t, m, p, full.String()); !(got.Best.Step < r.Step) {
			t.Errorf("%s: LoRA step %g s, full training of %s %g s: want LoRA faster", c.model, got.Best.Step, full, r.Step)
		}
	}
}

// TestBridgeLoRARecipesFit: Megatron-Bridge 067f987's two MoE LoRA
// recipes run on the GPUs their names give, so placer holds them to fit
// there, as the recipes lay them out: qwen3_30b_a3b_peft_4gpu_h100_bf16_config
// (recipes/qwen/h100/qwen3_moe.py: TP 4, EP 4, ETP 1, sequence
// parallelism, 2,048 tokens, micro-batch 1 of 32, dim 8, alpha 16,
// linear_qkv and linear_proj) on 4 H100s, and
// gpt_oss_20b_peft_1gpu_h100_bf16_config (recipes/gpt_oss/h100/gpt_oss.py:
// one GPU, 2,048 tokens, micro-batch 1 of 128, LoRA's defaults there:
// dim 32, alpha 32, every target) on one.
func TestBridgeLoRARecipesFit(t *testing.T) {
	for _, c := range []struct {
		model    string
		gpus     int
		strategy string
	}{
		{"qwen3-30b-a3b:seq=2048,batch=32", 4, "tp=4,dp=1,ep=4,etp=1,mbs=1,sp=on,peft=lora,lora-rank=8,lora-alpha=16,lora-targets=qkv+proj"},
		{"hf:../../graph/transformer/testdata/hf/gpt-oss-20b.json:seq=2048,batch=128", 1, "tp=1,dp=1,mbs=1,peft=lora,lora-rank=32,lora-alpha=32"},
	} {
		p, err := plan.PodOf("dgx-h100", c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		if r := evaluated(t, specOf(t, c.model), p, c.strategy); !r.Fits {
			t.Errorf("%s with %s on %d H100s: does not fit", c.model, c.strategy, c.gpus)
		}
	}
}
