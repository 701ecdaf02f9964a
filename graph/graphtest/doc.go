// Package graphtest builds the graphs tests and benchmarks run on: random
// layered DAGs (small ones for tests, an 80,000-op one standing in for
// gnmt8 in benchmarks), independent chains, a graph whose parameters fit
// only when spread over the devices, and one where the objectives
// disagree.
//
// May import: graph
package graphtest
