package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestRecomputeModulesParse: recompute-modules reads Megatron-Core's
// names joined by +, means recompute=selective alone, writes back in
// Megatron-Core's order, and the core attention alone is
// recompute=selective's own; errors in one line naming the key.
func TestRecomputeModulesParse(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"recompute-modules=layernorm+moe_act", "recompute=selective,recompute-modules=moe_act+layernorm"},
		{"recompute=selective,recompute-modules=core_attn", "recompute=selective"},
		{"recompute-modules=core_attn+mlp", "recompute=selective,recompute-modules=core_attn+mlp"},
		{"recompute_modules=shared_experts+moe+mla_up_proj", "recompute=selective,recompute-modules=mla_up_proj+moe+shared_experts"},
	} {
		s, err := plan.ParseStrategy(c.text)
		if err != nil || s.String() != c.want {
			t.Errorf("%s: %q, %v; want %q", c.text, s, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"recompute-modules=attn", `recompute-modules: "attn" is not a module Megatron-Core recomputes (want core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, joined by +)`},
		{"recompute=full,recompute-modules=moe_act", "recompute-modules=moe_act without recompute=selective"},
		{"recompute=none,recompute-modules=moe_act", "recompute-modules=moe_act without recompute=selective"},
		{"ep=4,epoverlap=on,recompute-modules=moe", "epoverlap=on with recompute-modules=moe"},
	} {
		_, err := plan.ParseStrategy(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.text, err, c.want)
		}
	}
	// Against the model: a module its layers have, as Megatron-Core
	// builds them.
	p, _ := plan.PodOf("dgx-h100", 8)
	moe := mustSpec(t, smallMoE)
	dense := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=16")
	for _, c := range []struct {
		m          transformer.Spec
		text, want string
	}{
		{dense, "recompute-modules=moe_act", "recompute-modules=moe_act: moe_act, moe and shared_experts recompute a model's experts"},
		{dense, "recompute-modules=mla_up_proj", "mla_up_proj without latent attention"},
		{dense, "recompute-modules=layernorm", "fuse this model's norms into the GEMMs after them"},
		{moe, "ep=4,recompute-modules=shared_experts", "the model has no shared experts"},
		{moe, "ep=4,recompute-modules=mlp", "every block of this model is an MoE block"},
		{moe, "ep=4,fp8=delayed,recompute-modules=moe_act", "Megatron-Core refuses them with delayed scaling"},
	} {
		s, err := plan.ParseStrategy(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		_, err = Evaluate(c.m, s, p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.text, err, c.want)
		}
	}
}

// evalText evaluates plan text of model m on pod p.
func evalText(t *testing.T, m transformer.Spec, p plan.Pod, text string) Result {
	t.Helper()
	s, err := plan.ParseStrategy(text)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// nearRel reports whether a and b agree to 1e-9 of the larger.
func nearRel(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b)) }

// TestRecomputeNormAct: the small MoE (two MoE blocks, tp 1, ep 4, dp 8,
// micro-batch 1 of 1,024 tokens) recomputing its norms and its experts'
// activation (recompute-modules=layernorm+moe_act, Megatron-Core's
// output-discarding checkpoints), against no recomputation, by hand.
// Freed a block: the norm before the experts' output (the experts'
// input, 1,024 x 1,024 x 2 bytes = 2,097,152; the attention's norm is
// fused into its QKV GEMM, not recomputed) and the activation's output
// (FC2's input: 2,048 routed tokens x 512 x 2 = 2,097,152); two blocks,
// one micro-batch in flight: 8,388,608 bytes. Added to each block's
// backward: the norm's forward (a reduction of 8 n h FLOPs reading and
// writing n h x 2 bytes) and the SwiGLU's (6 x rows x 512 FLOPs,
// reading 2 x rows x 512 x 2 bytes, writing half that), nothing else,
// where rows is the most loaded rank's under the force-balanced router
// (mechanisms.RandomRouting): 2,048 x LoadOf(4,096 tokens, 2 of 8, 4
// ranks) = 2,048 x 1.02106 (its own test works such a load by hand).
func TestRecomputeNormAct(t *testing.T) {
	m := mustSpec(t, smallMoE)
	p, _ := plan.PodOf("dgx-h100", 8)
	p.Kernels.Host = kernels.Host{} // the GPU's time alone
	base := evalText(t, m, p, "dp=8,ep=4,mbs=1")
	r := evalText(t, m, p, "dp=8,ep=4,mbs=1,recompute-modules=layernorm+moe_act")
	if got := base.Activations - r.Activations; got != 8388608 {
		t.Errorf("freed %d bytes, want 8388608", got)
	}
	n, h, rows, cols := 1024.0, 1024.0, 2048*mechanisms.LoadOf(4096, 8, 2, 4), 512.0
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h, Read: n * h * 2, Writes: n * h * 2}.Time(&p.Hardware)
	act := kernel{Class: graph.ClassElementwise, FLOPs: 6 * rows * cols, Read: 2 * rows * cols * 2, Writes: rows * cols * 2}.Time(&p.Hardware)
	if got := r.LayerBackward - base.LayerBackward; !nearRel(got, norm+act) || r.LayerForward != base.LayerForward {
		t.Errorf("a block's backward %g s longer (forward %g, %g), want the norm's %g + the activation's %g", got, r.LayerForward, base.LayerForward, norm, act)
	}
	if got := r.Compute - base.Compute; !nearRel(got, 2*(norm+act)) {
		t.Errorf("compute %g s longer, want two blocks' %g", got, 2*(norm+act))
	}
	// moe frees what moe_act does and all the rest of the layer but its
	// input; it runs the layer's forward again, all-to-alls included.
	all := evalText(t, m, p, "dp=8,ep=4,mbs=1,recompute-modules=moe")
	moeActs := 32768.0 + 4194304 + 4194304 + 2097152 + 4194304 // memory's moeActivations less the input (TestMoELayerMemory)
	if got := base.Activations - all.Activations; got != int64(2*moeActs) || !(all.EPExposed > base.EPExposed) {
		t.Errorf("moe: freed %d bytes, want %d; all-to-alls %g s, without %g s", got, int64(2*moeActs), all.EPExposed, base.EPExposed)
	}
	// recompute=selective (the core attention) is recompute-modules'
	// core_attn, to the bit.
	sel, mods := evalText(t, m, p, "dp=8,ep=4,mbs=1,recompute=selective"), evalText(t, m, p, "dp=8,ep=4,mbs=1,recompute-modules=core_attn")
	if sel.Step != mods.Step || sel.Memory != mods.Memory {
		t.Errorf("selective %g s %d bytes, core_attn %g s %d bytes", sel.Step, sel.Memory, mods.Step, mods.Memory)
	}
}

// TestRecomputeMLP: a small GPT of two blocks (hidden 1,024, FFN 4,096),
// tp 2 without sequence parallelism, recomputing its MLP: freed a block
// FC1's input (replicated over the tensor group: 2 units of n h bytes)
// and its GeLU's input and FC2's input (8 units each, split over 2),
// not the dropout mask: 10 units of 1,024 x 1,024, two blocks. Added to
// the backward: the MLP's forward but its residual (its norm, fused
// into FC1 by Transformer Engine, the two GEMMs and the GeLU), one
// block's kernels alone.
func TestRecomputeMLP(t *testing.T) {
	m := mustSpec(t, "gpt:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=16")
	p, _ := plan.PodOf("dgx-h100", 8)
	// At the burst clock: the clock a step's waits allow under the power
	// limit moves the step, not what this test adds up (TestBalancedStep).
	p = p.AtBurst()
	p.Kernels.Host = kernels.Host{}
	base := evalText(t, m, p, "tp=2,dp=4,mbs=1")
	r := evalText(t, m, p, "tp=2,dp=4,mbs=1,recompute-modules=mlp")
	unit := 1024.0 * 1024
	if got := base.Activations - r.Activations; got != int64(2*10*unit) {
		t.Errorf("freed %d bytes, want %d", got, int64(2*10*unit))
	}
	n, h, f := 1024.0, 1024.0, 4096.0/2
	hw := &p.Hardware
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h, Read: n * h * 2, Writes: n * h * 2}.Time(hw)
	fc1 := kernel{Class: graph.ClassMatMul, FLOPs: 2 * n * h * f, Read: n*h*2 + h*f*2, Writes: n * f * 2}.Time(hw)
	gelu := kernel{Class: graph.ClassElementwise, FLOPs: 10 * n * f, Read: n * f * 2, Writes: n * f * 2}.Time(hw)
	fc2 := kernel{Class: graph.ClassMatMul, FLOPs: 2 * n * f * h, Read: n*f*2 + f*h*2, Writes: n * h * 2}.Time(hw)
	if got, want := r.LayerBackward-base.LayerBackward, norm+fc1+gelu+fc2; !nearRel(got, want) {
		t.Errorf("a block's backward %g s longer, want %g", got, want)
	}
}

// TestRecomputeMLA: latent attention's up projections and input norm
// (recompute-modules=mla_up_proj+layernorm) free every head's query and
// key (Head + RopeDim) and value (Head) and the down projections' input:
// 2 x 4 heads x (2 x 24 + 16) / 64 = 8 units and 2 units of n h bytes a
// block, and take longer.
func TestRecomputeMLA(t *testing.T) {
	m := mustSpec(t, smallMLA)
	p, _ := plan.PodOf("dgx-h100", 4)
	base := evalText(t, m, p, "dp=4")
	r := evalText(t, m, p, "dp=4,recompute-modules=mla_up_proj+layernorm")
	unit := 32.0 * 64
	if got := base.Activations - r.Activations; got != int64(2*(8+2)*unit) || !(r.LayerBackward > base.LayerBackward) {
		t.Errorf("freed %d bytes, want %d; backward %g s, without %g s", got, int64(2*(8+2)*unit), r.LayerBackward, base.LayerBackward)
	}
}
