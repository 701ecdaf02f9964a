package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestSavedInputBytes: Transformer Engine saves a GEMM's input for the
// weight gradient as its column-wise copy alone: one byte an element
// under per-tensor FP8, 1 + 1/32 under MXFP8 (the E8M0 scale of a block
// of 32), 1/2 + 1/16 under NVFP4 (two elements a byte, an E4M3 scale of
// a block of 16).
func TestSavedInputBytes(t *testing.T) {
	for _, c := range []struct {
		recipe string
		want   float64
	}{{plan.FP8Current, 1}, {plan.FP8Delayed, 1}, {plan.FP8MX, 1.03125}, {plan.FP4NV, 0.5625}} {
		if got := plan.SavedInputBytes(c.recipe); got != c.want {
			t.Errorf("%s: %g bytes an element, want %g", c.recipe, got, c.want)
		}
	}
}

// TestSavedTensorsByRecipe: one Megatron-Core/Transformer Engine Llama
// block's saved tensors, tensor by tensor, in units of s b h bytes
// (hidden 1,024, 8 heads of 128, 2 key/value heads, FFN 4,096; 1,024
// tokens on one GPU, unit 1,048,576 bytes):
//   - the two norms' inputs (the block's input and the attention's
//     residual sum, BF16, LayerNormLinear's inputmat): 4;
//   - Q, K and V as flash attention saves them: 2 + 0.5 + 0.5 = 3; its
//     output, BF16: 2;
//   - SwiGLU's input (FC1's output, 2 x 4,096 BF16): 16;
//   - the GEMMs' saved inputs, b bytes an element (2 BF16; 1 FP8; 1.03125
//     MXFP8; 0.5625 NVFP4): QKV's and FC1's norm outputs 1 each, FC2's
//     4,096/1,024 = 4, and under FP8 linear_proj's copy of the
//     attention's output 1: 6 b in BF16, 7 b in FP8;
//   - the dropout mask after the attention (1), none on
//     Megatron-Bridge's llama family (hidden_dropout 0.0).
//
// BF16: 25 + 12 + 1 = 38 (Bridge 37); FP8 current: 25 + 7 + 1 = 33
// (Bridge 32); MXFP8: 25 + 7.21875 = 32.21875 on Bridge, 33.21875 on
// megatron-core-0.16; NVFP4 on Bridge 25 + 3.9375 = 28.9375. torchtitan's
// Float8 one byte an input and no linear_proj copy (its attention output
// is the saved input itself), with repeat_kv's keys and values at every
// head (2 x 2 x 6 x 128/1,024 = 3): 25 + 6 + 1 + 3 = 35.
func TestSavedTensorsByRecipe(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=2,ffn=4096,seq=1024,vocab=1024,batch=8")
	unit := 1024.0 * 1024
	for _, c := range []struct {
		stack, recipe string
		want          float64
	}{
		{"", "", 38},
		{"megatron-bridge-26.02", "", 37},
		{"", plan.FP8Current, 33},
		{"megatron-bridge-26.02", plan.FP8Current, 32},
		{"megatron-core-0.16", plan.FP8MX, 33.21875},
		{"megatron-bridge-26.02", plan.FP8MX, 32.21875},
		{"megatron-bridge-26.02", plan.FP4NV, 28.9375},
		{"torchtitan-0.2", plan.FP8Current, 35},
	} {
		pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, MBS: 1, Stages: []int{2},
			Strategy: plan.Strategy{FP8: c.recipe, Software: plan.Software{Stack: c.stack}}}
		co := counterAt(m, pl, gb300(t), 1, 1024)
		if got := co.layerMemory().perLayer / unit; !near(got, c.want) {
			t.Errorf("%s %s: a block keeps %g units, want %g", c.stack, c.recipe, got, c.want)
		}
	}
}

// TestEmbeddingDropout: stage 0 keeps, beside its blocks', the
// embedding's output and its dropout mask, 3 units a micro-batch in
// flight, where the model has a hidden dropout; none on Megatron-Bridge's
// llama family (the embedding's output is the first block's input, the
// norm's saved input; no mask at p = 0). Two BF16 blocks of 38 and 37
// units (TestSavedTensorsByRecipe's model), one micro-batch: 2 x 38 + 3 =
// 79 units, and 2 x 37 = 74 on Bridge.
func TestEmbeddingDropout(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=2,ffn=4096,seq=1024,vocab=1024,batch=8")
	unit := 1024.0 * 1024
	for _, c := range []struct {
		stack string
		want  float64
	}{{"", 79}, {"megatron-bridge-26.02", 74}} {
		pl := plan.Plan{TP: 1, PP: 2, DP: 8, CP: 1, MBS: 1, NumMicro: 8, Stages: []int{2, 0},
			Strategy: plan.Strategy{Software: plan.Software{Stack: c.stack}}}
		co := counterAt(m, pl, gb300(t), 1, 1024)
		lm := co.layerMemory()
		acts, _ := co.stageActivationsAt(0, &Stage{}, &lm, 1)
		if got := acts / unit; !near(got, c.want) {
			t.Errorf("%q: stage 0 keeps %g units, want %g", c.stack, got, c.want)
		}
	}
}

// TestExpertSavedInputs: an MoE block's expert GEMMs save their inputs
// as the recipe's column-wise copies (Transformer Engine's GroupedLinear).
// 1,024 tokens, top 2, capacity 1: 2,048 rows; hidden 512, expert FFN
// 256: FC1's input 2,048 x 512 and FC2's 2,048 x 256 elements, 1,572,864
// in all: one byte each under FP8 current scaling; MXFP8 1/32 more
// (+49,152 bytes), NVFP4 0.4375 less (-688,128).
func TestExpertSavedInputs(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256")
	at := func(recipe string) float64 {
		pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, MBS: 1, ETP: 1, Stages: []int{2},
			Strategy: plan.Strategy{FP8: recipe, Software: plan.Software{Stack: "megatron-bridge-26.02"}}}
		pl.Run.Capacity = 1
		co := counterAt(m, pl, gb300(t), 1, 1024)
		a, _, _, _ := co.moeActivationParts()
		return a
	}
	base := at(plan.FP8Current)
	for _, c := range []struct {
		recipe string
		want   float64
	}{{plan.FP8MX, 49152}, {plan.FP4NV, -688128}} {
		if got := at(c.recipe) - base; !near(got, c.want) {
			t.Errorf("%s: %g bytes against FP8 current scaling, want %g", c.recipe, got, c.want)
		}
	}
}

// gb300 is a pod of one GB300 NVL72 rack (Blackwell: block-scaled tensor
// cores; fused attention).
func gb300(t *testing.T) *plan.Pod {
	t.Helper()
	p, err := plan.PodOf("gb300-nvl72", 1)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}
