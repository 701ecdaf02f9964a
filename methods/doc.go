// Package methods is the one list of placer's methods: every optimizer,
// classical and learned, by name, in the order the comparison tables show
// them, each with a factory that takes typed Options and returns the
// optimizer or an error. The CLI's --methods flag, the tables' row order,
// the quick references of the learned methods and the conformance suite
// all read this list. Adding a method is one file (its package's) plus one
// line in registry below.
//
// May import: graph, decision, evaluate, optimize, nn/ppo, methods/...
package methods
