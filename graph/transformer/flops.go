package transformer

// A model's FLOPs: its matmuls' a token, a step's, and the causal
// attention's.

// AttentionFLOPs is one token's forward matmul FLOPs in one block's
// attention, as ModelFLOPs and CausalFLOPs count them: its projections
// (latent attention's down and up projections included), and its scores
// against s keys (Q K^T and P V). The cluster scale's costing is checked
// against it.
func AttentionFLOPs(m Spec, s float64) (proj, scores float64) { return attnMatmulFLOPs(m, s) }

// attnMatmulFLOPs is one token's forward matmul FLOPs in one block's
// attention: its projections, and its scores against s keys (s the
// whole sequence, or the causal half).
func attnMatmulFLOPs(m Spec, s float64) (proj, scores float64) {
	h, d := float64(m.Hidden), float64(m.HeadDim())
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	if m.MLA() {
		r, ql, kl := float64(m.RopeDim), float64(m.QLoRA), float64(m.KVLoRA)
		q := 2 * h * heads * (d + r)
		if ql > 0 {
			q = 2 * (h*ql + ql*heads*(d+r))
		}
		kvp := 2 * (h*(kl+r) + kl*heads*2*d)
		return q + kvp + 2*heads*d*h, 2*s*heads*(d+r) + 2*s*heads*d
	}
	qd := heads * d
	return 2*h*(heads+2*kv)*d + 2*qd*h, 2 * 2 * s * qd
}

// mlpMatmulFLOPs is one token's forward matmul FLOPs through an MLP of
// inner width f.
func mlpMatmulFLOPs(m Spec, f float64) float64 {
	h := float64(m.Hidden)
	if m.SwiGLU() {
		return 3 * 2 * h * f
	}
	return 2 * 2 * h * f
}

// layerMatmulFLOPs is one token's forward matmul FLOPs in one dense
// block, attention scores counted over the whole sequence (not the
// causal half), as Megatron-LM's 2021 tables count them.
func layerMatmulFLOPs(m Spec) float64 {
	proj, scores := attnMatmulFLOPs(m, float64(m.Seq))
	return proj + mlpMatmulFLOPs(m, float64(m.FFN)) + scores
}

// moeMatmulFLOPs is one token's forward matmul FLOPs through one MoE
// block's experts: its TopK routed and the shared ones (the router's
// left out, as Megatron-LM leaves it).
func moeMatmulFLOPs(m Spec) float64 {
	return float64(m.TopK+m.SharedExperts) * mlpMatmulFLOPs(m, float64(m.ExpertFFN))
}

// ModelFLOPs is one training step's model FLOPs (forward and backward,
// no recomputation), as Megatron-LM's tables count them: for GPT,
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) (Narayanan et al., SC'21, eq. 3).
// In a model with experts, each MoE block's MLP is its TopK routed and
// its shared experts'.
func ModelFLOPs(m Spec) float64 {
	tokens := float64(m.Batch) * float64(m.Seq)
	logits := 2 * float64(m.Hidden) * float64(m.Vocab)
	if !m.MoE() && m.MTP == 0 && !m.Hybrid() {
		return 3 * tokens * (float64(m.Layers)*layerMatmulFLOPs(m) + logits)
	}
	return 3 * tokens * perToken(m, float64(m.Seq))
}

// perToken is one token's forward matmul FLOPs through the model, its
// attention scores against s keys.
func perToken(m Spec, s float64) float64 {
	if m.Hybrid() {
		return m.hybridPerToken(s)
	}
	h := float64(m.Hidden)
	logits := 2 * h * float64(m.Vocab)
	proj, scores := attnMatmulFLOPs(m, s)
	attn := proj + scores
	if m.Mixed() {
		attn = m.mixerFLOPs(s)
	}
	dense := attn + mlpMatmulFLOPs(m, float64(m.FFN))
	moe := attn + moeMatmulFLOPs(m)
	f := float64(m.DenseLayers)*dense + float64(m.MoELayers())*moe + logits
	if !m.MoE() {
		f = float64(m.Layers)*dense + logits
	}
	last := dense
	if m.MoE() {
		last = moe
	}
	return f + float64(m.MTP)*(2*2*h*h+last+logits)
}

// CausalFLOPs is one training step's model FLOPs as Megatron-LM counts
// them since 2024 (megatron/training/training.py,
// num_floating_point_operations, which Megatron-Bridge's performance
// tables use): ModelFLOPs with the attention scores over the causal
// half of the sequence (s/2 keys a query), experts as ModelFLOPs counts
// them, a multi-token-prediction module as one more block, its
// projection and the output layer.
func CausalFLOPs(m Spec) float64 {
	tokens := float64(m.Batch) * float64(m.Seq)
	return 3 * tokens * perToken(m, float64(m.Seq)/2)
}
