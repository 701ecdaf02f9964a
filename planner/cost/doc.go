// Package cost is the vocabulary the costs of a training step are
// written in, shared by planner (which composes a step) and its
// plug-ins (planner/mechanisms, ...): a Kernel, a Phase (one
// layer's forward or backward on one GPU: its kernels' time, its
// communication exposed and in all, what its host issues), and the
// Shard a plug-in is given (the model, the plan, the pod at one
// tensor-parallel degree) with the primitives every plug-in prices
// kernels by; and the extension points a plug-in implements, a layer's
// (plugin.go) and the step's (step.go, over its views of a pipeline
// device, Stage, and of the step's times, Breakdown). It imports no
// package of a plug-in's, and holds no family's, code base's or
// mechanism's rule.
//
// Its files, from what every other names to what names the rest: a
// kernel and a phase (phase.go) and the record of which plug-ins price
// a step (record.go); the shard (shard.go) with the primitives a
// plug-in prices kernels by (kernels.go, comm.go); a plug-in's
// declaration (when.go); the plug-in (plugin.go, with a layer's
// extension points) and how a Pricing or EachPricing point is asked by
// a shard's record (pricing.go); the code base and its blocks
// (blocks.go), the token dispatcher (dispatch.go) and the step's
// extension points (step.go); the registry (registry.go); the points
// resolved from the registries (points.go) and each point's dispatch
// rule (rules.go). The shard carries no points: the framework holds
// them beside it (planner's coster), so a plug-in, given the shard, has
// no way to ask another.
//
// May import: graph/..., evaluate/roofline, planner/kernels,
// planner/plan
package cost
