package cost

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

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
