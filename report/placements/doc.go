// Package placements holds the op-level placer's tables, each with its
// JSON twin: an op graph's evaluation (eval.go: the simulated step of a
// placement, with opcheck's checked report) and search summary
// (result.go), the methods' baselines and their rows file (baselines.go,
// rows.go), the experiment grids' tables and plots (equaltime.go and
// seeds.go, learned.go, regal.go, parallel.go, generalization.go) and
// the op costs (opcosts.go). How a table, a plot or a unit is written is
// package report's, which it imports.
//
// May import: decision, evaluate, evaluate/opcheck, report, internal/...
package placements
