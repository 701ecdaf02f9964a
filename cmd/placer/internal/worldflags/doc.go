// Package worldflags holds the flags of the commands that serve both of
// placer's products (eval, search, export): the op-level placer's, for
// one op graph, and the cluster planner's, for a transformer at cluster
// scale. Each such command has two flag binders, one per product, each
// binding its flags into its own product's options (cmd/placer/internal/
// opflags, cmd/placer/internal/clusterflags); Bind makes the command's
// flags of the two, Choose decides the world once from the workload
// (inputs.WorldOf), refuses a flag of the other world with why, and hands
// the command line to the chosen product's flags alone. The usages of
// the flags both products take (the workload, the GPUs) are here, one
// text each.
//
// May import: inputs, internal/fail, jobs
package worldflags
