// Package opflags binds the op-level placer's flags: the flags of one op
// graph and what it runs on (its graph file, hardware, host, objective,
// the learned policy's training) that its commands share, and the flags
// for an op graph of the commands that serve both products (eval, search,
// export: cmd/placer/internal/worldflags), each bound into that
// command's options for an op graph alone.
//
// May import: cmd/placer/internal/worldflags, evaluate/roofline, graph,
// inputs, internal/..., jobs/..., methods/..., nn/ppo, optimize
package opflags
