// Package adapters counts LoRA's adapters of a plan's model
// (plan.FineTune): their parameters on one GPU of a block, a block with
// experts, a pipeline stage, and those one token's forward multiplies
// by, at the plan's tensor and expert-tensor degrees, as
// Megatron-Bridge's PEFT puts them on the model's linear layers
// (transformer.BlockLinearWidths, ExpertLinearWidths). The memory model
// and the cost model are its clients.
//
// May import: graph/transformer, planner/plan
package adapters
