package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
)

// cellGrid is a small report on evaluation budgets (same seed, same
// table): two synthetic graphs, brkga and local-search at evals and
// brkga at twice that (REGAL's best known): 6 cells.
func cellGrid(evals int, dir string, more ...string) []string {
	return append([]string{"report", "regal", "--graphs", "synthetic:2", "--methods", "brkga,local-search", "--curve-methods", "brkga",
		"--objectives", "step-time", "--evaluations", fmt.Sprint(evals), "--budgets", fmt.Sprint(evals), "--best-budget", fmt.Sprint(2 * evals),
		"--seed", "3", "--dir", dir, "-q"}, more...)
}

// untimed is a report's JSON without its wall and CPU times (which no
// two runs share).
func untimed(t *testing.T, out string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "wall_s" || k == "cpu_s" || k == "mean_cpu_s" {
					delete(v, k)
				} else {
					strip(x)
				}
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	data, _ := json.MarshalIndent(v, "", " ")
	return string(data)
}

// singleTable is the table one process prints for the grid (its JSON,
// untimed).
func singleTable(t *testing.T, evals int) string {
	t.Helper()
	code, out, errs := placer(t, cellGrid(evals, t.TempDir(), "--json")...)
	if code != 0 {
		t.Fatalf("one process: exit %d: %s", code, errs)
	}
	return untimed(t, out)
}

// mergedTable is the table --no-run prints of dir.
func mergedTable(t *testing.T, evals int, dir string) string {
	t.Helper()
	code, out, errs := placer(t, cellGrid(evals, dir, "--no-run", "--json")...)
	if code != 0 {
		t.Fatalf("--no-run: exit %d: %s", code, errs)
	}
	return untimed(t, out)
}

// cellFiles are the result files of the grid in dir (from its cell
// list).
func cellFiles(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cells.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c struct{ File string }
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(dir, c.File))
	}
	return files
}

// checkOnce checks that every cell of dir was finished once: its result
// file whole, and at most one claim done (none only when its finisher
// died between writing the result and marking its claim); it returns
// the owners (pids) that finished cells.
func checkOnce(t *testing.T, dir string, wantDone bool) map[int]int {
	t.Helper()
	owners := map[int]int{}
	files := cellFiles(t, dir)
	if len(files) != 6 {
		t.Fatalf("%d cells listed, want 6", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		var v map[string]any
		if err != nil || json.Unmarshal(data, &v) != nil {
			t.Errorf("%s: not a whole result (%v): %q", f, err, data)
		}
		h, err := claim.History(f)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, c := range h {
			if c.State == claim.Done {
				done++
				owners[c.Owner.PID]++
			}
		}
		if done > 1 || (wantDone && done != 1) {
			t.Errorf("%s: %d claims done, want 1: %+v", f, done, h)
		}
	}
	return owners
}

// TestCellWorkers: N = 1, 2 and 3 worker processes (this test binary
// run as placer) share one --dir: every cell runs once, and the table
// --no-run prints of the dir equals the one a single process prints
// (wall and CPU times aside).
func TestCellWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	const evals = 3000
	want := singleTable(t, evals)
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("%d workers", n), func(t *testing.T) {
			dir := t.TempDir()
			var wg sync.WaitGroup
			errs := make([]string, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := asPlacer("", cellGrid(evals, dir, "--worker", "--lease", "5s")...)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					if err := cmd.Run(); err != nil {
						errs[i] = fmt.Sprintf("worker %d: %v: %s", i, err, stderr.String())
					}
				}()
			}
			wg.Wait()
			for _, e := range errs {
				if e != "" {
					t.Fatal(e)
				}
			}
			owners := checkOnce(t, dir, true)
			if got := mergedTable(t, evals, dir); got != want {
				t.Fatalf("merged table of %d workers differs from one process's:\n%s\nwant\n%s", n, got, want)
			}
			t.Logf("%d workers: cells finished per worker pid: %v", n, owners)
		})
	}
}

// TestCellKilledWorkers kills a worker with SIGKILL at a random moment
// 20 times (each kill starting a new worker on the same --dir, where the
// killed one's claims are: its process is gone, so they are taken over
// at once), then lets a last worker finish: no result is half-written,
// no cell was finished twice, and the table equals one process's.
func TestCellKilledWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	const evals = 8000
	want := singleTable(t, evals)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		cmd := asPlacer("", cellGrid(evals, dir, "--worker", "--lease", "1m")...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
		cmd.Process.Kill()
		if err := cmd.Wait(); err == nil {
			t.Logf("kill %d: the worker had finished", i)
		}
	}
	start := time.Now()
	cmd := asPlacer("", cellGrid(evals, dir, "--worker", "--lease", "1m")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("last worker: %v: %s", err, stderr.String())
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("the last worker took %v: the dead workers' claims (lease 1m) were waited for", d)
	}
	checkOnce(t, dir, false)
	// The kills did land in cells: claims of dead workers were taken over.
	dead, kept := 0, 0
	for _, f := range cellFiles(t, dir) {
		h, _ := claim.History(f)
		for _, c := range h {
			if c.State == claim.Running {
				dead++
			}
		}
		if len(h) > 0 && h[len(h)-1].State == claim.Done {
			kept++
		}
	}
	t.Logf("claims of killed workers taken over: %d; cells finished by their last claim: %d of 6", dead, kept)
	if dead == 0 {
		t.Error("no kill landed in a cell: the test tested nothing")
	}
	if got := mergedTable(t, evals, dir); got != want {
		t.Fatalf("table after 20 kills differs from one process's:\n%s\nwant\n%s", got, want)
	}
}

// TestCellBadInput: a cell index out of range, and a --dir laid out for
// another seed: one line, exit 1.
func TestCellBadInput(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := placer(t, cellGrid(300, dir, "--cell", "0")...); code != 0 {
		t.Fatalf("cell 0: exit %d: %s", code, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{cellGrid(300, dir, "--cell", "6"), "placer: regal: cell 6: out of range: this report has 6 cells (0 to 5)\n"},
		{append(cellGrid(300, dir, "--cell", "1"), "--seed", "4"), "placer: regal: --dir " + dir + " holds the cells of another grid: its cell 0 is"},
		{cellGrid(300, dir, "--worker", "--no-run"), "placer: --no-run reads the cells kept in --dir: it takes no --list-cells, --cell or --worker\n"},
	} {
		code, _, errs := placer(t, tc.args...)
		if code == 0 || code > 2 || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args[len(tc.args)-3:], code, errs, tc.want)
		}
	}
}

// TestPretrainRounds: pretrain --scored in synchronous rounds. One worker
// a round gives the head of one plain process, byte for byte; three a
// round give the same head whether one process or three (this test
// binary run as placer, sharing --rounds) run them.
func TestPretrainRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"pretrain", "--scored", "--workloads", "trxl2,rnnlm2", "--gpus", "2", "--steps", "6", "--visit-evals", "100",
			"--seed", "1", "--out", filepath.Join(dir, out), "-q"}, more...)
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, r := range []struct {
		out  string
		more []string
	}{
		{"plain.head", nil},
		{"k1.head", []string{"--workers", "1", "--rounds", filepath.Join(dir, "r1")}},
		{"k3.head", []string{"--workers", "3", "--rounds", filepath.Join(dir, "r3")}},
	} {
		if code, _, errs := placer(t, args(r.out, r.more...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", r.out, code, errs)
		}
	}
	if !bytes.Equal(read("plain.head"), read("k1.head")) {
		t.Fatal("rounds of one worker: not the plain process's head")
	}
	if bytes.Equal(read("plain.head"), read("k3.head")) {
		t.Fatal("rounds of three gave the plain head: nothing averaged")
	}
	var wg sync.WaitGroup
	errs := make([]string, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := asPlacer("", args(fmt.Sprintf("p%d.head", i), "--workers", "3", "--rounds", filepath.Join(dir, "shared"))...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Sprintf("worker %d: %v: %s", i, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
		if !bytes.Equal(read(fmt.Sprintf("p%d.head", i)), read("k3.head")) {
			t.Fatalf("process %d of 3 ended with another head than one process", i)
		}
	}
	pids := map[int]int{}
	for v := range 6 {
		h, _ := claim.History(filepath.Join(dir, "shared", fmt.Sprintf("round-%d", v/3), fmt.Sprintf("visit-%d.head", v)))
		for _, c := range h {
			if c.State == claim.Done {
				pids[c.Owner.PID]++
			}
		}
	}
	t.Logf("visits per process: %v", pids)
	n := 0
	for _, c := range pids {
		n += c
	}
	if n != 6 {
		t.Fatalf("%d visits done, want 6 (each once)", n)
	}
}
