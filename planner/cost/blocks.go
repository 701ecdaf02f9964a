package cost

// Part is one half of a block (its attention, or its MLP or experts)
// for one micro-batch on one GPU: its forward, its backward without
// recomputation, and Rec, the forward selective recomputation runs
// again of it.
type Part struct{ Fwd, Bwd, Rec Phase }

// Half is a block half's three phases as a Part.
func Half(fwd, bwd, rec Phase) Part { return Part{fwd, bwd, rec} }

// Blocks is what a code base's layer costs (CodeBase) compose a layer
// of: the shard they cost at (Base: the plan's shard shapes, the
// hardware and its measurements, and the primitives that cost a kernel
// or a GEMM with its collectives), the cost model's core blocks as
// Megatron-Core's fused kernels run them (AttnBlock, MLPBlock, MoEBlock: a
// half's forward, backward and recomputation; CoreAttention: the fused
// attention kernel with context parallelism's exchange; Embedding;
// FusedOutput: the output layer and its loss), and Join, the block of two
// halves with CUDA graphs, recomputation and the host's wait as the plan
// runs them, and DispatchComm, an MoE block's token dispatch. The cost
// model (planner) hands one to a code base.
type Blocks interface {
	Base() *Shard
	AttnBlock() (fwd, bwd, rec Phase)
	MLPBlock() (fwd, bwd, rec Phase)
	MoEBlock() (fwd, bwd, rec Phase)
	CoreAttention() (fwd, bwd Phase)
	Embedding() (fwd, bwd Phase)
	FusedOutput() (fwd, bwd Phase)
	Join(attn, mlp Part, moe bool) (fwd, bwd Phase)
	// DispatchComm is the token dispatch's communication of an MoE
	// block (the plan's registered dispatcher): recv rows received of
	// rows routed, of nl tokens on the GPU.
	DispatchComm(recv, rows, nl float64) Phase
}

// CodeBase is what a stack's code costs of a training step's layers,
// given the blocks of one micro-batch on one GPU (Blocks): one
// transformer block, dense (Dense) or whose MLP is routed experts (MoE),
// its recomputation included in the backward, and the two ends of the
// model, the first stage's embedding and the last stage's output layer
// with its loss; each its forward and its backward. It is a Plugin: Name
// is the name it is registered under (a stack names it in
// plan.Settings.Layers), When its declaration of the stacks that run it,
// all of its conditions a stack's settings (Setting), which the framework
// reads to choose the code base of a plan (Registry.CodeBase) and to
// record it (Points.Decide).
type CodeBase interface {
	Plugin
	Dense(b Blocks) (fwd, bwd Phase)
	MoE(b Blocks) (fwd, bwd Phase)
	Embedding(b Blocks) (fwd, bwd Phase)
	Output(b Blocks) (fwd, bwd Phase)
}
