// Package plans holds the cluster planner's tables, each with its JSON
// twin: one plan (WriteScalePlan) and a search's plans (WriteScaleSearch,
// with the ties of tie.go), the bench (bench.go: `placer report bench`),
// the published sweeps (sweeps.go), Megatron-LM's table, `placer report
// layers`' measured layers, a sizing (sizing.go: `placer size`, its
// table and plot). Its rows
// come from planner/... (package jobs fills them); how a table, a plot
// or a unit is written is package report's, which it imports.
//
// May import: decision, evaluate/profile, planner, planner/bench, planner/bench/calibration,
// planner/kernels, planner/memory, planner/plan, planner/published, report,
// internal/...
package plans
