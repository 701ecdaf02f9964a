package plans

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestHybridExport: Nemotron-H 8B's Megatron-LM arguments carry its
// pattern and Mamba-2 shape (core_v0.16.1's flags, for pretrain_mamba.py)
// and its attention without positions; a Mamba-2 mixer Megatron-Core
// cannot build (3 taps), torchtitan and the torch plan refuse in one
// line, by config.json and by shape alike.
func TestHybridExport(t *testing.T) {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", "nemotron-h-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Batch = 64
	written, err := plan.ParseStrategy("tp=2,pp=1,dp=4,mbs=1,sp=on")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, written, pod)
	if err != nil {
		t.Fatal(err)
	}
	s := pl.Strategy
	args, err := MegatronArgs(m, s, 8)
	if err != nil {
		t.Fatal(err)
	}
	line := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --hybrid-override-pattern M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M- ", " --mamba-state-dim 128 ",
		" --mamba-head-dim 64 ", " --mamba-num-groups 8 ", " --mamba-num-heads 128 ", " --squared-relu ", " --position-embedding-type none ",
		" --normalization RMSNorm ", " --num-layers 52 ", " --ffn-hidden-size 21504 ", " --num-query-groups 8 "} {
		if !strings.Contains(line, want) {
			t.Errorf("%q not in %s", want, line)
		}
	}
	if strings.Contains(line, "--swiglu") || strings.Contains(line, "rope") {
		t.Errorf("a gate or rotary positions in %s", line)
	}
	if script := MegatronScript(m, s.String(), 8, 8, args); !strings.Contains(script, " pretrain_mamba.py ") {
		t.Errorf("script does not launch pretrain_mamba.py:\n%s", script)
	}
	conv3 := m
	conv3.SSM.Conv = 3
	if _, err := MegatronArgs(conv3, s, 8); err == nil || !strings.Contains(err.Error(), "ssm_conv=3") || strings.Contains(err.Error(), "\n") {
		t.Errorf("3 taps: %v, want one line naming ssm_conv=3", err)
	}
	shape := m.Shape()
	shape.Act = "" // a hybrid of SwiGLU MLPs by its shape: no act= to refuse it by
	if args, err := MegatronArgs(shape, s, 8); err != nil || !strings.Contains(strings.Join(args, " "), "--swiglu --disable-bias-linear") {
		t.Errorf("a SwiGLU hybrid by shape: %v, %v; want --swiglu", args, err)
	}
	for _, x := range []transformer.Spec{m, shape} {
		if _, err := TorchTitanTransformer(x, s, 8, "0.2"); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("torchtitan 0.2 (%q): %v, want a one-line refusal", x.Config.ModelType, err)
		}
		if _, err := NewTransformerPlan(x, s, 8); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("torch plan (%q): %v, want a one-line refusal", x.Config.ModelType, err)
		}
		if why := titan03Builds(x); why == "" {
			t.Errorf("torchtitan 0.3 (%q) builds it", x.Config.ModelType)
		}
	}
}

// TestQwen3NextExport: Qwen3-Next-80B-A3B's Megatron-LM arguments carry
// its Gated DeltaNet (every fourth layer full attention), the output
// gate, the shared expert's gate and zero-centred norms (core_v0.16.1's
// flags); mixers whose attention is not every N-th layer are refused in
// one line, as are torchtitan and the torch plan.
func TestQwen3NextExport(t *testing.T) {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", "qwen3-next-80b-a3b.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Batch = 128
	written, err := plan.ParseStrategy("tp=2,pp=4,dp=4,mbs=1,sp=on,ep=8,etp=1")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := plan.ParsePod("dgx-h100:4")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, written, pod)
	if err != nil {
		t.Fatal(err)
	}
	s := pl.Strategy
	args, err := MegatronArgs(m, s, 32)
	if err != nil {
		t.Fatal(err)
	}
	line := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --experimental-attention-variant gated_delta_net ", " --linear-attention-freq 4 ", " --linear-num-key-heads 16 ",
		" --linear-num-value-heads 32 ", " --linear-key-head-dim 128 ", " --linear-value-head-dim 128 ", " --linear-conv-kernel-dim 4 ",
		" --attention-output-gate ", " --moe-shared-expert-gate ", " --apply-layernorm-1p ", " --qk-layernorm ", " --rotary-percent 0.25 ",
		" --num-experts 512 ", " --moe-router-topk 10 ", " --moe-shared-expert-intermediate-size 512 ", " --kv-channels 256 "} {
		if !strings.Contains(line, want) {
			t.Errorf("%q not in %s", want, line)
		}
	}
	odd := m
	odd.Mixers = "*" + m.Mixers[1:]
	if _, err := MegatronArgs(odd, s, 32); err == nil || !strings.Contains(err.Error(), "not every N-th layer") || strings.Contains(err.Error(), "\n") {
		t.Errorf("irregular mixers: %v, want one line", err)
	}
	if _, err := TorchTitanTransformer(m, s, 32, "0.2"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("torchtitan 0.2: %v, want a one-line refusal", err)
	}
	if _, err := NewTransformerPlan(m, s, 32); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("torch plan: %v, want a one-line refusal", err)
	}
	if titan03Builds(m) == "" {
		t.Errorf("torchtitan 0.3 builds it")
	}
}
