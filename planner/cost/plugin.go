package cost

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Plugin is a family, a code base or a mechanism registered by name: its
// Name, the name a figure's provenance gives it (Result's PricedBy), and
// When, its declaration of the steps it prices (the keys and the facts
// of the stack, the precision, the model and the GPU it applies to),
// which the framework reads to decide, once a shard, whether it prices
// the step (Registry.Decide); a plug-in does not ask itself again.
type Plugin interface {
	Name() string
	When() When
}

// Applies is whether p's declaration holds on shard s (When.Holds): what
// the framework decides once a shard (Registry.Decide), for a test or a
// listing to ask again.
func Applies(p Plugin, s *Shard) bool {
	w := p.When()
	return w.Holds(s)
}

// RingMsg is what a GPU's context-parallel exchange moves and merges: KV
// the bytes of its K and V as the ring exchanges them (BF16; the query
// heads' count of them where the model repeats its key-value heads
// before the kernel), Out the elements of its attention output (and of
// dQ).
type RingMsg struct{ KV, Out float64 }

// CPAttention is the extension point of a layer's attention with its
// context-parallel exchange: fused attention call f (the GPU's whole
// share of the scores), forward or backward, with the exchange of msg
// between the plan's CP ranks as the plan's stack runs it, the first
// registered plug-in that implements it and prices the shard (Pricing);
// none (no context parallelism): the kernel alone (Shard.AttentionCall).
//
// Dispatch: Pricing.
type CPAttention interface {
	Plugin
	Attention(s *Shard, f FusedAttn, backward bool, msg RingMsg) Phase
}

// The extension points where a family's trait or a mechanism adds
// kernels to a layer beyond the block's own, each asked of every
// registered plug-in that implements it and that the shard's record says
// prices the step (Shard.Priced: its declaration held when the framework
// made the shard), in the order registered, families first, its phases added
// one after another:
//
//   - AttentionKernels: a layer's attention, forward and backward;
//   - MLPKernels: a layer's dense MLP, forward and backward;
//   - ExpertActivation: the experts' activation, for erows rows of cols
//     columns a half (also what recomputing it runs again);
//   - ExpertOutput: the experts' output, rows tokens over local experts
//     on the GPU, of nl tokens routed from it;
//   - RouterKernels: the router's, for nl tokens on one GPU;
//   - OutputHeads: the output layer's, the heads a model's pre-training
//     runs beside it (an encoder's masked-language-model and
//     next-sentence heads).
//
// Dispatch: EachPricing (each of them).
type (
	AttentionKernels interface {
		Plugin
		Attention(s *Shard) (fwd, bwd Phase)
	}
	MLPKernels interface {
		Plugin
		MLP(s *Shard) (fwd, bwd Phase)
	}
	ExpertActivation interface {
		Plugin
		ExpertActivation(s *Shard, erows, cols float64) (fwd, bwd Phase)
	}
	ExpertOutput interface {
		Plugin
		ExpertOutput(s *Shard, rows, local, nl float64) (fwd, bwd Phase)
	}
	RouterKernels interface {
		Plugin
		Router(s *Shard, nl float64) (fwd, bwd Phase)
	}
	OutputHeads interface {
		Plugin
		Heads(s *Shard) (fwd, bwd Phase)
	}
)

// FineTune is the extension point of fine-tuning's adapters on a frozen
// base, which a code base's layer costs are wrapped with where the first
// registered plug-in that implements it prices the shard (Pricing): a
// dense block's adapters, forward and backward, and the weight-gradient
// GEMMs a frozen base does not run, the block's and the output layer's;
// none: the code base's layer costs as they are.
//
// Dispatch: Pricing.
type FineTune interface {
	Plugin
	Adapters(s *Shard) (fwd, bwd Phase)
	FrozenWeightGrads(s *Shard) Phase
	OutputWeightGrad(s *Shard) Kernel
}

// The extension points of the mixers a hybrid model's layers run in
// place of attention, each the first registered plug-in that implements
// it (First):
//
//   - SSMBlock: a state-space block, the "M" layers of a hybrid pattern
//     (transformer.Spec.Pattern: Nemotron-H's Mamba-2), forward,
//     backward and what selective recomputation runs again;
//   - LinearMixer: a linear-attention mixer, the "G" layers of a model
//     of mixed mixers (transformer.Spec.Mixers: Qwen3-Next's Gated
//     DeltaNet), and the output gate its attention layers carry.
//
// Dispatch: First (each of them).
type (
	SSMBlock interface {
		Plugin
		SSMBlock(s *Shard) (fwd, bwd, rec Phase)
	}
	LinearMixer interface {
		Plugin
		MixerBlock(s *Shard) (fwd, bwd, rec Phase)
		AttnGate(s *Shard) (fwd, bwd Phase)
	}
)

// AttentionBlock is the extension point of a family's attention in
// place of the block's own (its norm, QKV projection, core attention,
// output projection and residual with their collectives), the first
// registered plug-in that implements it and prices the shard (Pricing):
// one block's attention for one micro-batch on one GPU, forward,
// backward and what selective recomputation runs again of it; none: the
// block's own.
//
// Dispatch: Pricing.
type AttentionBlock interface {
	Plugin
	AttentionBlock(s *Shard) (fwd, bwd, rec Phase)
}

// PredictionModules is the extension point of the modules a model
// predicts further tokens with on the last stage beside its output
// layer, the first registered plug-in that implements it and prices the
// shard (Pricing): their forward and backward for one micro-batch on one
// GPU, given the last stage's phases they share or repeat (Ends); none:
// no modules.
//
// Dispatch: Pricing.
type PredictionModules interface {
	Plugin
	Modules(s *Shard, e Ends) (fwd, bwd Phase)
}

// The extension points of the memory a family's trait counts in place of
// the block's own, which the framework hands planner/memory (its
// Step.Attention and Step.Prediction, interfaces of its own of the same
// methods: memory reads no plug-in registry), each the first registered
// plug-in that implements it and prices the step (Pricing):
//
//   - AttentionMemory: what a family's attention in place of the
//     block's own (AttentionBlock) keeps for its backward (memory.Attention:
//     its saved tensors' units and latents, its output's units, what
//     selective recomputation frees of it); none: the block's own;
//   - PredictionMemory: the prediction modules on the last stage
//     (PredictionModules) as memory counts them (memory.Prediction: how
//     many, each one's parameters and activations beside its block's);
//     none: no modules.
//
// Dispatch: Pricing (each of them).
type (
	AttentionMemory interface {
		Plugin
		Units(m transformer.Spec, in, mask float64) (attn, latents float64)
		OutputUnits(m transformer.Spec) float64
		RecomputeFreed(m transformer.Spec, mods plan.RecomputeModules, in float64) [2][2]float64
	}
	PredictionMemory interface {
		Plugin
		ModuleCount(m transformer.Spec) float64
		ModuleParams(m transformer.Spec, T, block float64) float64
		ModuleActivations(recipe string, unit, sp, block float64) float64
	}
)

// Ends is what PredictionModules are given of the last stage, each for
// one micro-batch on one GPU: the embedding's and the output layer's
// phases (with its loss) as the plan's code base costs them, and one
// block of the model's last kind as the code base costs it keeping its
// activations (no recomputation).
type Ends struct {
	EmbedFwd, EmbedBwd   Phase
	OutputFwd, OutputBwd Phase
	BlockFwd, BlockBwd   Phase
}

// GroupedGEMM is the extension point of the experts' GEMMs as the plan's
// stack groups them, the first registered plug-in that implements it
// (First): Grouped is g, one GEMM of the local experts' rows rows in all
// by n, at the grouped GEMM's efficiency; Calls, the GEMMs it launches
// from a loop of its own for one grouped GEMM; SplitCastCalls, the calls
// the FP8 casts of its two inputs add in one direction where they are
// split by expert; LoopCat, the local experts' outputs of rows rows
// concatenated where each expert runs its own GEMMs instead
// (Settings.ExpertLoop).
//
// Dispatch: First.
type GroupedGEMM interface {
	Plugin
	Grouped(s *Shard, g Kernel, local, rows, n float64) Kernel
	Calls(s *Shard, local float64) float64
	SplitCastCalls(s *Shard, local float64) float64
	LoopCat(s *Shard, rows float64) Kernel
}

// LowPrecision is the extension point of the plan's low-precision
// recipe (Plan.FP8: an FP8 or FP4 recipe), the first registered plug-in
// that implements it and prices the shard (Pricing; none: BF16, no
// speedups and no casts): Speedups, how many times faster its GEMMs
// run than BF16 ones of their shapes on pod p, forward and backward
// (their time's share, Shard.FP8Fwd and FP8Bwd, is its inverse), given
// the pod's BF16 matrix peak bf16Peak; and the casts of a layer's GEMM
// inputs to it: Casts and BwdCasts, the
// forward's and the backward's casts of inputs of es elements each on
// the GPU; Linears, those of a block half's two linears as the recipe
// casts them: the first linears' shared input of in elements (the
// block's tokens by the hidden size, which sequence parallelism splits
// before its gather), the second's input of mid elements on the GPU,
// and the gradients of the two outputs, outs (the first's, the
// second's), and firsts, how many linears the first are where the
// model holds them apart (Llama's wq, wk and wv: 3; w1 and w3: 2),
// forward and backward.
//
// Dispatch: Pricing.
type LowPrecision interface {
	Plugin
	Casts(s *Shard, es ...float64) Phase
	BwdCasts(s *Shard, es ...float64) Phase
	Linears(s *Shard, in, mid float64, outs [2]float64, firsts float64) (fwd, bwd Phase)
	Speedups(pl *plan.Plan, p *plan.Pod, bf16Peak float64) (fwd, bwd float64)
}

// ExpertLoad is the extension point of how many token copies the most
// loaded expert-parallel rank receives, the first registered plug-in
// that implements it and prices the shard (Pricing): Load, that rank's
// copies over the even share (at least 1) for nl tokens a GPU, where the
// plan states neither an imbalance nor capacity routing; elsewhere the coster takes the plan's own load factor
// (plan.Plan.LoadFactor).
//
// Dispatch: Pricing.
type ExpertLoad interface {
	Plugin
	Load(s *Shard, nl float64) float64
}
