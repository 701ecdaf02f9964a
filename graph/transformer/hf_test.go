package transformer

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHFConfigs: each published config.json (testdata/hf, the fields of
// the file on the Hugging Face hub) gives its model card's parameter
// count within 2%, and where a preset has the model, exactly the
// preset's Spec; what it reads writes back through String as itself.
func TestHFConfigs(t *testing.T) {
	for _, c := range []struct {
		file                   string
		preset                 string
		total, active          float64 // billions, the model card's (active 0: dense, or not published comparably)
		activeLayers           float64 // billions active in the layers, the embedding and output layer left out (GLM's count)
		window, wevery, global int
		chunk                  int
	}{
		{file: "llama3-8b.json", preset: "llama3-8b", total: 8.03},
		{file: "llama3.1-70b.json", preset: "llama3-70b", total: 70.6},
		{file: "llama3.1-405b.json", preset: "llama3.1-405b", total: 405.85},
		{file: "qwen2-7b.json", total: 7.62},
		{file: "qwen3-8b.json", total: 8.2},
		{file: "mistral-7b-v0.1.json", total: 7.24, window: 4096},
		{file: "mixtral-8x7b.json", preset: "mixtral-8x7b", total: 46.7, active: 12.9},
		{file: "qwen3-30b-a3b.json", preset: "qwen3-30b-a3b", total: 30.5, active: 3.3},
		{file: "qwen3-235b-a22b.json", preset: "qwen3-235b-a22b", total: 235, active: 22},
		{file: "deepseek-v3.json", preset: "deepseek-v3", total: 671, active: 37},
		{file: "gpt-oss-120b.json", preset: "gpt-oss-120b", total: 116.8, window: 128, wevery: 2},
		{file: "deepseek-v2.json", total: 236, active: 21},
		{file: "qwen1.5-moe-a2.7b.json", total: 14.3, active: 2.7},
		// google/gemma-3-1b-pt's model card: 1B; Gemma 3's report (arXiv
		// 2503.19786, table 1): 302M embedding + 698M non-embedding.
		{file: "gemma-3-1b.json", total: 1.0, window: 512, global: 6},
		// The 12B and 27B language models (the report's table 1: 1,012M +
		// 10,759M and 1,416M + 25,600M; the cards' 12B and 27B add the
		// 417M vision encoder placer leaves out).
		{file: "gemma-3-4b.json", total: 3.884, window: 1024, global: 6}, // 675M + 3,209M
		{file: "gemma-3-12b.json", total: 11.771, window: 1024, global: 6},
		{file: "gemma-3-27b.json", total: 27.016, window: 1024, global: 6},
		// Nemotron-4 15B (arXiv 2402.16819, section 2 and table 1: 3.2B
		// embedding and 12.5B non-embedding parameters), its table's shape
		// in transformers' NemotronConfig fields (no config.json of it is
		// published on the hub; transformers v5.24's NemotronConfig
		// defaults are the same shape).
		{file: "nemotron-4-15b.json", total: 15.7},
		// zai-org/GLM-4.5 and GLM-4.5-Air's model cards (and arXiv
		// 2508.06471, table 1): 355B total, 32B active; 106B, 12B. Their
		// active counts leave the embedding and the output layer out
		// (with them: 33.6B and 13.4B), their totals the MTP layer.
		{file: "glm-4.5.json", total: 355, activeLayers: 32},
		{file: "glm-4.5-air.json", total: 106, activeLayers: 12},
		// meta-llama/Llama-4-Scout-17B-16E's model card: 109B total, 17B
		// active; the language model read (107.77B), its vision encoder
		// and projector left out. Chunks of 8,192 tokens in all but every
		// fourth layer.
		{file: "llama4-scout.json", total: 109, active: 17, global: 4, chunk: 8192},
		// Hybrids (hybrid_test.go counts them by hand). nvidia/
		// Nemotron-H-8B-Base-8K's card and NVIDIA ADLR's Nemotron-H page
		// (research.nvidia.com/labs/adlr/nemotronh): 8B, 47B, 56B;
		// nvidia/NVIDIA-Nemotron-Nano-9B-v2's card: 9B.
		{file: "nemotron-h-8b.json", total: 8},
		{file: "nemotron-h-47b.json", total: 47},
		{file: "nemotron-h-56b.json", total: 56},
		{file: "nemotron-nano-9b-v2.json", total: 9},
		// Qwen/Qwen3-Next-80B-A3B's card: 80B total (3B active: hybrid_test.go).
		{file: "qwen3-next-80b-a3b.json", total: 80},
	} {
		path := filepath.Join("testdata", "hf", c.file)
		m, err := ReadHFConfig(path)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if got := float64(Params(m)) / 1e9; math.Abs(got/c.total-1) > 0.02 {
			t.Errorf("%s: %.2fB parameters, the model card's %.2fB", c.file, got, c.total)
		}
		if got := float64(ActiveParams(m)) / 1e9; c.active > 0 && math.Abs(got/c.active-1) > 0.02 {
			t.Errorf("%s: %.2fB active, the model card's %.1fB", c.file, got, c.active)
		}
		if got := float64(ActiveParams(m)-EmbeddingParams(m)-OutputParams(m)) / 1e9; c.activeLayers > 0 && math.Abs(got/c.activeLayers-1) > 0.02 {
			t.Errorf("%s: %.2fB active in the layers, the model card's %.1fB", c.file, got, c.activeLayers)
		}
		if c.preset != "" {
			if p, ok := Preset(c.preset); !ok || m.Shape() != p.Shape() {
				t.Errorf("%s: %+v, the preset %s is %+v", c.file, m, c.preset, p)
			}
		}
		if m.Chunk != c.chunk {
			t.Errorf("%s: chunk %d, want %d", c.file, m.Chunk, c.chunk)
		}
		if m.Window != c.window || m.WindowEvery != c.wevery || m.GlobalEvery != c.global {
			t.Errorf("%s: window %d every %d global every %d, want %d every %d global every %d", c.file, m.Window, m.WindowEvery, m.GlobalEvery, c.window, c.wevery, c.global)
		}
		if back, err := Parse(m.String()); err != nil || back != m.Shape() {
			t.Errorf("%s: %q reads back as %+v, %v", c.file, m.String(), back, err)
		}
	}
}

// TestHFShapes: the fields of the families' MoE and attention read into
// the Spec's by hand on small configs.
func TestHFShapes(t *testing.T) {
	base := `"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100`
	for _, c := range []struct {
		name, json string
		want       Spec
	}{
		{"tied, head_dim", `{"model_type": "qwen3", ` + base + `, "head_dim": 32, "num_key_value_heads": 2, "tie_word_embeddings": true}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 2, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1, Tied: true, Head: 32}},
		{"head_dim of hidden/heads", `{"model_type": "llama", ` + base + `, "head_dim": 16}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1}},
		{"qwen window in every layer", `{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "sliding_window": 512, "max_window_layers": 0}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1, Window: 512}},
		{"qwen window in no layer", `{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "sliding_window": 512, "max_window_layers": 4}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1}},
		{"layer_types: every layer full", `{"model_type": "qwen3", ` + base + `, "sliding_window": null, "use_sliding_window": false, "max_window_layers": 4, "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"]}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1}},
		{"gpt-oss default layer_types", `{"model_type": "gpt_oss", ` + base + `, "num_local_experts": 4, "experts_per_token": 2, "sliding_window": 8}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1,
				Experts: 4, TopK: 2, ExpertFFN: 96, Window: 8, WindowEvery: 2}},
		{"qwen3-moe dense layers first", `{"model_type": "qwen3_moe", ` + base + `, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 24, "mlp_only_layers": [1, 0], "decoder_sparse_step": 1}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1,
				Experts: 8, TopK: 2, ExpertFFN: 24, DenseLayers: 2}},
		{"qwen2-moe shared expert", `{"model_type": "qwen2_moe", ` + base + `, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 24, "shared_expert_intermediate_size": 72}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1,
				Experts: 8, TopK: 2, ExpertFFN: 24, SharedExperts: 3}},
		{"deepseek without q_lora", `{"model_type": "deepseek_v2", ` + base + `, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 24, "n_shared_experts": 2, "first_k_dense_replace": 1, "q_lora_rank": null, "kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}`,
			Spec{Family: "llama", Layers: 4, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 96, Seq: 4096, Vocab: 100, Batch: 1,
				Experts: 8, TopK: 2, ExpertFFN: 24, SharedExperts: 2, DenseLayers: 1, KVLoRA: 16, RopeDim: 8, Head: 16}},
	} {
		m, err := FromHFConfig([]byte(c.json), "x/config.json")
		if err != nil || m.Shape() != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, m, err, c.want)
		}
	}
}

// TestHFRefusals: what placer cannot read is one line naming the file
// and the field.
func TestHFRefusals(t *testing.T) {
	llama, err := os.ReadFile(filepath.Join("testdata", "hf", "llama3-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	// edit is a config.json of family typ (from file) with fields set
	// (a nil value deletes the field).
	edit := func(file string, set map[string]any) string {
		data := llama
		if file != "" {
			if data, err = os.ReadFile(filepath.Join("testdata", "hf", file)); err != nil {
				t.Fatal(err)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range set {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		out, _ := json.Marshal(m)
		return string(out)
	}
	alternate := make([]string, 36)
	for i := range alternate {
		alternate[i] = "full_attention"
		if i%3 == 1 {
			alternate[i] = "sliding_attention"
		}
	}
	for _, c := range []struct {
		name, json, want string
	}{
		{"unknown model_type", edit("", map[string]any{"model_type": "bert"}), `field "model_type" ("bert"): placer reads deepseek_v2, deepseek_v3, gemma3, gemma3_text, glm4_moe, gpt_oss, llama, llama4, llama4_text,`},
		{"no model_type", edit("", map[string]any{"model_type": nil}), `field "model_type" missing`},
		{"attention biases", edit("", map[string]any{"attention_bias": true}), `field "attention_bias" (true): placer does not model it`},
		{"MLP biases", edit("", map[string]any{"mlp_bias": true}), `field "mlp_bias" (true): placer does not model it`},
		{"another activation", edit("", map[string]any{"hidden_act": "gelu"}), `field "hidden_act" ("gelu"): placer models SwiGLU's silu only`},
		{"unknown field", edit("", map[string]any{"cross_attention_layers": []int{3, 8}}), `field "cross_attention_layers" ([3,8]): placer does not model it`},
		{"another family's field", edit("", map[string]any{"sliding_window": 4096}), `field "sliding_window" (4096): placer does not model it`},
		{"malformed JSON", `{"model_type": "llama", "hidden_size": 4096,`, `config.json: not JSON: unexpected end of JSON input (at byte 44)`},
		{"not an object", `[{"model_type": "llama"}]`, `config.json: not a JSON object`},
		{"empty", ``, `config.json: not JSON`},
		{"missing field", edit("", map[string]any{"hidden_size": nil}), `field "hidden_size" missing (a llama config.json has it)`},
		{"not a number", edit("", map[string]any{"num_hidden_layers": "32"}), `field "num_hidden_layers" ("32"): not a whole number from 1 to`},
		{"fraction", edit("", map[string]any{"vocab_size": 128256.5}), `field "vocab_size" (128256.5): not a whole number`},
		{"zero heads", edit("", map[string]any{"num_attention_heads": 0}), `field "num_attention_heads" (0): not a whole number from 1`},
		{"kv heads", edit("", map[string]any{"num_key_value_heads": 5}), `field "num_key_value_heads" (5): does not divide the 32 heads`},
		{"tied not bool", edit("", map[string]any{"tie_word_embeddings": "no"}), `field "tie_word_embeddings" ("no"): not true or false`},
		{"heads do not divide", edit("", map[string]any{"num_attention_heads": 3, "num_key_value_heads": 3}), `field "num_attention_heads" (3): does not divide hidden_size 4096`},
		{"qwen window in the last layers", edit("qwen2-7b.json", map[string]any{"use_sliding_window": true, "max_window_layers": 14}),
			`field "max_window_layers" (14): the window in the layers from 14 on only: placer does not model it`},
		{"irregular layer_types", edit("gpt-oss-120b.json", map[string]any{"layer_types": alternate}),
			`field "layer_types" (["full_attention","sliding_attention",`},
		{"short layer_types", edit("gpt-oss-120b.json", map[string]any{"layer_types": []string{"sliding_attention"}}), `field "layer_types" (["sliding_attention"]): 1 entries for num_hidden_layers 36`},
		{"another attention", edit("gpt-oss-120b.json", map[string]any{"layer_types": append(append([]string{}, alternate[:35]...), "chunked_attention")}), `layer 35 is "chunked_attention"`},
		{"gpt-oss top-k disagrees", edit("gpt-oss-120b.json", map[string]any{"experts_per_token": 2}), `field "experts_per_token" (2): disagrees with num_experts_per_tok 4`},
		{"values of another width", edit("deepseek-v3.json", map[string]any{"v_head_dim": 64}), `field "v_head_dim" (64): values of another width`},
		{"experts every other layer", edit("deepseek-v3.json", map[string]any{"moe_layer_freq": 2}), `field "moe_layer_freq" (2): experts in every 2-th layer only`},
		{"all dense", edit("deepseek-v3.json", map[string]any{"first_k_dense_replace": 61}), `field "first_k_dense_replace" (61): leaves none of the 61 layers with experts`},
		{"latent with fewer kv heads", edit("deepseek-v3.json", map[string]any{"num_key_value_heads": 8}), `field "num_key_value_heads" (8): latent attention`},
		{"no kv_lora_rank", edit("deepseek-v3.json", map[string]any{"kv_lora_rank": nil}), `field "kv_lora_rank" missing (a deepseek_v3 config.json has it)`},
		{"sparse step", edit("qwen3-30b-a3b.json", map[string]any{"decoder_sparse_step": 2}), `field "decoder_sparse_step" (2): experts in every 2-th layer only`},
		{"dense layers in the middle", edit("qwen3-30b-a3b.json", map[string]any{"mlp_only_layers": []int{3}}), `field "mlp_only_layers" ([3]): dense layers other than the first ones`},
		{"shared expert in qwen3-moe", edit("qwen3-30b-a3b.json", map[string]any{"shared_expert_intermediate_size": 1536}), `field "shared_expert_intermediate_size" (1536): placer does not model it`},
		{"shared expert of another width", edit("qwen1.5-moe-a2.7b.json", map[string]any{"shared_expert_intermediate_size": 5000}), `field "shared_expert_intermediate_size" (5000): not a multiple of moe_intermediate_size 1408`},
		{"top-k above experts", edit("mixtral-8x7b.json", map[string]any{"num_experts_per_tok": 9}), `field "num_experts_per_tok" (9): more than the 8 experts`},
		{"no experts", edit("mixtral-8x7b.json", map[string]any{"num_local_experts": nil}), `field "num_local_experts" missing (a mixtral config.json has it)`},
	} {
		_, err := FromHFConfig([]byte(c.json), "m/config.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m/config.json: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line from m/config.json with %q", c.name, err, c.want)
		}
	}
	// Unset values of fields placer does not know are no refusal.
	if _, err := FromHFConfig([]byte(edit("", map[string]any{"cross_attention_layers": []int{}, "a": nil, "b": false, "c": 0, "d": "", "e": map[string]any{}})), "m"); err != nil {
		t.Errorf("unset fields: %v", err)
	}
}

// TestParseHF: the workload hf:PATH[:KEYS] reads the config.json at PATH
// (or in the folder PATH) with the run's keys after it, as a preset.
func TestParseHF(t *testing.T) {
	preset, _ := Preset("llama3-8b")
	run := preset
	run.Seq, run.Batch = 8192, 512
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "llama3-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	colon := filepath.Join(dir, "a:b")
	if err := os.Mkdir(colon, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(colon, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		text string
		want Spec
	}{
		{"hf:testdata/hf/llama3-8b.json:seq=4096,batch=1", preset},
		{"hf:testdata/hf/llama3-8b.json:seq=8192,batch=512", run},
		{"HF:testdata/hf/llama3-8b.json:batch=512,seq=8192", run},
		{"hf:" + dir + ":seq=4096,batch=1", preset},
		{"hf:" + dir + ":seq=8192,batch=512", run},
		{"hf:" + colon + "/config.json:seq=8192,batch=512", run},
		{"hf:" + colon + ":batch=1,seq=4096", preset},
	}
	for _, c := range ok {
		if m, err := Parse(c.text); err != nil || m.Shape() != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.text, m, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"hf:", "no path"},
		{"hf::seq=4096", "no path"},
		{"hf:testdata/hf/none.json:seq=4096", "testdata/hf/none.json: cannot read it: no such file or directory"},
		{"hf:testdata/hf", "testdata/hf/config.json: cannot read it"},
		{"hf:testdata/hf/llama3-8b.json:seq=0", `"seq"="0" is not a whole number`},
		{"hf:testdata/hf/llama3-8b.json:seq=4096,depth=3", `unknown key "depth"`},
		{"hf:/dev/null", "/dev/null: not a file"},
		// A model file names no run: seq and batch are refused missing.
		{"hf:testdata/hf/llama3-8b.json", `workload "hf:testdata/hf/llama3-8b.json": seq and batch missing: a model names no run, give its sequence length and global batch (hf:testdata/hf/llama3-8b.json:seq=4096,batch=512)`},
		{"hf:testdata/hf/llama3-8b.json:batch=512", `workload "hf:testdata/hf/llama3-8b.json:batch=512": seq missing`},
		{"hf:testdata/hf/llama3-8b.json:seq=8192", `workload "hf:testdata/hf/llama3-8b.json:seq=8192": batch missing`},
		{"llama3-8b", `workload "llama3-8b": seq and batch missing: a model names no run, give its sequence length and global batch (llama3-8b:seq=4096,batch=512)`},
		{"llama3-8b:", `workload "llama3-8b:": seq and batch missing`},
		{"qwen3-30b-a3b:batch=512", `workload "qwen3-30b-a3b:batch=512": seq missing`},
		{"bert:layers=2", "hf:PATH/config.json"},
	} {
		if m, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %+v, %v; want one line with %q", c.text, m, err, c.want)
		}
	}
	for _, c := range []struct{ rest, path, keys string }{
		{"x/config.json", "x/config.json", ""},
		{"x/config.json:seq=1", "x/config.json", "seq=1"},
		{"a:b/config.json", "a:b/config.json", ""},
		{"a:b/config.json:seq=1,batch=2", "a:b/config.json", "seq=1,batch=2"},
	} {
		if p, k := SplitHF(c.rest); p != c.path || k != c.keys {
			t.Errorf("SplitHF(%q) = %q, %q; want %q, %q", c.rest, p, k, c.path, c.keys)
		}
	}
}

// FuzzFromHFConfig: any bytes are a model or a one-line error naming the
// file, never a panic; a model passes Check, reads back from its String
// as itself and has positive FLOPs. Seeds: the published configs, the
// files transformers 5 wrote (testdata/hf5) and
// testdata/fuzz/FuzzFromHFConfig.
func FuzzFromHFConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hf", "*.json"))
	five, _ := filepath.Glob(filepath.Join("testdata", "hf5", "*.json")) // as transformers 5 writes them
	for _, p := range append(files, five...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := FromHFConfig(data, "c.json")
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "c.json: ") {
				t.Fatalf("%q: error not one line from c.json: %v", data, err)
			}
			return
		}
		if err := m.Check(); err != nil {
			t.Fatalf("%q: %+v: %v", data, m, err)
		}
		if back, err := Parse(m.String()); err != nil || back != m.Shape() {
			t.Fatalf("%q: %+v writes %q, which reads %+v, %v", data, m, m.String(), back, err)
		}
		if !(ModelFLOPs(m) > 0) || !(CausalFLOPs(m) > 0) {
			t.Fatalf("%q: model FLOPs %g", data, ModelFLOPs(m))
		}
	})
}

// TestHFRopeScaling: rope_scaling's fields beside its type and factor,
// and GPT-OSS's swiglu_limit, as the files say.
func TestHFRopeScaling(t *testing.T) {
	for _, c := range []struct {
		file string
		want ModelConfig
	}{
		// "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}
		{"llama3.1-70b.json", ModelConfig{RopeScaling: "llama3", RopeFactor: 8, RopeLowFreq: 1, RopeHighFreq: 4, RopeOriginal: 8192}},
		// "rope_scaling": null
		{"llama3-8b.json", ModelConfig{}},
		// {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096, "rope_type": "yarn"}, "swiglu_limit": 7.0
		{"gpt-oss-120b.json", ModelConfig{RopeScaling: "yarn", RopeFactor: 32, BetaFast: 32, BetaSlow: 1, RopeOriginal: 4096, SwiGLULimit: 7}},
		// {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"}
		{"deepseek-v2.json", ModelConfig{RopeScaling: "yarn", RopeFactor: 40, MScale: 0.707, MScaleAll: 0.707, BetaFast: 32, BetaSlow: 1, RopeOriginal: 4096}},
	} {
		m, err := ReadHFConfig(filepath.Join("testdata", "hf", c.file))
		if err != nil {
			t.Fatal(err)
		}
		g := m.Config
		got := ModelConfig{RopeScaling: g.RopeScaling, RopeFactor: g.RopeFactor, MScale: g.MScale, MScaleAll: g.MScaleAll,
			RopeLowFreq: g.RopeLowFreq, RopeHighFreq: g.RopeHighFreq, BetaFast: g.BetaFast, BetaSlow: g.BetaSlow,
			RopeOriginal: g.RopeOriginal, SwiGLULimit: g.SwiGLULimit}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.file, got, c.want)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "llama3.1-70b.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	f["rope_scaling"].(map[string]any)["low_freq_factor"] = -1
	data, _ = json.Marshal(f)
	if _, err := FromHFConfig(data, "m/config.json"); err == nil || !strings.Contains(err.Error(), "low_freq_factor") || strings.Contains(err.Error(), "\n") {
		t.Errorf("low_freq_factor -1: %v, want a line naming low_freq_factor", err)
	}
}

// TestPresetCarriesItsConfig: the gpt-oss-120b preset carries the
// settings its config.json gives that change what Megatron-Core runs
// (attention_bias true, swiglu_limit 7.0, YaRN's rope_scaling: the
// file's comment in TestHFRopeScaling), as FromHFConfig reads them.
func TestPresetCarriesItsConfig(t *testing.T) {
	m, err := ReadHFConfig(filepath.Join("testdata", "hf", "gpt-oss-120b.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("gpt-oss-120b:seq=4096,batch=512")
	if err != nil {
		t.Fatal(err)
	}
	pick := func(c ModelConfig) ModelConfig {
		return ModelConfig{LinearBias: c.LinearBias, SwiGLULimit: c.SwiGLULimit, RopeScaling: c.RopeScaling, RopeFactor: c.RopeFactor,
			BetaFast: c.BetaFast, BetaSlow: c.BetaSlow, RopeOriginal: c.RopeOriginal}
	}
	want := ModelConfig{LinearBias: true, SwiGLULimit: 7, RopeScaling: "yarn", RopeFactor: 32, BetaFast: 32, BetaSlow: 1, RopeOriginal: 4096}
	if got := pick(m.Config); got != want {
		t.Errorf("config.json: %+v, want %+v", got, want)
	}
	if got := pick(p.Config); got != want {
		t.Errorf("preset: %+v, want %+v", got, want)
	}
}

// TestQwen3PresetsCarryTheirConfig: the Qwen3-MoE presets set what their
// config.json sets beyond the shape and the exported settings: the query
// and key norms, softmax scores, the balancing loss's 0.001 and
// norm_topk_prob; the model type, rotary base and norm epsilon stay
// unset (a preset exports no model settings).
func TestQwen3PresetsCarryTheirConfig(t *testing.T) {
	for _, name := range []string{"qwen3-30b-a3b", "qwen3-235b-a22b"} {
		m, err := ReadHFConfig(filepath.Join("testdata", "hf", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(name + ":seq=4096,batch=512")
		if err != nil {
			t.Fatal(err)
		}
		want := m.Config
		want.ModelType, want.RopeTheta, want.NormEps = "", 0, 0
		if p.Config != want {
			t.Errorf("%s: preset %+v, want %+v", name, p.Config, want)
		}
		if !want.QKNorm || want.AuxLoss != 0.001 {
			t.Errorf("%s: config.json read as %+v, want QK norms and a loss of 0.001", name, m.Config)
		}
	}
}
