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
// May import: graph/..., evaluate/roofline, planner/kernels,
// planner/plan
package cost
