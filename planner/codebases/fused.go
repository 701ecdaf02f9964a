package codebases

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Fused are Megatron-Core's layers as Transformer Engine's fused
// kernels run them (placer's default stack, the Megatron stacks, and any
// stack compiled: compile=on): a block's attention half (AttnBlock:
// the norm fused into the QKV GEMM, flash attention, the output
// projection; or the latent attention) and its dense MLP (MLPBlock)
// or routed experts behind the token dispatcher (MoEBlock), the
// vocabulary-parallel embedding (Embedding) and output layer with
// Megatron-Core's cross-entropy (FusedOutput).
type Fused struct{}

var _ cost.CodeBase = Fused{}

func (Fused) Name() string { return plan.LayersFused }

// When is the fused layers' declaration: every stack compiled
// (compile=on) but torchtitan's (TitanCompiled).
func (Fused) When() cost.When { return fusedWhen }

// The stack settings the code bases' declarations read: the layers run
// eager (compile=off), and whose code they run.
var (
	fusedWhen   = cost.When{cost.Not(eagerLayers), cost.Not(titanLayers)}
	eagerLayers = cost.Setting("compile=off", func(st *plan.Settings) bool { return st.Eager })
	titanLayers = cost.Setting("layers=torchtitan", func(st *plan.Settings) bool { return st.Layers == plan.LayersTitan })
)

func (Fused) Dense(b cost.Blocks) (fwd, bwd phase) {
	return b.Join(cost.Half(b.AttnBlock()), cost.Half(b.MLPBlock()), false)
}

func (Fused) MoE(b cost.Blocks) (fwd, bwd phase) {
	return b.Join(cost.Half(b.AttnBlock()), cost.Half(b.MoEBlock()), true)
}

func (Fused) Embedding(b cost.Blocks) (fwd, bwd phase) { return b.Embedding() }

func (Fused) Output(b cost.Blocks) (fwd, bwd phase) { return b.FusedOutput() }
