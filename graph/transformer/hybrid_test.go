package transformer

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestMambaCounts: a small Mamba-2 layer by hand. Hidden 64, 4 heads of
// 16 (d_inner 64), state 8, 2 groups, 4 taps, chunks of 16. in_proj's
// width: z and x 2 x 64, B and C 2 x 2 x 8 = 32, dt 4: 164. Parameters:
// the norm 64, in_proj 64 x 164 = 10,496, the convolution over x, B, C
// (64 + 32 = 96 channels) of 4 taps and a bias, 480, dt_bias, A_log, D
// 3 x 4 = 12, the gated norm 64, out_proj 64 x 64 = 4,096: 15,212. SSD
// a token: C B^T 2 x 16 x 8 x 2 = 512, its product with x 2 x 16 x 16 x
// 4 = 2,048, the chunk states and their outputs 4 x 8 x 16 x 4 = 2,048:
// 4,608. Megatron-LM's count: in_proj 2 x 64 x 164 = 20,992, scan 7 x 64
// x 8 = 3,584, out_proj 2 x 64 x 64 = 8,192: 32,768.
func TestMambaCounts(t *testing.T) {
	m := Spec{Family: "llama", Layers: 1, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 128, Seq: 64, Vocab: 100, Batch: 1,
		Pattern: "M", SSM: SSM{Heads: 4, HeadDim: 16, State: 8, Groups: 2, Conv: 4, Chunk: 16}}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"in_proj width", float64(m.SSM.InProj()), 164},
		{"parameters", float64(m.MambaParams()), 15_212},
		{"SSD FLOPs a token", m.SSDFLOPs(), 4_608},
		{"Megatron-LM's FLOPs a token", m.mambaModelFLOPs(), 32_768},
		// One layer of 64 tokens, batch 1: 3 x 64 x (32,768 + the logits
		// 2 x 64 x 100).
		{"causal FLOPs", CausalFLOPs(m), 3 * 64 * (32_768 + 12_800)},
		{"model parameters", float64(Params(m)), 15_212 + 2*6_400 + 64},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestNemotronHCounts: Nemotron-H 8B (testdata/hf/nemotron-h-8b.json:
// the config dict of Megatron-Bridge's tests/unit_tests/models/nemotronh/
// test_nemotron_h_bridge.py, nvidia/Nemotron-H-8B-Base-8K's fields) by
// hand. 24 Mamba-2, 4 attention, 24 MLP layers. A Mamba-2 block: the norm
// 4,096, in_proj 4,096 x (2 x 8,192 + 2 x 8 x 128 + 128 = 18,560) =
// 76,021,760, the convolution (8,192 + 2,048) x 5 = 51,200, 3 x 128 =
// 384, the gated norm 8,192, out_proj 8,192 x 4,096 = 33,554,432:
// 109,640,064. An attention block: queries and output 2 x 4,096 x 4,096,
// keys and values 2 x 4,096 x 1,024, one norm: 41,947,136. An MLP block:
// 2 x 4,096 x 21,504 + 4,096 = 176,164,864. The layers 7,027,106,816,
// the embedding and output layer 2 x 131,072 x 4,096 = 1,073,741,824,
// the final norm 4,096: 8,100,852,736 (transformers v5.24's
// NemotronHForCausalLM on the meta device counts the same, as it does
// Nano-9B-v2's 8,888,227,328, the 56B's 56,324,350,464 and the 47B's
// 46,791,554,816). A token's forward (Megatron-LM's count): a Mamba-2
// layer 2 x 4,096 x 18,560 + 7 x 8,192 x 128 + 2 x 8,192 x 4,096 =
// 226,492,416; an attention layer's projections 2 x 4,096 x 6,144 + 2 x
// 4,096 x 4,096 = 83,886,080 and its scores over the causal half 4 x
// 2,048 x 4,096; an MLP 4 x 4,096 x 21,504; the logits 2 x 4,096 x
// 131,072.
func TestNemotronHCounts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "nemotron-h-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if nm, na, nf := m.Kinds(); nm != 24 || na != 4 || nf != 24 {
		t.Errorf("kinds %d M, %d *, %d -; want 24, 4, 24", nm, na, nf)
	}
	if m.Act != "relu2" || m.SwiGLU() || m.Tied {
		t.Errorf("act %q gated %v tied %v: want relu2, no gate, untied", m.Act, m.SwiGLU(), m.Tied)
	}
	if got := m.MambaParams(); got != 109_640_064 {
		t.Errorf("Mamba-2 block: %d parameters, want 109,640,064", got)
	}
	if got := Params(m); got != 8_100_852_736 {
		t.Errorf("model: %d parameters, want 8,100,852,736", got)
	}
	layer := 24*226_492_416 + 4*(83_886_080+4*2048*4096.0) + 24*4*4096*21504.0
	want := 3 * 4096 * (layer + 2*4096*131072)
	if got := CausalFLOPs(m); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("causal FLOPs %g, want %g", got, want)
	}
	nano, err := ReadHFConfig(filepath.Join("testdata", "hf", "nemotron-nano-9b-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Nano-9B-v2 by hand: a Mamba-2 block 4,480 + 4,480 x 22,656 +
	// 12,288 x 5 + 384 + 10,240 + 10,240 x 4,480 = 147,450,624 (x 27);
	// attention 2 x 4,480 x 5,120 + 2 x 4,480 x 1,024 + 4,480 =
	// 55,054,720 (x 4); an MLP 2 x 4,480 x 15,680 + 4,480 = 140,497,280
	// (x 25); 2 x 131,072 x 4,480 + 4,480 beside them.
	if got := Params(nano); got != 8_888_227_328 {
		t.Errorf("Nano-9B-v2: %d parameters, want 8,888,227,328", got)
	}
}

// TestHybridRefusals: a hybrid's bad config.json or workload keys are
// one line naming the field or key.
func TestHybridRefusals(t *testing.T) {
	base := `{"model_type": "nemotron_h", "num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
		"intermediate_size": 96, "vocab_size": 100, "mamba_num_heads": 4, "mamba_head_dim": 16, "ssm_state_size": 8, "n_groups": 2,
		"conv_kernel": 4, "chunk_size": 16`
	for _, c := range []struct{ name, json, want string }{
		{"experts without their fields", base + `, "hybrid_override_pattern": "ME*"}`, `field "n_routed_experts" missing`},
		{"length", base + `, "hybrid_override_pattern": "M*"}`, `field "hybrid_override_pattern" ("M*"): 2 layers for num_hidden_layers 3`},
		{"kind", base + `, "hybrid_override_pattern": "M*G"}`, `layer 2 is 'G'`},
		{"no pattern", base + `}`, `field "hybrid_override_pattern" missing`},
		{"mtp", base + `, "hybrid_override_pattern": "M*-", "num_nextn_predict_layers": 1}`, `field "num_nextn_predict_layers" (1): placer does not model it`},
		{"bias", base + `, "hybrid_override_pattern": "M*-", "mamba_proj_bias": true}`, `field "mamba_proj_bias" (true): biases`},
		{"gated mlp", base + `, "hybrid_override_pattern": "M*-", "mlp_hidden_act": "silu"}`, `field "mlp_hidden_act" ("silu")`},
		{"groups", strings.Replace(base, `"n_groups": 2`, `"n_groups": 3`, 1) + `, "hybrid_override_pattern": "M*-"}`, `ssm_groups=3 does not divide ssm_heads=4`},
	} {
		_, err := FromHFConfig([]byte(c.json), "m/config.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m/config.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line from m/config.json with %q", c.name, err, c.want)
		}
	}
	shape := "llama:layers=3,hidden=64,heads=4,seq=64,vocab=100,batch=1,act=relu2"
	for _, c := range []struct{ text, want string }{
		{shape + ",pattern=M*-", "needs ssm_heads"},
		{shape + ",pattern=M*", "pattern=M* has 2 layers, not layers=3"},
		{shape + ",ssm_heads=4", "without pattern"},
		{shape + ",pattern=M*-,ssm_heads=4,ssm_head_dim=16,ssm_state=8,ssm_groups=2,ssm_conv=4,ssm_chunk=16,experts=4,topk=1", "no layer of experts (E)"},
		{shape + ",pattern=ME-,ssm_heads=4,ssm_head_dim=16,ssm_state=8,ssm_groups=2,ssm_conv=4,ssm_chunk=16", "layers of experts (E) without experts"},
		{shape + ",pattern=M*-,ssm_heads=4,ssm_head_dim=16,ssm_state=8,ssm_groups=2,ssm_conv=4,ssm_chunk=16,mtp=1", "single-mixer blocks only"},
	} {
		if _, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.text, err, c.want)
		}
	}
}

// TestQwen3NextCounts: Qwen3-Next-80B-A3B (testdata/hf/qwen3-next-80b-a3b.json:
// the config dict of Megatron-Bridge's tests/unit_tests/models/qwen/
// test_qwen3_next_bridge.py, Qwen/Qwen3-Next-80B-A3B's fields) by hand.
// 36 Gated DeltaNet layers (every fourth of 48 full attention). A Gated
// DeltaNet with the block's two norms: in_proj_qkvz 2,048 x (2 x 2,048 +
// 2 x 4,096) = 25,165,824, in_proj_ba 2,048 x 64 = 131,072, the
// convolution 8,192 x 4 = 32,768, dt_bias and A_log 64, the gated norm
// 128, out_proj 4,096 x 2,048 = 8,388,608, norms 4,096: 33,722,560. A
// gated attention layer: q_proj 2,048 x 16 x 256 x 2 = 16,777,216, keys
// and values 2 x 2,048 x 512 = 2,097,152, o_proj 8,388,608, norms 4,096:
// 27,267,072. Experts: the router 2,048 x 512 = 1,048,576, 512 routed and
// 1 shared SwiGLU of 3 x 2,048 x 512 = 3,145,728: 1,614,807,040 a layer.
// With the embedding and output layer 2 x 151,936 x 2,048 and the final
// norm: 79,674,286,848 (transformers v5.24 on the meta device counts
// 79,674,391,296: the 98,304 + 6,144 more are the shared experts' gates,
// 2,048 x 1 a layer, left out as Qwen2-MoE's, and the query and key
// norms, 2 x 256 an attention layer, as Qwen3's). Active: 10 of the 512
// routed, 502 x 3,145,728 x 48 fewer: 3,874,824,960; in the layers
// 3,252,493,056, the card's "3B activated" to its one figure. A token's
// forward: a Gated DeltaNet's projections 2 x 2,048 x 12,352 + 2 x 4,096
// x 2,048 and its kernel 32 x (2 x 64 x (3 x 128 + 2 x 128) + 6 x 128 x
// 128) = 5,767,168; a gated attention layer's projections 2 x 2,048 x
// 5,120 + 2 x 4,096 x 2,048, its gate 2 x 2,048 x 4,096 and its scores
// over the causal half 4 x 2,048 x 4,096; the experts 11 x 6 x 2,048 x
// 512; the logits 2 x 2,048 x 151,936.
func TestQwen3NextCounts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "qwen3-next-80b-a3b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ng, na := m.MixerKinds(); ng != 36 || na != 12 || m.Mixers[3] != MixerAttention || m.Mixers[0] != MixerGDN {
		t.Errorf("mixers %s: %d Gated DeltaNet, %d attention; want GGG* x 12", m.Mixers, ng, na)
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"Gated DeltaNet", m.GDNParams(), 33_722_560},
		{"gated attention", m.GatedAttentionParams(), 27_267_072},
		{"model", Params(m), 79_674_286_848},
		{"active", ActiveParams(m), 3_874_824_960},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d parameters, want %d", c.name, c.got, c.want)
		}
	}
	if got := float64(ActiveParams(m)-EmbeddingParams(m)-OutputParams(m)) / 1e9; math.Round(got) != 3 {
		t.Errorf("active in the layers %.2fB, the card's 3B", got)
	}
	if got := m.GDNKernelFLOPs(); got != 5_767_168 {
		t.Errorf("Gated DeltaNet kernel: %v FLOPs a token, want 5,767,168", got)
	}
	gdn := 2*2048*12352 + 5_767_168 + 2*4096*2048.0
	attn := 2*2048*5120 + 2*4096*2048 + 2*2048*4096 + 4*2048*4096.0
	layer := 36*gdn + 12*attn + 48*11*6*2048*512.0
	want := 3 * 4096 * (layer + 2*2048*151936)
	if got := CausalFLOPs(m); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("causal FLOPs %g, want %g", got, want)
	}
	shape := "llama:layers=4,hidden=64,heads=4,seq=64,vocab=100,batch=1"
	for _, c := range []struct{ text, want string }{
		{shape + ",mixers=GGG*,gdn_k_heads=2,gdn_v_heads=4,gdn_k_dim=16,gdn_v_dim=16,gdn_conv=4", "mixers without experts"},
		{shape + ",experts=4,topk=1,mixers=GG*,gdn_k_heads=2,gdn_v_heads=4,gdn_k_dim=16,gdn_v_dim=16,gdn_conv=4", "mixers=GG* has 3 layers"},
		{shape + ",experts=4,topk=1,mixers=GGM*,gdn_k_heads=2,gdn_v_heads=4,gdn_k_dim=16,gdn_v_dim=16,gdn_conv=4", "placer models G (Gated DeltaNet) and *"},
		{shape + ",experts=4,topk=1,mixers=GGG*,gdn_k_heads=3,gdn_v_heads=4,gdn_k_dim=16,gdn_v_dim=16,gdn_conv=4", "gdn_k_heads=3 does not divide"},
		{shape + ",experts=4,topk=1,mixers=GGG*", "need gdn_k_heads"},
		{shape + ",gdn_conv=4", "without mixers"},
	} {
		if _, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.text, err, c.want)
		}
	}
	base := `{"model_type": "qwen3_next", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
		"intermediate_size": 96, "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
		"linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4`
	for _, c := range []struct{ name, json, want string }{
		{"layer type", base + `, "layer_types": ["linear_attention", "sliding_attention", "linear_attention", "full_attention"]}`, `layer 1 is "sliding_attention"`},
		{"layer count", base + `, "layer_types": ["full_attention"]}`, `not a list of the 4 layers' mixers`},
		{"no gdn width", strings.Replace(base, `"linear_key_head_dim": 16, `, "", 1) + `}`, `field "linear_key_head_dim" missing`},
		{"dense layers", base + `, "mlp_only_layers": [0]}`, "mixers without experts in every layer"},
	} {
		_, err := FromHFConfig([]byte(c.json), "q/config.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "q/config.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line from q/config.json with %q", c.name, err, c.want)
		}
	}
	small, err := FromHFConfig([]byte(base+`, "full_attention_interval": 2}`), "q/config.json")
	if err != nil || small.Mixers != "G*G*" {
		t.Errorf("full_attention_interval 2: mixers %q, %v; want G*G*", small.Mixers, err)
	}
}
