// Package methodstest is the conformance suite every optimize.Optimizer
// passes (every op placed, co-location and memory honoured, the budget kept)
// and the problems methods' tests share, on the roofline model (a test
// helper: it may import graph, decision, optimize, evaluate/roofline and
// graph/graphtest).
//
// May import: graph/..., decision, evaluate/..., optimize
package methodstest
