package memory

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// hybridExpertsShape is a small Nemotron-H with one block of experts
// (pattern ME*-, transformers 5.24.0's NemotronHConfig order): hidden
// 512, 8 heads of 64, ffn 2,048, squared ReLU, 16 Mamba-2 heads of 64
// (d_inner 1,024), state 64, 2 groups; 8 routed experts of 1,024, top 2,
// one shared expert of 1,024; 4,096 tokens.
const hybridExpertsShape = "llama:layers=4,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2,pattern=ME*-" +
	",ssm_heads=16,ssm_head_dim=64,ssm_state=64,ssm_groups=2,ssm_conv=4,ssm_chunk=128,experts=8,topk=2,expert_ffn=1024,shared=1"

// TestHybridExpertsStages: what each pipeline stage holds of the small
// hybrid with experts on 8 H100s at pp 2, ep 2 (tp 1): stage 0 the
// layers M and E, stage 1 * and -, by hand.
//   - Mamba-2 block: norm 512, in_proj 512 x 2,320 = 1,187,840, the
//     convolution 1,280 x 5 = 6,400, dt_bias, A_log, D 48, gated norm
//     1,024, out_proj 1,024 x 512 = 524,288: 1,720,112;
//   - block of experts: an expert 2 x 512 x 1,024 = 1,048,576; ep 2
//     leaves 4 local experts, 4,194,304; norm 512, router 8 x 512 =
//     4,096, the shared expert 1,048,576: 5,247,488;
//   - attention block: 4 x 512 x 512 + norm 512 = 1,049,088; MLP block:
//     2 x 512 x 2,048 + 512 = 2,097,664.
//
// Stage 0 holds 6,967,600 of its blocks (4,194,304 of experts) and the
// embedding, 1,000 x 512 = 512,000; stage 1 3,146,752 and no experts, and
// the output layer (512,000 and the final norm, 512). The E layer falls
// on stage 0 alone.
func TestHybridExpertsStages(t *testing.T) {
	m := mustSpec(t, hybridExpertsShape)
	pl, _ := hybridExpertsPlan(t, m, "tp=1,pp=2,dp=4,ep=2,mbs=1")
	lp := float64(transformer.LayerParams(m))
	for i, want := range []Stage{
		{Params: 6967600 + 512000, Experts: 4194304, Layers: 6967600},
		{Params: 3146752 + 512000 + 512, Experts: 0, Layers: 3146752},
	} {
		got := StageOf(&m, &pl, i, lp, nil)
		if got.Params != want.Params || got.Experts != want.Experts || got.Layers != want.Layers {
			t.Errorf("stage %d holds %g parameters (%g of experts, %g of blocks), want %g (%g, %g) by hand",
				i, got.Params, got.Experts, got.Layers, want.Params, want.Experts, want.Layers)
		}
	}
}

// TestHybridExpertsLayerMemory: what the small hybrid with experts'
// layers keep on one H100 (tp 1, ep 1, 4,096 tokens), in units of s b h
// (4,096 x 512 bytes). Its block of experts (its layer): its norm's
// input 2 and the MoE path's moeActivations, the router's FP32 scores 4
// x 8/512 = 0.0625, the experts' input 2, and over the 8,192 routed rows
// (4,096 x top 2, even load) FC1's input 2 x 2 = 4, FC1's output 2 x 2 x
// 1,024/512 = 8, FC2's input 8, FC2's output 4, and the shared expert's
// 3 x 2 x 1,024/512 = 12: 40.0625. Its other blocks (its dense layers):
// the mean of the Mamba-2 block's 26.3125, the attention block's 13 and
// the MLP block's 20 (TestHybridLayerMemory's). At pp 2 (stage 0 M and
// E, stage 1 * and -), stage 0 holds one layer of each, stage 1 two
// dense layers; a micro-batch's activations of their layers (no
// recomputation): stage 1's 2 x 59.3125/3 units, stage 0's 40.0625 +
// 59.3125/3 and the embedding's output and dropout mask, 3.
func TestHybridExpertsLayerMemory(t *testing.T) {
	c := oneGPU(t, mustSpec(t, hybridExpertsShape))
	unit := 4096.0 * 512
	lm := c.layerMemory()
	if got, want := lm.perLayer, 40.0625*unit; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("a block of experts keeps %g bytes, want %g", got, want)
	}
	if got, want := lm.perDense, (26.3125+13+20)/3*unit; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("another block keeps %g bytes, want %g", got, want)
	}
	m := mustSpec(t, hybridExpertsShape)
	pl, p := hybridExpertsPlan(t, m, "tp=1,pp=2,dp=4,mbs=1")
	for i, want := range [][2]int{{1, 0}, {2, 0}} {
		if d, r := pl.DenseOn(&m, i); d != want[0] || r != want[1] {
			t.Errorf("stage %d: %d layers but experts (%d recomputed), want %d (%d)", i, d, r, want[0], want[1])
		}
	}
	cs, sts := partsOf(m, pl, p)
	lm1 := cs[0].layerMemory()
	a1, _ := cs[0].stageActivationsAt(1, &sts[1], &lm1, 1)
	a0, _ := cs[0].stageActivationsAt(0, &sts[0], &lm1, 1)
	if want := 2 * (26.3125 + 13 + 20) / 3 * unit; math.Abs(a1/want-1) > 1e-12 {
		t.Errorf("stage 1 keeps %g bytes of its layers, want %g", a1, want)
	}
	if want := (40.0625 + (26.3125+13+20)/3 + 3) * unit; math.Abs(a0/want-1) > 1e-12 {
		t.Errorf("stage 0 keeps %g bytes of its layers a micro-batch, want %g", a0, want)
	}
}

// hybridExpertsPlan is plan text of m resolved on one DGX H100, and the
// pod.
func hybridExpertsPlan(t *testing.T, m transformer.Spec, text string) (plan.Plan, *plan.Pod) {
	t.Helper()
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy(text)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return pl, &p
}
