package transformer

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is a decoder-only transformer and its training batch. GPT (Radford
// et al.; Megatron-LM's GPT) has learned positions, layer norms, a GeLU
// MLP of 4 x Hidden, biases and an output layer tied to the token
// embedding; Llama has rotary positions, RMS norms, a SwiGLU MLP, no
// biases, grouped-query attention and an untied output layer.
type Spec struct {
	Family  string // "gpt" or "llama"
	Layers  int    // transformer blocks l
	Hidden  int    // hidden size h
	Heads   int    // attention heads a
	KVHeads int    // key/value heads (grouped-query attention; = Heads in GPT)
	FFN     int    // MLP inner width (4h in GPT; SwiGLU's in Llama)
	Seq     int    // sequence length s
	Vocab   int    // vocabulary V
	Batch   int    // global batch B, in sequences
	Tied    bool   // the output layer's weight is the token embedding

	// Head is the width of one attention head where it is not Hidden /
	// Heads (Qwen3, GPT-OSS: head_dim in their config.json); 0: Hidden /
	// Heads.
	Head int

	// Mixture of experts (0 Experts: a dense model). Every layer but the
	// first DenseLayers replaces its MLP by Experts experts of ExpertFFN
	// each (the family's MLP: SwiGLU in Llama), TopK of them routed to
	// per token by a linear router over the hidden state, beside
	// SharedExperts experts of ExpertFFN every token goes through
	// (DeepSeek's). The DenseLayers before the first MoE layer keep the
	// dense MLP of FFN.
	Experts, TopK, ExpertFFN   int
	SharedExperts, DenseLayers int

	// Multi-head latent attention (DeepSeek-V2/V3), where KVLoRA > 0: the
	// keys and values through a rank-KVLoRA compression, the queries
	// through a rank-QLoRA one (0: a full projection), each head's query
	// and key of Head (no position) + RopeDim (rotary) widths, its value
	// of Head.
	QLoRA, KVLoRA, RopeDim int

	// MTP is the multi-token-prediction modules after the last layer
	// (DeepSeek-V3: 1), each a projection of the hidden state and the
	// next token's embedding, one layer like the last, and the shared
	// output layer.
	MTP int

	// Window is a sliding window of attention, in tokens (0: none): in
	// every WindowEvery-th layer from the first (every layer where
	// WindowEvery is 0 or 1) a query attends to its Window latest keys,
	// itself included, not to every earlier one (GPT-OSS: 128 in every
	// other layer; Mistral 7B: 4,096 in every layer).
	Window, WindowEvery int

	// GlobalEvery places the window the other way round (0: by
	// WindowEvery): every layer attends through the window but every
	// GlobalEvery-th, counted from 1, which attends to the whole sequence
	// (Gemma 3: 6, five local layers to one global, the 0-based layers 5,
	// 11, ...; Megatron-Core's window_attn_skip_freq).
	GlobalEvery int

	// Chunk is chunked attention, in tokens (0: none), in the layers the
	// window's layout gives (every layer, or all but every GlobalEvery-th),
	// in place of a window: the sequence cut into chunks of Chunk tokens
	// from its start, a query attends to the keys of its own chunk up to
	// itself (Llama 4: 8,192 in three of every four layers).
	Chunk int

	// Norms is the RMS norms over the hidden state in a block: 2 (0 reads
	// as 2), before the attention and before the MLP; or 4 where each
	// one's output is normed too before the residual (Gemma 2/3's
	// post_attention_layernorm and post_feedforward_layernorm).
	Norms int

	// Act is the MLP's activation where it is not the family's ("": a
	// llama's SwiGLU, a gpt's GeLU): "geglu", a gated tanh GeLU of three
	// matrices like SwiGLU's (Gemma's gelu_pytorch_tanh); "relu2", a
	// squared ReLU without a gate, two matrices (Nemotron-4's).
	Act string

	// Pattern is a hybrid's layers, one character each (hybrid.go:
	// KindMamba, KindAttention, KindMLP), each layer a block of one
	// mixer ("": every layer attention and an MLP); SSM is its Mamba-2
	// layers' shape.
	Pattern string
	SSM     SSM

	// Mixers is the layers' token mixers where they differ, one
	// character each (hybrid_gdn.go: MixerGDN, MixerAttention), each
	// layer a block of its mixer and its experts ("": attention in every
	// layer); GDN is its Gated DeltaNet layers' shape.
	Mixers string
	GDN    GDN

	// Bidirectional and Predicted make an encoder (encoder.go):
	// attention over every key of the sequence, not the causal half; the
	// output layer on Predicted positions of each sequence (0: all).
	Bidirectional bool
	Predicted     int

	// Config is what the model's config.json says beside its shape
	// (FromHFConfig reads it; the zero value, a model by its shape, leaves
	// each framework's defaults): settings that change no cost placer
	// counts but that an export writes, so that the framework trains the
	// user's model.
	Config ModelConfig
}

// Shape is m without its config.json's settings: what String writes.
func (m Spec) Shape() Spec {
	m.Config = ModelConfig{}
	return m
}

// ModelConfig is a model's settings from its Hugging Face config.json.
type ModelConfig struct {
	ModelType string // config.json's model_type ("": none read)
	// RopeTheta is the rotary base (rope_theta); NormEps the RMS norms'
	// epsilon (rms_norm_eps); AttentionDropout attention_dropout (the
	// families read have no other dropout).
	RopeTheta, NormEps, AttentionDropout float64
	// RopeScaling is rope_scaling's type ("llama3", "yarn", "linear";
	// "": none) with its factor, and YaRN's mscale and mscale_all_dim;
	// RopeLowFreq and RopeHighFreq are Llama 3's low_freq_factor and
	// high_freq_factor, BetaFast and BetaSlow YaRN's beta_fast and
	// beta_slow, RopeOriginal the context both scale from
	// (original_max_position_embeddings); 0 where the file has none.
	RopeScaling                   string
	RopeFactor, MScale, MScaleAll float64
	RopeLowFreq, RopeHighFreq     float64
	BetaFast, BetaSlow            float64
	RopeOriginal                  int
	// SwiGLULimit clamps the SwiGLU's inputs (GPT-OSS's swiglu_limit;
	// 0: none).
	SwiGLULimit float64
	// RotaryPercent is the share of each head's width that rotary
	// positions turn (partial_rotary_factor: Nemotron's 0.5; 0: all).
	RotaryPercent float64
	// QKVBias: biases on the query, key and value projections (Qwen2's,
	// always); LinearBias: on every linear layer (GPT-OSS's
	// attention_bias, its experts' biases too); QKNorm: RMS norms of
	// the queries and keys (Qwen3's; DeepSeek's latent norms).
	QKVBias, LinearBias, QKNorm bool
	// The router: its score (scoring_func: "softmax" or "sigmoid"),
	// routed_scaling_factor, n_group and topk_group, the balancing
	// loss's coefficient (router_aux_loss_coef or aux_loss_alpha),
	// norm_topk_prob, and the expert bias of DeepSeek-V3's noaux_tc.
	RouterScore                string
	RouterScale                float64
	RouterGroups, RouterGroupK int
	AuxLoss                    float64
	NormTopK, ExpertBias       bool
}

// GPT is Megatron-LM's GPT of the given shape: FFN 4h, tied embeddings.
func GPT(layers, hidden, heads, seq, vocab, batch int) Spec {
	return Spec{Family: "gpt", Layers: layers, Hidden: hidden, Heads: heads, KVHeads: heads,
		FFN: 4 * hidden, Seq: seq, Vocab: vocab, Batch: batch, Tied: true}
}

// HeadDim is the width of one attention head.
func (m Spec) HeadDim() int {
	if m.Head > 0 {
		return m.Head
	}
	return m.Hidden / m.Heads
}

// MoE reports whether m has experts.
func (m Spec) MoE() bool { return m.Experts > 0 }

// MLA reports whether m's attention is multi-head latent attention.
func (m Spec) MLA() bool { return m.KVLoRA > 0 }

// MoELayers is how many layers have experts (0 in a dense model; in a
// hybrid its E layers).
func (m Spec) MoELayers() int {
	switch {
	case !m.MoE():
		return 0
	case m.Hybrid():
		return expertLayers(m) // hybrid_moe.go
	}
	return m.Layers - m.DenseLayers
}

// SwiGLU reports whether the MLP is gated, three matrices (Llama's
// SwiGLU, Gemma's GeGLU), not two (GPT's GeLU, Nemotron's squared ReLU).
func (m Spec) SwiGLU() bool { return m.Family == "llama" && m.Act != "relu2" }

// NormsPerBlock is the norms over the hidden state in one block (Norms).
func (m Spec) NormsPerBlock() int { return max(2, m.Norms) }

// Biases reports whether linear layers carry biases (GPT).
func (m Spec) Biases() bool { return m.Family != "llama" }

// String writes m as Parse reads it.
func (m Spec) String() string {
	s := fmt.Sprintf("%s:layers=%d,hidden=%d,heads=%d", m.Family, m.Layers, m.Hidden, m.Heads)
	def := m.defaults()
	if m.KVHeads != def.KVHeads {
		s += ",kv_heads=" + strconv.Itoa(m.KVHeads)
	}
	if m.FFN != def.FFN {
		s += ",ffn=" + strconv.Itoa(m.FFN)
	}
	s += fmt.Sprintf(",seq=%d,vocab=%d,batch=%d", m.Seq, m.Vocab, m.Batch)
	if m.Tied != def.Tied {
		s += ",tied=" + strconv.FormatBool(m.Tied)
	}
	for _, kv := range []struct {
		k string
		v int
	}{{"head_dim", m.Head}, {"experts", m.Experts}, {"topk", m.TopK}, {"expert_ffn", m.ExpertFFN},
		{"shared", m.SharedExperts}, {"dense_layers", m.DenseLayers},
		{"q_lora", m.QLoRA}, {"kv_lora", m.KVLoRA}, {"rope_dim", m.RopeDim}, {"mtp", m.MTP},
		{"window", m.Window}, {"window_every", m.WindowEvery}, {"global_every", m.GlobalEvery}, {"chunk", m.Chunk}, {"norms", m.Norms}} {
		if kv.v > 0 {
			s += "," + kv.k + "=" + strconv.Itoa(kv.v)
		}
	}
	if m.Act != "" {
		s += ",act=" + m.Act
	}
	return s + m.hybridString() + m.mixersString() + m.encoderString()
}

// defaults is m with KVHeads, FFN and Tied as its family has them.
func (m Spec) defaults() Spec {
	d := m
	d.KVHeads = m.Heads
	switch m.Family {
	case "llama":
		// Llama 2's SwiGLU width: 2/3 of 4h, rounded up to a multiple of 256.
		d.FFN = (8*m.Hidden/3 + 255) / 256 * 256
		d.Tied = false
	default:
		d.FFN = 4 * m.Hidden
		d.Tied = true
	}
	return d
}

// Parse reads a workload written "gpt:layers=96,hidden=12288,heads=96,
// seq=4096,vocab=131072,batch=1152" (or "llama:..."): the keys layers,
// hidden, heads, seq, vocab and batch are required; kv_heads, ffn and tied
// default to the family's. A preset ("qwen3-30b-a3b:seq=4096,batch=512")
// or a Hugging Face config.json ("hf:PATH/config.json:seq=4096,batch=512",
// ReadHFConfig; PATH may be the model's folder) is a whole model, whose
// run needs seq and batch after it (refused without them: a model file
// has no sequence length or batch of its own); any other key after it
// replaces the model's. Errors are one line naming the key (or the
// config.json's field); an error reading the config.json is a
// ConfigError.
func Parse(text string) (Spec, error) {
	family, rest, ok := strings.Cut(text, ":")
	family = strings.ToLower(strings.TrimSpace(family))
	if family == "hf" && ok {
		path, keys := SplitHF(rest)
		if strings.TrimSpace(path) == "" {
			return Spec{}, fmt.Errorf("workload %q: no path (hf:PATH/config.json or hf:PATH/config.json:seq=4096,batch=512)", text)
		}
		m, err := ReadHFConfig(path)
		if err != nil {
			return m, ConfigError{err}
		}
		return parseKeys(text, m, true, keys)
	}
	preset, named := Preset(family)
	if named {
		if !ok || strings.TrimSpace(rest) == "" {
			return Spec{}, runMissing(text, text, map[string]bool{})
		}
	} else if family != "gpt" && family != "llama" {
		return Spec{}, fmt.Errorf("workload %q: want gpt:key=value,..., llama:key=value,..., hf:PATH/config.json or a preset (%s) with its seq, batch, ...", text, strings.Join(Presets(), ", "))
	}
	if !ok || strings.TrimSpace(rest) == "" {
		return Spec{}, fmt.Errorf("workload %q: no shape (keys layers, hidden, heads, seq, vocab, batch)", text)
	}
	m := Spec{Family: family}
	if named {
		m = preset
	}
	return parseKeys(text, m, named, rest)
}

// ConfigError is an error in a workload's config.json (hf:PATH): the
// file, not the workload's text.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// runMissing refuses a preset or config.json (text, base without its
// keys) whose keys (seen) lack seq or batch, naming both and an example.
func runMissing(text, base string, seen map[string]bool) error {
	var miss []string
	for _, k := range []string{"seq", "batch"} {
		if !seen[k] {
			miss = append(miss, k)
		}
	}
	return fmt.Errorf("workload %q: %s missing: a model names no run, give its sequence length and global batch (%s:seq=4096,batch=512)",
		text, strings.Join(miss, " and "), strings.TrimSuffix(base, ":"))
}

// parseKeys reads the keys rest of the workload text over m: a whole
// shape where named (a preset's, a config.json's), else the family's
// required keys and defaults.
func parseKeys(text string, m Spec, named bool, rest string) (Spec, error) {
	seen := map[string]bool{}
	tied := ""
	for _, kv := range strings.Split(rest, ",") {
		if named && strings.TrimSpace(rest) == "" {
			break // no keys after a config.json: runMissing says which
		}
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return Spec{}, fmt.Errorf("workload %q: %q is not key=value", text, kv)
		}
		if seen[k] {
			return Spec{}, fmt.Errorf("workload %q: %q given twice", text, k)
		}
		seen[k] = true
		if k == "tied" {
			tied = v
			continue
		}
		if k == "act" {
			m.Act = v
			continue
		}
		if k == "pattern" {
			m.Pattern = v
			continue
		}
		if k == "mixers" {
			m.Mixers = v
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Spec{}, fmt.Errorf("workload %q: %q=%q is not a whole number of at least 1", text, k, v)
		}
		switch k {
		case "layers":
			m.Layers = n
		case "hidden":
			m.Hidden = n
		case "heads":
			m.Heads = n
		case "kv_heads", "kv-heads":
			m.KVHeads = n
		case "ffn":
			m.FFN = n
		case "seq":
			m.Seq = n
		case "vocab":
			m.Vocab = n
		case "batch":
			m.Batch = n
		case "head_dim", "head-dim":
			m.Head = n
		case "experts":
			m.Experts = n
		case "topk", "top_k":
			m.TopK = n
		case "expert_ffn", "expert-ffn":
			m.ExpertFFN = n
		case "shared", "shared_experts":
			m.SharedExperts = n
		case "dense_layers", "dense-layers":
			m.DenseLayers = n
		case "q_lora", "q-lora":
			m.QLoRA = n
		case "kv_lora", "kv-lora":
			m.KVLoRA = n
		case "rope_dim", "rope-dim":
			m.RopeDim = n
		case "mtp":
			m.MTP = n
		case "window":
			m.Window = n
		case "window_every", "window-every":
			m.WindowEvery = n
		case "global_every", "global-every":
			m.GlobalEvery = n
		case "norms":
			m.Norms = n
		case "chunk":
			m.Chunk = n
		default:
			if !m.hybridKey(k, n) && !m.mixerKey(k, n) && !m.encoderKey(k, n) {
				return Spec{}, fmt.Errorf("workload %q: unknown key %q (keys layers, hidden, heads, kv_heads, ffn, seq, vocab, batch, tied, head_dim, experts, topk, expert_ffn, shared, dense_layers, q_lora, kv_lora, rope_dim, mtp, window, window_every, global_every, chunk, norms, act, pattern, ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv, ssm_chunk, mixers, gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim, gdn_conv, bidirectional, predicted)", text, k)
			}
		}
	}
	if named && (!seen["seq"] || !seen["batch"]) {
		return Spec{}, runMissing(text, strings.TrimSuffix(text, rest), seen)
	}
	for _, k := range []string{"layers", "hidden", "heads", "seq", "vocab", "batch"} {
		if !seen[k] && !named {
			return Spec{}, fmt.Errorf("workload %q: %s missing (keys layers, hidden, heads, seq, vocab, batch are required)", text, k)
		}
	}
	d := m.defaults()
	if m.KVHeads == 0 {
		m.KVHeads = d.KVHeads
	}
	if m.FFN == 0 {
		m.FFN = d.FFN
	}
	if m.Experts > 0 && m.ExpertFFN == 0 {
		m.ExpertFFN = m.FFN
	}
	if !named {
		m.Tied = d.Tied
	}
	if tied != "" {
		b, err := strconv.ParseBool(tied)
		if err != nil {
			return Spec{}, fmt.Errorf("workload %q: tied=%q is not true or false", text, tied)
		}
		m.Tied = b
	}
	if err := m.Check(); err != nil {
		return Spec{}, fmt.Errorf("workload %q: %w", text, err)
	}
	return m, nil
}

// Check reports the first inconsistency of m's shape.
func (m Spec) Check() error {
	switch {
	case m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.Seq < 1 || m.Vocab < 1 || m.Batch < 1 || m.FFN < 1:
		return fmt.Errorf("layers, hidden, heads, ffn, seq, vocab and batch must be at least 1")
	case m.Head < 0 || m.Experts < 0 || m.TopK < 0 || m.ExpertFFN < 0 || m.SharedExperts < 0 || m.DenseLayers < 0 ||
		m.QLoRA < 0 || m.KVLoRA < 0 || m.RopeDim < 0 || m.MTP < 0 || m.Window < 0 || m.WindowEvery < 0 || m.GlobalEvery < 0 || m.Chunk < 0 || m.Norms < 0:
		return fmt.Errorf("head_dim, experts, topk, expert_ffn, shared, dense_layers, q_lora, kv_lora, rope_dim, mtp, window, window_every, global_every, chunk and norms must not be negative")
	case m.WindowEvery > 0 && m.Window == 0 && m.Chunk == 0:
		return fmt.Errorf("window_every=%d without window (the sliding window's tokens)", m.WindowEvery)
	case m.Chunk > 0 && m.Window > 0:
		return fmt.Errorf("chunk=%d and window=%d: a layer attends within its chunk or through its window, not both", m.Chunk, m.Window)
	case m.GlobalEvery > 0 && m.Window == 0 && m.Chunk == 0:
		return fmt.Errorf("global_every=%d without window or chunk (the local layers' tokens)", m.GlobalEvery)
	case m.GlobalEvery > 0 && m.WindowEvery > 0:
		return fmt.Errorf("global_every=%d and window_every=%d: the window's layers are given one way or the other", m.GlobalEvery, m.WindowEvery)
	case m.GlobalEvery == 1:
		return fmt.Errorf("global_every=1 leaves no layer with the window (leave window out)")
	case m.Norms != 0 && m.Norms != 2 && m.Norms != 4:
		return fmt.Errorf("norms=%d: a block has 2 norms (before the attention and the MLP) or 4 (their outputs normed too)", m.Norms)
	case m.Act != "" && m.Act != "geglu" && m.Act != "relu2":
		return fmt.Errorf("act=%q: placer models geglu and relu2 beside the family's own", m.Act)
	case m.Norms > 2 && m.Experts > 0:
		return fmt.Errorf("norms=%d with experts: placer costs the post-norms in dense blocks only", m.Norms)
	case m.Act != "" && m.Family != "llama":
		return fmt.Errorf("act=%s on a %s: the llama family's MLP only (rotary positions, RMS norms, no biases)", m.Act, m.Family)
	case m.Head == 0 && m.Hidden%m.Heads != 0:
		return fmt.Errorf("%d heads do not divide hidden %d", m.Heads, m.Hidden)
	case m.KVHeads < 1 || m.Heads%m.KVHeads != 0:
		return fmt.Errorf("kv_heads %d does not divide heads %d", m.KVHeads, m.Heads)
	case m.Experts == 0 && (m.TopK > 0 || m.ExpertFFN > 0 || m.SharedExperts > 0 || m.DenseLayers > 0):
		return fmt.Errorf("topk, expert_ffn, shared or dense_layers without experts")
	case m.Experts > 0 && m.TopK == 0:
		return fmt.Errorf("experts=%d without topk (the experts each token is routed to)", m.Experts)
	case m.TopK > m.Experts:
		return fmt.Errorf("topk=%d is more than the %d experts", m.TopK, m.Experts)
	case m.Experts > 0 && m.ExpertFFN < 1:
		return fmt.Errorf("experts=%d without expert_ffn", m.Experts)
	case m.DenseLayers >= m.Layers && m.Experts > 0:
		return fmt.Errorf("dense_layers=%d leaves none of the %d layers with experts", m.DenseLayers, m.Layers)
	case (m.QLoRA > 0 || m.RopeDim > 0) && m.KVLoRA == 0:
		return fmt.Errorf("q_lora or rope_dim without kv_lora (multi-head latent attention)")
	case m.KVLoRA > 0 && m.KVHeads != m.Heads:
		return fmt.Errorf("kv_lora=%d with kv_heads %d: latent attention has every head's key and value (leave kv_heads out)", m.KVLoRA, m.KVHeads)
	}
	if err := m.checkHybrid(); err != nil {
		return err
	}
	if err := m.checkMixers(); err != nil {
		return err
	}
	return m.checkSizes()
}
