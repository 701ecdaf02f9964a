package planner

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// layerCoster is the layer costs a plan of settings st runs: the
// registered code base whose declaration runs on st (codebases.Registered,
// cost.Registry.CodeBase: a stack's eager layers where they run eager,
// compile=off or an eager stack's default; torchtitan's compiled blocks
// under compile=on on its stack; else the fused kernels').
func layerCoster(st *plan.Settings) LayerCoster {
	return registered.CodeBases.CodeBase(st)
}

// part is one half of a block (cost.Part).
type part = cost.Part

// Join is the block of attention half a and MLP or experts half f (an
// MoE block's with moe), forward and backward: CUDA graphs replay what
// the plan graphs of it, the backward runs the recomputation the plan
// asks for (selective: the halves' rec; full: the whole forward), and
// the host's wait is exposed in each direction (unless c.noHost).
func (c *coster) Join(a, f part, moe bool) (fwd, bwd phase) {
	af, ab, ar := a.Fwd, a.Bwd, a.Rec
	mf, mb, mr := f.Fwd, f.Bwd, f.Rec
	if g := c.Plan.Run.Graphs; g == plan.GraphsDense || g == plan.GraphsFull {
		// The attention and a dense layer's MLP are replayed from their
		// graphs; an MoE layer stays eager unless the whole layer is
		// graphed (capacity routing: resolveSoftware).
		af, ab, ar = graphed(af), graphed(ab), graphed(ar)
		if !moe || g == plan.GraphsFull {
			mf, mb, mr = graphed(mf), graphed(mb), graphed(mr)
		}
	}
	fwd, bwd = af.Plus(mf), mb.Plus(ab)
	switch c.Plan.Recompute {
	case plan.SelectiveRecompute:
		bwd = bwd.Plus(ar.Plus(mr))
	case plan.FullRecompute:
		bwd = bwd.Plus(fwd)
	}
	if c.NoHost {
		return fwd, bwd
	}
	h := &c.Pod.Kernels.Host
	return expose(c.Points, h, fwd, false), expose(c.Points, h, bwd, true)
}

// The coster's blocks, as a code base asks them (cost.Blocks): its
// shard, the fused kernels' halves, ends and attention kernel.
var _ cost.Blocks = (*coster)(nil)

func (c *coster) Base() *cost.Shard                { return &c.Shard }
func (c *coster) AttnBlock() (fwd, bwd, rec phase) { return c.attnBlock() }
func (c *coster) MLPBlock() (fwd, bwd, rec phase)  { return c.mlpBlock() }
func (c *coster) MoEBlock() (fwd, bwd, rec phase)  { return c.moeBlock() }
func (c *coster) CoreAttention() (fwd, bwd phase)  { return c.coreAttention() }
func (c *coster) Embedding() (fwd, bwd phase)      { return c.embedding() }
func (c *coster) FusedOutput() (fwd, bwd phase)    { return c.fusedOutput() }
func (c *coster) DispatchComm(recv, rows, nl float64) phase {
	return dispatcherOf(c.Points, &c.Shard).DispatchComm(recv, rows, nl)
}

// blocks is a copy of c as the blocks a code base is handed (a code
// base's costs are c's, whatever they change of their copy).
func (c *coster) blocks() cost.Blocks {
	cc := *c
	return &cc
}

// block is a transformer block as the plan's stack costs it (no
// profile): with moe an MoE block, else a dense one.
func (c *coster) block(moe bool) (fwd, bwd phase) {
	if c.M.Hybrid() {
		return c.hybridLayer()
	}
	st := layerCoster(&c.Plan.Run)
	if moe {
		return st.MoE(c.blocks())
	}
	return st.Dense(c.blocks())
}

// output is the output layer and its loss as the plan's stack costs it
// (no profile).
func (c *coster) output() (fwd, bwd phase) { return layerCoster(&c.Plan.Run).Output(c.blocks()) }

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
