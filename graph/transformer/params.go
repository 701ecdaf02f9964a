package transformer

// A model's parameter counts, by part and in all.

// LayerParams is the parameter count of one transformer block: the
// dense block's, or in a model with experts the MoE block's (its router
// and every expert included; MoELayerParams); in a hybrid the mean of
// its layers' (rounded down: Params counts each).
func LayerParams(m Spec) int64 {
	if m.Hybrid() {
		return m.hybridLayerParams() / int64(m.Layers)
	}
	if m.MoE() {
		return MoELayerParams(m)
	}
	return DenseLayerParams(m)
}

// DenseLayerParams is one block with the dense MLP of FFN.
func DenseLayerParams(m Spec) int64 {
	return AttentionParams(m) + mlpParams(m, int64(m.FFN))
}

// AttentionParams is one block's attention and norms: what every block
// has besides its MLP or experts (the parameters tensor parallelism
// splits in an MoE block).
func AttentionParams(m Spec) int64 {
	if m.Mixed() {
		// The mean of the layers' mixers (rounded down: Params counts
		// each).
		return m.mixersTotal() / int64(m.Layers)
	}
	h, d := int64(m.Hidden), int64(m.HeadDim())
	heads, kv := int64(m.Heads), int64(m.KVHeads)
	var p int64
	if m.MLA() {
		r, ql, kl := int64(m.RopeDim), int64(m.QLoRA), int64(m.KVLoRA)
		if ql > 0 {
			p += h*ql + ql + ql*heads*(d+r) // down, its RMS norm, up
		} else {
			p += h * heads * (d + r)
		}
		p += h*(kl+r) + kl + kl*heads*2*d // latent key/value (and the shared rotary key), norm, up to keys and values
		p += heads * d * h
	} else {
		p = h*(heads+2*kv)*d + heads*d*h
	}
	if m.Biases() {
		p += (heads+2*kv)*d + h // qkv and proj biases
		p += 2 * 2 * h          // two layer norms: scale and shift
	} else {
		p += int64(m.NormsPerBlock()) * h // the RMS norms' scales: two, or Gemma's four
	}
	return p
}

// mlpParams is one MLP (or expert) of inner width f.
func mlpParams(m Spec, f int64) int64 {
	h := int64(m.Hidden)
	if m.SwiGLU() {
		return 3 * h * f
	}
	p := 2 * h * f
	if m.Biases() {
		p += f + h // fc1, fc2 biases
	}
	return p
}

// ExpertParams is one expert's parameter count.
func ExpertParams(m Spec) int64 { return mlpParams(m, int64(m.ExpertFFN)) }

// RouterParams is one MoE block's router (a linear map from the hidden
// state to the experts' scores).
func RouterParams(m Spec) int64 { return int64(m.Hidden) * int64(m.Experts) }

// MoELayerParams is one block with experts: attention, router, every
// routed expert and the shared ones.
func MoELayerParams(m Spec) int64 {
	return AttentionParams(m) + RouterParams(m) + int64(m.Experts+m.SharedExperts)*ExpertParams(m)
}

// EmbeddingParams is the token embedding's (and GPT's learned
// positions') parameter count.
func EmbeddingParams(m Spec) int64 {
	p := int64(m.Vocab) * int64(m.Hidden)
	if m.Family == "gpt" {
		p += int64(m.Seq) * int64(m.Hidden)
	}
	return p
}

// OutputParams is the final norm's and, untied, the output layer's
// parameter count.
func OutputParams(m Spec) int64 {
	p := 2 * int64(m.Hidden)
	if !m.Biases() {
		p = int64(m.Hidden)
	}
	if !m.Tied {
		p += int64(m.Vocab) * int64(m.Hidden)
	}
	return p
}

// Params is the model's parameter count (the multi-token-prediction
// modules left out, as DeepSeek-V3's 671B leaves them: MTPParams).
func Params(m Spec) int64 {
	if m.Hybrid() {
		return m.hybridLayerParams() + EmbeddingParams(m) + OutputParams(m)
	}
	if !m.MoE() {
		return int64(m.Layers)*LayerParams(m) + EmbeddingParams(m) + OutputParams(m)
	}
	p := int64(m.DenseLayers)*DenseLayerParams(m) + int64(m.MoELayers())*MoELayerParams(m) + EmbeddingParams(m) + OutputParams(m)
	if m.Mixed() {
		p += m.mixersTotal() - int64(m.Layers)*AttentionParams(m) // each layer's mixer, not the mean
	}
	return p
}

// ActiveParams is the parameters one token goes through: Params with
// only TopK of each MoE block's routed experts (the embedding and the
// output layer counted).
func ActiveParams(m Spec) int64 {
	if !m.MoE() {
		return Params(m)
	}
	return Params(m) - int64(m.MoELayers())*int64(m.Experts-m.TopK)*ExpertParams(m)
}

// MTPParams is the multi-token-prediction modules' parameters: each a
// projection of 2h to h, two RMS norms and one block like the last (the
// embedding and the output layer are the model's).
func MTPParams(m Spec) int64 {
	h := int64(m.Hidden)
	last := DenseLayerParams(m)
	if m.MoE() {
		last = MoELayerParams(m)
	}
	return int64(m.MTP) * (2*h*h + 2*h + last)
}
