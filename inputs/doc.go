// Package inputs turns what a user types (a graph file and its format, a
// workload name, a hardware preset or profile, a pod, a placement strategy
// or decision file) into the values the library works on. Every command
// that takes a graph, a cluster or a decision resolves it here, so that
// they all accept the same things and report the same one-line errors.
// The workload decides its world, once (WorldOf), and each world resolves
// with types of its own: an op graph on a cluster of GPUs (GraphSpec,
// ClusterSpec, Resolve: a Problem), or a transformer by its shape on a
// pod of nodes (PodSpec, Transformer). A file's format is found through
// one registry per kind of file (formats.go).
//
// May import: graph, graph/costtable, graph/transformer, decision,
// evaluate/roofline, planner/plan, evaluate/profile, workloads/...,
// internal/...
package inputs
