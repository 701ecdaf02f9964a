package transformer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHFTransformers5: the config.json files transformers 5.24.0's
// save_pretrained wrote for each model type placer reads
// (testdata/hf5, tools/measure/hfconfigs/hfconfigs.py: its config classes at the
// small sizes below) read as the models they were built as, and their
// rotary settings from rope_parameters, where 5.x writes them. Before:
// Gemma 3's refused for "_sliding_window_pattern", NemotronH's for
// num_hidden_layers (5.x writes layers_block_type), its time_step_limit
// {"__float__": "Infinity"} aside; Qwen3-MoE's num_local_experts,
// Qwen2-MoE's qkv_bias, DeepSeek's qk_head_dim, GPT-OSS's swiglu_alpha
// and a user's id2label refused; every file's rope_theta lost.
func TestHFTransformers5(t *testing.T) {
	const dense = "llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=4096,vocab=1024,batch=1"
	mla := "llama:layers=4,hidden=256,heads=4,ffn=512,seq=4096,vocab=1024,batch=1,head_dim=32,experts=8,topk=2,expert_ffn=128,shared=1,dense_layers=1,q_lora=96,kv_lora=64,rope_dim=16"
	gemma := "llama:layers=6,hidden=256,heads=4,kv_heads=2,ffn=512,seq=4096,vocab=1024,batch=1,tied=true,window=128,global_every=6,norms=4,act=geglu"
	llama4 := dense + ",head_dim=128,experts=4,topk=1,expert_ffn=512,shared=1,global_every=4,chunk=128"
	for _, c := range []struct {
		file, want string
		theta      float64 // rope_parameters' rope_theta (0: transformers' default, not checked)
		rotary     float64 // partial_rotary_factor
		scaling    string
		qkvBias    bool
	}{
		{file: "llama.json", want: dense, theta: 500000},
		{file: "llama-bookkeeping.json", want: dense},
		{file: "mistral.json", want: dense + ",window=128"},
		{file: "mixtral.json", want: dense + ",experts=4,topk=2,expert_ffn=512"},
		{file: "qwen2.json", want: dense, qkvBias: true},
		{file: "qwen3.json", want: dense},
		{file: "qwen2_moe.json", want: dense + ",experts=8,topk=2,expert_ffn=128,shared=2", qkvBias: true},
		{file: "qwen3_moe.json", want: dense + ",experts=8,topk=2,expert_ffn=128"},
		{file: "deepseek_v2.json", want: mla},
		{file: "deepseek_v3.json", want: mla + ",mtp=1"},
		{file: "gpt_oss.json", want: "llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=256,seq=4096,vocab=1024,batch=1,experts=4,topk=2,expert_ffn=256,window=128,window_every=2",
			theta: 150000, scaling: "yarn"},
		{file: "gemma3_text.json", want: gemma, theta: 1e6},
		{file: "gemma3.json", want: gemma, theta: 1e6},
		{file: "nemotron.json", want: dense + ",act=relu2"},
		{file: "glm4_moe.json", want: dense + ",experts=8,topk=2,expert_ffn=128,shared=1,dense_layers=1,mtp=1", rotary: 0.5},
		{file: "llama4_text.json", want: llama4},
		{file: "llama4.json", want: llama4},
		{file: "qwen3_next.json", want: dense + ",experts=8,topk=2,expert_ffn=128,shared=1,mixers=GGG*,gdn_k_heads=2,gdn_v_heads=4,gdn_k_dim=32,gdn_v_dim=32,gdn_conv=4",
			rotary: 0.25},
		{file: "nemotron_h.json", want: dense + ",act=relu2,pattern=M-*-,ssm_heads=8,ssm_head_dim=32,ssm_state=16,ssm_groups=2,ssm_conv=4,ssm_chunk=64"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "hf5", c.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"transformers_version": "5.24.0"`) {
				t.Fatalf("%s: not written by transformers 5.24.0", path)
			}
			m, err := FromHFConfig(data, path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Parse(c.want)
			if err != nil {
				t.Fatal(err)
			}
			if m.Shape() != want {
				t.Errorf("read %s, want %s", m.String(), want.String())
			}
			cf := m.Config
			if (c.theta != 0 && cf.RopeTheta != c.theta) || (c.rotary != 0 && cf.RotaryPercent != c.rotary) || cf.RopeScaling != c.scaling || cf.QKVBias != c.qkvBias {
				t.Errorf("rope_theta %g, partial_rotary_factor %g, scaling %q, QKV bias %v; want %g, %g, %q, %v",
					cf.RopeTheta, cf.RotaryPercent, cf.RopeScaling, cf.QKVBias, c.theta, c.rotary, c.scaling, c.qkvBias)
			}
		})
	}
}

// TestHFSpecialFloats: Infinity, -Infinity and NaN read as transformers
// reads them, bare (Python's json, files before 5.x) or as the object
// 5.x writes, where the field is one placer ignores (NemotronH's
// time_step_limit); where a count is read they are no count; inside a
// string they are text.
func TestHFSpecialFloats(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf5", "nemotron_h.json"))
	if err != nil {
		t.Fatal(err)
	}
	tagged := `{
      "__float__": "Infinity"
    }`
	if !strings.Contains(string(data), tagged) {
		t.Fatalf("nemotron_h.json: no %s", tagged)
	}
	for _, c := range []struct{ name, from, to, err string }{
		{"tagged", "", "", ""},
		{"bare", tagged, "Infinity", ""},
		{"negative", tagged, "-Infinity", ""},
		{"nan", tagged, "NaN", ""},
		{"count", `"ssm_state_size": 16`, `"ssm_state_size": Infinity`, `field "ssm_state_size" ({"__float__":"Infinity"}): not a whole number`},
		{"in a string", `"mamba_hidden_act": "silu"`, `"mamba_hidden_act": "NaN"`, `field "mamba_hidden_act" ("NaN"): placer models the Mamba-2 mixer's silu only`},
		{"not a token", tagged, "Infinityx", "not JSON"},
	} {
		in := string(data)
		if c.from != "" {
			in = strings.Replace(in, c.from, c.to, 1)
		}
		_, err := FromHFConfig([]byte(in), "c.json")
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
	if got := string(hfSpecialFloats([]byte(`{"a": [NaN, -Infinity], "b": "Infinity \" NaN"}`))); got != `{"a": [{"__float__":"NaN"}, {"__float__":"-Infinity"}], "b": "Infinity \" NaN"}` {
		t.Errorf("hfSpecialFloats: %s", got)
	}
}

// TestHFBookkeeping: the fields of a config.json that are not the
// model's are passed over alike, each and all (before: id2label,
// return_dict and attn_implementation refused by name, _name_or_path,
// auto_map, pad_token_id and quantization_config taken); a field placer
// cannot model is still refused by name beside them.
func TestHFBookkeeping(t *testing.T) {
	base := `"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1024`
	for _, f := range []string{`"id2label": {"0": "A", "1": "B"}`, `"label2id": {"A": 0}`, `"return_dict": false`, `"output_hidden_states": true`,
		`"output_attentions": true`, `"attn_implementation": "sdpa"`, `"_attn_implementation": "flash_attention_2"`, `"_name_or_path": "x/y"`,
		`"auto_map": {"AutoConfig": "c.C"}`, `"pad_token_id": 0`, `"quantization_config": {"quant_method": "fp8"}`, `"torch_dtype": "bfloat16"`,
		`"dtype": "bfloat16"`, `"architectures": ["LlamaForCausalLM"]`, `"transformers_version": "5.24.0"`, `"problem_type": "regression"`,
		`"num_labels": 3`, `"tokenizer_class": "T"`, `"max_length": 20`, `"temperature": 0.7`, `"_commit_hash": "abc"`} {
		if _, err := FromHFConfig([]byte("{"+base+", "+f+"}"), "c.json"); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	_, err := FromHFConfig([]byte("{"+base+`, "id2label": {"0": "A"}, "is_encoder_decoder": true}`), "c.json")
	if err == nil || !strings.Contains(err.Error(), `field "is_encoder_decoder" (true): placer does not model it`) {
		t.Errorf("is_encoder_decoder beside bookkeeping: %v", err)
	}
}
