package main

import (
	"context"
	"fmt"
	"io"

	"github.com/placer/placer/cmd/placer/internal/cellflags"
	"github.com/placer/placer/jobs/grid"
	"github.com/spf13/cobra"
)

// cellsHelp ends the Long help of every report run as cells.
const cellsHelp = `

Cells (docs/cluster.md): the report is a list of independent cells
(a method on a graph at a budget and seed), numbered 0, 1, 2 ...
--list-cells prints them as JSON lines (index, graph, method, budget,
seed, file) and runs nothing; --cell I runs cell I only into --dir (the
others are read if kept), and so does a task of a Slurm job array or a
Kubernetes Indexed Job without --cell (SLURM_ARRAY_TASK_ID,
JOB_COMPLETION_INDEX); --worker runs every cell no other worker holds, so
that N processes share one --dir. A worker claims a cell before it runs
it (a claim file beside the cell's, renewed every third of --lease; a
claim not renewed for --lease is taken over). --no-run then prints the
table of what --dir keeps.`

// addCellFlags binds the cell flags of a report command into f; out is
// where --list-cells writes.
func addCellFlags(cmd *cobra.Command, f *cellflags.Flags, s *streams) {
	fs := cmd.Flags()
	fs.BoolVar(&f.List, "list-cells", false, "list the report's cells as JSON lines (index, graph, method, budget, seed, file) and run nothing")
	fs.StringVar(&f.Cell, "cell", "", "run cell `I` only (--list-cells numbers them) into --dir; default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX when set, else every cell ('all': every cell whatever the environment says)")
	fs.BoolVar(&f.Worker, "worker", false, "run every cell of --dir that no other worker holds, claiming each, until all are kept (start N of these to share a grid)")
	fs.DurationVar(&f.Lease, "lease", 0, "a worker's claim on a cell lasts this long unless renewed (renewed every third of it); a dead worker's cell is taken over after it (default 1m)")
	f.Out = s.Out
	cmd.Long += cellsHelp
}

// plottedReport is a report run as cells whose result --plot draws
// (equal-time, regal, parallel): what runPlottedReport needs of it.
type plottedReport[R any] struct {
	parse       func() error // the flags into the options
	progress    *io.Writer   // the options' progress writer
	quiet, json bool
	work        **grid.Work // the options' cells (parse sets it)
	run         func(context.Context) (R, error)
	plot        string // --plot FILE ("" = none)
	writePlot   func(string, R) error
	write       func(io.Writer, R) error // the table
}

// runPlottedReport is the RunE of a plotted report run as cells: parse
// the flags, run the report (progress on stderr unless quiet), stop after
// --list-cells, draw the plot, print the table or JSON.
func runPlottedReport[R any](cmd *cobra.Command, s *streams, r plottedReport[R]) error {
	if err := r.parse(); err != nil {
		return err
	}
	if !r.quiet {
		*r.progress = s.Err
	}
	rep, err := r.run(cmd.Context())
	if (*r.work).Listing() {
		return err
	}
	if err == nil && r.plot != "" {
		if err = r.writePlot(r.plot, rep); err == nil {
			fmt.Fprintf(s.Err, "plot written to %s\n", r.plot)
		}
	}
	return emit(s, r.json, rep, func() error { return r.write(s.Out, rep) }, err)
}
