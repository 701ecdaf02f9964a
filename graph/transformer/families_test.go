package transformer

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestGemma3Counts: Gemma 3 1B (testdata/hf/gemma-3-1b.json) by hand.
// A block: queries 1,152 x 4 x 256 = 1,179,648, keys and values 2 x
// 1,152 x 256 = 589,824, output 1,024 x 1,152 = 1,179,648, four norms of
// 1,152 = 4,608, a GeGLU MLP of three 1,152 x 6,912 = 23,887,872:
// 26,841,600, x 26 = 697,881,600; the tied embedding 262,144 x 1,152 =
// 301,989,888 and the final norm 1,152: 999,872,640 (transformers v5.24
// counts 999,885,952 on the meta device: the 13,312 more are the query
// and key norms, 2 x 256 a layer, left out as Qwen3's are). Its 22 local
// layers (every one but each sixth) see 512 keys: at 4,096 tokens 512 -
// 512 x 511 / 8,192 = 480.0625 keys a query, the 4 global ones 2,048:
// 18,753.375 / 26 over the layers: what planner costs. The model
// FLOPs Megatron-LM reports (CausalFLOPs) count every layer's scores over
// the causal half, 2,048 keys, as its num_floating_point_operations
// does, window or not: a token's forward FLOPs a layer are the
// projections 2 x 1,152 x 1,536 + 2 x 1,024 x 1,152 = 5,898,240, the MLP
// 6 x 1,152 x 6,912 = 47,775,744, the scores 4 x 2,048 x 1,024.
func TestGemma3Counts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "gemma-3-1b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := LayerParams(m); got != 26_841_600 {
		t.Errorf("block: %d parameters, want 26,841,600", got)
	}
	if got := Params(m); got != 999_872_640 {
		t.Errorf("model: %d parameters, want 999,872,640", got)
	}
	if got := WindowLayers(m); got != 22 {
		t.Errorf("%d local layers, want 22", got)
	}
	keys := 18_753.375 / 26
	if got := CausalKeys(m); math.Abs(got-keys) > 1e-9 {
		t.Errorf("%v keys a query, want %v", got, keys)
	}
	m.Batch = 8
	tokens := 8 * 4096.0
	layer := 5_898_240 + 47_775_744 + 4*2048*1024.0
	want := 3 * tokens * (26*layer + 2*1152*262144)
	if got := CausalFLOPs(m); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("causal FLOPs %g, want %g", got, want)
	}
}

// TestNemotronCounts: Minitron 4B (testdata/hf/minitron-4b.json, the
// fields of Megatron-Bridge's tests/unit_tests/models/nemotron/
// test_nemotron_bridge.py) by hand. A block: queries and output 2 x
// 3,072 x 3,072 = 18,874,368, keys and values 2 x 3,072 x 1,024 =
// 6,291,456, the squared-ReLU MLP of two 3,072 x 9,216 = 56,623,104 (not
// three), two norms' scales 6,144: 81,795,072, x 32 = 2,617,442,304; the
// embedding and the untied output layer 2 x 256,000 x 3,072 =
// 1,572,864,000, the final norm 3,072: 4,190,309,376 (transformers v5.24
// counts 4,190,509,056: the 196,608 + 3,072 more are LayerNorm1P's
// shifts). A token's forward a layer: projections 2 x 25,165,824, MLP 2
// x 56,623,104, scores over the causal half 4 x 2,048 x 3,072; the
// logits 2 x 3,072 x 256,000.
func TestNemotronCounts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "minitron-4b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Act != "relu2" || m.SwiGLU() || m.Config.RotaryPercent != 0.5 || m.Config.NormEps != 1e-5 {
		t.Errorf("act %q (gated %v), rotary %v, eps %v; want relu2 without a gate, 0.5, 1e-5", m.Act, m.SwiGLU(), m.Config.RotaryPercent, m.Config.NormEps)
	}
	if got := LayerParams(m); got != 81_795_072 {
		t.Errorf("block: %d parameters, want 81,795,072", got)
	}
	if got := Params(m); got != 4_190_309_376 {
		t.Errorf("model: %d parameters, want 4,190,309,376", got)
	}
	layer := 2*25_165_824 + 2*56_623_104 + 4*2048*3072.0
	want := 3 * 4096 * (32*layer + 2*3072*256000)
	if got := CausalFLOPs(m); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("causal FLOPs %g, want %g", got, want)
	}
}

// TestGLMCounts: GLM-4.5-Air (testdata/hf/glm-4.5-air.json) by hand.
// Attention: queries and output 2 x 4,096 x 12,288 = 100,663,296, keys
// and values 2 x 4,096 x 1,024 = 8,388,608, two norms 8,192:
// 109,060,096. An MoE layer: the router 4,096 x 128 = 524,288, 128
// routed and 1 shared expert of 3 x 4,096 x 1,408 = 17,301,504:
// 2,341,478,400, x 45 = 105,366,528,000; the first_k_dense_replace = 1
// dense layer, 109,060,096 + 3 x 4,096 x 10,944 = 243,539,968; the
// embedding and the output layer 2 x 151,552 x 4,096 and the final norm:
// 106,851,586,048 (transformers v5.24 counts 659,456 more: the query,
// key and value biases, 14,336 a layer). A token's forward through an
// MoE layer: projections 2 x 109,051,904, 9 experts 9 x 2 x 17,301,504,
// scores over the causal half 4 x 2,048 x 12,288; the MTP module a 2h to
// h projection 4 x 4,096^2, an MoE layer and the logits.
func TestGLMCounts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "glm-4.5-air.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if m.Experts != 128 || m.SharedExperts != 1 || m.DenseLayers != 1 || m.MTP != 1 || m.TopK != 8 ||
		c.RouterScore != "sigmoid" || !c.ExpertBias || !c.QKVBias || c.QKNorm || c.RotaryPercent != 0.5 || c.RouterScale != 1 {
		t.Errorf("read %s %+v", m, c)
	}
	if got := MoELayerParams(m); got != 2_341_478_400 {
		t.Errorf("MoE layer: %d parameters, want 2,341,478,400", got)
	}
	if got := Params(m); got != 106_851_586_048 {
		t.Errorf("model: %d parameters, want 106,851,586,048", got)
	}
	proj, scores := 2*109_051_904.0, 4*2048*12288.0
	moe := proj + 9*2*17_301_504 + scores
	dense := proj + 6*4096*10944 + scores
	logits := 2 * 4096 * 151552.0
	want := 3 * 4096 * (45*moe + dense + logits + 4*4096*4096 + moe + logits)
	if got := CausalFLOPs(m); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("causal FLOPs %g, want %g", got, want)
	}
}

// TestLlama4Counts: Llama 4 Scout's language model
// (testdata/hf/llama4-scout.json) by hand. A layer: queries and output 2
// x 5,120 x 5,120 = 52,428,800, keys and values 2 x 5,120 x 1,024 =
// 10,485,760, two norms 10,240, the router 5,120 x 16 = 81,920, 16
// routed experts and the shared one of 3 x 5,120 x 8,192 = 125,829,120:
// 2,202,101,760, x 48 = 105,700,884,480; the embedding and the untied
// output layer 2 x 202,048 x 5,120 = 2,068,971,520 and the final norm:
// 107,769,861,120, transformers v5.24's count of Llama4ForCausalLM on the
// meta device exactly. Active: the layer without 15 experts, 314,664,960,
// x 48 + 2,068,976,640 = 17,172,894,720. Chunks of 8,192 in 36 layers: at
// 16,384 tokens two whole chunks, a query's place in its chunk 8,193 / 2
// = 4,096.5 on average, the 12 global layers 8,192: 245,778 / 48; at
// 10,000 tokens a chunk and 1,808 tokens, (8,192 x 8,193 + 1,808 x 1,809)
// / 20,000 = 3,519.3864; at 4,096 no chunk is cut: the causal half.
func TestLlama4Counts(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "llama4-scout.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Experts != 16 || m.TopK != 1 || m.SharedExperts != 1 || m.ExpertFFN != 8192 || m.FFN != 16384 || m.DenseLayers != 0 ||
		m.Chunk != 8192 || m.GlobalEvery != 4 || m.Window != 0 || m.Config.RouterScore != "sigmoid" {
		t.Errorf("read %s", m)
	}
	if got := MoELayerParams(m); got != 2_202_101_760 {
		t.Errorf("layer: %d parameters, want 2,202,101,760", got)
	}
	if got := Params(m); got != 107_769_861_120 {
		t.Errorf("model: %d parameters, want 107,769,861,120", got)
	}
	if got := ActiveParams(m); got != 17_172_894_720 {
		t.Errorf("active: %d parameters, want 17,172,894,720", got)
	}
	for _, c := range []struct {
		seq  int
		keys float64
	}{{16384, 245_778.0 / 48}, {10000, (36*3519.3864 + 12*5000) / 48}, {4096, 2048}} {
		m.Seq = c.seq
		if got := CausalKeys(m); math.Abs(got-c.keys) > 1e-9 {
			t.Errorf("seq %d: %v keys a query, want %v", c.seq, got, c.keys)
		}
	}
}

// TestGlobalEvery: the window in every layer but every N-th, by hand,
// and the layer_types that give it, the other way round or neither.
func TestGlobalEvery(t *testing.T) {
	for _, c := range []struct {
		sliding       []int
		layers        int
		every, global int
		ok            bool
	}{
		{[]int{0, 1, 2, 3, 4, 6, 7}, 8, 0, 6, true},            // Gemma 3's five to one, cut at 8
		{[]int{0, 1, 2, 3, 4, 6, 7, 8, 9, 10}, 12, 0, 6, true}, // full at 5 and 11
		{[]int{0, 1, 2, 4, 5, 6}, 8, 0, 4, true},               // three of every four
		{[]int{0, 2, 4}, 6, 2, 0, true},                        // GPT-OSS's, read as before
		{[]int{0, 1, 2, 3}, 4, 0, 0, true},                     // every layer
		{[]int{0, 1, 2, 3, 5}, 6, 0, 5, true},                  // full at 4 (the 5th), no 10th
		{[]int{0, 1, 3, 4, 5}, 6, 0, 0, false},                 // full at 2 but not at 5
		{[]int{0, 1, 2, 4, 5, 6, 7}, 8, 0, 0, false},           // full at 3 but not at 7
		{[]int{1, 2, 3}, 4, 0, 0, false},                       // full at 0: every layer would be
	} {
		every, global, ok := windowPattern(c.sliding, c.layers)
		if every != c.every || global != c.global || ok != c.ok {
			t.Errorf("%v of %d: every %d global %d ok %v, want %d %d %v", c.sliding, c.layers, every, global, ok, c.every, c.global, c.ok)
		}
	}
	m, err := Parse("llama:layers=62,hidden=256,heads=4,seq=4096,vocab=1000,batch=1,window=1024,global_every=6")
	if err != nil {
		t.Fatal(err)
	}
	// 62 layers: 10 global (6, 12, ..., 60 counted from 1), 52 local of
	// 1,024 - 1,024 x 1,023 / 8,192 = 896.125 keys.
	if got, want := CausalKeys(m), (52*896.125+10*2048)/62; WindowLayers(m) != 52 || math.Abs(got-want) > 1e-9 {
		t.Errorf("global_every=6 of 62: %d local layers, %v keys; want 52, %v", WindowLayers(m), got, want)
	}
	if back, err := Parse(m.String()); err != nil || back != m {
		t.Errorf("round trip %q: %+v, %v", m.String(), back, err)
	}
	for _, c := range []struct{ text, want string }{
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,global_every=2", "global_every=2 without window"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,window=8,global_every=2,window_every=2", "one way or the other"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,window=8,global_every=1", "global_every=1 leaves no layer"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,norms=3", "norms=3"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,norms=4,experts=4,topk=1", "norms=4 with experts"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,window=8,chunk=16", "chunk=16 and window=8"},
		{"llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,act=swish", `act="swish"`},
		{"gpt:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,act=relu2", "act=relu2 on a gpt"},
	} {
		if _, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestFamilyRefusals: a Gemma 3 or Nemotron config.json placer cannot
// cost, and the families it does not read yet, in one line.
func TestFamilyRefusals(t *testing.T) {
	gemma := `{"model_type": "gemma3_text", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "head_dim": 16`
	for _, c := range []struct{ name, json, want string }{
		{"gemma softcapping", gemma + `, "attn_logit_softcapping": 50.0}`, `field "attn_logit_softcapping" (50.0): placer does not model it`},
		{"gemma activation", gemma + `, "hidden_activation": "silu"}`, `field "hidden_activation" ("silu"): placer models Gemma's gated GeLU`},
		{"gemma irregular layers", gemma + `, "sliding_window": 8, "layer_types": ["full_attention", "sliding_attention", "full_attention", "sliding_attention"]}`,
			`field "layer_types" (["full_attention","sliding_attention",`},
		{"gemma wrapper without text", `{"model_type": "gemma3", "vision_config": {}}`, `field "text_config" missing`},
		{"gemma wrapper of another", `{"model_type": "gemma3", "text_config": {"model_type": "llama"}}`, `field "text_config" ({"model_type":"llama"}): model_type "llama": want gemma3_text`},
		{"gemma wrapper's unknown field", `{"model_type": "gemma3", "audio_config": {"a": 1}, "text_config": {}}`, `field "audio_config"`},
		{"gemma 2", `{"model_type": "gemma2"}`, "placer reads Gemma 3 (gemma3, gemma3_text)"},
		{"llama 4 maverick", `{"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "num_local_experts": 8, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2}`,
			`field "interleave_moe_layer_step" (2): experts in every 2-th layer, dense layers between: placer does not model it yet`},
		{"llama 4 some moe layers", `{"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "num_local_experts": 8, "num_experts_per_tok": 1, "moe_layers": [1, 3]}`,
			`field "moe_layers" ([1,3]): experts in some of the 4 layers only`},
		{"llama 4 irregular chunks", `{"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "num_local_experts": 8, "num_experts_per_tok": 1, "no_rope_layers": [0, 1, 0, 1]}`,
			`field "no_rope_layers" ([0,1,0,1]): chunked layers neither`},
		{"llama 4 wrapper without text", `{"model_type": "llama4", "vision_config": {}}`, `field "text_config" missing (a llama4 config.json`},
		{"nemotron-h", `{"model_type": "nemotron_h"}`, `field "hybrid_override_pattern" missing (a nemotron_h config.json has it, or transformers 5's layers_block_type)`},
		{"jamba", `{"model_type": "jamba"}`, "a later step"},
		{"nemotron gated", `{"model_type": "nemotron", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "hidden_act": "silu"}`,
			`field "hidden_act" ("silu"): placer models Nemotron's squared ReLU`},
		{"nemotron kv_channels", `{"model_type": "nemotron", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "kv_channels": 32}`,
			`field "kv_channels" (32): a head width head_dim does not give`},
		{"nemotron mlp bias", `{"model_type": "nemotron", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "mlp_bias": true}`,
			`field "mlp_bias" (true): placer does not model it`},
	} {
		_, err := FromHFConfig([]byte(c.json), "m/config.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m/config.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line from m/config.json with %q", c.name, err, c.want)
		}
	}
}
