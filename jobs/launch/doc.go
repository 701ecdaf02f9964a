// Package launch writes what runs a report's cells as a cluster's array
// job: a Slurm batch script (Slurm) or a Kubernetes Job manifest (K8s),
// each task one cell of the report's grid (jobs/grid) in one shared
// folder, and the follow-up that prints the table (docs/cluster.md). The
// cells are counted by running the report with --list-cells; the placer
// binary parses the report's flags.
//
// May import: jobs/grid, internal/...
package launch
