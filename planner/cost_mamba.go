package planner

import (
	"github.com/placer/placer/planner/cost"
)

// A hybrid model (transformer.Spec.Pattern: Nemotron-H) is a stack of
// single-mixer blocks, each a norm, one mixer and the residual, as
// Megatron-Core's MambaStack builds it (megatron/core/ssm/mamba_block.py:
// MambaLayer, a TransformerLayer of self-attention only, or of an MLP
// only). The cost model's layer is the mean of the pattern's blocks: a
// stage's layers cost their number times one layer, so the mean is
// exact over the model; a stage whose layers are not the pattern's mix
// (a pipeline cut beside its attention layers) is costed at the mean,
// left out. Attention and MLP blocks are attnBlock's and mlpBlock's
// alone (each with its own norm and residual); the Mamba-2 block is the
// registered cost.SSMBlock's (families.Mamba).
//
// A block of experts (transformer.KindExperts, E: Nemotron 3) is
// Megatron-Core's MoETransformerLayer in the hybrid's stack
// (NVIDIA/Megatron-LM core_v0.16.1, 55ac7082,
// megatron/core/models/mamba/mamba_layer_specs.py: moe_layer, a
// TransformerLayer of pre_mlp_layernorm TENorm, mlp the MoE spec and its
// bias-dropout-add; megatron/core/ssm/mamba_block.py builds it for
// LayerSymbols.MOE): the MoE path's moeBlock whole, its norm, router,
// token dispatch and combine over the expert-parallel group, the local
// experts' grouped GEMMs (squared ReLU, no gate, as
// transformers 5.24.0's NemotronHExperts) and the shared expert, the
// residual, as the experts' half of the block (coster.Join's moe), so
// CUDA graphs replay it only where they graph the whole layer. A
// stage's kit costs its E layers and its other layers apart
// (hybridKit): the pipeline stage holding more of the pattern's E
// layers costs more, as its parameters weigh more (memory's
// hybridStageParams).

// hybridLayer is one layer of a hybrid model for one micro-batch on one
// GPU, forward and backward, recomputation included: the mean over its
// pattern of Mamba-2, attention, MLP blocks and blocks of experts.
func (c *coster) hybridLayer() (fwd, bwd phase) {
	l := float64(c.M.Layers)
	ne := c.M.MoELayers()
	if ne == 0 {
		return c.Join(c.hybridMean(l), part{}, false)
	}
	f, b, r := c.moeBlock()
	w := float64(ne) / l
	return c.Join(c.hybridMean(l), part{Fwd: cost.Scale(f, w), Bwd: cost.Scale(b, w), Rec: cost.Scale(r, w)}, true)
}

// hybridMean is the sum over a hybrid's Mamba-2, attention and MLP
// blocks of each block's forward, backward and recomputation, each
// weighted by its count over l.
func (c *coster) hybridMean(l float64) part {
	nm, na, nf := c.M.Kinds()
	var p part
	add := func(f, b, r phase, k int) {
		w := float64(k) / l
		p.Fwd, p.Bwd, p.Rec = p.Fwd.Plus(cost.Scale(f, w)), p.Bwd.Plus(cost.Scale(b, w)), p.Rec.Plus(cost.Scale(r, w))
	}
	if nm > 0 {
		f, b, r := c.Points.SSMBlock.SSMBlock(&c.Shard)
		add(f, b, r, nm)
	}
	if na > 0 {
		f, b, r := c.attnBlock()
		add(f, b, r, na)
	}
	if nf > 0 {
		f, b, r := c.mlpBlock()
		add(f, b, r, nf)
	}
	return p
}

// hybridKit sets kit ph's layers of a hybrid with blocks of experts as
// a stage's costs read them (stageCost.assemble, Plan.DenseOn): its
// layers one block of experts (moeBlock's), its dense layers the mean
// of its other blocks; each also as it runs keeping its activations
// (keep: block recomputation's other layers).
func (c *coster) hybridKit(ph *kitPhases, keep *coster) {
	experts := func(c *coster) (fwd, bwd phase) {
		f, b, r := c.moeBlock()
		return c.Join(part{}, part{Fwd: f, Bwd: b, Rec: r}, true)
	}
	others := func(c *coster) (fwd, bwd phase) {
		return c.Join(c.hybridMean(float64(c.M.Layers-c.M.MoELayers())), part{}, false)
	}
	ph.layerFwd, ph.layerBwd = experts(c)
	ph.denseFwd, ph.denseBwd = others(c)
	ph.layerBwdKeep, ph.denseBwdKeep = ph.layerBwd, ph.denseBwd
	if keep != nil {
		_, ph.layerBwdKeep = experts(keep)
		_, ph.denseBwdKeep = others(keep)
	}
}
