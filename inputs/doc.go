// Package inputs turns what a user types (a graph file and its format, a
// workload name, a hardware preset or profile, a placement strategy or
// decision file) into the values the library works on. Every command that
// takes a graph, a cluster or a decision resolves it here, so that they
// all accept the same things and report the same one-line errors.
//
// May import: graph, graph/costtable, graph/transformer, decision,
// evaluate/roofline, evaluate/scale, workloads/..., internal/...
package inputs
