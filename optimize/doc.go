// Package optimize is the seam every optimizer sits behind, learned or
// classical: an Optimizer takes a Problem (a graph, a cluster and an
// evaluator), Settings (a budget, a seed, a progress hook) and returns the
// best Decision it found with its statistics. The methods themselves, and
// the one list of them, are in package methods.
//
// May import: graph, decision, evaluate, internal/...
package optimize
