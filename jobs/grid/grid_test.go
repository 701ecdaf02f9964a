package grid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/optimize"
)

// cellFile is what the test table's cells keep: the seed they ran with
// and a value their key and seed decide.
type cellFile struct {
	Seed  uint64 `json:"seed"`
	Key   string `json:"key"`
	Value int    `json:"value"`
}

// table is a test report: cells keyed row/column, each file KEY.json in
// its row's folder, matched on its seed; runs counts the cells run.
type table struct {
	seed uint64
	runs *int
	mu   *sync.Mutex
}

func newTable(seed uint64) table { return table{seed: seed, runs: new(int), mu: new(sync.Mutex)} }

func value(key string, seed uint64) int { return len(key)*1000 + int(seed) }

func (t table) cell(key string) Cell[cellFile] {
	return Cell[cellFile]{
		File:  key + ".json",
		Label: key,
		Match: func(f *cellFile) error {
			if f.Seed != t.seed || f.Key != key {
				return ErrStale
			}
			return nil
		},
		Run: func(ctx context.Context) (cellFile, error) {
			t.mu.Lock()
			*t.runs++
			t.mu.Unlock()
			return cellFile{Seed: t.seed, Key: key, Value: value(key, t.seed)}, nil
		},
		Line: func(f *cellFile, kept bool) string {
			if kept {
				return fmt.Sprintf("%d (kept)", f.Value)
			}
			return fmt.Sprint(f.Value)
		},
		Interrupted: "interrupted",
	}
}

// row runs (or reads) one row's cells in g's folder row.
func (t table) row(ctx context.Context, g Grid, row string, cols ...string) (Results[cellFile], error) {
	var cells []Cell[cellFile]
	for _, c := range cols {
		cells = append(cells, t.cell(c))
	}
	return All(ctx, g.In(row), cells)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readCell(t *testing.T, path string) (cellFile, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cellFile{}, false
	}
	var f cellFile
	if err != nil || json.Unmarshal(data, &f) != nil {
		t.Fatalf("%s: %v, %q", path, err, data)
	}
	return f, true
}

// TestDo: a cell is read back when its file is there and matches,
// whatever else lies beside it, and run (its file written whole) when it
// is not; NoRun runs nothing; a strict cell's unreadable file is an
// error.
func TestDo(t *testing.T) {
	const key = "a"
	good := cellFile{Seed: 1, Key: key, Value: 7} // kept (7: not what a run gives)
	ran := cellFile{Seed: 1, Key: key, Value: value(key, 1)}
	full, _ := json.Marshal(good)
	strict := func(c *Cell[cellFile]) {
		c.Strict = func(path string, err error) error { return fmt.Errorf("%s is not a cell (%v)", path, err) }
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) // what dir holds before
		noRun bool
		noDir bool
		edit  func(c *Cell[cellFile])
		out   Outcome
		runs  int
		want  cellFile // the cell's result, and its file after (unless noDir)
		err   string
		line  string
	}{
		{name: "nothing kept", out: Ran, runs: 1, want: ran, line: "t: a: 1001\n"},
		{name: "kept", setup: func(t *testing.T, dir string) { writeJSON(t, filepath.Join(dir, "a.json"), good) }, out: Kept, want: good, line: "t: a: 7 (kept)\n"},
		{name: "another seed's", setup: func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "a.json"), cellFile{Seed: 2, Key: key, Value: 7})
		}, out: Ran, runs: 1, want: ran},
		{name: "half-written", setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.json"), string(full[:len(full)/2])) }, out: Ran, runs: 1, want: ran},
		{name: "empty", setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.json"), "") }, out: Ran, runs: 1, want: ran},
		{name: "a writer's temporary file only", setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, ".a.json.tmp-123"), string(full)) }, out: Ran, runs: 1, want: ran},
		{name: "no dir", noDir: true, out: Ran, runs: 1, want: ran},
		{name: "no run, kept", noRun: true, setup: func(t *testing.T, dir string) { writeJSON(t, filepath.Join(dir, "a.json"), good) }, out: Kept, want: good},
		{name: "no run, not kept", noRun: true, out: Missing, line: "t: a: not kept in DIR\n"},
		{name: "no run, half-written", noRun: true, setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.json"), string(full[:10])) }, out: Missing},
		{name: "no run, another seed's", noRun: true, setup: func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "a.json"), cellFile{Seed: 2, Key: key})
		}, out: Missing},
		{name: "strict, kept", edit: strict, setup: func(t *testing.T, dir string) { writeJSON(t, filepath.Join(dir, "a.json"), good) }, out: Kept, want: good},
		{name: "strict, half-written", edit: strict, setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.json"), string(full[:len(full)/2])) }, out: Failed, err: "a.json is not a cell (unexpected EOF)"},
		{name: "strict, unknown field", edit: strict, setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a.json"), `{"seed": 1, "key": "a", "other": 1}`)
		}, out: Failed, err: `unknown field "other"`},
		{name: "match says stop", edit: func(c *Cell[cellFile]) {
			c.Match = func(*cellFile) error { return errors.New("remove it") }
		}, setup: func(t *testing.T, dir string) { writeJSON(t, filepath.Join(dir, "a.json"), good) }, out: Failed, err: "remove it"},
		{name: "run fails", edit: func(c *Cell[cellFile]) {
			c.Run = func(context.Context) (cellFile, error) { return cellFile{}, errors.New("broken") }
		}, out: Failed, err: "broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			var progress strings.Builder
			g := Grid{Name: "t", Dir: dir, NoRun: tc.noRun, Progress: &progress}
			if tc.noDir {
				g.Dir = ""
			}
			tb := newTable(1)
			c := tb.cell(key)
			if tc.edit != nil {
				tc.edit(&c)
			}
			before, _ := os.ReadFile(filepath.Join(dir, "a.json"))
			f, out, err := Do(context.Background(), g, c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if out != tc.out || *tb.runs != tc.runs {
				t.Errorf("outcome %d after %d runs, want %d after %d", out, *tb.runs, tc.out, tc.runs)
			}
			if tc.err == "" && f != tc.want {
				t.Errorf("cell %+v, want %+v", f, tc.want)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "a.json"))
			switch {
			case tc.noDir && after != nil:
				t.Errorf("no dir, yet %s kept", after)
			case tc.out == Ran && !tc.noDir:
				if kept, ok := readCell(t, filepath.Join(dir, "a.json")); !ok || kept != tc.want {
					t.Errorf("kept %+v (%v), want %+v", kept, ok, tc.want)
				}
			case tc.out != Ran && string(after) != string(before):
				t.Errorf("file %q became %q", before, after)
			}
			if tc.line != "" && progress.String() != strings.ReplaceAll(tc.line, "DIR", dir) {
				t.Errorf("progress %q, want %q", progress.String(), tc.line)
			}
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".a.json.tmp-*")); tc.out == Ran && len(tmp) > 0 && tc.setup == nil {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

// TestAllInterrupted: ctx ending during a cell stops the row there; that
// cell is not kept (nor counted done), the ones before it are, and a
// rerun reads them back and runs the rest.
func TestAllInterrupted(t *testing.T) {
	dir := t.TempDir()
	var progress strings.Builder
	g := Grid{Name: "t", Dir: dir, Progress: &progress}
	tb := newTable(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cells := []Cell[cellFile]{tb.cell("a"), tb.cell("b"), tb.cell("c")}
	run := cells[1].Run
	cells[1].Run = func(ctx context.Context) (cellFile, error) {
		f, _ := run(ctx)
		cancel() // the run is cut short: the cell gives its partial result
		return f, nil
	}
	res, err := All(ctx, g, cells)
	if !errors.Is(err, context.Canceled) || len(res.Cells) != 1 || res.Missing != 1 || *tb.runs != 2 {
		t.Fatalf("interrupted: %v, %+v after %d runs", err, res, *tb.runs)
	}
	if !strings.HasSuffix(progress.String(), "t: b: interrupted\n") {
		t.Errorf("progress %q", progress.String())
	}
	for key, want := range map[string]bool{"a": true, "b": false, "c": false} {
		if _, ok := readCell(t, filepath.Join(dir, key+".json")); ok != want {
			t.Errorf("%s kept: %v, want %v", key, ok, want)
		}
	}
	// Cancelled before a cell starts: nothing runs, nothing is printed.
	progress.Reset()
	if _, out, err := Do(ctx, g, tb.cell("c")); out != Missing || !errors.Is(err, context.Canceled) || progress.Len() != 0 {
		t.Errorf("a cell after the end: %d, %v, %q", out, err, progress.String())
	}
	again := newTable(1)
	res, err = All(context.Background(), g, []Cell[cellFile]{again.cell("a"), again.cell("b"), again.cell("c")})
	if err != nil || len(res.Cells) != 3 || !slices.Equal(res.Kept, []bool{true, false, false}) || *again.runs != 2 {
		t.Errorf("rerun: %v, %+v after %d runs", err, res, *again.runs)
	}
}

// TestMerge: the cells several processes wrote, into one dir or into
// dirs then copied into one, read back with NoRun as one table: every
// kept cell read, the ones nobody ran missing, nothing run.
func TestMerge(t *testing.T) {
	rows := map[string][]string{"g1@2": {"m1-60s", "m2-60s"}, "g2@4": {"m1-60s", "m2-60s"}}
	for _, tc := range []struct {
		name   string
		shared bool // one dir for both processes, else one each, merged
	}{
		{"one dir", true},
		{"two dirs merged", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			merged := filepath.Join(root, "merged")
			var wg sync.WaitGroup
			errs := make(chan error, len(rows))
			ran := map[string]Results[cellFile]{}
			var mu sync.Mutex
			for row, cols := range rows {
				dir := merged
				if !tc.shared {
					dir = filepath.Join(root, "proc-"+row)
				}
				wg.Go(func() {
					res, err := newTable(3).row(context.Background(), Grid{Name: "t", Dir: dir}, row, cols...)
					mu.Lock()
					ran[row] = res
					mu.Unlock()
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if !tc.shared {
				for row := range rows {
					if err := os.CopyFS(merged, os.DirFS(filepath.Join(root, "proc-"+row))); err != nil {
						t.Fatal(err)
					}
				}
			}
			var progress strings.Builder
			g := Grid{Name: "t", Dir: merged, NoRun: true, Progress: &progress}
			tb := newTable(3)
			missing := 0
			for row, cols := range rows {
				// A third column nobody ran: missing.
				res, err := tb.row(context.Background(), g, row, append(slices.Clone(cols), "m3-60s")...)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(res.Cells, ran[row].Cells) || slices.Contains(res.Kept, false) {
					t.Errorf("%s: read back %+v, ran %+v", row, res, ran[row])
				}
				missing += res.Missing
			}
			if missing != 2 || *tb.runs != 0 {
				t.Errorf("%d missing after %d runs, want 2 after none", missing, *tb.runs)
			}
			for row := range rows {
				if want := fmt.Sprintf("t: m3-60s: not kept in %s\n", filepath.Join(merged, row)); !strings.Contains(progress.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, progress.String())
				}
			}
			// Another seed's table reads none of them.
			other := newTable(4)
			res, err := other.row(context.Background(), g, "g1@2", rows["g1@2"]...)
			if err != nil || len(res.Cells) != 0 || res.Missing != 2 || *other.runs != 0 {
				t.Errorf("another seed: %v, %+v", err, res)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	if err := (Grid{Name: "t", NoRun: true}).Check(); err == nil || !strings.Contains(err.Error(), "--no-run") {
		t.Errorf("no-run without a dir: %v", err)
	}
	for _, g := range []Grid{{}, {Dir: "d"}, {Dir: "d", NoRun: true}} {
		if err := g.Check(); err != nil {
			t.Errorf("%+v: %v", g, err)
		}
	}
}

// TestSeeds: one run per seed, each in DIR/seed-N with several; a seed
// listed twice is an error before anything runs.
func TestSeeds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint64
		seeds []uint64
		want  []string // "seed dir" of each run
		err   string
	}{
		{name: "seed", seed: 4, want: []string{"4 D"}},
		{name: "one of seeds", seed: 4, seeds: []uint64{5}, want: []string{"5 D"}},
		{name: "seeds", seeds: []uint64{2, 0, 1}, want: []string{"2 D/seed-2", "0 D/seed-0", "1 D/seed-1"}},
		{name: "twice", seeds: []uint64{1, 2, 1}, err: "t: seed 1 is listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			reps, err := Seeds(Grid{Name: "t", Dir: "D"}, tc.seed, tc.seeds, func(g Grid, seed uint64) (uint64, error) {
				got = append(got, fmt.Sprintf("%d %s", seed, filepath.ToSlash(g.Dir)))
				return seed, nil
			})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || len(got) != 0 {
					t.Errorf("error %v after runs %v, want %q before any", err, got, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || len(reps) != len(tc.want) {
				t.Errorf("runs %v (%v), want %v", got, err, tc.want)
			}
		})
	}
	// A failing seed stops there, its run returned.
	reps, err := Seeds(Grid{}, 0, []uint64{1, 2, 3}, func(_ Grid, seed uint64) (uint64, error) {
		if seed == 2 {
			return seed, errors.New("failed")
		}
		return seed, nil
	})
	if err == nil || !slices.Equal(reps, []uint64{1, 2}) {
		t.Errorf("a failing seed: %v, %v", reps, err)
	}
}

func TestBudgets(t *testing.T) {
	for _, tc := range []struct {
		b    time.Duration
		cpu  bool
		name string
		want optimize.Budget
	}{
		{time.Minute, false, "60s", optimize.Budget{Time: time.Minute}},
		{time.Minute, true, "60s-cpu", optimize.Budget{CPU: time.Minute}},
		{300 * time.Millisecond, false, "0.3s", optimize.Budget{Time: 300 * time.Millisecond}},
		{1500 * time.Millisecond, true, "1.5s-cpu", optimize.Budget{CPU: 1500 * time.Millisecond}},
	} {
		if got := BudgetName(tc.b, tc.cpu); got != tc.name {
			t.Errorf("BudgetName(%v, %v) = %q, want %q", tc.b, tc.cpu, got, tc.name)
		}
		if got := Budget(tc.b, tc.cpu); got != tc.want {
			t.Errorf("Budget(%v, %v) = %+v, want %+v", tc.b, tc.cpu, got, tc.want)
		}
	}
}

func TestAxes(t *testing.T) {
	def := Axes{Graphs: []string{"g"}, Methods: []string{"single"}, Budgets: []time.Duration{time.Second}}
	for _, tc := range []struct {
		name string
		a    Axes
		want Axes
		err  string
	}{
		{name: "defaults", want: def},
		{name: "given", a: Axes{Graphs: []string{"h"}, Methods: []string{"dp"}, Budgets: []time.Duration{time.Minute}}, want: Axes{Graphs: []string{"h"}, Methods: []string{"dp"}, Budgets: []time.Duration{time.Minute}}},
		{name: "unknown method", a: Axes{Methods: []string{"nope"}}, err: "nope"},
		{name: "zero budget", a: Axes{Budgets: []time.Duration{0}}, err: "t: budget 0s: must be positive"},
	} {
		got, err := tc.a.Or("t", def)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v (%v), want %+v", tc.name, got, err, tc.want)
		}
	}
	a := Axes{Methods: []string{"x", "y"}, Budgets: []time.Duration{time.Second, time.Minute}}
	var keys []string
	for _, c := range Cells(a, func(m string, b time.Duration) Cell[cellFile] {
		return Cell[cellFile]{File: m + "-" + BudgetName(b, false)}
	}) {
		keys = append(keys, c.File)
	}
	if want := []string{"x-1s", "x-60s", "y-1s", "y-60s"}; !slices.Equal(keys, want) || !slices.Equal(a.Seconds(), []float64{1, 60}) {
		t.Errorf("cells %v, want %v (method-major); seconds %v", keys, want, a.Seconds())
	}
}

func TestDiff(t *testing.T) {
	type settings struct {
		Seed  uint64   `json:"seed"`
		Train []string `json:"train"`
		Steps int      `json:"steps"`
	}
	for _, tc := range []struct {
		had, want settings
		diff      string
	}{
		{settings{1, []string{"a"}, 3}, settings{1, []string{"a"}, 3}, ""},
		{settings{1, []string{"a"}, 3}, settings{2, []string{"a"}, 3}, "seed 1, this run's 2"},
		{settings{1, []string{"a"}, 3}, settings{2, []string{"b"}, 4}, "seed 1, this run's 2"}, // the first in name order
		{settings{1, []string{"a"}, 3}, settings{1, []string{"a", "b"}, 4}, `steps 3, this run's 4`},
		{settings{1, nil, 3}, settings{1, []string{"a"}, 3}, `train null, this run's ["a"]`},
	} {
		if got := Diff(tc.had, tc.want); got != tc.diff {
			t.Errorf("Diff(%+v, %+v) = %q, want %q", tc.had, tc.want, got, tc.diff)
		}
	}
}

func TestRowDir(t *testing.T) {
	for in, want := range map[string]string{"gnmt4": "gnmt4@4", "../examples/mlp.json": ".._examples_mlp.json@4", `a b:c\d`: "a_b_c_d@4"} {
		if got := RowDir(in, 4); got != want {
			t.Errorf("RowDir(%q) = %q, want %q", in, got, want)
		}
	}
	if g := (Grid{}).In("x", "y"); g.Dir != "" || g.Path("f") != "" {
		t.Errorf("a grid keeping nothing keeps %q", g.Path("f"))
	}
	if g := (Grid{Dir: "d"}).In("x", "y"); g.Path("f.json") != filepath.Join("d", "x", "y", "f.json") {
		t.Errorf("path %q", g.Path("f.json"))
	}
}
