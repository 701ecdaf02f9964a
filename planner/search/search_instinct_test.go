package search

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// llama2LoRA is MLPerf's Llama 2 70B LoRA fine-tuning as the bench
// writes it (8 sequences of 8,192 tokens a step), LoRA on the attention's
// QKV and output projections at rank 16, alpha 32. A replica is the
// stages' tensor ranks (ReplicaGPUs), times its context ranks.
const (
	llama2_70B = "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000,seq=8192,batch=8"
	llama2LoRA = "peft=lora,lora-rank=16,lora-alpha=32,lora-targets=qkv+proj"
)

// TestInstinctEndToEnd: eval and search run on one 8-GPU MI300X platform.
// Llama 2 70B LoRA at TP 8 with sequence parallelism fits (the frozen
// base's 138 GB of BF16 weights over 8 GPUs); the search, keeping the
// LoRA settings, returns a plan that fits on the 8 GPUs. On ROCm,
// NVIDIA's recipes are refused in one line (fp4=nvfp4, fp8=blockwise),
// MXFP8 on the MI300X for want of block-scaled matrix cores, and runs on
// the MI355X (CDNA 4).
func TestInstinctEndToEnd(t *testing.T) {
	m := specOf(t, llama2_70B)
	p, err := plan.ParsePod("mi300x:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=8,dp=1,mbs=1,sp=on," + llama2LoRA)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := planner.Evaluate(m, s, p); err != nil || r.Verdict != plan.VerdictFits || r.Step <= 0 {
		t.Errorf("llama 2 70B LoRA at tp=8 on mi300x:1: %v (%v)", r.Verdict, err)
	}
	sp, err := SpaceOf(llama2LoRA)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Search(context.Background(), m, p, sp)
	if pl := res.Best.Plan; err != nil || !res.Found || pl.ReplicaGPUs()*pl.CP*pl.DP != 8 || pl.FineTune.LoRARank != 16 || res.Best.Verdict != plan.VerdictFits {
		t.Errorf("search of llama 2 70B LoRA on mi300x:1: %v, %q (found %v, %v)", res.Best.Plan, res.Best.Verdict, res.Found, err)
	}
	for _, c := range []struct{ pod, strategy, refusal string }{
		{"mi300x:1", "tp=8,fp4=nvfp4", "fp4=nvfp4 on mi300x: NVFP4 is NVIDIA's"},
		{"mi355x:1", "tp=8,fp4=nvfp4", "fp4=nvfp4 on mi355x: NVFP4 is NVIDIA's"},
		{"mi325x:1", "tp=8,fp8=blockwise", "fp8=blockwise on mi325x: no ROCm blockwise FP8 kernel"},
		{"mi300x:1", "tp=8,fp8=mxfp8", "fp8=mxfp8 on mi300x: its GPUs have no block-scaled"},
		{"mi300x:1", "tp=8,fp8=delayed", ""},
		{"mi355x:1", "tp=8,fp8=mxfp8", ""},
	} {
		p, _ := plan.ParsePod(c.pod)
		s, err := plan.ParseStrategy(c.strategy + ",dp=1,mbs=1," + llama2LoRA)
		if err == nil {
			_, err = planner.Evaluate(m, s, p)
		}
		if c.refusal == "" && err != nil || c.refusal != "" && (err == nil || !strings.Contains(err.Error(), c.refusal) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s on %s: %v, want %q", c.strategy, c.pod, err, c.refusal)
		}
	}
}
