package jobs

// The report commands' cell flags: --list-cells, --cell, --worker and
// --lease, and the array index a cluster gives a task. This file (the
// jobs layer) is the one place that reads SLURM_ARRAY_TASK_ID and
// JOB_COMPLETION_INDEX: jobs/grid and the packages below it take a
// grid.Work and never look at the environment.

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/grid"
)

// ArrayIndexVars are the variables, in the order read, that give a task
// of a cluster's array job its index: Slurm's job arrays
// (sbatch --array) and Kubernetes' Indexed Jobs.
var ArrayIndexVars = []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}

// CellFlags are the flags of every report command run as cells.
type CellFlags struct {
	List   bool          // --list-cells
	Cell   string        // --cell: an index, "all" or "" (the array index, else all)
	Worker bool          // --worker
	Lease  time.Duration // --lease (0 = the default)
	// Out receives --list-cells' lines (the command's standard output).
	Out io.Writer
	// Getenv reads the environment (nil = os.Getenv).
	Getenv func(string) string
}

// work makes the grid.Work of the flags (nil = this process runs every
// cell): --list-cells, --cell I, --worker, or without any of them (and
// without --no-run) the index of ArrayIndexVars when one is set. dir is
// the command's --dir: --cell and --worker need one; --list-cells
// without one lists the files relative to it (dir becomes ".").
func (f CellFlags) work(dir *string, noRun bool) (*grid.Work, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	given := 0
	for _, b := range []bool{f.List, f.Cell != "" && f.Cell != "all", f.Worker} {
		if b {
			given++
		}
	}
	if given > 1 {
		return nil, fail.Usagef("--list-cells, --cell and --worker: give one")
	}
	if given > 0 && noRun {
		return nil, fail.Usagef("--no-run reads the cells kept in --dir: it takes no --list-cells, --cell or --worker")
	}
	if f.Lease < 0 || (f.Lease > 0 && f.Lease < 100*time.Millisecond) {
		return nil, fail.Usagef("--lease %v: want at least 100ms", f.Lease)
	}
	w := &grid.Work{Lease: f.Lease}
	switch {
	case f.List:
		w.Mode, w.List = grid.List, f.Out
		if *dir == "" {
			*dir = "."
		}
		return w, nil
	case f.Worker:
		w.Mode = grid.Worker
	case f.Cell == "all" || noRun:
		return nil, nil
	case f.Cell != "":
		i, err := strconv.Atoi(strings.TrimSpace(f.Cell))
		if err != nil || i < 0 {
			return nil, fail.Usagef("--cell %q: want a cell index (0, 1, 2 ...; --list-cells lists them) or all", f.Cell)
		}
		w.Mode, w.Cell = grid.One, i
	default:
		name, v := "", ""
		for _, name = range ArrayIndexVars {
			if v = getenv(name); v != "" {
				break
			}
		}
		if v == "" {
			return nil, nil
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 {
			return nil, fail.Usagef("%s=%q: want a cell index (the task's index in its array job); --cell all runs every cell", name, v)
		}
		w.Mode, w.Cell = grid.One, i
	}
	if *dir == "" {
		return nil, fail.Usagef("--cell and --worker (and an array task's index) need --dir: the folder every worker shares")
	}
	return w, nil
}
