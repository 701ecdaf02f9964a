// Package report renders placer's results for people and programs: tables
// (tablewriter) and their JSON twins, with consistent units.
//
// May import: decision, evaluate, evaluate/scale, evaluate/scale/bench/calibration, evaluate/scale/kernels, evaluate/scale/memory, evaluate/scale/plan, evaluate/scale/published, evaluate/opcheck, evaluate/profile, optimize, internal/...
package report
