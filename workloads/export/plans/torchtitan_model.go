package plans

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/workloads/export"
)

// titanArg is one field of torchtitan's model args: its name in torchtitan
// 0.2.2's dataclass (MoEArgs' as moe_args.FIELD) and its Python value.
type titanArg struct{ field, value string }

// titanModelArgs is the torchtitan model of m's config.json (m.Config;
// a model by its shape has none: ok false) for torchtitan release rel:
// torchtitan's model (its train spec's name) and its model args, field by
// field, as torchtitan 0.2.2's dataclasses name them
// (models/llama3/model/args.py TransformerModelArgs and RoPEScalingArgs,
// models/qwen3/model/args.py Qwen3ModelArgs,
// models/deepseek_v3/model/args.py DeepSeekV3ModelArgs,
// models/gpt_oss/model/args.py GptOssModelArgs, models/moe/moe.py
// MoEArgs), mapped from the config.json as torchtitan's own flavors of
// the same models set them (models/*/__init__.py: llama3 "8B", "70B",
// "405B"; qwen3 "8B", "30B-A3B", "235B-A22B"; deepseek_v3 "236B",
// "671B"; gpt_oss "120b") and its Hugging Face mapping does
// (experiments/transformers_modeling_backend/model/args.py
// _TT_TO_HF_MAPPINGS, experiments/rl/unified/models/utils.py's
// Qwen3ModelArgs). Mixtral is torchtitan's qwen3 without QK norms (its
// qk_norm field): RMS norms, rotary attention of any head width, top-k
// experts of a softmax router renormalised. A setting of the file that
// changes the model and that no field of torchtitan's model says is an
// error naming the setting and the target.
func titanModelArgs(m transformer.Spec, rel export.Release) (model string, args []titanArg, ok bool, err error) {
	c := m.Config
	if m.Hybrid() || m.Mixed() {
		return "", nil, false, fmt.Errorf("export: torchtitan: model args: pattern=%s, mixers=%s (Mamba-2 or Gated DeltaNet layers): torchtitan %s has no model of them", m.Pattern, m.Mixers, rel.Checked)
	}
	if c.ModelType == "" {
		if m.Act != "" || m.NormsPerBlock() > 2 || m.Chunk > 0 || m.GlobalEvery > 0 {
			// A shape's Gemma-, Nemotron- or Llama-4-style layers: no
			// model args field of torchtitan's llama3 says them.
			return "", nil, false, fmt.Errorf("export: torchtitan: model args: act=%s, norms=%d, chunk=%d, global_every=%d: torchtitan %s's llama3 has no model args field for them",
				cmp.Or(m.Act, "swiglu"), m.NormsPerBlock(), m.Chunk, m.GlobalEvery, rel.Checked)
		}
		return "", nil, false, nil
	}
	num := titanNum
	itoa := strconv.Itoa
	py := func(b bool) string { return map[bool]string{true: "True", false: "False"}[b] }
	add := func(f, v string) { args = append(args, titanArg{f, v}) }
	refuse := func(format string, a ...any) (string, []titanArg, bool, error) {
		return "", nil, false, fmt.Errorf("export: torchtitan: model args: %s (config.json's model_type %s): torchtitan %s has no model args field for it", fmt.Sprintf(format, a...), c.ModelType, rel.Checked)
	}
	switch c.ModelType {
	case "llama", "mistral":
		model = "llama3"
	case "qwen3", "qwen3_moe", "mixtral":
		model = "qwen3"
	case "deepseek_v2", "deepseek_v3":
		model = "deepseek_v3"
	case "gpt_oss":
		model = "gpt_oss"
	case "qwen2", "qwen2_moe":
		return refuse("the query, key and value biases of %s (always on)", c.ModelType)
	default:
		return refuse("model_type %s", c.ModelType)
	}
	scalings := map[string][]string{"llama3": {"", "llama3"}, "qwen3": {""}, "deepseek_v3": {"", "yarn"}, "gpt_oss": {"yarn"}}[model]
	switch {
	case !contains(scalings, c.RopeScaling):
		what := c.RopeScaling
		if what == "" {
			what = "none"
		}
		return refuse("rope_scaling %s (torchtitan's %s rotary scales as %q only)", what, model, strings.Join(scalings, ", "))
	case m.Window > 0 && (model != "gpt_oss" || m.WindowEvery != 2):
		return refuse("sliding_window %d (every %d layers; torchtitan's %s attends causally over the whole sequence)", m.Window, max(1, m.WindowEvery), model)
	case m.Window == 0 && model == "gpt_oss":
		return refuse("no sliding window (torchtitan's gpt_oss slides in every other layer)")
	case model == "gpt_oss" && !c.LinearBias:
		return refuse("attention_bias false (torchtitan's gpt_oss has biases on every attention projection)")
	case m.MTP > 0 && rel.Version != "0.3":
		return refuse("num_nextn_predict_layers %d (multi-token prediction)", m.MTP)
	case m.Tied && model != "qwen3":
		return refuse("tie_word_embeddings true (torchtitan's %s unties its output)", model)
	case model == "llama3" && m.HeadDim() != m.Hidden/m.Heads:
		return refuse("head_dim %d, not hidden_size / num_attention_heads (torchtitan's llama3 has no head_dim)", m.HeadDim())
	case model == "qwen3" && m.MoE() && m.DenseLayers > 0:
		return refuse("%d dense layers before the experts (torchtitan's qwen3 puts experts in every layer)", m.DenseLayers)
	}
	add("dim", itoa(m.Hidden))
	add("n_layers", itoa(m.Layers))
	add("n_heads", itoa(m.Heads))
	add("vocab_size", itoa(m.Vocab))
	add("norm_eps", num(c.NormEps))
	add("rope_theta", num(c.RopeTheta))
	switch model {
	case "llama3":
		add("n_kv_heads", itoa(m.KVHeads))
		mo, mult := titanFFN(m.Hidden, m.FFN)
		add("multiple_of", itoa(mo))
		add("ffn_dim_multiplier", mult)
		// RoPEScalingArgs is always applied (precompute_freqs_cis): a
		// factor of 1 leaves every frequency as it is.
		if c.RopeScaling == "llama3" {
			add("rope_scaling_args.scaling_factor", num(c.RopeFactor))
			add("rope_scaling_args.low_freq_factor", num(c.RopeLowFreq))
			add("rope_scaling_args.high_freq_factor", num(c.RopeHighFreq))
			add("rope_scaling_args.original_max_position_embeddings", itoa(c.RopeOriginal))
		} else {
			add("rope_scaling_args.scaling_factor", "1.0")
		}
	case "qwen3":
		add("n_kv_heads", itoa(m.KVHeads))
		add("head_dim", itoa(m.HeadDim()))
		add("hidden_dim", itoa(m.FFN))
		add("qk_norm", py(c.QKNorm))
		add("enable_weight_tying", py(m.Tied))
		add("moe_enabled", py(m.MoE()))
		if m.MoE() {
			add("moe_inter_dim", itoa(m.ExpertFFN))
		}
	case "deepseek_v3":
		add("inter_dim", itoa(m.FFN))
		add("moe_inter_dim", itoa(m.ExpertFFN))
		add("n_dense_layers", itoa(m.DenseLayers))
		add("q_lora_rank", itoa(m.QLoRA))
		add("kv_lora_rank", itoa(m.KVLoRA))
		add("qk_nope_head_dim", itoa(m.HeadDim()))
		add("qk_rope_head_dim", itoa(m.RopeDim))
		add("v_head_dim", itoa(m.HeadDim()))
		if c.RopeScaling == "yarn" {
			add("original_seq_len", itoa(c.RopeOriginal))
			add("rope_factor", num(c.RopeFactor))
			add("beta_fast", num(c.BetaFast))
			add("beta_slow", num(c.BetaSlow))
			add("mscale", num(c.MScaleAll)) // the softmax's scale (DeepSeek's mscale_all_dim)
		} else {
			add("rope_factor", "1.0")
		}
		if rel.Version == "0.3" {
			add("num_mtp_layers", itoa(m.MTP))
		}
	case "gpt_oss":
		add("n_kv_heads", itoa(m.KVHeads))
		add("head_dim", itoa(m.HeadDim()))
		add("moe_inter_dim", itoa(m.ExpertFFN))
		add("swiglu_limit", num(c.SwiGLULimit))
		add("sliding_window_size", itoa(m.Window))
		add("original_seq_len", itoa(c.RopeOriginal))
		add("rope_factor", num(c.RopeFactor))
		add("ntk_alpha", num(c.BetaSlow))
		add("ntk_beta", num(c.BetaFast))
	}
	if m.MoE() {
		add("moe_args.num_experts", itoa(m.Experts))
		add("moe_args.num_shared_experts", itoa(m.SharedExperts))
		add("moe_args.top_k", itoa(m.TopK))
		add("moe_args.score_func", strconv.Quote(c.RouterScore))
		// Mixtral and GPT-OSS take the softmax over the top k's logits:
		// the top k's scores renormalised.
		add("moe_args.route_norm", py(c.NormTopK || c.ModelType == "mixtral" || c.ModelType == "gpt_oss"))
		add("moe_args.route_scale", num(max(1, c.RouterScale)))
		add("moe_args.gate_bias", py(c.ModelType == "gpt_oss" && c.LinearBias))
		add("moe_args.score_before_experts", "False") // the experts' outputs weighted, as Hugging Face's models do
		groups, limited := "None", "None"
		if c.RouterGroups > 0 {
			groups, limited = itoa(c.RouterGroups), itoa(c.RouterGroupK)
		}
		add("moe_args.num_expert_groups", groups)
		add("moe_args.num_limited_groups", limited)
		// load_balance_coeff is the update rate of an expert bias
		// (DeepSeek-V3's noaux_tc, bias_update_speed 0.001); None: none.
		lb := "None"
		if c.ExpertBias {
			lb = "0.001"
		}
		add("moe_args.load_balance_coeff", lb)
	}
	return model, args, true, nil
}

// titanFFN is torchtitan 0.2.2's llama3 multiple_of and
// ffn_dim_multiplier (a Python value) that give an MLP of ffn at dim:
// its FeedForward takes int(2 x 4 dim / 3), times the multiplier, up to
// a multiple of multiple_of. Its flavors' pairs first (8B's 1024 and
// 1.3, 70B's 4096 and 1.3, 405B's 4096 and 1.2, the default 256 and
// None), else multiple_of ffn itself.
func titanFFN(dim, ffn int) (int, string) {
	for _, c := range []struct {
		mo   int
		mult string
	}{{1024, "1.3"}, {4096, "1.3"}, {4096, "1.2"}, {256, "None"}} {
		if titanLlamaFFN(dim, c.mo, c.mult) == ffn {
			return c.mo, c.mult
		}
	}
	if h := 2 * 4 * dim / 3; h > ffn {
		return ffn, strconv.FormatFloat(float64(ffn)/float64(h), 'g', -1, 64)
	}
	return ffn, "None"
}

// titanLlamaFFN is torchtitan 0.2.2's llama3 FeedForward width
// (models/llama3/model/model.py): int(2 x 4 dim / 3), int(mult x that)
// where mult is not None, rounded up to a multiple of mo.
func titanLlamaFFN(dim, mo int, mult string) int {
	h := 2 * 4 * dim / 3
	if mult != "None" {
		f, _ := strconv.ParseFloat(mult, 64)
		h = int(f * float64(h))
	}
	return mo * ((h + mo - 1) / mo)
}

// titanNum is v as Python writes it: whole numbers in full (rope_theta
// 1000000), others shortest.
func titanNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// contains reports whether xs has x.
func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// titanArgsComment writes the model args as comment lines: torchtitan's
// model and each field = value.
func titanArgsComment(b *strings.Builder, model string, args []titanArg, rel export.Release) {
	fmt.Fprintf(b, "# model args: torchtitan's %s at the config.json's settings (field names of torchtitan 0.2.2's model args dataclasses; checked with torchtitan %s)\n", model, rel.Checked)
	for _, a := range args {
		fmt.Fprintf(b, "#   %s = %s\n", a.field, a.value)
	}
}
