package profile

import (
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
)

// blockShape is a layer's shape to time with its kind in a model with
// experts and dense layers before them (profile.BlockDense,
// profile.BlockMoE; "": the model's one kind).
type blockShape struct {
	shape
	Block string `json:"block,omitempty"`
}

// withDense is the layer shapes of m to time: in a model with experts
// and dense layers before them (DeepSeek's first_k_dense_replace), each
// MoE shape marked so and, after each without expert parallelism, the
// same shape of a dense layer (the dense layer has no experts to split:
// it runs alike at every expert-parallel degree), so that a budget cut
// leaves both kinds of each shape it reached; else layers as they are.
func withDense(m transformer.Spec, layers []shape) []blockShape {
	out := make([]blockShape, 0, 2*len(layers))
	for _, s := range layers {
		if !m.MoE() || m.DenseLayers == 0 {
			out = append(out, blockShape{shape: s})
			continue
		}
		out = append(out, blockShape{s, profile.BlockMoE})
		if s.EP <= 1 && s.ETP <= 1 { // a dense layer has no experts to split
			out = append(out, blockShape{s, profile.BlockDense})
		}
	}
	return out
}

// latentKeys is the model's keys for layers.py (keys) with latent
// attention's where m has it: the heads' width without position
// (head_dim: the values' width too), the rotary width, the query's and
// the keys' and values' latents (q_lora 0: one query projection).
func latentKeys(m transformer.Spec, keys map[string]int) map[string]int {
	if m.MLA() {
		keys["head_dim"], keys["rope_dim"], keys["q_lora"], keys["kv_lora"] = m.HeadDim(), m.RopeDim, m.QLoRA, m.KVLoRA
	}
	return keys
}

// layerKeys is latentKeys(m, keys) with the keys of what else layers.py
// builds of m's layer where m has it: the heads' width where it is not
// hidden / heads (head_dim), the sliding window and the layers it is in
// (window, window_every: llama.window_of), the query, key and value
// biases (qkv_bias: Qwen2's) or every linear's (linear_bias: GPT-OSS's),
// and the router's sigmoid scores (router_sigmoid), groups (router_groups,
// router_group_k: n_group, topk_group) and expert bias (expert_bias:
// DeepSeek-V3's noaux_tc).
func layerKeys(m transformer.Spec, keys map[string]int) map[string]int {
	keys = latentKeys(m, keys)
	if !m.MLA() && m.Head > 0 {
		keys["head_dim"] = m.Head
	}
	c := m.Config
	for k, v := range map[string]int{"window": m.Window, "window_every": m.WindowEvery,
		"qkv_bias": b2i(c.QKVBias), "linear_bias": b2i(c.LinearBias)} {
		if v > 0 {
			keys[k] = v
		}
	}
	if m.MoE() {
		for k, v := range map[string]int{"router_sigmoid": b2i(c.RouterScore == "sigmoid"), "expert_bias": b2i(c.ExpertBias)} {
			if v > 0 {
				keys[k] = v
			}
		}
		if c.RouterGroups > 0 && c.RouterGroupK > 0 {
			keys["router_groups"], keys["router_group_k"] = c.RouterGroups, c.RouterGroupK
		}
	}
	return keys
}
