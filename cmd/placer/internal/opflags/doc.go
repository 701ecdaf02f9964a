// Package opflags binds the op-level placer's flags and parses them into
// its jobs' options: the flags of one op graph and what it runs on (its
// graph file, hardware, host, objective, the learned policy's training)
// that its commands share; the flags for an op graph of the commands that
// serve both products (eval, search, export:
// cmd/placer/internal/worldflags), each bound into that command's options
// for an op graph alone; and each op-level command's raw flag values
// parsed and checked into its options (parse.go, checks.go), in the order
// the CLI has always checked them. A mistake in how a command was called
// is a usage error naming the flag (fail.Usage, exit 2); jobs names no
// flags.
//
// May import: cmd/placer/internal/cellflags, cmd/placer/internal/worldflags, evaluate/roofline/..., graph,
// inputs, internal/..., jobs/..., methods/..., nn/ppo, optimize,
// report
package opflags
