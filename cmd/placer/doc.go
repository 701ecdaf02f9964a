// Command placer decides where, in what order and fused with what the ops
// of an ML training graph run on a cluster of GPUs. See README.md.
//
// One file per command: an options struct, its flags bound with cobra,
// and one call into jobs (a report grid's into jobs/reports, profile's
// and export's into jobs/profile and jobs/export); the table
// or JSON printed with report. The commands' raw flag values are parsed
// and checked into the jobs' options by the op-level placer's flags
// (internal/opflags), the report cells' (internal/cellflags), checks.go,
// regalflags.go and beside each command: a mistake in how a command was
// called is a usage error naming the flag (fail.Usage, exit 2); jobs
// names no flags. The names and defaults the flags and completions offer
// come from the packages that define them (roofline's presets and
// topologies, the methods registry, the workloads, optimize's
// objectives). Exit codes are decided in one place (internal/fail). No
// command branches on its workload's world: eval, search and export each
// have two flag binders, one per product (internal/opflags for an op
// graph, internal/clusterflags for a transformer at cluster scale), each
// binding its flags into its own product's options; the world is decided
// once from the workload and the command line handed to that product's
// flags alone (internal/worldflags), and jobs.Search and Eval
// (jobs/world.go) and export.Run take either; a flag of the other world
// is refused with the reason its binder recorded, and a --strategy is
// read by its world's parser (jobs.CheckStrategy).
//
// May import: cmd/placer/internal/..., jobs/..., inputs, report/..., internal/..., decision, graph,
// evaluate/hw, evaluate/roofline, evaluate/roofline/convlayout, methods/..., nn/ppo, optimize,
// workloads
package main
