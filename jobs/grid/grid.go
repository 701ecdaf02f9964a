package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/report"
)

// Grid is where a report's cells are kept and how they run.
type Grid struct {
	// Name starts every progress line ("equal-time") and the runner's
	// errors.
	Name string
	// Dir keeps one file per finished cell ("" = nothing is kept: every
	// cell runs).
	Dir string
	// NoRun runs no cell: a cell Dir does not keep is Missing. The table
	// is then what Dir keeps, whichever processes wrote it.
	NoRun bool
	// Progress receives a line per cell (nil = none).
	Progress io.Writer
	// Work, if set, spreads the cells over processes (work.go): this one
	// lists them, or runs one by index, or every one no other worker
	// holds. Nil: this process runs every cell.
	Work *Work

	// mode is how Do runs a cell that is not kept (Row sets it).
	mode runMode
}

// In is the grid of the cells kept in Dir's folder elem (Dir/elem/...):
// a row's cells. Folders are made when a cell is written.
func (g Grid) In(elem ...string) Grid {
	if g.Dir != "" {
		g.Dir = filepath.Join(append([]string{g.Dir}, elem...)...)
	}
	return g
}

// Path is where file is kept ("" when nothing is).
func (g Grid) Path(file string) string {
	if g.Dir == "" || file == "" {
		return ""
	}
	return filepath.Join(g.Dir, file)
}

// WriteFile writes file in Dir atomically (its folder made if need be),
// filled by fill: a cell's file, or a file beside it (a cell's Run
// writes those before its cell's file, which says the cell is done).
func (g Grid) WriteFile(file string, fill func(w io.Writer) error) error {
	path := g.Path(file)
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, fill)
}

// Check says whether the grid can run: NoRun reads Dir, so it needs one.
func (g Grid) Check() error {
	if g.NoRun && g.Dir == "" {
		return fmt.Errorf("%s: --no-run reads the kept cells: it needs --dir", g.Name)
	}
	return nil
}

// Outcome is what became of a cell.
type Outcome int

const (
	// Missing: not kept and not run (NoRun, or ctx ended before it
	// started).
	Missing Outcome = iota
	// Kept: read back from its file.
	Kept
	// Ran: run now, and kept.
	Ran
	// Interrupted: ctx ended while it ran; not kept (its budget was not
	// spent).
	Interrupted
	// Failed: its run or its file gave an error; not kept.
	Failed
)

// ErrStale is Match's answer for a kept file that is not this run's
// (another seed, model or setting): the cell runs again and its file is
// replaced.
var ErrStale = errors.New("kept with other settings")

// Cell is one unit of work of a grid; F is what its file keeps (JSON).
type Cell[F any] struct {
	// Key says what the cell is, in --list-cells.
	Key Key
	// File is the cell's file name in the grid's Dir ("" = never kept).
	File string
	// Label starts the cell's progress lines, after the grid's Name (""
	// = no lines).
	Label string
	// Match says whether a kept file (decoded into f, which it may
	// complete) is this cell's result: nil = it is, ErrStale = run the
	// cell again, any other error stops the grid (a file the user must
	// remove). nil Match takes any file that decodes.
	Match func(f *F) error
	// Strict, if set, makes a file that is there but cannot be read or
	// decoded as F (unknown fields included) an error, Strict's, instead
	// of a cell to run again.
	Strict func(path string, err error) error
	// Run runs the cell. An error is not kept; ctx's, or any error once
	// ctx has ended, makes the cell Interrupted.
	Run func(ctx context.Context) (F, error)
	// Line is the progress line's end for a cell read back (kept) or run
	// ("" or nil Line = no line); Interrupted the line's end for a cell
	// interrupted ("" = none). A Missing cell's line is the runner's: "not
	// kept in DIR".
	Line        func(f *F, kept bool) string
	Interrupted string
}

// Do reads cell c back from its file if the grid keeps it there and it
// matches, else (unless NoRun) runs it and keeps its result. On a grid
// of a Row with Work, a cell this process does not run is only read, and
// one it runs is claimed first (claim): one whose claim another worker
// holds is left to it (Missing) or waited for.
func Do[F any](ctx context.Context, g Grid, c Cell[F]) (F, Outcome, error) {
	var zero F
	path := g.Path(c.File)
	if path != "" {
		f, ok, err := read(path, c)
		if err != nil {
			return f, Failed, err
		}
		if ok {
			line(g, c, &f, Kept, "")
			return f, Kept, nil
		}
	}
	if g.NoRun || g.mode == runRead {
		line(g, c, &zero, Missing, "")
		return zero, Missing, nil
	}
	if err := ctx.Err(); err != nil {
		return zero, Missing, err
	}
	var cl *claim.Claim
	if g.mode != runFree && path != "" {
		f, o, got, err := acquire(ctx, g, c, path)
		if got == nil {
			return f, o, err
		}
		cl = got
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := func() {}
	if cl != nil {
		stop = cl.Keep(cancel)
	}
	f, err := c.Run(runCtx)
	stop()
	if cl != nil && errors.Is(context.Cause(runCtx), claim.ErrLost) && ctx.Err() == nil {
		// Taken over by another worker (this one stalled past its
		// lease): its result is that worker's to keep.
		g.Work.held++
		line(g, c, &zero, Missing, "claim lost to another worker; left to it")
		return zero, Missing, nil
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if cl != nil {
			cl.Release(err.Error())
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			line(g, c, &f, Interrupted, "")
			return f, Interrupted, err
		}
		return f, Failed, err
	}
	if path != "" {
		if err := g.WriteFile(c.File, func(w io.Writer) error { return report.JSON(w, f) }); err != nil {
			if cl != nil {
				cl.Release(err.Error())
			}
			return f, Failed, err
		}
	}
	if cl != nil {
		if err := cl.Finish(); err != nil {
			return f, Failed, err
		}
	}
	line(g, c, &f, Ran, "")
	return f, Ran, nil
}

// read reads a kept cell: ok is false when there is none, or it is not
// this cell's (a file that does not decode, half-written by a writer
// that did not use atomicfile, is not).
func read[F any](path string, c Cell[F]) (f F, ok bool, err error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "a grid cell's file")
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err == nil && c.Strict != nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err = dec.Decode(&f)
	} else if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err != nil {
		if c.Strict != nil {
			return f, false, c.Strict(path, err)
		}
		return f, false, nil
	}
	if c.Match != nil {
		if err := c.Match(&f); errors.Is(err, ErrStale) {
			return f, false, nil
		} else if err != nil {
			return f, false, err
		}
	}
	return f, true, nil
}

// line prints cell c's progress line for outcome o (Missing, Kept, Ran
// or Interrupted), or note when set.
func line[F any](g Grid, c Cell[F], f *F, o Outcome, note string) {
	if g.Progress == nil || c.Label == "" {
		return
	}
	if g.mode == runRead && g.Work != nil {
		// Another worker's cell (with Work): its lines are that
		// worker's.
		return
	}
	s := note
	switch {
	case s != "":
	case o == Missing:
		s = "not kept in " + g.Dir
	case o == Interrupted:
		s = c.Interrupted
	case c.Line != nil:
		s = c.Line(f, o == Kept)
	}
	if s != "" {
		fmt.Fprintf(g.Progress, "%s: %s: %s\n", g.Name, c.Label, s)
	}
}

// Results are the cells All got through, in order.
type Results[F any] struct {
	Cells []F // kept or run
	// Kept says, per Cells, whether the cell was read back (not run).
	Kept []bool
	// Missing counts the cells not kept and not run (NoRun), and the one
	// that failed or was interrupted.
	Missing int
}

// All does cells in order, one at a time, and stops at the first error
// (ctx's included): the cells finished so far and the error. It is a
// Row without a prerequisite.
func All[F any](ctx context.Context, g Grid, cells []Cell[F]) (Results[F], error) {
	return Row(ctx, g, nil, func() []Cell[F] { return cells })
}

// Rows makes a table's rows in order, one per item, and stops at the
// first error: the rows so far, the failing one included, and the error.
func Rows[T, R any](items []T, row func(T) (R, error)) ([]R, error) {
	var rows []R
	for _, it := range items {
		r, err := row(it)
		rows = append(rows, r)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// Seeds runs a report once per seed. With fewer than two seeds it runs
// once on g, with seeds' one seed or else seed; with more, once per seed
// on g.In("seed-N"), so that each seed's cells are also a one-seed
// report (--seed N --dir DIR/seed-N). A seed listed twice is an error
// before anything runs. It returns the runs so far (the failing one
// included) and the first error.
func Seeds[R any](g Grid, seed uint64, seeds []uint64, run func(g Grid, seed uint64) (R, error)) ([]R, error) {
	if len(seeds) < 2 {
		if len(seeds) == 1 {
			seed = seeds[0]
		}
		r, err := run(g, seed)
		return []R{r}, err
	}
	seen := map[uint64]bool{}
	for _, s := range seeds {
		if seen[s] {
			return nil, fmt.Errorf("%s: seed %d is listed twice", g.Name, s)
		}
		seen[s] = true
	}
	return Rows(seeds, func(s uint64) (R, error) { return run(g.In(fmt.Sprintf("seed-%d", s)), s) })
}

// RowDir is the folder of a graph's cells: NAME@GPUS, the name made
// safe for a file name.
func RowDir(graph string, devices int) string {
	return FileSafe(graph) + fmt.Sprintf("@%d", devices)
}

// FileSafe turns a name (a graph's, which may be a path) into a file
// name.
func FileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// Diff names the first field (of their JSON, in name order) where the
// settings a cell was kept with, had, differ from this run's, want:
// "seed 1, this run's 2"; "" = none. A Match of a cell that keeps its
// settings whole says with it why the cell is not this run's.
func Diff(had, want any) string {
	var a, b map[string]any
	ja, _ := json.Marshal(had)
	jb, _ := json.Marshal(want)
	json.Unmarshal(ja, &a)
	json.Unmarshal(jb, &b)
	for _, k := range slices.Sorted(maps.Keys(b)) {
		va, _ := json.Marshal(a[k])
		vb, _ := json.Marshal(b[k])
		if !bytes.Equal(va, vb) {
			return fmt.Sprintf("%s %s, this run's %s", k, va, vb)
		}
	}
	return ""
}
