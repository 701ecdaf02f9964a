// Package grid is the one runner of placer's report grids (equal-time,
// learned, regal, parallel, generalization): a report is a table of
// cells, each a unit of work (a method on a graph at a budget and seed, a
// held-out family) whose result is one file in the report's --dir.
//
// The runner owns what every report did alike: a cell's file, written
// atomically (internal/atomicfile) once the cell is finished; resuming (a
// cell whose file is there and matches this run's settings is read back,
// not run); --no-run (nothing runs, a cell not kept is Missing), which is
// also how the files of any number of processes, each writing its own
// cells into one --dir (or dirs copied into one), become one table; the
// seeds (a run per seed, each in DIR/seed-N); time budgets in wall or
// process CPU time; timing a method's run; progress lines; and the order
// and stopping rules of running cells (one at a time: with CPU-time
// budgets the process's CPU time is the running cell's).
//
// A report is a table definition on it (jobs/reports, above package
// jobs, whose jobs its cells run): which cells exist (a Cell per unit,
// its file name and how a kept file is matched), how one runs, and how
// the finished cells become its rows. The runner imports neither.
//
// May import: optimize, methods, report, internal/...
package grid
