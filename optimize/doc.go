// Package optimize is the seam every optimizer sits behind, learned or
// classical: an Optimizer takes a Problem (a graph, a cluster and an
// evaluator), Settings (a budget, a seed, a Recorder: the one progress
// channel, as gonum's) and returns the best Decision it found with its
// statistics, and for a learned method its typed Learning (Knobs, Model,
// curve). The methods themselves, and the one list of them, are in
// package methods; placer's search, the pipeline of methods `placer
// search` runs, is methods/anchored.
//
// May import: graph, decision, evaluate, internal/...
package optimize
