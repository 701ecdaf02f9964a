package transformer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// hfNemotronH is how FromHFConfig reads a nemotron_h config.json
// (Nemotron-H 8B/47B/56B, NVIDIA-Nemotron-Nano-9B/12B-v2; the fields of
// transformers' NemotronHConfig as NVIDIA's published configs write
// them): hybrid_override_pattern's blocks (M Mamba-2, * attention, -
// MLP), the Mamba-2 mixer of mamba_num_heads heads of mamba_head_dim
// (its inner width: Megatron-Bridge's Nano-9B-v2 provider has 128 x 80 =
// 10,240 channels at hidden 4,480, so expand does not give it),
// ssm_state_size, n_groups, conv_kernel taps and chunk_size; attention
// of attention_head_dim (or head_dim) without rotary positions; the
// squared-ReLU MLP without a gate (mlp_hidden_act relu2). Harmless: the
// time step's initialisation and limits, the residual's dtype, the
// kernels' choice, the logits kept at inference, the mixer's activation
// (silu, the only one), and the biases the published models leave off
// (attention_bias, mlp_bias, use_bias, mamba_proj_bias: refused where
// true); the convolution's bias (use_conv_bias) is counted.
var hfNemotronH = hfFamily{act: "relu2", ignored: []string{
	"attention_head_dim", "head_dim", "expand", "hidden_act", "hidden_dropout", "layer_norm_epsilon",
	"mamba_hidden_act", "mlp_hidden_act", "num_logits_to_keep", "rescale_prenorm_residual", "residual_in_fp32",
	"use_conv_bias", "use_mamba_kernels", "time_step_min", "time_step_max", "time_step_floor", "time_step_limit",
	"mamba_ssm_cache_dtype", "partial_rotary_factor", "norm_eps"}}

// nemotronH reads a nemotron_h config.json.
func (r *hfReader) nemotronH() (Spec, error) {
	m := Spec{Family: "llama", Seq: 4096, Batch: 1, Act: "relu2"}
	var err error
	need := func(k string, dst *int) {
		if err == nil {
			*dst, err = r.count(k, true, 1)
		}
	}
	if err = r.nemotronHLayers(&m); err != nil {
		return Spec{}, err
	}
	need("hidden_size", &m.Hidden)
	need("num_attention_heads", &m.Heads)
	need("num_key_value_heads", &m.KVHeads)
	need("intermediate_size", &m.FFN)
	need("vocab_size", &m.Vocab)
	need("mamba_num_heads", &m.SSM.Heads)
	need("mamba_head_dim", &m.SSM.HeadDim)
	need("ssm_state_size", &m.SSM.State)
	need("n_groups", &m.SSM.Groups)
	need("conv_kernel", &m.SSM.Conv)
	need("chunk_size", &m.SSM.Chunk)
	if err != nil {
		return Spec{}, err
	}
	if m.Tied, err = r.boolean("tie_word_embeddings"); err != nil {
		return Spec{}, err
	}
	for _, k := range []string{"mlp_hidden_act", "hidden_act"} {
		if act, ok, err := r.str(k); err != nil {
			return Spec{}, err
		} else if ok && act != "relu2" {
			return Spec{}, r.fail(k, "placer models Nemotron-H's squared ReLU (relu2) only")
		}
	}
	if act, ok, err := r.str("mamba_hidden_act"); err != nil {
		return Spec{}, err
	} else if ok && act != "silu" {
		return Spec{}, r.fail("mamba_hidden_act", "placer models the Mamba-2 mixer's silu only")
	}
	for _, k := range []string{"attention_bias", "mlp_bias", "use_bias", "mamba_proj_bias"} {
		if b, err := r.boolean(k); err != nil {
			return Spec{}, err
		} else if b {
			return Spec{}, r.fail(k, "biases on the linear layers: placer models Nemotron-H without them")
		}
	}
	if err := r.nemotronHHead(&m); err != nil {
		return Spec{}, err
	}
	return m, nil
}

// nemotronHBlocks are transformers 5's names of NemotronH's layers
// (layers_block_type; NemotronHConfig._list_to_pattern) as
// hybrid_override_pattern's letters.
var nemotronHBlocks = map[string]byte{"linear_attention": KindMamba, "full_attention": KindAttention, "mlp": KindMLP, "moe": 'E'}

// nemotronHExpertFields are NemotronHConfig's experts' settings, which
// transformers 5 writes at their defaults whatever the layers: unused by
// a pattern without E layers, read by nemotronHExperts with them.
var nemotronHExpertFields = []string{"moe_intermediate_size", "moe_latent_size", "moe_shared_expert_intermediate_size",
	"moe_shared_expert_overlap", "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "n_group", "topk_group",
	"norm_topk_prob", "routed_scaling_factor"}

// nemotronHLayers reads NemotronH's layers: hybrid_override_pattern (one
// of M, *, - a layer; NVIDIA's published configs, with
// num_hidden_layers), or layers_block_type (transformers 5's
// save_pretrained, which writes the list in the pattern's place and no
// num_hidden_layers: NemotronHConfig derives it); where the file gives
// more than one, they agree. E (experts: Nemotron 3's) reads the
// experts' fields (nemotronHExperts).
func (r *hfReader) nemotronHLayers(m *Spec) error {
	p, hasPattern, err := r.str("hybrid_override_pattern")
	if err != nil {
		return err
	}
	if raw, ok := r.get("layers_block_type"); ok {
		var names []string
		if json.Unmarshal(raw, &names) != nil || len(names) == 0 {
			return r.fail("layers_block_type", "not a list of the layers' types")
		}
		b := make([]byte, len(names))
		for i, n := range names {
			c, ok := nemotronHBlocks[n]
			if !ok {
				return r.fail("layers_block_type", "layer %d is %q: transformers names linear_attention, full_attention, mlp and moe", i, n)
			}
			b[i] = c
		}
		if hasPattern && p != string(b) {
			return r.fail("layers_block_type", "disagrees with hybrid_override_pattern %q", p)
		}
		p, hasPattern = string(b), true
	}
	if !hasPattern {
		return fmt.Errorf("%s: field \"hybrid_override_pattern\" missing (a nemotron_h config.json has it, or transformers 5's layers_block_type)", r.where)
	}
	n, err := r.count("num_hidden_layers", false, 1)
	if err != nil {
		return err
	}
	if n != 0 && n != len(p) {
		return r.fail("hybrid_override_pattern", "%d layers for num_hidden_layers %d", len(p), n)
	}
	m.Layers = len(p)
	if i := strings.IndexFunc(p, func(c rune) bool {
		return c != KindMamba && c != KindAttention && c != KindMLP && c != KindExperts
	}); i >= 0 {
		return r.fail("hybrid_override_pattern", "layer %d is %q: placer models M (Mamba-2), * (attention), - (MLP) and E (experts)", i, p[i])
	}
	m.Pattern = p
	if strings.ContainsRune(p, KindExperts) {
		if err := r.nemotronHExperts(m); err != nil {
			return err
		}
	}
	for _, k := range nemotronHExpertFields {
		r.seen[k] = true
	}
	if raw, ok := r.raw["num_nextn_predict_layers"]; !ok || hfUnset(raw) {
		r.seen["mtp_layers_block_type"] = true // no MTP layers: the pattern of none (the count, set, is refused)
	}
	return nil
}

// nemotronHExperts reads the experts of a NemotronH whose layers have
// some (E: transformers 5.24.0's "moe"; hybrid_moe.go):
// n_routed_experts of moe_intermediate_size, num_experts_per_tok of them
// a token, and moe_shared_expert_intermediate_size (n_shared_experts,
// where set, must agree with it) read as that over
// moe_intermediate_size shared experts. moe_latent_size is refused where
// set (the latent projections are not modelled); the router's grouping
// (n_group, topk_group), norm_topk_prob, routed_scaling_factor and
// moe_shared_expert_overlap change no size.
func (r *hfReader) nemotronHExperts(m *Spec) error {
	var err error
	need := func(k string, dst *int) {
		if err == nil {
			*dst, err = r.count(k, true, 1)
		}
	}
	need("n_routed_experts", &m.Experts)
	need("num_experts_per_tok", &m.TopK)
	need("moe_intermediate_size", &m.ExpertFFN)
	if err != nil {
		return err
	}
	if raw, ok := r.raw["moe_latent_size"]; ok && !hfUnset(raw) {
		return r.fail("moe_latent_size", "the experts' latent projections: placer does not model them")
	}
	shared, err := r.count("moe_shared_expert_intermediate_size", false, 0)
	if err != nil {
		return err
	}
	if shared%m.ExpertFFN != 0 {
		return r.fail("moe_shared_expert_intermediate_size", "%d is not a multiple of moe_intermediate_size %d: placer does not model it", shared, m.ExpertFFN)
	}
	m.SharedExperts = shared / m.ExpertFFN
	n, err := r.count("n_shared_experts", false, 0)
	if err != nil {
		return err
	}
	if n > 0 && m.SharedExperts > 0 && n != 1 && n != m.SharedExperts {
		return r.fail("n_shared_experts", "%d: not one shared expert of moe_shared_expert_intermediate_size %d", n, shared)
	}
	return nil
}

// nemotronHHead reads the attention heads' width: attention_head_dim
// (the 8B's config) or head_dim (later configs), Hidden / Heads where
// neither is given.
func (r *hfReader) nemotronHHead(m *Spec) error {
	d, err := r.count("attention_head_dim", false, 1)
	if err != nil {
		return err
	}
	hd, err := r.count("head_dim", false, 1)
	if err != nil {
		return err
	}
	if d > 0 && hd > 0 && d != hd {
		return r.fail("head_dim", "not attention_head_dim %d", d)
	}
	d = max(d, hd)
	if m.Heads%m.KVHeads != 0 {
		return r.fail("num_key_value_heads", "does not divide the %d heads", m.Heads)
	}
	if d > 0 && (m.Hidden%m.Heads != 0 || m.Hidden/m.Heads != d) {
		m.Head = d
	}
	if m.Head == 0 && m.Hidden%m.Heads != 0 {
		return r.fail("num_attention_heads", "does not divide hidden_size %d (and no head_dim)", m.Hidden)
	}
	return nil
}

// hybrid reads a hybrid family's config.json (nemotron_h) whole: its
// shape, its settings (config), no field left over, a consistent Spec.
func (r *hfReader) hybrid(typ string) (Spec, error) {
	m, err := r.nemotronH()
	if err != nil {
		return Spec{}, err
	}
	if err := r.config(typ, &m); err != nil {
		return Spec{}, err
	}
	if err := r.leftover(hfNemotronH); err != nil {
		return Spec{}, err
	}
	if err := m.Check(); err != nil {
		return Spec{}, fmt.Errorf("%s: %s", r.where, hfOneLine(err.Error()))
	}
	return m, nil
}

// qwen3Next reads Qwen3-Next's mixers (transformers v5.24's
// Qwen3NextConfig): layer_types (linear_attention, full_attention), or
// else every full_attention_interval-th layer full (default 4), the
// others Gated DeltaNet layers of linear_num_key_heads and
// linear_num_value_heads heads of linear_key_head_dim and
// linear_value_head_dim, their convolution of linear_conv_kernel_dim
// taps.
func (r *hfReader) qwen3Next(m *Spec) error {
	mixers := make([]byte, m.Layers)
	if raw, ok := r.get("layer_types"); ok {
		var types []string
		if json.Unmarshal(raw, &types) != nil || len(types) != m.Layers {
			return r.fail("layer_types", "not a list of the %d layers' mixers", m.Layers)
		}
		for i, t := range types {
			switch t {
			case "linear_attention":
				mixers[i] = MixerGDN
			case "full_attention":
				mixers[i] = MixerAttention
			default:
				return r.fail("layer_types", "layer %d is %q: placer models linear_attention and full_attention", i, t)
			}
		}
		r.seen["full_attention_interval"] = true
	} else {
		every, err := r.count("full_attention_interval", false, 1)
		if err != nil {
			return err
		}
		every = cmp.Or(every, 4)
		for i := range mixers {
			mixers[i] = MixerGDN
			if (i+1)%every == 0 {
				mixers[i] = MixerAttention
			}
		}
	}
	m.Mixers = string(mixers)
	var err error
	need := func(k string, dst *int) {
		if err == nil {
			*dst, err = r.count(k, true, 1)
		}
	}
	need("linear_num_key_heads", &m.GDN.KHeads)
	need("linear_num_value_heads", &m.GDN.VHeads)
	need("linear_key_head_dim", &m.GDN.KDim)
	need("linear_value_head_dim", &m.GDN.VDim)
	need("linear_conv_kernel_dim", &m.GDN.Conv)
	return err
}
