// Package export is placer export's job (Run): a placement of an op graph
// written in a framework's or a tool's format (TensorFlow's device map
// and CostGraphDef, msr-fiddle's expert placement, a module map, a torch
// plan, torchtitan's and DeepSpeed's configurations, a decision file),
// or a transformer's plan at cluster scale as a torch plan, Megatron-LM's
// arguments, or torchtitan's or DeepSpeed's configuration; the formats
// themselves are workloads/export's. It holds the rules the jobs that
// read a plan share with it: where a plan comes from (PlanRule,
// PlanOrPlacement, ReadPlanFile, Options.TransformerPlan), how --gpus and
// a strategy's replicas give one replica's GPUs (GPUsRule, StrategyOf,
// ReplicaCluster), and what a plan changes in a PyTorch model's
// train-mode modules (TrainModeOf): package jobs' eval and search import
// them from here, so that what export writes is what they cost.
//
// Nothing here imports package jobs. Options take values; a refusal that
// names a flag is a usage error (fail.Usagef).
//
// May import: decision, evaluate/profile, planner, planner/plan, graph/...,
// inputs, internal/..., report, report/plans, workloads/...
package export
