package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Attention is what a family's attention in place of the block's own
// keeps for its backward (Step.Attention; nil: the block's own), the
// method set planner hands in of the family's trait that prices the
// step (planner/cost's AttentionMemory, implemented in planner/families):
//   - Units, one block's attention's saved tensors in units of s b h
//     bytes before any split over the tensor group (blockUnits' attn),
//     given in, the bytes an element of a GEMM's saved input takes, and
//     mask, its dropout mask's units; and latents, those of them
//     replicated over the tensor group without sequence parallelism;
//   - OutputUnits, its output's units, which recomputing the core
//     attention frees (split like the output);
//   - RecomputeFreed, its tensors that selective recomputation's
//     modules mods free, given in: up to two pieces, each its units
//     replicated over the tensor group without sequence parallelism and
//     its units split over it (recomputeSaved splits them as the plan
//     does; a piece of none frees nothing).
//
// The model is handed in by value, so that the counter it is read from
// stays on its caller's stack (TestCountAllocates).
type Attention interface {
	Units(m transformer.Spec, in, mask float64) (attn, latents float64)
	OutputUnits(m transformer.Spec) float64
	RecomputeFreed(m transformer.Spec, mods plan.RecomputeModules, in float64) [2][2]float64
}

// Prediction is the modules a model predicts further tokens with on the
// last stage beside its output layer (Step.Prediction; nil: none), the
// method set planner hands in of the family's trait that prices the step
// (planner/cost's PredictionMemory, implemented in planner/families):
// ModuleCount, how many, each a block like the model's last with the
// output layer's logits and the embedding's copy on the last stage;
// ModuleParams, one module's parameters on one GPU of a tensor group of
// T beside its block's, block; ModuleActivations, what one module keeps
// for one micro-batch on one GPU beside its block's, block (kept, not
// recomputed), given s b h bytes unit, the share sp of a
// sequence-split activation on the GPU and the plan's low-precision
// recipe (plan.Strategy.FP8).
type Prediction interface {
	ModuleCount(m transformer.Spec) float64
	ModuleParams(m transformer.Spec, T, block float64) float64
	ModuleActivations(recipe string, unit, sp, block float64) float64
}
