// Command placer decides where, in what order and fused with what the ops
// of an ML training graph run on a cluster of GPUs. See README.md.
//
// One file per command: an options struct, its flags bound with cobra,
// and one call into jobs (a report grid's into jobs/reports, profile's
// and export's into jobs/profile and jobs/export); the table
// or JSON printed with report. The
// commands' raw flag values are parsed and checked into the jobs' options
// here (parse.go, parsechecks.go, cellflags.go, trainflags.go,
// regalflags.go and beside each command): a mistake in how a command was
// called is a usage error naming the flag (fail.Usage, exit 2); jobs
// names no flags. The names and defaults the flags and completions offer
// come from the packages that define them (roofline's presets and
// topologies, the methods registry, the workloads, optimize's
// objectives). Exit codes are decided in one place (internal/fail). No
// command branches on its workload's world: eval, search and export bind
// each flag into the options of the world it applies to (an op graph's,
// a transformer's at cluster scale, or both), the world is decided once
// from the workload (chooseWorld, world.go) and jobs.Search and Eval
// (jobs/world.go) and export.Run take either; a flag of the other world is
// refused with the reason its binding recorded (onlyIn), and a
// --strategy is read by its world's parser (jobs.CheckStrategy).
//
// May import: jobs/..., inputs, report/..., internal/..., decision, graph,
// evaluate/hw, evaluate/roofline, evaluate/roofline/convlayout, methods/..., nn/ppo, optimize,
// workloads
package main
