package plans

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// titanArgsOf reads the "#   field = value" lines of an export's model
// args.
func titanArgsOf(t *testing.T, out string) (model string, args map[string]string) {
	t.Helper()
	args = map[string]string{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "# model args: torchtitan's "); ok {
			model, _, _ = strings.Cut(rest, " ")
			in = true
			continue
		}
		f, ok := strings.CutPrefix(line, "#   ")
		if !in || !ok {
			in = false
			continue
		}
		k, v, ok := strings.Cut(f, " = ")
		if !ok {
			t.Fatalf("model args line %q is not field = value", line)
		}
		if _, dup := args[k]; dup {
			t.Fatalf("model args: %s twice", k)
		}
		args[k] = v
	}
	return model, args
}

// TestTitanModelArgs: for every config.json hf: reads, each torchtitan
// export (0.2's job file, 0.3's config module) writes torchtitan's model
// args with the file's values, field by field, as torchtitan's own
// flavors of the same models map them (models/*/__init__.py of
// torchtitan 0.2.2), or refuses in one line naming the setting no field
// says. The expectations are the config.json's values, copied by hand.
func TestTitanModelArgs(t *testing.T) {
	moe := func(experts, shared, topk int, score string, norm bool, scale string, gate bool, groups, limited, lb string) string {
		return "moe_args.num_experts=" + itoa(experts) + " moe_args.num_shared_experts=" + itoa(shared) + " moe_args.top_k=" + itoa(topk) +
			" moe_args.score_func=\"" + score + "\" moe_args.route_norm=" + pyBool(norm) + " moe_args.route_scale=" + scale +
			" moe_args.gate_bias=" + pyBool(gate) + " moe_args.score_before_experts=False moe_args.num_expert_groups=" + groups +
			" moe_args.num_limited_groups=" + limited + " moe_args.load_balance_coeff=" + lb
	}
	for _, c := range []struct {
		file, model, want string
		refused           string // both releases' refusal
		refused02         string // 0.2's only
		only03            string // fields 0.3 writes beside
	}{
		// rope_theta 500000.0, rms_norm_eps 1e-05, rope_scaling null (torchtitan's llama3 always scales: factor 1 leaves it),
		// intermediate_size 14336 = 1024 x ceil(int(1.3 x int(8 x 4096 / 3)) / 1024), the 8B flavor's pair
		{file: "llama3-8b.json", model: "llama3", want: "dim=4096 n_layers=32 n_heads=32 vocab_size=128256 norm_eps=1e-05 rope_theta=500000 n_kv_heads=8 " +
			"multiple_of=1024 ffn_dim_multiplier=1.3 rope_scaling_args.scaling_factor=1.0"},
		// rope_scaling {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}
		{file: "llama3.1-70b.json", model: "llama3", want: "dim=8192 n_layers=80 n_heads=64 vocab_size=128256 norm_eps=1e-05 rope_theta=500000 n_kv_heads=8 " +
			"multiple_of=1024 ffn_dim_multiplier=1.3 rope_scaling_args.scaling_factor=8 rope_scaling_args.low_freq_factor=1 rope_scaling_args.high_freq_factor=4 " +
			"rope_scaling_args.original_max_position_embeddings=8192"},
		{file: "llama3.1-405b.json", model: "llama3", want: "dim=16384 n_layers=126 n_heads=128 vocab_size=128256 norm_eps=1e-05 rope_theta=500000 n_kv_heads=8 " +
			"multiple_of=4096 ffn_dim_multiplier=1.2 rope_scaling_args.scaling_factor=8 rope_scaling_args.low_freq_factor=1 rope_scaling_args.high_freq_factor=4 " +
			"rope_scaling_args.original_max_position_embeddings=8192"},
		// sliding_window 4096: torchtitan's llama3 has no window
		{file: "mistral-7b-v0.1.json", refused: "sliding_window 4096"},
		// Qwen2 always has q/k/v biases
		{file: "qwen2-7b.json", refused: "query, key and value biases of qwen2"},
		{file: "qwen1.5-moe-a2.7b.json", refused: "query, key and value biases of qwen2_moe"},
		// rope_theta 1000000, rms_norm_eps 1e-06, head_dim 128, intermediate_size 12288
		{file: "qwen3-8b.json", model: "qwen3", want: "dim=4096 n_layers=36 n_heads=32 vocab_size=151936 norm_eps=1e-06 rope_theta=1000000 n_kv_heads=8 head_dim=128 " +
			"hidden_dim=12288 qk_norm=True enable_weight_tying=False moe_enabled=False"},
		// num_experts 128, num_experts_per_tok 8, norm_topk_prob true, moe_intermediate_size 768
		{file: "qwen3-30b-a3b.json", model: "qwen3", want: "dim=2048 n_layers=48 n_heads=32 vocab_size=151936 norm_eps=1e-06 rope_theta=1000000 n_kv_heads=4 head_dim=128 " +
			"hidden_dim=6144 qk_norm=True enable_weight_tying=False moe_enabled=True moe_inter_dim=768 " + moe(128, 0, 8, "softmax", true, "1", false, "None", "None", "None")},
		{file: "qwen3-235b-a22b.json", model: "qwen3", want: "dim=4096 n_layers=94 n_heads=64 vocab_size=151936 norm_eps=1e-06 rope_theta=1000000 n_kv_heads=4 head_dim=128 " +
			"hidden_dim=12288 qk_norm=True enable_weight_tying=False moe_enabled=True moe_inter_dim=1536 " + moe(128, 0, 8, "softmax", true, "1", false, "None", "None", "None")},
		// Mixtral: qwen3 without QK norms; num_local_experts 8, top 2 renormalised, rope_theta 1e6
		{file: "mixtral-8x7b.json", model: "qwen3", want: "dim=4096 n_layers=32 n_heads=32 vocab_size=32000 norm_eps=1e-05 rope_theta=1000000 n_kv_heads=8 head_dim=128 " +
			"hidden_dim=14336 qk_norm=False enable_weight_tying=False moe_enabled=True moe_inter_dim=14336 " + moe(8, 0, 2, "softmax", true, "1", false, "None", "None", "None")},
		// n_routed_experts 160, n_shared_experts 2, top 6, softmax, norm_topk_prob false, routed_scaling_factor 16, n_group 8, topk_group 3,
		// yarn factor 40, beta 32 and 1, mscale_all_dim 0.707 from 4096
		{file: "deepseek-v2.json", model: "deepseek_v3", want: "dim=5120 n_layers=60 n_heads=128 vocab_size=102400 norm_eps=1e-06 rope_theta=10000 inter_dim=12288 " +
			"moe_inter_dim=1536 n_dense_layers=1 q_lora_rank=1536 kv_lora_rank=512 qk_nope_head_dim=128 qk_rope_head_dim=64 v_head_dim=128 original_seq_len=4096 " +
			"rope_factor=40 beta_fast=32 beta_slow=1 mscale=0.707 " + moe(160, 2, 6, "softmax", false, "16", false, "8", "3", "None"),
			only03: "num_mtp_layers=0"},
		// sigmoid, norm_topk_prob true, routed_scaling_factor 2.5, n_group 8, topk_group 4, noaux_tc (an expert bias), mscale_all_dim 1.0;
		// num_nextn_predict_layers 1: torchtitan 0.3's deepseek_v3 builds MTP layers, 0.2.2's has none
		{file: "deepseek-v3.json", model: "deepseek_v3", want: "dim=7168 n_layers=61 n_heads=128 vocab_size=129280 norm_eps=1e-06 rope_theta=10000 inter_dim=18432 " +
			"moe_inter_dim=2048 n_dense_layers=3 q_lora_rank=1536 kv_lora_rank=512 qk_nope_head_dim=128 qk_rope_head_dim=64 v_head_dim=128 original_seq_len=4096 " +
			"rope_factor=40 beta_fast=32 beta_slow=1 mscale=1 " + moe(256, 1, 8, "sigmoid", true, "2.5", false, "8", "4", "0.001"),
			refused02: "num_nextn_predict_layers 1", only03: "num_mtp_layers=1"},
		// rope_theta 150000, yarn factor 32 from 4096, beta_fast 32 (ntk_beta), beta_slow 1 (ntk_alpha), swiglu_limit 7, sliding_window 128,
		// attention_bias true (the router's bias too), 128 experts, top 4
		{file: "gpt-oss-120b.json", model: "gpt_oss", want: "dim=2880 n_layers=36 n_heads=64 vocab_size=201088 norm_eps=1e-05 rope_theta=150000 n_kv_heads=8 head_dim=64 " +
			"moe_inter_dim=2880 swiglu_limit=7 sliding_window_size=128 original_seq_len=4096 rope_factor=32 ntk_alpha=1 ntk_beta=32 " +
			moe(128, 0, 4, "softmax", true, "1", true, "None", "None", "None")},
	} {
		m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m.Seq, m.Batch = 4096, 64
		text := "tp=1,pp=1,dp=8,mbs=1,fsdp=on"
		if m.MoE() {
			text += ",ep=" + itoa(map[bool]int{true: 8, false: 4}[m.Experts%8 == 0])
		}
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		pod, _ := plan.ParsePod("dgx-h100:1")
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for _, rel := range []string{"0.2", "0.3"} {
			out, err := TorchTitanTransformer(m, pl.Strategy, 8, rel)
			refused := c.refused
			if rel == "0.2" && c.refused02 != "" {
				refused = c.refused02
			}
			if refused != "" {
				if err == nil || !strings.Contains(err.Error(), refused) || !strings.Contains(err.Error(), "torchtitan") || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s torchtitan@%s: %v, want one line naming %q and torchtitan", c.file, rel, err, refused)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s torchtitan@%s: %v", c.file, rel, err)
				continue
			}
			model, got := titanArgsOf(t, string(out))
			if model != c.model {
				t.Errorf("%s torchtitan@%s: model %q, want %q", c.file, rel, model, c.model)
			}
			want := map[string]string{}
			fields := strings.Fields(c.want)
			if rel == "0.3" {
				fields = append(fields, strings.Fields(c.only03)...)
			}
			for _, kv := range fields {
				k, v, _ := strings.Cut(kv, "=")
				want[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s torchtitan@%s: %s = %q, the config.json's %q", c.file, rel, k, got[k], v)
				}
			}
			// 0.3 builds torchtitan's llama3 itself: Llama 3 8B without
			// rope scaling at placer_model(), Llama 3.1 as its flavors.
			if w, ok := map[string]string{"llama3-8b.json": `theta=500000, scaling="none"`, "llama3.1-70b.json": `model_registry("70B")`,
				"llama3.1-405b.json": `model_registry("405B")`}[c.file]; ok && rel == "0.3" && !strings.Contains(string(out), w) {
				t.Errorf("%s torchtitan@0.3: no %s", c.file, w)
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s torchtitan@%s: %s written, not expected", c.file, rel, k)
				}
			}
		}
	}
}

// TestTitanFFN: the multiple_of and ffn_dim_multiplier written give
// torchtitan 0.2.2's llama3 the config.json's MLP (models/llama3/model/
// model.py FeedForward: int(2 x 4 dim / 3), times the multiplier, up to
// a multiple of multiple_of).
func TestTitanFFN(t *testing.T) {
	for _, c := range []struct {
		dim, ffn int
		mo       int
		mult     string
	}{
		{4096, 14336, 1024, "1.3"},           // Llama 3 8B: 10922 x 1.3 = 14198 -> 14336
		{8192, 28672, 1024, "1.3"},           // 70B: 21845 x 1.3 = 28398 -> 28672 (its flavor's 4096 gives it too)
		{16384, 53248, 4096, "1.2"},          // 405B: 43690 x 1.2 = 52428 -> 53248
		{256, 768, 256, "None"},              // torchtitan's debugmodel: 682 -> 768
		{4096, 11008, 256, "None"},           // Llama 2 7B: 10922 -> 11008
		{4096, 11000, 11000, "None"},         // 10922 <= 11000: multiple_of the MLP itself
		{64, 100, 100, "0.5882352941176471"}, // 170 > 100: 0.588 x 170 = 99.99 -> 100
	} {
		mo, mult := titanFFN(c.dim, c.ffn)
		if mo != c.mo || mult != c.mult || titanLlamaFFN(c.dim, mo, mult) != c.ffn {
			t.Errorf("dim %d, MLP %d: multiple_of %d, ffn_dim_multiplier %s (MLP %d), want %d, %s", c.dim, c.ffn, mo, mult, titanLlamaFFN(c.dim, mo, mult), c.mo, c.mult)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
