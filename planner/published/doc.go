// Package published holds what placer's cluster-scale model
// (planner) is checked against, and the checks: the published
// tables of training throughput (Row: Megatron-LM's weak- and
// strong-scaling tables on H100s and its 2022 table on A100s, the Llama 3
// paper's, Megatron-Bridge's), the published sweeps (Sweep: one model
// under several plans, measured side by side), Megatron-LM's own
// estimate of a GPU's memory, the readers of placer's own measurements on
// one GPU (kernelbench's and layerbench's lines: MeasuredLayer,
// MeasuredStep, MeasuredMoE, MeasuredMoEHost) with their checks against
// planner.OneGPU, and which of a plan's features the rows placer predicts
// within tolerance vouch for (Features, Regime).
//
// It is a client of the exported API of planner and the packages
// beside it: a plan is parsed (plan.ParseStrategy), resolved
// (plan.Resolve) on a pod (plan.PodOf, plan.ParsePod), evaluated
// (planner.Evaluate) or searched (search.Search), and a part of a step
// costed on one GPU (planner.OneGPU); nothing here reaches into the cost
// model.
//
// May import: graph/..., planner, planner/plan, planner/search, measurements/...,
// internal/...
package published
