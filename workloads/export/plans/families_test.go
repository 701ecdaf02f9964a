package plans

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestFamiliesExport: Llama 4's chunked attention, which pretrain_gpt.py
// has no flag for, is refused in one line; GLM-4.5-Air is exported to Megatron-LM as
// DeepSeek-V3's experts on attention with query, key and value biases
// and half-rotary heads; Nemotron is exported to Megatron-LM with its
// squared ReLU, LayerNorm1P and half-rotary heads (pretrain_gpt.py's
// --squared-relu, --apply-layernorm-1p, --rotary-percent: Megatron-
// Bridge's Nemotron provider sets the same squared_relu activation,
// layernorm_zero_centered_gamma and rotary_percent); Gemma 3, whose
// GeGLU and post-norms pretrain_gpt.py has no flag for, is refused in
// one line, as torchtitan and tools/dev/torchplan refuse both families; a
// window in all but every N-th layer is Megatron-Core's
// --window-attn-skip-freq N.
func TestFamiliesExport(t *testing.T) {
	read := func(file string) transformer.Spec {
		m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", file))
		if err != nil {
			t.Fatal(err)
		}
		m.Batch = 64
		return m
	}
	pod, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(m transformer.Spec) plan.Strategy {
		text := "tp=2,pp=1,dp=4,mbs=1"
		if m.KVHeads == 1 || m.MoE() {
			text = "tp=1,pp=1,dp=8,mbs=1" // Gemma 3 1B's one key/value head; Llama 4's experts
		}
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatal(err)
		}
		return pl.Strategy
	}
	nemotron := read("nemotron-4-15b.json")
	args, err := MegatronArgs(nemotron, resolve(nemotron), 8)
	if err != nil {
		t.Fatal(err)
	}
	line := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --squared-relu ", " --apply-layernorm-1p ", " --rotary-percent 0.5 ", " --disable-bias-linear ",
		" --position-embedding-type rope ", " --ffn-hidden-size 24576 ", " --untie-embeddings-and-output-weights ", " --norm-epsilon 1e-05 "} {
		if !strings.Contains(line, want) {
			t.Errorf("nemotron: %q not in %s", want, line)
		}
	}
	for _, not := range []string{"--swiglu", "RMSNorm"} {
		if slices.Contains(args, not) {
			t.Errorf("nemotron: %s in %s", not, line)
		}
	}
	gemma := read("gemma-3-1b.json")
	if _, err := MegatronArgs(gemma, resolve(gemma), 8); err == nil || !strings.Contains(err.Error(), "act=geglu, norms=4") ||
		!strings.Contains(err.Error(), "pretrain_gpt.py has no flag") || strings.Contains(err.Error(), "\n") {
		t.Errorf("gemma: %v, want one line refusing act=geglu, norms=4", err)
	}
	scout := read("llama4-scout.json")
	for _, m := range []transformer.Spec{nemotron, gemma, scout} {
		if _, err := TorchTitanTransformer(m, resolve(m), 8, "0.2"); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s torchtitan: %v, want a one-line refusal", m.Config.ModelType, err)
		}
		if _, err := NewTransformerPlan(m, resolve(m), 8); err == nil || !strings.Contains(err.Error(), "not Gemma's, Nemotron's or Llama 4's") {
			t.Errorf("%s torch plan: %v, want a one-line refusal", m.Config.ModelType, err)
		}
	}
	ep, err := plan.ParseStrategy("tp=1,pp=1,dp=8,ep=8,mbs=1")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(scout, ep, pod)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MegatronArgs(scout, pl.Strategy, 8); err == nil || !strings.Contains(err.Error(), "chunk=8192 (Llama 4's chunked attention)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("llama 4: %v, want one line refusing chunk=8192", err)
	}
	glm := read("glm-4.5-air.json")
	pl, err = plan.Resolve(glm, ep, pod)
	if err != nil {
		t.Fatal(err)
	}
	args, err = MegatronArgs(glm, pl.Strategy, 8)
	if err != nil {
		t.Fatal(err)
	}
	line = " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --rotary-percent 0.5 ", " --add-qkv-bias ", " --moe-router-score-function sigmoid ", " --moe-router-enable-expert-bias ",
		" --moe-shared-expert-intermediate-size 1408 ", " --moe-layer-freq ([0]*1+[1]*45) ", " --mtp-num-layers 1 ", " --num-experts 128 "} {
		if !strings.Contains(line, want) {
			t.Errorf("glm-4.5-air: %q not in %s", want, line)
		}
	}
	if strings.Contains(line, "--qk-layernorm") {
		t.Errorf("glm-4.5-air (use_qk_norm false): --qk-layernorm in %s", line)
	}
	local, err := transformer.Parse("llama:layers=12,hidden=1024,heads=8,seq=4096,vocab=1000,batch=64,window=512,global_every=6")
	if err != nil {
		t.Fatal(err)
	}
	args, err = MegatronArgs(local, resolve(local), 8)
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.Join(args, " "); !strings.Contains(line, "--window-size 511,0 --window-attn-skip-freq 6") {
		t.Errorf("global_every=6: %s, want --window-size 511,0 --window-attn-skip-freq 6", line)
	}
	// By its shape alone, torchtitan 0.2's llama3 flavor would drop the
	// layout: refused.
	fsdp, err := plan.ParseStrategy("tp=1,pp=1,dp=8,mbs=1,fsdp=on")
	if err != nil {
		t.Fatal(err)
	}
	pl, err = plan.Resolve(local, fsdp, pod)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TorchTitanTransformer(local, pl.Strategy, 8, "0.2"); err == nil || !strings.Contains(err.Error(), "global_every=6") {
		t.Errorf("torchtitan 0.2, global_every=6 by shape: %v, want a refusal naming it", err)
	}
}
