package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// mambaUnits is what one Mamba-2 block keeps for its backward, in units
// of s b h bytes before any split over the tensor group
// (layerMemory's), as Megatron-Core's MambaMixer and mamba_ssm's kernels
// save it: the norm's input 2 and in_proj's (the normed input) 2,
// replicated without sequence parallelism; in_proj's output z, x, B, C,
// dt (the convolution's input and the gate), 2 InProj/h; the
// convolution's output x, B, C (the scan's inputs), 2 (d_inner + 2
// Groups State)/h; dt's softplus and its cumulative decay in FP32, 8
// Heads/h; the scan's output (the gated norm's input) and the gated
// norm's output (out_proj's input), 2 d_inner/h each. No key/value cache
// and no state: the states of the chunks are recomputed in the
// backward (planner's mambaBlock), and the recurrent state
// matters at inference only.
// With fp8 the GEMMs' inputs are kept as their FP8 copies, one byte an
// element (blockUnits'): in_proj's 1, out_proj's d_inner/h.
func mambaUnits(m *transformer.Spec, fp8 bool) (units, replicated float64) {
	h, s := float64(m.Hidden), m.SSM
	di := float64(s.Inner())
	units = 2 + 2 + 2*float64(s.InProj())/h + 2*(di+2*float64(s.Groups*s.State))/h + 8*float64(s.Heads)/h + 4*di/h
	if fp8 {
		return units - 1 - di/h, 3
	}
	return units, 4
}

// hybridMemory is a hybrid's layerMemory: the mean over its pattern of
// what a Mamba-2 block (mambaUnits), an attention block and an MLP block
// (blockUnits' halves, one norm each) keep, split over the tensor group
// as layerMemory splits a block's (all of it with sequence parallelism;
// else all but the replicated inputs). With blocks of experts its
// layers are those (hybridExpertsMemory) and its dense layers the mean
// of its other blocks (Plan.DenseOn's). Selective recomputation of the
// core attention drops the attention blocks' outputs, as layerMemory's.
func (c *counter) hybridMemory() layerMem {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden)
	nm, na, nf := m.Kinds()
	l := float64(m.Layers)
	fp8 := plan.KeepsFP8Inputs(pl.FP8)
	attn, mlp, _ := blockUnits(m, fp8Bytes(fp8), true, c.attention)
	mu, mrep := mambaUnits(m, fp8)
	// blockUnits' replicated is both halves' with two norms: one block
	// keeps its norm's input (2) and its column-parallel GEMM's input (2,
	// 1 with fp8) replicated, an attention block its dropout mask (1)
	// too.
	arep, frep := 5.0, 4.0
	if fp8 {
		arep, frep = 4, 3
	}
	split := func(units, rep float64) float64 {
		switch {
		case pl.SequenceParallel:
			return units * unit / T
		case pl.TP > 1:
			return rep*unit + (units-rep)*unit/T
		}
		return units * unit
	}
	ne := m.MoELayers()
	if ne > 0 {
		// Its blocks of experts as its layers, the others' mean as
		// its dense layers (plan.Plan.DenseOn's: hybridexperts.go).
		l -= float64(ne)
	}
	var per float64
	if l > 0 { // a pattern of blocks of experts alone has no other
		per = (float64(nm)*split(mu, mrep) + float64(na)*split(2+attn, arep) + float64(nf)*split(2+mlp, frep)) / l
		if pl.Recomputes().Has(plan.RecomputeCoreAttn) {
			per -= float64(na) / l * 2 * unit / T
		}
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	if ne > 0 {
		return layerMem{perLayer: c.hybridExpertsMemory(split), perDense: per, layerInput: layerInput}
	}
	return layerMem{perLayer: per, perDense: per, wholeBlock: per, layerInput: layerInput}
}

// mixerUnits is what the layers' mixers keep for their backward on
// average, in units of s b h bytes before any split (the norms' inputs
// aside): a gated attention layer's attention (blockUnits') and the
// gate's input and product, 4 heads head_dim/h; a Gated DeltaNet's
// input projection's input 2, output 2 InProj/h, the convolution's
// output 2 ConvChannels/h, beta and the decay in FP32 8 VHeads/h, the
// kernel's output and the gated norm's 2 VHeads VDim/h each. BF16 counts
// (with fp8 the GEMM inputs' FP8 copies are not subtracted here).
func mixerUnits(m *transformer.Spec) float64 {
	h := float64(m.Hidden)
	ng, na := m.MixerKinds()
	plain := *m
	plain.Mixers = ""
	attn, _, _ := blockUnits(&plain, bf16, true, nil)
	attn += 4 * float64(m.Heads*m.HeadDim()) / h
	g := m.GDN
	gdn := 2 + 2*float64(g.InProj())/h + 2*float64(g.ConvChannels())/h + 8*float64(g.VHeads)/h + 4*float64(g.VHeads*g.VDim)/h
	return (float64(na)*attn + float64(ng)*gdn) / float64(m.Layers)
}

// mixerMemory is layerMemory's for a model of mixers (with experts in
// every layer: transformer.Spec.Check): its two norms' inputs and the
// mixers' mean, split over the tensor group (sequence-parallel where T >
// 1, as Resolve asks of experts), and the experts' activations
// (moeActivations); selective recomputation of the core attention drops
// the attention layers' outputs.
func (c *counter) mixerMemory() layerMem {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden)
	per := (4+mixerUnits(m))*unit/T + c.moeActivations()
	_, na := m.MixerKinds()
	if pl.Recomputes().Has(plan.RecomputeCoreAttn) {
		per -= float64(na) / float64(m.Layers) * 2 * float64(m.Heads*m.HeadDim()) / float64(m.Hidden) * unit / T
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMem{perLayer: per, perDense: per, wholeBlock: per, layerInput: layerInput}
}

// fp8Bytes is the bytes an element of a saved GEMM input takes in the
// mixers' count: one with fp8, else two (BF16).
func fp8Bytes(fp8 bool) float64 {
	if fp8 {
		return 1
	}
	return bf16
}
