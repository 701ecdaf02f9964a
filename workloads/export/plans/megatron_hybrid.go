package plans

import (
	"fmt"
	"strconv"

	"github.com/placer/placer/graph/transformer"
)

// megatronHybrid is a hybrid model's (transformer.Spec.Pattern:
// Nemotron-H) Megatron-LM arguments, for pretrain_mamba.py (its
// MambaModel: megatron/core/models/mamba), each flag one of
// core_v0.16.1's (testdata/megatron-lm-core_v0.16.1-args.txt): the
// layers' pattern (--hybrid-override-pattern, M, * and - as placer's),
// the Mamba-2 mixer's state, head width, groups and heads, the MLP
// without biases (Nemotron-H's squared ReLU; a shape's SwiGLU), RMS norms and attention without
// positions (Nemotron-H's attention has no rotary embedding:
// Megatron-Bridge's NemotronHBridge sets position_embedding_type
// "none"). Megatron-Core's MambaMixer takes its convolution's taps
// (d_conv 4) and the scan's chunks (chunk_size 128) from no flag: a
// model of others is refused in one line.
func megatronHybrid(m transformer.Spec) ([]string, error) {
	s := m.SSM
	nm, _, _ := m.Kinds()
	if nm > 0 && (s.Conv != 4 || s.Chunk != 128) {
		return nil, ModelError{fmt.Errorf("megatron arguments: ssm_conv=%d, ssm_chunk=%d: Megatron-LM core_v0.16.1's MambaMixer has 4 taps and chunks of 128, no flag for others", s.Conv, s.Chunk)}
	}
	act := "--squared-relu"
	switch m.Act {
	case "":
		act = "--swiglu" // a shape's llama MLP
	case "geglu":
		return nil, ModelError{fmt.Errorf("megatron arguments: act=geglu in a hybrid: Megatron-LM core_v0.16.1's pretrain_mamba.py has no flag for Gemma's GeGLU")}
	}
	a := []string{act, "--disable-bias-linear", "--normalization", "RMSNorm", "--position-embedding-type", "none",
		"--hybrid-override-pattern", m.Pattern}
	if nm > 0 {
		a = append(a, "--mamba-state-dim", strconv.Itoa(s.State), "--mamba-head-dim", strconv.Itoa(s.HeadDim),
			"--mamba-num-groups", strconv.Itoa(s.Groups), "--mamba-num-heads", strconv.Itoa(s.Heads))
	}
	return a, nil
}

// megatronEntry is the Megatron-LM script that trains m:
// pretrain_mamba.py for a hybrid, else pretrain_gpt.py.
func megatronEntry(m transformer.Spec) string {
	if m.Hybrid() {
		return "pretrain_mamba.py"
	}
	return "pretrain_gpt.py"
}

// megatronMixers is a model of mixers' (transformer.Spec.Mixers:
// Qwen3-Next) Megatron-LM arguments beside its MoE ones, each flag one of
// core_v0.16.1's: Megatron-Core's Gated DeltaNet
// (--experimental-attention-variant gated_delta_net) in all layers but
// every --linear-attention-freq-th, its heads and widths and its
// convolution's taps, the attention's output gate, the shared expert's
// gate (Qwen3-Next's shared_expert_gate), and the zero-centred RMS norm
// scales Megatron-Bridge's Qwen3-Next provider sets
// (layernorm_zero_centered_gamma). Mixers whose full-attention layers
// are not every N-th (counted from 1) have no int form written: refused.
func megatronMixers(m transformer.Spec) ([]string, error) {
	ng, na := m.MixerKinds()
	every := 0
	if na > 0 {
		every = m.Layers / na
	}
	for i, c := range m.Mixers {
		if every == 0 || (c == transformer.MixerAttention) != ((i+1)%every == 0) {
			return nil, ModelError{fmt.Errorf("megatron arguments: mixers=%s: full attention not every N-th layer, which --linear-attention-freq N writes", m.Mixers)}
		}
	}
	g := m.GDN
	a := []string{"--attention-output-gate", "--apply-layernorm-1p"}
	if ng > 0 {
		a = append(a, "--experimental-attention-variant", "gated_delta_net", "--linear-attention-freq", strconv.Itoa(every),
			"--linear-num-key-heads", strconv.Itoa(g.KHeads), "--linear-num-value-heads", strconv.Itoa(g.VHeads),
			"--linear-key-head-dim", strconv.Itoa(g.KDim), "--linear-value-head-dim", strconv.Itoa(g.VDim),
			"--linear-conv-kernel-dim", strconv.Itoa(g.Conv))
	}
	if m.SharedExperts > 0 {
		a = append(a, "--moe-shared-expert-gate")
	}
	return a, nil
}
