package plans

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// titan03Builds says why torchtitan 0.3.0's llama3 cannot be built at
// shape m ("" where it can): its Llama3Model is a dense decoder of RMS
// norms, rotary attention of dim / n_heads per head (grouped-query where
// n_kv_heads < n_heads) and a SwiGLU MLP of any hidden width
// (models/llama3/__init__.py, _build_llama3_layers), its output
// projection tied to the embedding or not (enable_weight_tying). A GPT
// (LayerNorm, GELU, learned positions), experts, latent attention,
// multi-token prediction, sliding windows and heads of another width
// are other models.
func titan03Builds(m transformer.Spec) string {
	switch {
	case m.Family != "llama":
		return fmt.Sprintf("torchtitan %s has no %s model", "0.3.0", m.Family)
	case m.Hybrid() || m.Mixed():
		return "Mamba-2 or Gated DeltaNet layers (pattern=, mixers=) are not torchtitan's llama3"
	case m.Experts > 0:
		return "a mixture of experts is not torchtitan's llama3"
	case m.KVLoRA > 0:
		return "latent attention is not torchtitan's llama3"
	case m.MTP > 0:
		return "multi-token prediction is not torchtitan's llama3"
	case m.Window > 0:
		return "a sliding window is not torchtitan's llama3"
	case m.Chunk > 0:
		return "chunked attention is not torchtitan's llama3"
	case m.Act != "" || m.NormsPerBlock() > 2:
		return fmt.Sprintf("act=%s, norms=%d (Gemma's or Nemotron's MLP and norms) are not torchtitan's llama3", m.Act, m.NormsPerBlock())
	case m.Head != 0 && m.Head != m.Hidden/m.Heads:
		return fmt.Sprintf("heads of %d (not hidden / heads) are not torchtitan's llama3", m.Head)
	case m.Hidden%m.Heads != 0 || m.Heads%m.KVHeads != 0:
		return fmt.Sprintf("hidden %d, heads %d and kv_heads %d do not divide as torchtitan's llama3 needs", m.Hidden, m.Heads, m.KVHeads)
	}
	return ""
}

// titanFlavorSettings reports whether config.json's settings c are
// those torchtitan 0.3.0's llama3 flavors 8B, 70B and 405B build
// (models/llama3/__init__.py: ComplexRoPE theta 500,000 with "llama"
// scaling at its defaults, factor 8, low and high frequency factors 1
// and 4 from 8,192 positions; RMSNorm's eps 1e-5): Llama 3.1's.
func titanFlavorSettings(c transformer.ModelConfig) bool {
	return c.RopeTheta == 500000 && c.RopeScaling == "llama3" && c.RopeFactor == 8 && c.RopeLowFreq == 1 &&
		c.RopeHighFreq == 4 && c.RopeOriginal == 8192 && c.NormEps == 1e-5
}

// titan03Rope is placer_model's ComplexRoPE settings after its dim and
// max_seq_len: torchtitan's llama3 defaults (theta 500,000, "llama"
// scaling at its defaults) for a model by its shape, else the
// config.json's theta and scaling ("none" where it has none).
func titan03Rope(c transformer.ModelConfig) string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case c.ModelType == "":
		return `theta=500000, scaling="llama"`
	case c.RopeScaling == "llama3":
		return fmt.Sprintf(`theta=%s, scaling="llama", scaling_factor=%s, low_freq_factor=%s, high_freq_factor=%s, original_max_position_embeddings=%d`,
			num(c.RopeTheta), num(c.RopeFactor), num(c.RopeLowFreq), num(c.RopeHighFreq), c.RopeOriginal)
	}
	return fmt.Sprintf(`theta=%s, scaling="none"`, num(c.RopeTheta))
}

// titan03Model writes placer_model(), torchtitan 0.3.0's llama3 at the
// plan's shape, built as models/llama3/__init__.py builds its flavors
// (_8b, and _1b for tied embeddings: the same initialisations, fused
// QKV, llama3's rotary of theta 500,000 with its "llama" frequency
// scaling, FlexAttention), and base_config(), torchtitan's llama3_8b
// trainer settings (config_registry.py) with that model and its loss over
// the model's vocabulary. The rotary's theta and scaling are
// torchtitan's llama3 defaults: placer's shape does not carry them.
// conv is the model's converter (titan03Float8; "": none).
func titan03Model(b *strings.Builder, m transformer.Spec, conv string) {
	embInit, tied := "_EMBEDDING_INIT", "False"
	if m.Tied {
		embInit, tied = "_EMBEDDING_SKIP_INIT", "True"
	}
	ctx := max(131072, m.Seq)
	// RMSNorm.Config's eps is 1e-5 (models/common/nn_modules.py) and
	// _build_llama3_layers sets none: another is set on every norm.
	eps, epsArg := "", ""
	if c := m.Config; c.ModelType != "" && c.NormEps != 1e-5 {
		eps = strconv.FormatFloat(c.NormEps, 'g', -1, 64)
		epsArg = ", eps=" + eps
	}
	b.WriteString("\n\ndef placer_model() -> ModelSpec:\n")
	fmt.Fprintf(b, "    \"\"\"torchtitan's llama3 at the plan's shape (%d layers, dim %d, %d heads, %d KV heads, MLP %d, vocabulary %d%s), built as models/llama3/__init__.py builds its flavors; rotary %s.\"\"\"\n",
		m.Layers, m.Hidden, m.Heads, m.KVHeads, m.FFN, m.Vocab, map[bool]string{true: ", tied embeddings", false: ""}[m.Tied], titan03Rope(m.Config))
	b.WriteString("    from torchtitan.distributed.pipeline_parallel import pipeline_llm\n")
	b.WriteString("    from torchtitan.models import llama3\n")
	b.WriteString("    from torchtitan.models.common import ComplexRoPE, Embedding, Linear, RMSNorm\n")
	b.WriteString("\n")
	fmt.Fprintf(b, "    dim, n_layers, n_heads, n_kv_heads, hidden_dim, vocab_size = %d, %d, %d, %d, %d, %d\n", m.Hidden, m.Layers, m.Heads, m.KVHeads, m.FFN, m.Vocab)
	b.WriteString("    model = llama3.Llama3Model.Config(\n")
	b.WriteString("        dim=dim,\n        vocab_size=vocab_size,\n")
	fmt.Fprintf(b, "        enable_weight_tying=%s,\n", tied)
	fmt.Fprintf(b, "        tok_embeddings=Embedding.Config(num_embeddings=vocab_size, embedding_dim=dim, param_init=llama3.%s),\n", embInit)
	fmt.Fprintf(b, "        norm=RMSNorm.Config(normalized_shape=dim, param_init=llama3._NORM_INIT%s),\n", epsArg)
	b.WriteString("        lm_head=Linear.Config(in_features=dim, out_features=vocab_size, param_init=llama3._output_linear_init(dim)),\n")
	b.WriteString("        layers=llama3._build_llama3_layers(\n")
	b.WriteString("            fuse_qkv=True, n_layers=n_layers, dim=dim, n_heads=n_heads, n_kv_heads=n_kv_heads, hidden_dim=hidden_dim,\n")
	fmt.Fprintf(b, "            rope=ComplexRoPE.Config(dim=dim // n_heads, max_seq_len=%d, %s),\n", ctx, titan03Rope(m.Config))
	b.WriteString("            attn_backend=\"flex\",\n        ),\n    )\n")
	if eps != "" {
		fmt.Fprintf(b, "    for layer in model.layers:  # the config.json's rms_norm_eps\n        layer.attention_norm.eps = layer.ffn_norm.eps = %s\n", eps)
	}
	if conv != "" {
		// As model_registry applies its converters (models/llama3/__init__.py).
		fmt.Fprintf(b, "    model = %s.build().convert(model)\n", conv)
	}
	b.WriteString("    return ModelSpec(name=\"llama3\", flavor=\"placer\", model=model, parallelize_fn=llama3.parallelize_llama, pipelining_fn=pipeline_llm,\n")
	b.WriteString("                     post_optimizer_build_fn=None, state_dict_adapter=llama3.Llama3StateDictAdapter)\n")

	b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
	b.WriteString("    \"\"\"torchtitan's llama3_8b trainer settings (config_registry.llama3_8b: AdamW, its data set and tokenizer from hf_assets_path) with placer_model().\"\"\"\n")
	b.WriteString("    from torchtitan.components.loss import ChunkedLossWrapper, CrossEntropyLoss\n")
	b.WriteString("    from torchtitan.models.llama3.config_registry import llama3_8b\n\n")
	b.WriteString("    config = llama3_8b()\n    config.model_spec = placer_model()\n")
	b.WriteString("    config.loss = ChunkedLossWrapper.Config(loss_fn=CrossEntropyLoss.Config(global_vocab_size=config.model_spec.model.vocab_size))\n")
	b.WriteString("    return config\n")
}
