package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
)

// workTable is a two-row test report whose rows have a prerequisite
// (pre.json, like a graph's reference): rows r1 (cells a, bb) and r2
// (cells ccc, dddd), cells 0 to 3. pres counts the prerequisites run.
func workTable(ctx context.Context, g Grid, t table, pres *int) (int, error) {
	kept := 0
	err := func() error {
		for _, row := range []struct {
			name string
			cols []string
		}{{"r1", []string{"a", "bb"}}, {"r2", []string{"ccc", "dddd"}}} {
			rg := g.In(row.name)
			res, err := Row(ctx, rg, func(pg Grid) (bool, error) {
				_, o, err := Do(ctx, pg, Cell[cellFile]{File: "pre.json", Run: func(context.Context) (cellFile, error) {
					*pres++
					return cellFile{Seed: t.seed, Key: "pre"}, nil
				}})
				return o == Kept || o == Ran, err
			}, func() []Cell[cellFile] {
				var cs []Cell[cellFile]
				for _, c := range row.cols {
					cell := t.cell(c)
					cell.Key = Key{Graph: row.name, Method: c, Budget: "1", Seed: t.seed}
					cs = append(cs, cell)
				}
				return cs
			})
			kept += len(res.Cells)
			if err != nil {
				return err
			}
		}
		return nil
	}()
	return kept, err
}

// TestWork: --list-cells numbers the cells and runs nothing; --cell I
// runs cell I (and its row's prerequisite) only, reading the others;
// an index past the last is an error; a worker runs every cell, claiming
// each; a dir laid out for another grid is refused.
func TestWork(t *testing.T) {
	t.Run("list", func(t *testing.T) {
		var out bytes.Buffer
		tb, pres := newTable(1), 0
		g := Grid{Name: "t", Dir: "d", Work: &Work{Mode: List, List: &out}}
		if _, err := Loop(context.Background(), g, func() (int, error) { return workTable(context.Background(), g, tb, &pres) }); err != nil {
			t.Fatal(err)
		}
		want := `{"index":0,"graph":"r1","method":"a","budget":"1","seed":1,"file":"d/r1/a.json"}
{"index":1,"graph":"r1","method":"bb","budget":"1","seed":1,"file":"d/r1/bb.json"}
{"index":2,"graph":"r2","method":"ccc","budget":"1","seed":1,"file":"d/r2/ccc.json"}
{"index":3,"graph":"r2","method":"dddd","budget":"1","seed":1,"file":"d/r2/dddd.json"}
`
		if out.String() != want || *tb.runs != 0 || pres != 0 {
			t.Fatalf("listed %q (runs %d, prerequisites %d), want %q and nothing run", out.String(), *tb.runs, pres, want)
		}
		if _, err := os.Stat("d"); err == nil {
			t.Fatal("listing made the dir")
		}
	})
	for _, tc := range []struct {
		cell     int
		runs     int
		pres     int
		err      string
		files    []string // kept after
		notFiles []string
	}{
		{cell: 0, runs: 1, pres: 1, files: []string{"r1/pre.json", "r1/a.json", "cells.jsonl"}, notFiles: []string{"r1/bb.json", "r2/pre.json"}},
		{cell: 3, runs: 1, pres: 1, files: []string{"r2/pre.json", "r2/dddd.json"}, notFiles: []string{"r1/pre.json", "r2/ccc.json"}},
		{cell: 4, err: "t: cell 4: out of range: this report has 4 cells (0 to 3)"},
	} {
		t.Run("cell", func(t *testing.T) {
			dir := t.TempDir()
			tb, pres := newTable(1), 0
			g := Grid{Name: "t", Dir: dir, Work: &Work{Mode: One, Cell: tc.cell}}
			_, err := Loop(context.Background(), g, func() (int, error) { return workTable(context.Background(), g, tb, &pres) })
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || *tb.runs != tc.runs || pres != tc.pres {
				t.Fatalf("runs %d, prerequisites %d, error %v", *tb.runs, pres, err)
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s not kept: %v", f, err)
				}
			}
			for _, f := range tc.notFiles {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s kept, but not this cell's", f)
				}
			}
			// The claim says the cell was done, by this process.
			h, _ := claim.History(filepath.Join(dir, tc.files[1]))
			if len(h) != 1 || h[0].State != claim.Done || h[0].Owner != claim.Self() {
				t.Errorf("claims %+v, want one done by this process", h)
			}
		})
	}
	t.Run("worker then another grid", func(t *testing.T) {
		dir := t.TempDir()
		tb, pres := newTable(1), 0
		g := Grid{Name: "t", Dir: dir, Work: &Work{Mode: Worker}}
		n, err := Loop(context.Background(), g, func() (int, error) { return workTable(context.Background(), g, tb, &pres) })
		if err != nil || n != 4 || *tb.runs != 4 || pres != 2 {
			t.Fatalf("kept %d, runs %d, prerequisites %d, error %v", n, *tb.runs, pres, err)
		}
		// A second worker finds everything kept: runs nothing.
		g.Work = &Work{Mode: Worker}
		if n, err := Loop(context.Background(), g, func() (int, error) { return workTable(context.Background(), g, tb, &pres) }); err != nil || n != 4 || *tb.runs != 4 {
			t.Fatalf("second worker: kept %d, runs %d, error %v", n, *tb.runs, err)
		}
		// Seed 2 in the same dir numbers other cells.
		tb2 := newTable(2)
		g.Work = &Work{Mode: One, Cell: 1}
		_, err = Loop(context.Background(), g, func() (int, error) {
			return workTable(context.Background(), g, tb2, &pres)
		})
		if err == nil || !strings.Contains(err.Error(), "holds the cells of another grid: its cell 0 is r1 a 1 seed 1") {
			t.Fatalf("error %v, want the dir refused", err)
		}
	})
	t.Run("worker leaves a live claim, takes it over when it expires", func(t *testing.T) {
		dir := t.TempDir()
		tb, pres := newTable(1), 0
		// Another host's worker holds r1/bb for 1.5 s more.
		other := claim.File{Owner: claim.Owner{Host: "elsewhere.example", PID: 1}, State: claim.Running, Renewed: time.Now().UTC(), Lease: 1.5}
		data, _ := json.Marshal(other)
		writeFile(t, claim.Name(filepath.Join(dir, "r1", "bb.json"), 0), string(data))
		g := Grid{Name: "t", Dir: dir, Work: &Work{Mode: Worker, Poll: 100 * time.Millisecond}}
		start := time.Now()
		n, err := Loop(context.Background(), g, func() (int, error) { return workTable(context.Background(), g, tb, &pres) })
		if err != nil || n != 4 || *tb.runs != 4 {
			t.Fatalf("kept %d, runs %d, error %v", n, *tb.runs, err)
		}
		if d := time.Since(start); d < time.Second {
			t.Fatalf("done in %v: the live claim was not waited for", d)
		}
		h, _ := claim.History(filepath.Join(dir, "r1", "bb.json"))
		if len(h) != 2 || h[0].State != claim.Running || h[1].State != claim.Done || h[1].Generation != 1 {
			t.Fatalf("claims %+v, want the other's then this one's, done", h)
		}
	})
}
