// Package report renders placer's results for people and programs: tables
// (tablewriter) and their JSON twins, with consistent units.
//
// May import: decision, evaluate, planner, planner/bench, planner/bench/calibration, planner/kernels, planner/memory, planner/plan, planner/published, evaluate/opcheck, evaluate/profile, optimize, internal/...
package report
