package transformer

import (
	"fmt"
	"strings"
)

// Hybrid models (Nemotron-H, NVIDIA-Nemotron-Nano-v2: NVIDIA, arXiv
// 2504.03624 and 2508.14444) are a stack of single-mixer blocks, each an
// RMS norm, one mixer and the residual: a Mamba-2 layer (Dao and Gu,
// "Transformers are SSMs", arXiv 2405.21060), a grouped-query attention
// layer, or an MLP. Spec.Pattern gives the layers' kinds in order, one
// character each, as Megatron-LM's --hybrid-override-pattern and the
// models' hybrid_override_pattern write them.
const (
	KindMamba     = 'M' // a Mamba-2 mixer
	KindAttention = '*' // self-attention (no MLP in its block)
	KindMLP       = '-' // an MLP (no attention in its block)
)

// SSM is the Mamba-2 mixer's shape: Heads heads of HeadDim channels (the
// mixer's inner width d_inner = Heads x HeadDim), a state of State per
// head and group, the B and C projections shared by Groups groups of
// heads, a causal depthwise convolution of Conv taps, and the SSD
// algorithm's chunks of Chunk tokens.
type SSM struct {
	Heads, HeadDim, State, Groups, Conv, Chunk int
}

// Hybrid reports whether m is a stack of single-mixer blocks (Pattern).
func (m Spec) Hybrid() bool { return m.Pattern != "" }

// Kinds counts m's layers of each kind: every layer an attention and an
// MLP block where m is not hybrid.
func (m Spec) Kinds() (mamba, attn, mlp int) {
	if !m.Hybrid() {
		return 0, m.Layers, m.Layers
	}
	for _, k := range m.Pattern {
		switch k {
		case KindMamba:
			mamba++
		case KindAttention:
			attn++
		case KindMLP:
			mlp++
		}
	}
	return mamba, attn, mlp
}

// Inner is the Mamba-2 mixer's inner width d_inner, Heads x HeadDim.
func (s SSM) Inner() int { return s.Heads * s.HeadDim }

// conv is the channels the convolution runs over: x, B and C.
func (s SSM) conv() int64 { return int64(s.Inner()) + 2*int64(s.Groups)*int64(s.State) }

// InProj is the input projection's output width: z and x (d_inner
// each), B and C (Groups x State each) and dt (one a head), as
// Megatron-Core's MambaMixer.in_proj and transformers' NemotronH
// Mamba2Mixer.in_proj have it.
func (s SSM) InProj() int64 {
	return 2*int64(s.Inner()) + 2*int64(s.Groups)*int64(s.State) + int64(s.Heads)
}

// MambaParams is one Mamba-2 block: its RMS norm (Hidden), in_proj
// (Hidden x InProj, no bias), the convolution's weights and biases over
// x, B and C ((Conv + 1) a channel), dt_bias, A_log and D (one a head
// each), the gated RMS norm's scale (d_inner) and out_proj (d_inner x
// Hidden, no bias).
func (m Spec) MambaParams() int64 {
	h, s := int64(m.Hidden), m.SSM
	return h + h*s.InProj() + s.conv()*int64(s.Conv+1) + 3*int64(s.Heads) + int64(s.Inner()) + int64(s.Inner())*h
}

// hybridLayerParams is the layers' parameters of a hybrid m, each kind
// counted: a Mamba-2 block's (MambaParams), an attention block's (its
// projections and one norm), an MLP block's (its matrices and one norm),
// a block of experts' (hybridExpertParams).
func (m Spec) hybridLayerParams() int64 {
	nm, na, nf := m.Kinds()
	return int64(nm)*HybridBlockParams(m, KindMamba) + int64(na)*HybridBlockParams(m, KindAttention) +
		int64(nf)*HybridBlockParams(m, KindMLP) + int64(expertLayers(m))*HybridBlockParams(m, KindExperts)
}

// HybridBlockParams is one block of kind k (KindMamba, KindAttention,
// KindMLP, KindExperts) of a hybrid m, its norm included: a Mamba-2
// block's (MambaParams), an attention block's (its projections and one
// norm), an MLP block's (its matrices and one norm), a block of
// experts' (hybridExpertParams); 0 for another kind.
func HybridBlockParams(m Spec, k rune) int64 {
	h := int64(m.Hidden)
	switch k {
	case KindMamba:
		return m.MambaParams()
	case KindAttention:
		return AttentionParams(m) - int64(m.NormsPerBlock())*h + h
	case KindMLP:
		return mlpParams(m, int64(m.FFN)) + h
	case KindExperts:
		return hybridExpertParams(m)
	}
	return 0
}

// SSDFLOPs is one token's forward FLOPs in the SSD algorithm of one
// Mamba-2 layer (arXiv 2405.21060 section 6, the chunked algorithm with
// chunks of Q tokens), counted as its batched matmuls run them: within a
// chunk the scores C B^T (Q x Q x State a group: 2 Q State Groups a
// token) and their product with x (Q x Q x HeadDim a head: 2 Q HeadDim
// Heads), each chunk's state B^T x (State x HeadDim a head a token: 2
// State HeadDim Heads) and its contribution to the next chunk's outputs
// C h (as many); the states' passing from chunk to chunk (State x
// HeadDim a head a chunk) and the decays are elementwise, left out.
func (m Spec) SSDFLOPs() float64 {
	s := m.SSM
	q, n, p := float64(s.Chunk), float64(s.State), float64(s.HeadDim)
	heads, g := float64(s.Heads), float64(s.Groups)
	return 2*q*n*g + 2*q*p*heads + 4*n*p*heads
}

// mambaModelFLOPs is one token's forward FLOPs in one Mamba-2 layer as
// Megatron-LM's num_floating_point_operations counts them
// (megatron/training/training.py, core_v0.16.1, mamba_layer_flops):
// in_proj 2 h InProj, the scan 7 d_inner State, out_proj 2 d_inner h.
// Megatron-LM writes d_inner as 2h (expand 2); here it is Heads x
// HeadDim, the same in every Nemotron-H but Nano v2's (10,240, not
// 8,960).
func (m Spec) mambaModelFLOPs() float64 {
	h, s := float64(m.Hidden), m.SSM
	d := float64(s.Inner())
	return 2*h*float64(s.InProj()) + 7*d*float64(s.State) + 2*d*h
}

// hybridPerToken is one token's forward model FLOPs through a hybrid m,
// the attention layers' scores against s keys.
func (m Spec) hybridPerToken(s float64) float64 {
	nm, na, nf := m.Kinds()
	proj, scores := attnMatmulFLOPs(m, s)
	logits := 2 * float64(m.Hidden) * float64(m.Vocab)
	return float64(nm)*m.mambaModelFLOPs() + float64(na)*(proj+scores) + float64(nf)*mlpMatmulFLOPs(m, float64(m.FFN)) +
		float64(expertLayers(m))*hybridExpertFLOPs(m) + logits
}

// checkHybrid reports the first inconsistency of a hybrid m's pattern
// and mixer shape.
func (m Spec) checkHybrid() error {
	if !m.Hybrid() {
		if m.SSM != (SSM{}) {
			return fmt.Errorf("ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv or ssm_chunk without pattern (the layers' kinds)")
		}
		return nil
	}
	if len(m.Pattern) != m.Layers {
		return fmt.Errorf("pattern=%s has %d layers, not layers=%d", m.Pattern, len(m.Pattern), m.Layers)
	}
	if i := strings.IndexFunc(m.Pattern, func(r rune) bool {
		return r != KindMamba && r != KindAttention && r != KindMLP && r != KindExperts
	}); i >= 0 {
		return fmt.Errorf("pattern=%s: layer %d is %q: placer models M (Mamba-2), * (attention), - (MLP) and E (experts)", m.Pattern, i, m.Pattern[i])
	}
	if err := checkHybridExperts(m); err != nil { // hybrid_moe.go
		return err
	}
	s := m.SSM
	nm, _, _ := m.Kinds()
	switch {
	case m.MLA() || m.MTP > 0 || m.Window > 0 || m.Chunk > 0 || m.NormsPerBlock() > 2:
		return fmt.Errorf("pattern with latent attention, mtp, window, chunk or norms=4: placer models hybrids of single-mixer blocks only")
	case m.Family != "llama":
		return fmt.Errorf("pattern on a %s: the llama family's blocks only (RMS norms, no biases)", m.Family)
	case nm > 0 && (s.Heads < 1 || s.HeadDim < 1 || s.State < 1 || s.Groups < 1 || s.Conv < 1 || s.Chunk < 1):
		return fmt.Errorf("pattern with Mamba-2 layers needs ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv and ssm_chunk of at least 1")
	case nm > 0 && s.Heads%s.Groups != 0:
		return fmt.Errorf("ssm_groups=%d does not divide ssm_heads=%d", s.Groups, s.Heads)
	}
	return nil
}

// hybridString is the keys String writes for a hybrid m ("" for none).
func (m Spec) hybridString() string {
	if !m.Hybrid() {
		return ""
	}
	s := m.SSM
	return fmt.Sprintf(",pattern=%s,ssm_heads=%d,ssm_head_dim=%d,ssm_state=%d,ssm_groups=%d,ssm_conv=%d,ssm_chunk=%d",
		m.Pattern, s.Heads, s.HeadDim, s.State, s.Groups, s.Conv, s.Chunk)
}

// hybridKey reads one of a hybrid's integer keys into m (false: k is
// not one).
func (m *Spec) hybridKey(k string, n int) bool {
	switch k {
	case "ssm_heads":
		m.SSM.Heads = n
	case "ssm_head_dim":
		m.SSM.HeadDim = n
	case "ssm_state":
		m.SSM.State = n
	case "ssm_groups":
		m.SSM.Groups = n
	case "ssm_conv":
		m.SSM.Conv = n
	case "ssm_chunk":
		m.SSM.Chunk = n
	default:
		return false
	}
	return true
}
