// Package plans writes the cluster planner's plans out: a transformer's
// plan at cluster scale (plan.Strategy, resolved by plan.Resolve:
// planner/plan) for the frameworks that run it: Megatron-LM's arguments
// and launch script (megatron.go, megatron_model.go, megatron_hybrid.go),
// Megatron-Bridge's
// recipe overrides (bridge.go), torchtitan's configuration (torchtitan.go
// for 0.2's TOML, torchtitan03.go for 0.3's config module), DeepSpeed's
// (deepspeed.go) and a transformer plan for tools/dev/torchplan
// (transformerplan.go); which stacks each framework runs (stack.go), what
// a plan must hold for one (check.go, keys.go: the keys each writes, from
// plan.Keys) and the search targets built from them (target.go). The
// framework releases, the plan files' formats and torchtitan 0.3's module
// writer are workloads/export's, shared with the op-level placer's
// exports; docs/frameworks.md describes the outputs.
//
// May import: graph/..., decision, planner, planner/plan, planner/search,
// workloads/export, internal/...
package plans
