// Package cellflags holds the report commands' cell flags: --list-cells,
// --cell, --worker and --lease, and the array index a cluster gives a
// task. It is the one place that reads SLURM_ARRAY_TASK_ID and
// JOB_COMPLETION_INDEX: jobs, jobs/grid and the packages below them take
// a grid.Work (or a cell index) and never look at the environment.
//
// May import: internal/fail, jobs/grid
package cellflags
