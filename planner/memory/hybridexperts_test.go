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
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=1,pp=2,dp=4,ep=2,mbs=1")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	lp := float64(transformer.LayerParams(m))
	for i, want := range []Stage{
		{Params: 6967600 + 512000, Experts: 4194304, Layers: 6967600},
		{Params: 3146752 + 512000 + 512, Experts: 0, Layers: 3146752},
	} {
		got := StageOf(&m, &pl, i, lp)
		if got.Params != want.Params || got.Experts != want.Experts || got.Layers != want.Layers {
			t.Errorf("stage %d holds %g parameters (%g of experts, %g of blocks), want %g (%g, %g) by hand",
				i, got.Params, got.Experts, got.Layers, want.Params, want.Experts, want.Layers)
		}
	}
}

// TestHybridExpertsLayerMemory: the small hybrid with experts' layer
// keeps the mean of its four blocks' activations on one H100 (tp 1, ep
// 1, 4,096 tokens), in units of s b h (4,096 x 512 bytes): the Mamba-2
// block's 26.3125, the attention block's 13, the MLP block's 20
// (TestHybridLayerMemory's), and the block of experts': its norm's
// input 2 and the MoE path's moeActivations, the router's FP32 scores
// 4 x 8/512 = 0.0625, the experts' input 2, and over the 8,192 routed
// rows (4,096 x top 2, even load) FC1's input 2 x 2 = 4, FC1's output 2
// x 2 x 1,024/512 = 8, FC2's input 8, FC2's output 4, and the shared
// expert's 3 x 2 x 1,024/512 = 12: 40.0625.
func TestHybridExpertsLayerMemory(t *testing.T) {
	c := oneGPU(t, mustSpec(t, hybridExpertsShape))
	unit := 4096.0 * 512
	if got, want := c.layerMemory().perLayer, (26.3125+40.0625+13+20)/4*unit; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("a layer keeps %g bytes, want %g (%g units)", got, want, want/unit)
	}
}
