package transformer

import (
	"fmt"
	"strings"
)

// Qwen3-Next (Qwen/Qwen3-Next-80B-A3B; transformers v5.24's
// models/qwen3_next) is a transformer of 48 layers whose token mixers
// differ by layer, each followed by the layer's experts as in any MoE
// block: three Gated DeltaNet layers (Yang et al., "Gated Delta
// Networks", arXiv 2412.06464) to one gated attention layer (its query
// projection twice as wide, the second half a sigmoid gate on the
// attention's output). Spec.Mixers gives the mixers, one character a
// layer.
const (
	MixerGDN       = 'G' // a Gated DeltaNet (linear attention)
	MixerAttention = '*' // gated full attention
)

// GDN is the Gated DeltaNet's shape: KHeads query and key heads of KDim,
// VHeads value heads of VDim (each key head shared by VHeads/KHeads
// value heads), a causal depthwise convolution of Conv taps over the
// queries, keys and values.
type GDN struct {
	KHeads, VHeads, KDim, VDim, Conv int
}

// GDNChunk is the chunk of the chunkwise delta rule, in tokens: flash-
// linear-attention's chunk_gated_delta_rule (fla/ops/gated_delta_rule,
// the kernel transformers' Qwen3NextGatedDeltaNet calls) runs chunks of
// 64.
const GDNChunk = 64

func (g GDN) keyDim() int64   { return int64(g.KHeads) * int64(g.KDim) }
func (g GDN) valueDim() int64 { return int64(g.VHeads) * int64(g.VDim) }

// InProj is the GDN's input projections' output width: queries, keys,
// values and the gate z (in_proj_qkvz: 2 key widths, 2 value widths) and
// beta and the decay a, one a value head each (in_proj_ba).
func (g GDN) InProj() int64 { return 2*g.keyDim() + 2*g.valueDim() + 2*int64(g.VHeads) }

// ConvChannels is the channels the convolution runs over: queries, keys
// and values.
func (g GDN) ConvChannels() int64 { return 2*g.keyDim() + g.valueDim() }

// Mixed reports whether m's layers' token mixers differ (Mixers).
func (m Spec) Mixed() bool { return m.Mixers != "" }

// MixerKinds counts m's Gated DeltaNet and attention layers.
func (m Spec) MixerKinds() (gdn, attn int) {
	gdn = strings.Count(m.Mixers, string(MixerGDN))
	return gdn, m.Layers - gdn
}

// GDNParams is one Gated DeltaNet mixer with the block's norms: the input
// projections (no bias), the convolution's weights (no bias), dt_bias and
// A_log (one a value head each), the gated RMS norm's scale (VDim, shared
// by the heads), out_proj, and the block's two RMS norms (the mixer's
// and the experts').
func (m Spec) GDNParams() int64 {
	h, g := int64(m.Hidden), m.GDN
	return h*g.InProj() + g.ConvChannels()*int64(g.Conv) + 2*int64(g.VHeads) + int64(g.VDim) + g.valueDim()*h + 2*h
}

// GatedAttentionParams is one gated attention mixer with the block's
// norms: attention's (AttentionParams of the plain layer) and the
// gate's half of the query projection, heads x head_dim more outputs.
// Its query and key RMS norms are left out, as Qwen3's are.
func (m Spec) GatedAttentionParams() int64 {
	plain := m
	plain.Mixers = ""
	return AttentionParams(plain) + int64(m.Hidden)*int64(m.Heads)*int64(m.HeadDim())
}

// mixersTotal is the layers' mixers' parameters, each counted.
func (m Spec) mixersTotal() int64 {
	ng, na := m.MixerKinds()
	return int64(ng)*m.GDNParams() + int64(na)*m.GatedAttentionParams()
}

// GDNKernelFLOPs is one token's forward FLOPs in the chunkwise gated
// delta rule of one layer (arXiv 2412.06464 section 3, the chunkwise
// parallel form of DeltaNet's WY representation, chunks of C =
// GDNChunk), counted by its matmuls a value head: within a chunk K K^T
// for the WY transform (2 C KDim), W = T (beta K) and U = T (beta V) (2 C
// KDim, 2 C VDim), the scores Q K^T (2 C KDim) and their product with the
// new values (2 C VDim); across chunks W S and Q S (2 KDim VDim each)
// and the state's update K^T (U - W S) (2 KDim VDim). The triangular
// solve for T, the decays and the gates are elementwise or smaller, left
// out.
func (m Spec) GDNKernelFLOPs() float64 {
	g := m.GDN
	c, dk, dv := float64(GDNChunk), float64(g.KDim), float64(g.VDim)
	return float64(g.VHeads) * (2*c*(3*dk+2*dv) + 6*dk*dv)
}

// gdnFLOPs is one token's forward matmul FLOPs in one Gated DeltaNet
// layer: the input projections, the kernel, out_proj.
func (m Spec) gdnFLOPs() float64 {
	h, g := float64(m.Hidden), m.GDN
	return 2*h*float64(g.InProj()) + m.GDNKernelFLOPs() + 2*float64(g.valueDim())*h
}

// mixerFLOPs is one token's forward matmul FLOPs through the layers'
// mixers on average, attention's scores against s keys: a gated
// attention layer's projections (the gate's included) and scores, a
// Gated DeltaNet's.
func (m Spec) mixerFLOPs(s float64) float64 {
	plain := m
	plain.Mixers = ""
	proj, scores := attnMatmulFLOPs(plain, s)
	gate := 2 * float64(m.Hidden) * float64(m.Heads) * float64(m.HeadDim())
	ng, na := m.MixerKinds()
	return (float64(na)*(proj+gate+scores) + float64(ng)*m.gdnFLOPs()) / float64(m.Layers)
}

// checkMixers reports the first inconsistency of m's mixers.
func (m Spec) checkMixers() error {
	if !m.Mixed() {
		if m.GDN != (GDN{}) {
			return fmt.Errorf("gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim or gdn_conv without mixers (the layers' token mixers)")
		}
		return nil
	}
	g := m.GDN
	ng, _ := m.MixerKinds()
	switch {
	case len(m.Mixers) != m.Layers:
		return fmt.Errorf("mixers=%s has %d layers, not layers=%d", m.Mixers, len(m.Mixers), m.Layers)
	case strings.ContainsFunc(m.Mixers, func(r rune) bool { return r != MixerGDN && r != MixerAttention }):
		return fmt.Errorf("mixers=%s: placer models G (Gated DeltaNet) and * (gated attention) layers", m.Mixers)
	case m.Hybrid() || m.MLA() || m.MTP > 0 || m.Window > 0 || m.Chunk > 0 || m.NormsPerBlock() > 2 || m.Family != "llama":
		return fmt.Errorf("mixers with pattern, latent attention, mtp, window, chunk, norms=4 or a gpt: placer models Qwen3-Next's llama blocks only")
	case !m.MoE() || m.DenseLayers > 0:
		return fmt.Errorf("mixers without experts in every layer: placer models Qwen3-Next's MoE blocks only")
	case ng > 0 && (g.KHeads < 1 || g.VHeads < 1 || g.KDim < 1 || g.VDim < 1 || g.Conv < 1):
		return fmt.Errorf("mixers with Gated DeltaNet layers need gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim and gdn_conv of at least 1")
	case ng > 0 && g.VHeads%g.KHeads != 0:
		return fmt.Errorf("gdn_k_heads=%d does not divide gdn_v_heads=%d", g.KHeads, g.VHeads)
	}
	return nil
}

// mixersString is the keys String writes for m's mixers ("" for none).
func (m Spec) mixersString() string {
	if !m.Mixed() {
		return ""
	}
	g := m.GDN
	return fmt.Sprintf(",mixers=%s,gdn_k_heads=%d,gdn_v_heads=%d,gdn_k_dim=%d,gdn_v_dim=%d,gdn_conv=%d",
		m.Mixers, g.KHeads, g.VHeads, g.KDim, g.VDim, g.Conv)
}

// mixerKey reads one of the mixers' integer keys into m (false: k is not
// one).
func (m *Spec) mixerKey(k string, n int) bool {
	switch k {
	case "gdn_k_heads":
		m.GDN.KHeads = n
	case "gdn_v_heads":
		m.GDN.VHeads = n
	case "gdn_k_dim":
		m.GDN.KDim = n
	case "gdn_v_dim":
		m.GDN.VDim = n
	case "gdn_conv":
		m.GDN.Conv = n
	default:
		return false
	}
	return true
}
