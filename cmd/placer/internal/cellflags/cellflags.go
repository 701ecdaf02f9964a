package cellflags

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/grid"
)

// arrayIndexVars are the variables, in the order read, that give a task
// of a cluster's array job its index: Slurm's job arrays
// (sbatch --array) and Kubernetes' Indexed Jobs.
var arrayIndexVars = []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}

// Flags are the flags of every report command run as cells.
type Flags struct {
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
// without --no-run) the index of arrayIndexVars when one is set. dir is
// the command's --dir: --cell and --worker need one; --list-cells
// without one lists the files relative to it (dir becomes ".").
func (f Flags) Work(dir *string, noRun bool) (*grid.Work, error) {
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
		for _, name = range arrayIndexVars {
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

// RoundsCell is the cell a process of a run of steps steps in rounds
// runs (one = false: every step left): cell is --cell ("" = the array
// index of arrayIndexVars when one is set, read with getenv, nil =
// os.Getenv); unit names the steps in errors.
func RoundsCell(cell string, getenv func(string) string, steps int, unit string) (one bool, i int, err error) {
	name := "--cell"
	if cell == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		for _, v := range arrayIndexVars {
			if cell = strings.TrimSpace(getenv(v)); cell != "" {
				name = v
				break
			}
		}
	}
	if cell == "" || cell == "all" {
		return false, 0, nil
	}
	i, err = strconv.Atoi(cell)
	if err != nil || i < 0 {
		return false, 0, fail.Usagef("%s %q: want a cell index (0, 1, 2 ...; --list-cells lists them) or all", name, cell)
	}
	if i >= steps {
		return false, 0, fmt.Errorf("cell %d: out of range: this run has %d cells (0 to %d), one per %s", i, steps, steps-1, unit)
	}
	return true, i, nil
}
