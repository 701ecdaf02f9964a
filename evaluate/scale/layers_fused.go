package scale

import "github.com/placer/placer/evaluate/scale/plan"

// fusedLayers are Megatron-Core's layers as Transformer Engine's fused
// kernels run them (placer's default stack, the Megatron stacks, and any
// stack compiled: compile=on): a block's attention half (attnBlock:
// the norm fused into the QKV GEMM, flash attention, the output
// projection; mlaBlock's latent attention) and its dense MLP (mlpBlock)
// or routed experts behind the token dispatcher (moeBlock), the
// vocabulary-parallel embedding (embedding) and output layer with
// Megatron-Core's cross-entropy (fusedOutput).
type fusedLayers struct{}

var _ LayerCoster = fusedLayers{}

func (fusedLayers) Name() string { return plan.LayersFused }

func (fusedLayers) Dense(c coster) (fwd, bwd phase) {
	return c.join(half(c.attnBlock()), half(c.mlpBlock()), false)
}

func (fusedLayers) MoE(c coster) (fwd, bwd phase) {
	return c.join(half(c.attnBlock()), half(c.moeBlock()), true)
}

func (fusedLayers) Embedding(c coster) (fwd, bwd phase) { return c.embedding() }

func (fusedLayers) Output(c coster) (fwd, bwd phase) { return c.fusedOutput() }
