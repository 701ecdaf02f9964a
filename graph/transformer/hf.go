package transformer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A model by its Hugging Face config.json (the workload
// "hf:PATH/config.json:seq=4096,batch=512"): FromHFConfig reads the
// decoder-only families below into a Spec of the Llama family (SwiGLU,
// RMS norms, rotary positions). Every field of the file is seen: a field
// is modelled (read into the Spec), ignored (harmless: it changes no
// shape and no cost placer counts), or refused in one line naming the
// file and the field, unless it is unset (null, false, 0, "", [] or {}).

// hfMaxBytes bounds a config.json read from disk (they are a few KB).
const hfMaxBytes = 1 << 20

// hfMaxCount bounds every count a config.json gives (layers, widths,
// experts, ...): far above any published model's.
const hfMaxCount = 1 << 24

// How a family's config.json gives its mixture of experts.
const (
	moeNone     = iota
	moeMixtral  // num_local_experts, num_experts_per_tok; experts of intermediate_size
	moeQwen     // num_experts, num_experts_per_tok, moe_intermediate_size, decoder_sparse_step, mlp_only_layers (and Qwen2-MoE's shared expert)
	moeDeepSeek // n_routed_experts, n_shared_experts, moe_intermediate_size, first_k_dense_replace, moe_layer_freq, num_nextn_predict_layers
	moeGPTOSS   // num_local_experts, num_experts_per_tok (experts_per_token); experts of intermediate_size
	moeLlama4   // num_local_experts and a shared expert of intermediate_size, dense layers of intermediate_size_mlp, interleave_moe_layer_step, moe_layers
)

// How a family's config.json gives a sliding window of attention.
const (
	windowNone   = iota
	windowEvery  // sliding_window (null: none) in every layer (Mistral, Mixtral)
	windowQwen   // sliding_window where use_sliding_window, in the layers from max_window_layers on
	windowLayers // layer_types (full_attention, sliding_attention) and sliding_window (GPT-OSS)
	windowGemma  // layer_types, or sliding_window_pattern (every its-th layer full, 1-based; transformers' default 6), and sliding_window (Gemma 3)
	chunkLlama4  // attention_chunk_size in the layers layer_types (chunked_attention) or no_rope_layers (1) give, or all but every no_rope_layer_interval-th (Llama 4)
)

// hfFamily is what one model_type's config.json means.
type hfFamily struct {
	moe, window int
	mla         bool // multi-head latent attention (DeepSeek-V2/V3)
	// shared: a shared expert of shared_expert_intermediate_size
	// (Qwen2-MoE), read as that over moe_intermediate_size shared experts.
	shared bool
	// act is the MLP's activation: "" SwiGLU (hidden_act silu), "geglu"
	// (Gemma's hidden_activation gelu_pytorch_tanh), "relu2" (Nemotron's
	// hidden_act relu2, no gate).
	act string
	// norms is the norms over the hidden state a block has (Spec.Norms;
	// 0: two).
	norms int
	// defaults are the values transformers gives this family's fields
	// where the file has none (Gemma 3's published configs leave its
	// vocabulary, head width and pattern to them).
	defaults map[string]json.RawMessage
	// ignored are this family's harmless fields besides hfIgnored.
	ignored []string
	// aliases are other names transformers writes a field under
	// (Gemma 3's _sliding_window_pattern in 5.x files: the private
	// attribute its sliding_window_pattern property reads), read as the
	// name they stand for where the file does not give that one.
	aliases map[string]string
}

// hfFamilies are the model types FromHFConfig reads.
var hfFamilies = map[string]hfFamily{
	"llama":   {},
	"mistral": {window: windowEvery},
	"mixtral": {moe: moeMixtral, window: windowEvery, ignored: hfRouterFields},
	// Qwen2 (and Qwen2-MoE) always has biases on the query, key and
	// value projections, which no field says: left out of the Spec (q +
	// 2 kv head widths a layer: 4,608 of Qwen2-7B's 233M, under 0.01%).
	"qwen2": {window: windowQwen},
	"qwen3": {window: windowQwen},
	// Qwen2-MoE's shared expert's gate (a linear map of h to 1) is left out.
	"qwen2_moe": {moe: moeQwen, window: windowQwen, shared: true, ignored: hfRouterFields},
	"qwen3_moe": {moe: moeQwen, window: windowQwen, ignored: hfRouterFields},
	// DeepSeek's routing (groups of experts, the scoring function, the
	// balancing loss) changes no shape: a token's experts are any TopK.
	// head_dim is derived (qk_rope_head_dim in transformers).
	"deepseek_v2": {moe: moeDeepSeek, mla: true, ignored: hfDeepSeekFields},
	"deepseek_v3": {moe: moeDeepSeek, mla: true, ignored: hfDeepSeekFields},
	// GPT-OSS's attention biases (attention_bias), its expert biases and
	// attention sinks are left out, as the gpt-oss-120b preset leaves
	// them (0.01% of its parameters); swiglu_limit clamps the activation.
	"gpt_oss": {moe: moeGPTOSS, window: windowLayers,
		ignored: append([]string{"attention_bias", "swiglu_limit", "swiglu_alpha", "initial_context_length"}, hfRouterFields...)},
	// Gemma 3's language model (Gemma Team, arXiv 2503.19786, section
	// 2; transformers v5.24's models/gemma3): a GeGLU MLP, four RMS norms
	// a block, query and key RMS norms (their 2 x head_dim scales a layer
	// left out, as Qwen3's are), local layers of sliding_window between
	// the global ones, embeddings tied and scaled by sqrt(hidden) (no
	// cost). query_pre_attn_scalar scales the scores and
	// rope_local_base_freq is the local layers' rotary base: no shape,
	// no cost. Its published 4B, 12B and 27B configs are model_type
	// gemma3, the language model under text_config (textWrapper).
	"gemma3_text": {window: windowGemma, act: "geglu", norms: 4, defaults: hfGemma3Defaults,
		aliases: map[string]string{"_sliding_window_pattern": "sliding_window_pattern"},
		ignored: []string{"query_pre_attn_scalar", "rope_local_base_freq", "cache_implementation", "hidden_act"}},
	// Nemotron-4 and Minitron (NVIDIA, arXiv 2402.16819 section 2.1;
	// transformers v5.24's models/nemotron): a squared-ReLU MLP without a
	// gate (up_proj, down_proj), rotary positions over
	// partial_rotary_factor of each head (no cost), layer norms with
	// zero-centred scales and a shift (LayerNorm1P: 2 x hidden a norm, of
	// which the shifts, hidden a norm, are left out: 0.003% of
	// Nemotron-4 15B).
	// GLM-4.5 and GLM-4.5-Air (Zhipu AI, arXiv 2508.06471; transformers
	// v5.24's models/glm4_moe): DeepSeek-V3's experts (n_routed_experts,
	// n_shared_experts, first_k_dense_replace dense layers first,
	// num_nextn_predict_layers MTP modules, a sigmoid router with the
	// expert bias), on grouped-query attention with biases on the query,
	// key and value projections (attention_bias: (heads + 2 kv) x
	// head_dim a layer left out, as Qwen2's are: 0.0004% of GLM-4.5),
	// query and key norms where use_qk_norm, rotary over
	// partial_rotary_factor of each head (no cost).
	"glm4_moe": {moe: moeDeepSeek, ignored: append([]string{"attention_bias", "partial_rotary_factor", "use_qk_norm"}, hfDeepSeekFields...)},
	// Llama 4's language model (Meta's Llama-4-Scout-17B-16E and
	// Maverick model cards; transformers v5.24's models/llama4): experts
	// with a shared expert of intermediate_size, top-1 routing, chunked
	// attention (attention_chunk_size) in the layers with rotary
	// positions and global attention without them (no_rope_layers), a
	// weightless L2 norm of the queries and keys there (use_qk_norm: no
	// parameters), the global layers' temperature tuning (attn_scale,
	// floor_scale, attn_temperature_tuning: elementwise, no cost). Its
	// published configs are model_type llama4, the language model under
	// text_config (textWrapper).
	"llama4_text": {moe: moeLlama4, window: chunkLlama4, defaults: hfLlama4Defaults, ignored: append([]string{"attn_scale", "attn_temperature_tuning",
		"floor_scale", "for_llm_compressor", "use_qk_norm", "cache_implementation"}, hfRouterFields...)},
	"nemotron": {act: "relu2", ignored: []string{"partial_rotary_factor", "norm_eps"}},
	// Qwen3-Next (hf_hybrid.go, qwen3Next): Qwen2-MoE's experts with a
	// shared expert, its mixers by layer (layer_types names them, not a
	// window: a sliding window, use_sliding_window, is refused).
	"qwen3_next": {moe: moeQwen, shared: true, ignored: append([]string{"partial_rotary_factor"}, hfRouterFields...)},
}

// hfLlama4Defaults are transformers v5.24's Llama4TextConfig defaults
// (models/llama4/configuration_llama4.py) placer reads where a file
// leaves them out: chunks of 8,192 tokens.
var hfLlama4Defaults = map[string]json.RawMessage{"attention_chunk_size": json.RawMessage("8192")}

// hfGemma3Defaults are transformers v5.24's Gemma3TextConfig defaults
// (models/gemma3/configuration_gemma3.py) of the fields Google's
// published gemma-3-4b/12b/27b configs leave out of their text_config
// (4B's its heads, 8, and key/value heads, 4, too).
var hfGemma3Defaults = map[string]json.RawMessage{
	"vocab_size": json.RawMessage("262208"), "head_dim": json.RawMessage("256"),
	"num_attention_heads": json.RawMessage("8"), "num_key_value_heads": json.RawMessage("4"),
	"hidden_activation": json.RawMessage(`"gelu_pytorch_tanh"`),
	"sliding_window":    json.RawMessage("4096"), "sliding_window_pattern": json.RawMessage("6"),
	"tie_word_embeddings": json.RawMessage("true"),
}

// hfRouterFields are the routers' training settings: no shape, no cost.
var hfRouterFields = []string{"output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob"}

var hfDeepSeekFields = []string{"aux_loss_alpha", "seq_aux", "n_group", "topk_group", "topk_method", "scoring_func",
	"routed_scaling_factor", "norm_topk_prob", "ep_size", "head_dim", "rope_interleave"}

// hfBookkeeping are the fields of a config.json that are not the
// model's: transformers' PreTrainedConfig's own (the class and version
// that wrote the file, its dtype, a classifier head's labels, the
// outputs and the attention kernel a loaded model was asked for, token
// ids, generation settings), the hub's provenance (_name_or_path,
// auto_map, _commit_hash) and a checkpoint's quantization (the plan's
// precision is its --strategy's). Every family's file, and a wrapper's
// beside its text_config, may carry any of them: each is passed over
// alike, whatever its value.
var hfBookkeeping = []string{
	"_name_or_path", "_commit_hash", "architectures", "auto_map", "transformers_version", "model_type",
	"torch_dtype", "dtype", "quantization_config",
	"bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
	"id2label", "label2id", "num_labels", "problem_type", "finetuning_task", "task_specific_params", "tokenizer_class", "prefix",
	"return_dict", "output_hidden_states", "output_attentions", "torchscript", "use_return_dict",
	"attn_implementation", "_attn_implementation", "_attn_implementation_autoset", "experts_implementation", "_experts_implementation",
	"use_cache", "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups", "diversity_penalty",
	"temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
	"encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores", "return_dict_in_generate",
	"forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
	"suppress_tokens", "begin_suppress_tokens",
}

// hfIgnored are the model's fields of every family's config.json that
// change no shape and no cost placer counts: initialisation, the
// numerics of norms and rotary positions (rope_scaling, transformers 5's
// rope_parameters: read for the exports, hfReader.config), the longest
// sequence (the run's seq is the workload's), dropout, tensor-parallel
// pretraining's numerics.
var hfIgnored = []string{
	"initializer_range", "rms_norm_eps", "rope_theta", "rope_scaling", "rope_parameters",
	"max_position_embeddings", "attention_dropout", "pretraining_tp",
}

// HFModelTypes lists the config.json model types FromHFConfig reads.
func HFModelTypes() []string {
	var out []string
	for k := range hfFamilies {
		out = append(out, k)
	}
	for k := range hfWrappers {
		out = append(out, k) // its text_config
	}
	out = append(out, "nemotron_h") // hf_hybrid.go
	slices.Sort(out)
	return out
}

// SplitHF splits the text after "hf:" into the config.json's path and
// the keys after it ("x/config.json:seq=4096,batch=512"): at the last
// ':' whose suffix has an '='; with none, all of it is the path.
func SplitHF(rest string) (path, keys string) {
	if i := strings.LastIndex(rest, ":"); i >= 0 && strings.Contains(rest[i+1:], "=") {
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

// ReadHFConfig reads the config.json at path (or in the folder path)
// with FromHFConfig.
func ReadHFConfig(path string) (Spec, error) {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
		st, err = os.Stat(path)
	}
	name := hfName(path)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: cannot read it: %s", name, hfReason(err))
	}
	// Stat first: opening a pipe for reading would wait for a writer.
	if !st.Mode().IsRegular() {
		return Spec{}, fmt.Errorf("%s: not a file (want a Hugging Face config.json)", name)
	}
	f, err := os.Open(path)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: cannot read it: %s", name, hfReason(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, hfMaxBytes+1))
	if err != nil {
		return Spec{}, fmt.Errorf("%s: cannot read it: %s", name, hfReason(err))
	}
	if len(data) > hfMaxBytes {
		return Spec{}, fmt.Errorf("%s: larger than %d bytes: not a config.json", name, hfMaxBytes)
	}
	return FromHFConfig(data, path)
}

// hfReason is err without the path a PathError repeats.
func hfReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// hfName is where as an error names it: quoted where it would break the
// line.
func hfName(where string) string {
	if where == "" {
		return `""`
	}
	if !utf8.ValidString(where) || strings.IndexFunc(where, unicode.IsControl) >= 0 {
		return strconv.Quote(where)
	}
	return where
}

// FromHFConfig reads a Hugging Face config.json (data; where names it in
// errors) into a Spec with the placeholder sequence 4,096 and batch 1 of
// the presets. Errors are one line naming where and the field.
func FromHFConfig(data []byte, where string) (Spec, error) {
	r := &hfReader{where: hfName(where), seen: map[string]bool{}}
	if err := json.Unmarshal(hfSpecialFloats(data), &r.raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Spec{}, fmt.Errorf("%s: not JSON: %s (at byte %d)", r.where, hfOneLine(se.Error()), se.Offset)
		}
		return Spec{}, fmt.Errorf("%s: not a JSON object (want a Hugging Face config.json)", r.where)
	}
	typ, ok, err := r.str("model_type")
	if err != nil {
		return Spec{}, err
	}
	if !ok {
		return Spec{}, fmt.Errorf("%s: field \"model_type\" missing (placer reads %s)", r.where, strings.Join(HFModelTypes(), ", "))
	}
	if _, ok := hfWrappers[typ]; ok {
		return r.textWrapper(typ, where)
	}
	if typ == "nemotron_h" {
		return r.hybrid(typ)
	}
	fam, ok := hfFamilies[typ]
	if !ok {
		return Spec{}, r.fail("model_type", "placer reads %s (decoder-only transformers)%s", strings.Join(HFModelTypes(), ", "), hfLater(typ))
	}
	if err := r.alias(fam); err != nil {
		return Spec{}, err
	}
	for k, v := range fam.defaults {
		if _, ok := r.raw[k]; !ok {
			r.raw[k] = v
		}
	}
	m, err := r.spec(typ, fam)
	if err != nil {
		return Spec{}, err
	}
	if typ == "qwen3_next" {
		if err := r.qwen3Next(&m); err != nil {
			return Spec{}, err
		}
	}
	if err := r.config(typ, &m); err != nil {
		return Spec{}, err
	}
	if err := r.leftover(fam); err != nil {
		return Spec{}, err
	}
	if err := m.Check(); err != nil {
		return Spec{}, fmt.Errorf("%s: %s", r.where, hfOneLine(err.Error()))
	}
	return m, nil
}

// alias reads each of fam's aliases as the field it stands for where
// the file gives only the alias; where it gives both, they must agree.
func (r *hfReader) alias(fam hfFamily) error {
	for a, k := range fam.aliases {
		v, ok := r.raw[a]
		if !ok {
			continue
		}
		r.seen[a] = true
		if w, both := r.raw[k]; !both {
			r.raw[k] = v
		} else if !bytes.Equal(bytes.TrimSpace(w), bytes.TrimSpace(v)) {
			return r.fail(a, "disagrees with %s %s", k, r.show(k))
		}
	}
	return nil
}

// hfSpecialFloats is data with the bare Infinity, -Infinity and NaN
// that Python's json module writes and reads (allow_nan, its default:
// NVIDIA's published Nemotron-H configs, files written by transformers
// before 5.x) as the object transformers 5 writes in their place
// ({"__float__": "Infinity"}, PreTrainedConfig._encode_special_floats),
// which encoding/json reads; outside strings only, anything else
// unchanged. Such a value where a number is read is refused as not one
// (a count of Infinity is no count); in a field placer ignores it is
// read as transformers reads it, a float.
func hfSpecialFloats(data []byte) []byte {
	var out []byte // nil until a token is replaced
	in, esc := false, false
	last := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if in {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		if c == '"' {
			in = true
			continue
		}
		for _, tok := range [...]string{"-Infinity", "Infinity", "NaN"} {
			if !bytes.HasPrefix(data[i:], []byte(tok)) || (i > 0 && hfWordByte(data[i-1])) ||
				(i+len(tok) < len(data) && hfWordByte(data[i+len(tok)])) {
				continue
			}
			out = append(append(append(out, data[last:i]...), `{"__float__":"`...), tok...)
			out = append(out, `"}`...)
			i += len(tok) - 1
			last = i + 1
			break
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// hfWordByte is whether c continues a JSON literal or number (a token
// inside "Infinityx" or "1NaN" is no token of its own).
func hfWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// spec reads the modelled fields of a config.json of family fam.
func (r *hfReader) spec(typ string, fam hfFamily) (Spec, error) {
	m := Spec{Family: "llama", Seq: 4096, Batch: 1}
	var err error
	need := func(k string, dst *int) {
		if err == nil {
			*dst, err = r.count(k, true, 1)
		}
	}
	need("num_hidden_layers", &m.Layers)
	need("hidden_size", &m.Hidden)
	need("num_attention_heads", &m.Heads)
	need("intermediate_size", &m.FFN)
	need("vocab_size", &m.Vocab)
	if err != nil {
		return Spec{}, err
	}
	if err := r.activation(fam, &m); err != nil {
		return Spec{}, err
	}
	m.Norms = fam.norms
	if m.Tied, err = r.boolean("tie_word_embeddings"); err != nil {
		return Spec{}, err
	}
	if m.KVHeads, err = r.count("num_key_value_heads", false, 1); err != nil {
		return Spec{}, err
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if fam.mla {
		if err := r.mla(&m); err != nil {
			return Spec{}, err
		}
	} else {
		d, err := r.count("head_dim", false, 1)
		if err != nil {
			return Spec{}, err
		}
		if d > 0 && (m.Hidden%m.Heads != 0 || m.Hidden/m.Heads != d) {
			m.Head = d
		}
		if m.Heads%m.KVHeads != 0 {
			return Spec{}, r.fail("num_key_value_heads", "does not divide the %d heads", m.Heads)
		}
		if m.Head == 0 && m.Hidden%m.Heads != 0 {
			return Spec{}, r.fail("num_attention_heads", "does not divide hidden_size %d (and no head_dim)", m.Hidden)
		}
	}
	if err := r.experts(&m, fam); err != nil {
		return Spec{}, err
	}
	if fam.window == chunkLlama4 {
		if m.Chunk, m.WindowEvery, m.GlobalEvery, err = r.chunks(m.Layers); err != nil {
			return Spec{}, err
		}
		return m, nil
	}
	if m.Window, m.WindowEvery, m.GlobalEvery, err = r.window(fam.window, m.Layers); err != nil {
		return Spec{}, err
	}
	return m, nil
}

// activation reads the MLP's activation as family fam names it.
func (r *hfReader) activation(fam hfFamily, m *Spec) error {
	switch fam.act {
	case "geglu":
		// Gemma3MLP applies hidden_activation (hidden_act, an older
		// name, is ignored by it: hfFamilies).
		if act, _, err := r.str("hidden_activation"); err != nil {
			return err
		} else if act != "gelu_pytorch_tanh" && act != "gelu" {
			return r.fail("hidden_activation", "placer models Gemma's gated GeLU (gelu_pytorch_tanh) only")
		}
	case "relu2":
		if act, ok, err := r.str("hidden_act"); err != nil {
			return err
		} else if ok && act != "relu2" {
			return r.fail("hidden_act", "placer models Nemotron's squared ReLU (relu2) only")
		}
		// Minitron's NeMo export writes the head width as kv_channels
		// beside head_dim (transformers reads head_dim).
		if kc, err := r.count("kv_channels", false, 1); err != nil {
			return err
		} else if d, ok := r.raw["head_dim"]; kc > 0 && (!ok || string(d) != strconv.Itoa(kc)) {
			return r.fail("kv_channels", "a head width head_dim does not give: transformers reads head_dim")
		}
	default:
		if act, ok, err := r.str("hidden_act"); err != nil {
			return err
		} else if ok && act != "silu" {
			return r.fail("hidden_act", "placer models SwiGLU's silu only")
		}
	}
	m.Act = fam.act
	return nil
}

// hfLater names, for a model type placer does not read yet, what it is.
func hfLater(typ string) string {
	switch typ {
	case "jamba", "falcon_h1", "mamba", "mamba2":
		return "; its Mamba-2 or linear-attention layers beside attention are a later step"
	case "gemma", "gemma2":
		return "; of Gemma, placer reads Gemma 3 (gemma3, gemma3_text)"
	}
	return ""
}

// hfWrappers are the multimodal model types FromHFConfig reads as their
// language model (text_config, a config.json of the model type named)
// and the fields beside it: the vision tower and the image tokens, which
// a text run does not go through (the tower's parameters are left out
// with them: Gemma 3's SigLIP 0.42B, Llama 4's 0.9B), and the file's
// provenance.
var hfWrappers = map[string]struct {
	text   string
	fields []string
}{
	"gemma3": {"gemma3_text", []string{"vision_config", "mm_tokens_per_image", "boi_token_index", "eoi_token_index",
		"image_token_index", "image_token_id", "boi_token_id", "eoi_token_id", "initializer_range", "text_config", "tie_word_embeddings"}},
	"llama4": {"llama4_text", []string{"vision_config", "boi_token_index", "eoi_token_index", "image_token_index",
		"initializer_range", "text_config", "tie_word_embeddings"}},
}

// textWrapper reads a multimodal config.json (Gemma 3 4B, 12B, 27B:
// Gemma3ForConditionalGeneration; Llama 4:
// Llama4ForConditionalGeneration) as its language model, its text_config
// (transformers' defaults where it leaves a field out, as the family has
// them).
func (r *hfReader) textWrapper(typ, where string) (Spec, error) {
	w := hfWrappers[typ]
	raw, ok := r.get("text_config")
	if !ok {
		return Spec{}, fmt.Errorf("%s: field \"text_config\" missing (a %s config.json has its language model there)", r.where, typ)
	}
	var text map[string]json.RawMessage
	if json.Unmarshal(raw, &text) != nil {
		return Spec{}, r.fail("text_config", "not a JSON object")
	}
	if t, ok := text["model_type"]; ok && string(t) != strconv.Quote(w.text) {
		return Spec{}, r.fail("text_config", "model_type %s: want %s", hfOneLine(string(t)), w.text)
	}
	text["model_type"] = json.RawMessage(strconv.Quote(w.text))
	// transformers ties the output layer to the text embedding as the
	// wrapper's tie_word_embeddings says (Gemma3Config's default true,
	// Llama4Config's false).
	if tie, ok := r.raw["tie_word_embeddings"]; ok {
		if _, inner := text["tie_word_embeddings"]; !inner {
			text["tie_word_embeddings"] = tie
		}
	}
	for _, k := range w.fields {
		r.seen[k] = true
	}
	if err := r.leftover(hfFamily{}); err != nil {
		return Spec{}, err
	}
	data, _ := json.Marshal(text)
	return FromHFConfig(data, where+": text_config")
}

// mla reads DeepSeek's latent attention.
func (r *hfReader) mla(m *Spec) error {
	var err error
	if m.KVHeads != m.Heads {
		return r.fail("num_key_value_heads", "latent attention has every head's key and value (%d heads)", m.Heads)
	}
	if m.KVLoRA, err = r.count("kv_lora_rank", true, 1); err != nil {
		return err
	}
	if m.QLoRA, err = r.count("q_lora_rank", false, 1); err != nil {
		return err
	}
	if m.RopeDim, err = r.count("qk_rope_head_dim", true, 1); err != nil {
		return err
	}
	if m.Head, err = r.count("qk_nope_head_dim", true, 1); err != nil {
		return err
	}
	v, err := r.count("v_head_dim", true, 1)
	if err != nil {
		return err
	}
	// transformers 5 writes the query and key head's width, the nope and
	// rope parts' sum, as qk_head_dim (DeepseekV2Config, V3's).
	if qk, err := r.count("qk_head_dim", false, 1); err != nil {
		return err
	} else if qk != 0 && qk != m.Head+m.RopeDim {
		return r.fail("qk_head_dim", "not qk_nope_head_dim %d + qk_rope_head_dim %d", m.Head, m.RopeDim)
	}
	if v != m.Head {
		return r.fail("v_head_dim", "values of another width than qk_nope_head_dim %d: placer does not model it", m.Head)
	}
	return nil
}

// experts reads the mixture of experts of family fam.
func (r *hfReader) experts(m *Spec, fam hfFamily) error {
	var err error
	moe := fam.moe
	switch moe {
	case moeNone:
		return nil
	case moeMixtral, moeGPTOSS:
		if m.Experts, err = r.count("num_local_experts", true, 1); err != nil {
			return err
		}
		m.ExpertFFN = m.FFN
	case moeLlama4:
		if err := r.llama4Experts(m); err != nil {
			return err
		}
	case moeQwen:
		// transformers 5 writes Qwen3-MoE's num_experts as
		// num_local_experts (Qwen3MoeConfig's attribute_map).
		k := "num_experts"
		if _, ok := r.get(k); !ok {
			if _, ok := r.get("num_local_experts"); ok {
				k = "num_local_experts"
			}
		}
		if m.Experts, err = r.count(k, true, 1); err != nil {
			return err
		}
		if m.ExpertFFN, err = r.count("moe_intermediate_size", true, 1); err != nil {
			return err
		}
		if step, err := r.count("decoder_sparse_step", false, 1); err != nil {
			return err
		} else if step > 1 {
			return r.fail("decoder_sparse_step", "experts in every %d-th layer only: placer does not model it", step)
		}
		if m.DenseLayers, err = r.firstLayers("mlp_only_layers", m.Layers); err != nil {
			return err
		}
		if !fam.shared {
			break
		}
		shared, err := r.count("shared_expert_intermediate_size", false, 0)
		if err != nil {
			return err
		}
		if shared%m.ExpertFFN != 0 {
			return r.fail("shared_expert_intermediate_size", "not a multiple of moe_intermediate_size %d: placer does not model it", m.ExpertFFN)
		}
		// A shared expert of n x F is n shared experts of F: the same
		// parameters and FLOPs.
		m.SharedExperts = shared / m.ExpertFFN
	case moeDeepSeek:
		if m.Experts, err = r.count("n_routed_experts", true, 1); err != nil {
			return err
		}
		if m.ExpertFFN, err = r.count("moe_intermediate_size", true, 1); err != nil {
			return err
		}
		if m.SharedExperts, err = r.count("n_shared_experts", false, 0); err != nil {
			return err
		}
		if m.DenseLayers, err = r.count("first_k_dense_replace", false, 0); err != nil {
			return err
		}
		if freq, err := r.count("moe_layer_freq", false, 1); err != nil {
			return err
		} else if freq > 1 {
			return r.fail("moe_layer_freq", "experts in every %d-th layer only: placer does not model it", freq)
		}
		if m.MTP, err = r.count("num_nextn_predict_layers", false, 0); err != nil {
			return err
		}
		if m.DenseLayers >= m.Layers {
			return r.fail("first_k_dense_replace", "leaves none of the %d layers with experts", m.Layers)
		}
	}
	if m.TopK, err = r.count("num_experts_per_tok", moe != moeGPTOSS, 1); err != nil {
		return err
	}
	if moe == moeGPTOSS {
		k, err := r.count("experts_per_token", m.TopK == 0, 1)
		if err != nil {
			return err
		}
		if m.TopK == 0 {
			m.TopK = k
		} else if k != 0 && k != m.TopK {
			return r.fail("experts_per_token", "disagrees with num_experts_per_tok %d", m.TopK)
		}
	}
	if m.TopK > m.Experts {
		return r.fail("num_experts_per_tok", "more than the %d experts", m.Experts)
	}
	return nil
}

// llama4Experts reads Llama 4's experts: num_local_experts routed and
// one shared expert (Llama4TextMoe's shared_expert), all of
// intermediate_size, in every layer (interleave_moe_layer_step 1; the
// dense layers between them, of intermediate_size_mlp, Maverick's every
// other layer, placer does not model yet: its pipeline stages hold a
// model's dense layers first).
func (r *hfReader) llama4Experts(m *Spec) error {
	var err error
	if m.Experts, err = r.count("num_local_experts", true, 1); err != nil {
		return err
	}
	m.ExpertFFN, m.SharedExperts = m.FFN, 1
	if f, err := r.count("intermediate_size_mlp", false, 1); err != nil {
		return err
	} else if f > 0 {
		m.FFN = f // the dense layers' width: none here, but exports write it
	}
	if step, err := r.count("interleave_moe_layer_step", false, 1); err != nil {
		return err
	} else if step > 1 {
		return r.fail("interleave_moe_layer_step", "experts in every %d-th layer, dense layers between: placer does not model it yet (its stages hold a model's dense layers first)", step)
	}
	if raw, ok := r.get("moe_layers"); ok {
		var idx []float64
		if json.Unmarshal(raw, &idx) != nil {
			return r.fail("moe_layers", "not a list of layer indices")
		}
		slices.Sort(idx)
		every := len(idx) == m.Layers
		for i, v := range idx {
			every = every && v == float64(i)
		}
		if !every {
			return r.fail("moe_layers", "experts in some of the %d layers only: placer does not model it yet", m.Layers)
		}
	}
	return nil
}

// firstLayers reads a list of layer indices that must be the first k
// layers (0, 1, ..., k-1), and gives k.
func (r *hfReader) firstLayers(k string, layers int) (int, error) {
	raw, ok := r.get(k)
	if !ok {
		return 0, nil
	}
	var idx []float64
	if json.Unmarshal(raw, &idx) != nil {
		return 0, r.fail(k, "not a list of layer indices")
	}
	slices.Sort(idx)
	for i, v := range idx {
		if v != float64(i) {
			return 0, r.fail(k, "dense layers other than the first ones: placer does not model it")
		}
	}
	if len(idx) >= layers {
		return 0, r.fail(k, "leaves none of the %d layers with experts", layers)
	}
	return len(idx), nil
}

// window reads a sliding window of attention as the family gives it:
// the window's tokens and its layers: every every-th layer from the
// first (0: every layer), or (global > 0) every layer but every
// global-th, counted from 1.
func (r *hfReader) window(kind, layers int) (window, every, global int, err error) {
	if kind == windowNone {
		return 0, 0, 0, nil
	}
	size, err := r.count("sliding_window", false, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	sliding, err := r.slidingLayers(kind, layers, size)
	if err != nil || len(sliding) == 0 {
		return 0, 0, 0, err
	}
	if size == 0 {
		return 0, 0, 0, fmt.Errorf("%s: field \"sliding_window\" missing (layer_types has sliding_attention layers)", r.where)
	}
	every, global, ok := windowPattern(sliding, layers)
	if !ok {
		return 0, 0, 0, r.fail("layer_types", "sliding_attention neither in every N-th layer from the first nor in all but every N-th: placer does not model it")
	}
	return size, every, global, nil
}

// chunks reads Llama 4's chunked attention: attention_chunk_size (null:
// none) in the layers layer_types names chunked_attention, or else those
// no_rope_layers marks 1 (rotary positions, Llama4TextConfig's rule), or
// else every layer but every no_rope_layer_interval-th (default 4).
func (r *hfReader) chunks(layers int) (chunk, every, global int, err error) {
	if chunk, err = r.count("attention_chunk_size", false, 1); err != nil || chunk == 0 {
		r.seen["layer_types"], r.seen["no_rope_layers"], r.seen["no_rope_layer_interval"] = true, true, true
		return 0, 0, 0, err
	}
	var local []int
	interval, err := r.count("no_rope_layer_interval", false, 1)
	if err != nil {
		return 0, 0, 0, err
	}
	if raw, ok := r.get("layer_types"); ok {
		var types []string
		if json.Unmarshal(raw, &types) != nil || len(types) != layers {
			return 0, 0, 0, r.fail("layer_types", "not a list of the %d layers' attention", layers)
		}
		for i, t := range types {
			switch t {
			case "chunked_attention":
				local = append(local, i)
			case "full_attention":
			default:
				return 0, 0, 0, r.fail("layer_types", "layer %d is %q: placer models full_attention and chunked_attention", i, t)
			}
		}
		r.seen["no_rope_layers"] = true
	} else if raw, ok := r.get("no_rope_layers"); ok {
		var rope []int
		if json.Unmarshal(raw, &rope) != nil || len(rope) != layers {
			return 0, 0, 0, r.fail("no_rope_layers", "not a list of the %d layers' 1 (rotary, chunked) or 0", layers)
		}
		for i, v := range rope {
			if v != 0 {
				local = append(local, i)
			}
		}
	} else {
		for i := 0; i < layers; i++ {
			if (i+1)%cmp.Or(interval, 4) != 0 {
				local = append(local, i)
			}
		}
	}
	if len(local) == 0 {
		return 0, 0, 0, nil
	}
	every, global, ok := windowPattern(local, layers)
	if !ok {
		return 0, 0, 0, r.fail("no_rope_layers", "chunked layers neither every N-th from the first nor all but every N-th: placer does not model it")
	}
	return chunk, every, global, nil
}

// slidingLayers is the layers with the window, as the family's
// layer_types or its older fields give them.
func (r *hfReader) slidingLayers(kind, layers, size int) ([]int, error) {
	var sliding []int
	if raw, ok := r.get("layer_types"); ok {
		var types []string
		if json.Unmarshal(raw, &types) != nil {
			return nil, r.fail("layer_types", "not a list of strings")
		}
		if len(types) != layers {
			return nil, r.fail("layer_types", "%d entries for num_hidden_layers %d", len(types), layers)
		}
		for i, t := range types {
			switch t {
			case "sliding_attention":
				sliding = append(sliding, i)
			case "full_attention":
			default:
				return nil, r.fail("layer_types", "layer %d is %q: placer models full_attention and sliding_attention", i, t)
			}
		}
		switch kind {
		case windowQwen:
			// The switches layer_types was written from.
			r.seen["use_sliding_window"], r.seen["max_window_layers"] = true, true
		case windowGemma:
			r.seen["sliding_window_pattern"] = true
		}
		return sliding, nil
	}
	switch kind {
	case windowEvery:
		if size > 0 {
			return allLayers(layers), nil
		}
	case windowQwen:
		use, err := r.boolean("use_sliding_window")
		if err != nil {
			return nil, err
		}
		from, err := r.count("max_window_layers", false, 0)
		if err != nil {
			return nil, err
		}
		if !use || size == 0 || from >= layers {
			return nil, nil
		}
		if from > 0 {
			return nil, r.fail("max_window_layers", "the window in the layers from %d on only: placer does not model it", from)
		}
		return allLayers(layers), nil
	case windowLayers:
		// transformers' default: every other layer from the first.
		for i := 0; i < layers; i += 2 {
			sliding = append(sliding, i)
		}
	case windowGemma:
		// transformers' Gemma3TextConfig: layer i slides unless
		// (i+1) % sliding_window_pattern is 0.
		n, err := r.count("sliding_window_pattern", false, 1)
		if err != nil {
			return nil, err
		}
		for i := 0; i < layers; i++ {
			if (i+1)%max(1, n) != 0 {
				sliding = append(sliding, i)
			}
		}
	}
	return sliding, nil
}

// allLayers is 0, 1, ..., layers-1.
func allLayers(layers int) []int {
	out := make([]int, layers)
	for i := range out {
		out[i] = i
	}
	return out
}

// windowPattern is the Spec's layout of the layers sliding (sorted, at
// least one) of layers: every every-th layer from the first (0: every
// layer), or every layer but every global-th counted from 1; ok false
// where it is neither.
func windowPattern(sliding []int, layers int) (every, global int, ok bool) {
	every = layers
	if len(sliding) > 1 {
		every = sliding[1]
	}
	ok = every > 0
	for i, l := range sliding {
		if l != i*every || len(sliding) != (layers+every-1)/every {
			ok = false
		}
	}
	if ok {
		if every == 1 {
			every = 0
		}
		return every, 0, true
	}
	var full []int
	for i, j := 0, 0; i < layers; i++ {
		if j < len(sliding) && sliding[j] == i {
			j++
		} else {
			full = append(full, i)
		}
	}
	if len(full) == 0 {
		return 0, 0, true
	}
	global = full[0] + 1
	if global < 2 || len(full) != layers/global {
		return 0, 0, false
	}
	for k, l := range full {
		if l != (k+1)*global-1 {
			return 0, 0, false
		}
	}
	return 0, global, true
}

// leftover refuses the first field, in name order, that is neither read
// nor harmless nor unset.
func (r *hfReader) leftover(fam hfFamily) error {
	keys := make([]string, 0, len(r.raw))
	for k := range r.raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if r.seen[k] || slices.Contains(hfBookkeeping, k) || slices.Contains(hfIgnored, k) || slices.Contains(fam.ignored, k) || hfUnset(r.raw[k]) {
			continue
		}
		return r.fail(k, "placer does not model it")
	}
	return nil
}

// hfUnset reports whether a value is null, false, zero, "", [] or {}.
func hfUnset(raw json.RawMessage) bool {
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return false
	}
	switch s := c.String(); s {
	case "null", "false", `""`, "[]", "{}":
		return true
	default:
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && f == 0
	}
}

// hfReader reads a config.json's fields, marking each it reads.
type hfReader struct {
	where  string
	family string
	raw    map[string]json.RawMessage
	seen   map[string]bool
}

// get is field k's value, unless it is absent or null; k is seen.
func (r *hfReader) get(k string) (json.RawMessage, bool) {
	r.seen[k] = true
	raw, ok := r.raw[k]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false
	}
	return raw, true
}

// count reads a whole number from min to hfMaxCount (0 where absent or
// null, an error where required).
func (r *hfReader) count(k string, required bool, min int) (int, error) {
	raw, ok := r.get(k)
	if !ok {
		if required {
			return 0, fmt.Errorf("%s: field %q missing (a %s config.json has it)", r.where, k, r.family)
		}
		return 0, nil
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f < float64(min) || f > hfMaxCount {
		return 0, r.fail(k, "not a whole number from %d to %d", min, hfMaxCount)
	}
	return int(f), nil
}

// str reads a string.
func (r *hfReader) str(k string) (string, bool, error) {
	raw, ok := r.get(k)
	if !ok {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false, r.fail(k, "not a string")
	}
	if k == "model_type" {
		r.family = s
	}
	return s, true, nil
}

// boolean reads true or false (false where absent or null).
func (r *hfReader) boolean(k string) (bool, error) {
	raw, ok := r.get(k)
	if !ok {
		return false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, r.fail(k, "not true or false")
	}
	return b, nil
}

// fail is an error about field k, its value shown.
func (r *hfReader) fail(k, format string, args ...any) error {
	return fmt.Errorf("%s: field %q (%s): %s", r.where, k, r.show(k), fmt.Sprintf(format, args...))
}

// show is field k's value in one short line.
func (r *hfReader) show(k string) string {
	raw, ok := r.raw[k]
	if !ok {
		return "absent"
	}
	var c bytes.Buffer
	s := string(raw)
	if json.Compact(&c, raw) == nil {
		s = c.String()
	}
	s = hfOneLine(s)
	if utf8.RuneCountInString(s) > 48 {
		s = string([]rune(s)[:45]) + "..."
	}
	return s
}

// hfOneLine is s on one line.
func hfOneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

// config reads the settings of a model_type typ file that change no
// cost placer counts but that an export writes (ModelConfig).
func (r *hfReader) config(typ string, m *Spec) error {
	c := ModelConfig{ModelType: typ, RouterScore: "softmax"}
	var err error
	num := func(k string, dst *float64) {
		if err != nil {
			return
		}
		raw, ok := r.get(k)
		if !ok {
			return
		}
		if json.Unmarshal(raw, dst) != nil || *dst < 0 || math.IsInf(*dst, 0) {
			err = r.fail(k, "not a number at least 0")
		}
	}
	num("rope_theta", &c.RopeTheta)
	num("rms_norm_eps", &c.NormEps)
	num("attention_dropout", &c.AttentionDropout)
	num("routed_scaling_factor", &c.RouterScale)
	num("swiglu_limit", &c.SwiGLULimit)
	num("partial_rotary_factor", &c.RotaryPercent)
	if c.NormEps == 0 {
		num("norm_eps", &c.NormEps) // Nemotron's name of it
	}
	num("router_aux_loss_coef", &c.AuxLoss)
	if c.AuxLoss == 0 {
		num("aux_loss_alpha", &c.AuxLoss)
	}
	if err != nil {
		return err
	}
	if err := r.ropeParameters(&c); err != nil {
		return err
	}
	if raw, ok := r.get("rope_scaling"); ok {
		if err := r.ropeScaling("rope_scaling", raw, &c); err != nil {
			return err
		}
	}
	if c.NormTopK, err = r.boolean("norm_topk_prob"); err != nil {
		return err
	}
	if s, ok, err := r.str("scoring_func"); err != nil {
		return err
	} else if ok {
		c.RouterScore = s
	}
	if method, _, err := r.str("topk_method"); err != nil {
		return err
	} else {
		c.ExpertBias = method == "noaux_tc"
	}
	if c.RouterGroups, err = r.count("n_group", false, 0); err != nil {
		return err
	}
	if c.RouterGroupK, err = r.count("topk_group", false, 0); err != nil {
		return err
	}
	switch typ {
	case "qwen2", "qwen2_moe":
		// Always in Qwen2 (its files say nothing of it); transformers
		// 5's Qwen2-MoE writes qkv_bias (its default true), which a
		// file may turn off.
		c.QKVBias = true
		if raw, ok := r.get("qkv_bias"); ok && hfUnset(raw) {
			c.QKVBias = false
		} else if ok && string(bytes.TrimSpace(raw)) != "true" {
			return r.fail("qkv_bias", "not true or false")
		}
	case "qwen3", "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3", "gemma3_text":
		c.QKNorm = true
	case "llama4_text":
		// Llama4Router: the top-k logits' sigmoid.
		c.RouterScore = "sigmoid"
	case "glm4_moe":
		// Glm4MoeTopkRouter: sigmoid scores and e_score_correction_bias,
		// whatever the file says.
		c.RouterScore, c.ExpertBias = "sigmoid", true
		if c.QKVBias, err = r.boolean("attention_bias"); err != nil {
			return err
		}
		if c.QKNorm, err = r.boolean("use_qk_norm"); err != nil {
			return err
		}
	case "nemotron_h":
		// NemotronHTopkRouter (transformers 5.24.0
		// modeling_nemotron_h.py): sigmoid scores and
		// e_score_correction_bias, where the model has experts.
		if m.MoE() {
			c.RouterScore, c.ExpertBias = "sigmoid", true
		}
	case "gpt_oss":
		// Its attention_bias (ignored by the shape: hfFamilies) puts
		// biases on every linear layer, its experts' too.
		if c.LinearBias, err = r.boolean("attention_bias"); err != nil {
			return err
		}
	}
	m.Config = c
	return nil
}

// ropeParameters reads transformers 5's rope_parameters (its rope_theta,
// rope_type and scaling in one object; Gemma 3's one such object a
// layer type, of which the full-attention layers' is read) into c where
// the older fields (rope_theta, rope_scaling, partial_rotary_factor)
// left it unset.
func (r *hfReader) ropeParameters(c *ModelConfig) error {
	raw, ok := r.get("rope_parameters")
	if !ok {
		return nil
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return r.fail("rope_parameters", "not an object")
	}
	if full, ok := f["full_attention"]; ok {
		raw, f = full, nil
		if json.Unmarshal(raw, &f) != nil {
			return r.fail("rope_parameters", "full_attention is not an object")
		}
	}
	for k, dst := range map[string]*float64{"rope_theta": &c.RopeTheta, "partial_rotary_factor": &c.RotaryPercent} {
		var x float64
		if v, ok := f[k]; ok && (json.Unmarshal(v, &x) != nil || x < 0 || math.IsInf(x, 0)) {
			return r.fail("rope_parameters", "%s is not a number at least 0", k)
		} else if ok && *dst == 0 {
			*dst = x
		}
	}
	if _, old := r.get("rope_scaling"); old {
		return nil // the older field's scaling, read next
	}
	return r.ropeScaling("rope_parameters", raw, c)
}

// ropeScaling reads a rotary scaling object (field's value raw:
// rope_scaling, or rope_parameters) into c.
func (r *hfReader) ropeScaling(field string, raw json.RawMessage, c *ModelConfig) error {
	var rs struct {
		Type, RopeType        string
		Factor, MScale, MAll  float64
		Low, High, Fast, Slow float64
		Original              int
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return r.fail(field, "not an object")
	}
	for k, dst := range map[string]*string{"type": &rs.Type, "rope_type": &rs.RopeType} {
		if v, ok := f[k]; ok && json.Unmarshal(v, dst) != nil {
			return r.fail(field, "%s is not a string", k)
		}
	}
	for k, dst := range map[string]*float64{"factor": &rs.Factor, "mscale": &rs.MScale, "mscale_all_dim": &rs.MAll,
		"low_freq_factor": &rs.Low, "high_freq_factor": &rs.High, "beta_fast": &rs.Fast, "beta_slow": &rs.Slow} {
		if v, ok := f[k]; ok && (json.Unmarshal(v, dst) != nil || *dst < 0 || math.IsInf(*dst, 0)) {
			return r.fail(field, "%s is not a number at least 0", k)
		}
	}
	if v, ok := f["original_max_position_embeddings"]; ok && (json.Unmarshal(v, &rs.Original) != nil || rs.Original < 0) {
		return r.fail(field, "original_max_position_embeddings is not a count")
	}
	c.RopeScaling = cmpOr(rs.RopeType, rs.Type)
	if c.RopeScaling == "default" {
		c.RopeScaling = ""
	}
	c.RopeFactor, c.MScale, c.MScaleAll = rs.Factor, rs.MScale, rs.MAll
	c.RopeLowFreq, c.RopeHighFreq, c.BetaFast, c.BetaSlow, c.RopeOriginal = rs.Low, rs.High, rs.Fast, rs.Slow, rs.Original
	return nil
}

// cmpOr is the first of a, b that is not "".
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
