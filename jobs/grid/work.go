package grid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/claim"
)

// Mode is what a process does with a report's cells when they are spread
// over processes (Work).
type Mode int

const (
	// List runs nothing: every cell is written to Work.List as a JSON
	// line (Listed), in index order.
	List Mode = iota + 1
	// One runs cell Work.Cell only (claimed first; when another worker
	// holds it, waits for that worker to finish it or to die): a task of
	// a cluster's array job. The other cells are read if kept.
	One
	// Worker runs, in index order, every cell not kept that no other
	// worker holds, claiming each first, and passes over the grid again
	// until every cell is kept: any number of workers share a --dir.
	Worker
)

// Work spreads a report's cells over processes: the cells are numbered
// 0, 1, 2 ... in the order a single process runs them (seed, then row,
// then the row's cells), and every process sees the same numbering.
// A row's prerequisite (a graph's reference, Row's pre) is no cell: the
// first worker that needs it runs it, claimed, and the others wait for
// it. Work is mutable state of one report run: use a Work once.
type Work struct {
	Mode Mode
	// Cell is One's cell index.
	Cell int
	// List receives List's lines.
	List io.Writer
	// Lease is a claim's lease (0 = claim.DefaultLease): a worker that
	// stops renewing its claim is taken over that long after.
	Lease time.Duration
	// Owner is who claims (zero = this process, claim.Self()).
	Owner claim.Owner
	// Poll is how often a worker waiting for another's claim looks again
	// (0 = a quarter of the lease, at most 5 s).
	Poll time.Duration

	root     string   // the report's --dir
	next     int      // the next cell's index in this pass
	held     int      // cells of this pass left to another worker's live claim
	listed   []Listed // this pass's cells so far
	manifest []Listed // the cells of ManifestFile in root (nil = none)
}

// Key says what a cell is: a method on a graph at a budget and seed (a
// report whose cells are something else fills what fits).
type Key struct {
	Graph     string `json:"graph"`
	Objective string `json:"objective,omitempty"`
	Method    string `json:"method"`
	Budget    string `json:"budget"`
	Seed      uint64 `json:"seed"`
}

// Listed is a cell as --list-cells prints it: its index, what it is,
// and its result file (under --dir).
type Listed struct {
	Index int `json:"index"`
	Key
	File string `json:"file"`
}

// RoundCell is a cell of training in rounds (pre-training, REGAL's
// training) as --list-cells prints it: Listed's fields (the graph, known
// only once the round runs, left out) and the cell's round.
type RoundCell struct {
	Index  int    `json:"index"`
	Round  int    `json:"round"`
	Method string `json:"method"`
	Budget string `json:"budget"`
	Seed   uint64 `json:"seed"`
	File   string `json:"file"`
}

// ManifestFile, in a report's --dir, lists the cells (Listed, one JSON
// line each, files relative to the dir) of the grid the dir was first
// run with in cells: a process of One or Worker that numbers them
// otherwise (another report, seed or setting) stops before it runs
// anything. Remove it to reuse the dir for another grid.
const ManifestFile = "cells.jsonl"

// runMode is how Do runs a cell that is not kept.
type runMode int

const (
	runFree  runMode = iota // run it, no claim (no Work)
	runRead                 // do not run it: Missing
	runClaim                // claim it first; left to another worker whose claim is live (Missing)
	runWait                 // claim it first; wait while another worker's claim is live
)

func (g Grid) with(m runMode) Grid {
	g.mode = m
	return g
}

func (w *Work) lease() time.Duration {
	if w.Lease > 0 {
		return w.Lease
	}
	return claim.DefaultLease
}

func (w *Work) owner() claim.Owner {
	if w.Owner == (claim.Owner{}) {
		return claim.Self()
	}
	return w.Owner
}

func (w *Work) poll() time.Duration {
	if w.Poll > 0 {
		return w.Poll
	}
	return min(w.lease()/4, 5*time.Second)
}

// Row does a row's cells (cells()) in order, one at a time, after pre,
// which readies what they need (a graph's reference: pre runs or reads
// it with Do on the grid it is given) and says whether it is there: when
// not (ok false: not kept, not run) the row's cells are all Missing. It
// stops at the first error (ctx's included): the cells finished so far
// and the error. cells may be called more than once (for their files and
// keys before pre, with Work); the cells it returns after pre are the
// ones run. pre may be nil.
//
// With g.Work, the row's cells are numbered, listed, and run or only
// read as the Work's mode says; pre runs (claimed, waited for when
// another worker holds it) only when this process runs one of the row's
// cells, and is read otherwise.
func Row[F any](ctx context.Context, g Grid, pre func(g Grid) (bool, error), cells func() []Cell[F]) (Results[F], error) {
	w := g.Work
	if w == nil || g.NoRun {
		ok := true
		if pre != nil {
			var err error
			if ok, err = pre(g); err != nil {
				return Results[F]{}, err
			}
		}
		cs := cells()
		if !ok {
			return Results[F]{Missing: len(cs)}, nil
		}
		return do(ctx, g, cs, nil)
	}
	cs := cells()
	first := w.next
	w.next += len(cs)
	for i, c := range cs {
		if err := w.note(g, first+i, c.Key, c.File); err != nil {
			return Results[F]{}, err
		}
	}
	if w.Mode == List {
		return Results[F]{Missing: len(cs)}, nil
	}
	mine := make([]bool, len(cs))
	anyMine := false
	for i, c := range cs {
		switch w.Mode {
		case One:
			mine[i] = first+i == w.Cell
		case Worker:
			path := g.Path(c.File)
			if path == "" {
				return Results[F]{}, fmt.Errorf("%s: a cell without a file cannot be shared by workers", g.Name)
			}
			_, kept, err := read(path, c)
			if err != nil {
				return Results[F]{}, err
			}
			mine[i] = !kept
		}
		anyMine = anyMine || mine[i]
	}
	ok := true
	if pre != nil {
		pg := g.with(runRead)
		if anyMine {
			pg = g.with(runWait)
		}
		var err error
		if ok, err = pre(pg); err != nil {
			return Results[F]{}, err
		}
	}
	if !ok {
		return Results[F]{Missing: len(cs)}, nil
	}
	mode := runClaim
	if w.Mode == One {
		mode = runWait
	}
	return do(ctx, g, cells(), func(i int) Grid {
		if mine[i] {
			return g.with(mode)
		}
		return g.with(runRead)
	})
}

// do does cells in order on g (or on gridOf(i) for cell i when set).
func do[F any](ctx context.Context, g Grid, cells []Cell[F], gridOf func(i int) Grid) (Results[F], error) {
	var r Results[F]
	for i, c := range cells {
		cg := g
		if gridOf != nil {
			cg = gridOf(i)
		}
		f, o, err := Do(ctx, cg, c)
		switch {
		case err != nil:
			r.Missing++
			return r, err
		case o == Missing:
			r.Missing++
		default:
			r.Cells = append(r.Cells, f)
			r.Kept = append(r.Kept, o == Kept)
		}
	}
	return r, nil
}

// note records cell index (key, file in g), lists it (List), and holds
// it to the manifest.
func (w *Work) note(g Grid, index int, key Key, file string) error {
	path := g.Path(file)
	rel := path
	if w.root != "" && path != "" {
		if r, err := filepath.Rel(w.root, path); err == nil {
			rel = filepath.ToSlash(r)
		}
	}
	l := Listed{Index: index, Key: key, File: rel}
	w.listed = append(w.listed, l)
	if w.Mode == List && w.List != nil {
		out := l
		out.File = path
		data, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w.List, "%s\n", data); err != nil {
			return err
		}
	}
	if w.manifest != nil {
		if index >= len(w.manifest) {
			return fmt.Errorf("%s: --dir %s holds the cells of another grid: %s lists %d cells, this command has more (cell %d: %s)",
				g.Name, w.root, ManifestFile, len(w.manifest), index, describe(l))
		}
		if m := w.manifest[index]; m != l {
			return fmt.Errorf("%s: --dir %s holds the cells of another grid: its cell %d is %s (%s), this command's is %s; use another --dir, or remove %s",
				g.Name, w.root, index, describe(m), ManifestFile, describe(l), filepath.Join(w.root, ManifestFile))
		}
	}
	return nil
}

func describe(l Listed) string {
	s := fmt.Sprintf("%s %s %s seed %d", l.Graph, l.Method, l.Budget, l.Seed)
	if l.Objective != "" {
		s = fmt.Sprintf("%s %s %s %s seed %d", l.Graph, l.Objective, l.Method, l.Budget, l.Seed)
	}
	return s + " -> " + l.File
}

// Loop runs pass, a report's walk over its cells (which calls Row for
// each row of g, or a grid made from g), as w's mode says: once, or
// (Worker) again until a pass leaves no cell to another worker, waiting
// between passes. With One, a cell index past the last cell is an error
// naming the count. With One and Worker, g.Dir is needed, and its
// ManifestFile is read first (a grid that numbers its cells otherwise
// stops) and written after the first pass if absent.
func Loop[R any](ctx context.Context, g Grid, pass func() (R, error)) (R, error) {
	w := g.Work
	if w == nil || g.NoRun {
		return pass()
	}
	var zero R
	w.root = g.Dir
	if w.Mode != List {
		if g.Dir == "" {
			return zero, fmt.Errorf("%s: --cell and --worker keep the cells in --dir, which every worker shares: give one", g.Name)
		}
		m, err := readManifest(filepath.Join(g.Dir, ManifestFile))
		if err != nil {
			return zero, err
		}
		w.manifest = m
	}
	for {
		w.next, w.held, w.listed = 0, 0, nil
		r, err := pass()
		if err != nil {
			return r, err
		}
		if w.manifest != nil && w.next != len(w.manifest) {
			return r, fmt.Errorf("%s: --dir %s holds the cells of another grid: %s lists %d cells, this command has %d; use another --dir, or remove it",
				g.Name, g.Dir, ManifestFile, len(w.manifest), w.next)
		}
		if w.Mode == One && (w.Cell < 0 || w.Cell >= w.next) {
			return r, fmt.Errorf("%s: cell %d: out of range: this report has %d cells (0 to %d)", g.Name, w.Cell, w.next, w.next-1)
		}
		if w.Mode != List && w.manifest == nil {
			if err := writeManifest(filepath.Join(g.Dir, ManifestFile), w.listed); err != nil {
				return r, err
			}
			w.manifest = w.listed
		}
		if w.Mode != Worker || w.held == 0 {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(w.poll()):
		}
	}
}

// Cells counts the cells of w's last pass.
func (w *Work) Cells() int { return w.next }

func readManifest(path string) ([]Listed, error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "a grid's manifest")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Listed
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l Listed
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s: line %d: %v (not a cell list; remove it)", path, len(out)+1, err)
		}
		out = append(out, l)
	}
	if out == nil {
		out = []Listed{}
	}
	return out, sc.Err()
}

// writeManifest writes cells to path unless a file is there (another
// worker's, written first: the next pass holds this one to it).
func writeManifest(path string, cells []Listed) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	enc := json.NewEncoder(tmp)
	for _, l := range cells {
		if err := enc.Encode(l); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	os.Chmod(tmp.Name(), 0o644)
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// acquire claims cell c (its file path) for g's Work: got is the claim,
// or nil with the cell's outcome when this process does not run it
// (kept meanwhile by another worker, or left to another's live claim).
func acquire[F any](ctx context.Context, g Grid, c Cell[F], path string) (f F, o Outcome, got *claim.Claim, err error) {
	w := g.Work
	waited := false
	for {
		cl, holder, err := claim.Take(path, w.owner(), w.lease())
		if err == nil {
			// Finished by another worker between the read and the claim?
			f, ok, err := read(path, c)
			if err != nil || ok {
				cl.Release("kept by another worker")
				if err != nil {
					return f, Failed, nil, err
				}
				line(g, c, &f, Kept, "")
				return f, Kept, nil, nil
			}
			return f, Missing, cl, nil
		}
		if !errors.Is(err, claim.ErrHeld) {
			return f, Failed, nil, err
		}
		if g.mode == runClaim {
			w.held++
			line(g, c, &f, Missing, "claimed by "+holder.Owner.String()+", left to it")
			return f, Missing, nil, nil
		}
		if !waited {
			line(g, c, &f, Missing, "claimed by "+holder.Owner.String()+", waiting for it")
			waited = true
		}
		select {
		case <-ctx.Done():
			return f, Missing, nil, ctx.Err()
		case <-time.After(w.poll()):
		}
		if f, ok, err := read(path, c); err != nil || ok {
			if err != nil {
				return f, Failed, nil, err
			}
			line(g, c, &f, Kept, "")
			return f, Kept, nil, nil
		}
	}
}

// Listing says whether w only lists the cells (List): the report it
// returns is no table.
func (w *Work) Listing() bool { return w != nil && w.Mode == List }
