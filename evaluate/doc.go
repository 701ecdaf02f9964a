// Package evaluate defines the seam between optimizers and evaluators: an
// Evaluator turns a decision.Decision into a Result (simulated by the
// roofline model or measured on real GPUs).
//
// May import: graph, decision
package evaluate
