package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/internal/timed"
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
// no cell was finished twice, and the table equals one process's. The
// claims' lease is an hour, so a worker that waited for a dead one's to
// lapse instead of taking it over would never finish: the last worker
// is killed after 5 minutes (a hang, not a speed: it takes seconds) and
// every claim taken over was taken within its dead owner's lease. Its
// wall time is bounded (45 s) under make bench-timed.
func TestCellKilledWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	const evals = 8000
	want := singleTable(t, evals)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		cmd := asPlacer("", cellGrid(evals, dir, "--worker", "--lease", "1h")...)
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
	cmd := asPlacer("", cellGrid(evals, dir, "--worker", "--lease", "1h")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	if err := cmd.Wait(); err != nil {
		if !hung.Stop() {
			t.Fatalf("last worker killed after 5 minutes: it waited for the dead workers' claims (lease 1h): %s", stderr.String())
		}
		t.Fatalf("last worker: %v: %s", err, stderr.String())
	}
	hung.Stop()
	timed.Bound(t, "the last worker", time.Since(start), 45*time.Second)
	checkOnce(t, dir, false)
	// The kills did land in cells: claims of dead workers were taken over,
	// each before its lease would have let it lapse.
	dead, kept := 0, 0
	for _, f := range cellFiles(t, dir) {
		h, _ := claim.History(f)
		for i, c := range h {
			if c.State == claim.Running {
				dead++
				if i+1 < len(h) && !h[i+1].Renewed.Before(c.Renewed.Add(time.Duration(c.Lease*float64(time.Second)))) {
					t.Errorf("%s: claim %d taken over at %v, after its lease (renewed %v, %g s): waited for", f, i+1, h[i+1].Renewed, c.Renewed, c.Lease)
				}
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

// TestPretrainCells: pretrain --scored in rounds as cells. --list-cells
// lists one cell per visit; the script placer cluster slurm writes, run
// for every array index (the cells of the last round first, all at once,
// as real processes), then its follow-up job, leave the head of one
// process running the rounds alone, to the byte; a cell killed while it
// runs is taken over when its script runs again, and each visit is kept
// once; bad cell indices are one line.
func TestPretrainCells(t *testing.T) {
	bin := placerBinary(t)
	dir := t.TempDir()
	pre := func(out string, more ...string) []string {
		return append([]string{"pretrain", "--scored", "--workloads", "trxl2,rnnlm2", "--gpus", "2", "--steps", "6", "--visit-evals", "100",
			"--seed", "1", "--workers", "3", "--out", filepath.Join(dir, out)}, more...)
	}
	if code, _, errs := placer(t, append(pre("one.head", "--rounds", filepath.Join(dir, "one")), "-q")...); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, errs)
	}
	want, err := os.ReadFile(filepath.Join(dir, "one.head"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := placer(t, append(pre("x.head", "--rounds", "R"), "--list-cells")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 6 || lines[4] != `{"index":4,"round":1,"method":"go-scored-visit","budget":"100-evals","seed":1,"file":"R/round-1/visit-4.head"}` {
		t.Fatalf("--list-cells: exit %d, %q, %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{append(pre("x.head", "--rounds", "R"), "--cell", "6"), 1, "placer: cell 6: out of range: this run has 6 cells (0 to 5), one per visit"},
		{append(pre("x.head", "--rounds", "R"), "--cell", "x"), 2, `placer: --cell "x": want a cell index`},
		{append(pre("x.head", "--rounds", "R"), "--cell", "1", "--list-cells"), 2, "placer: --list-cells and --cell: give one"},
		{[]string{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", "x", "--cell", "1"}, 2, "placer: --list-cells and --cell: pre-training runs as cells in synchronous rounds"},
	} {
		code, _, errs := placer(t, tc.args...)
		if code != tc.code || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}

	shared := filepath.Join(dir, "shared")
	args := append([]string{"cluster", "slurm", "--placer", bin, "--dir", shared, "--time", "20m", "--"}, pre("shared.head")...)
	if code, _, errs := placer(t, args...); code != 0 {
		t.Fatalf("cluster slurm: exit %d: %s", code, errs)
	}
	script, err := os.ReadFile(filepath.Join(shared, "slurm", "cells.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(script); !strings.Contains(s, "#SBATCH --array=0-5\n") || !strings.Contains(s, "--rounds "+shared+` --cell "$SLURM_ARRAY_TASK_ID"`) {
		t.Fatalf("cells.sbatch:\n%s", s)
	}
	task := func(i int) *exec.Cmd {
		cmd := exec.Command("sh", filepath.Join(shared, "slurm", "cells.sbatch"))
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i))
		return cmd
	}
	// Cell 1 killed while it runs: after its visit's claim appears, or
	// once it has ended.
	k := task(1)
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	claim0 := claim.Name(filepath.Join(shared, "round-0", "visit-1.head"), 0)
	exited := make(chan struct{})
	go func() { k.Wait(); close(exited) }()
	for {
		if _, err := os.Stat(claim0); err == nil {
			k.Process.Kill()
			break
		}
		select {
		case <-exited:
		case <-time.After(5 * time.Millisecond):
			continue
		}
		break
	}
	<-exited
	var wg sync.WaitGroup
	fails := make([]string, 6)
	for i := 5; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := task(i).CombinedOutput(); err != nil {
				fails[i] = fmt.Sprintf("cell %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, f := range fails {
		if f != "" {
			t.Fatal(f)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "shared.head"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the cells' head is not the head of one process")
	}
	for v := range 6 {
		h, err := claim.History(filepath.Join(shared, fmt.Sprintf("round-%d", v/3), fmt.Sprintf("visit-%d.head", v)))
		done := 0
		for _, c := range h {
			if c.State == claim.Done {
				done++
			}
		}
		if err != nil || done != 1 {
			t.Errorf("visit %d: %d claims done (%v), want 1: %+v", v, done, err, h)
		}
		if v == 1 {
			t.Logf("visit 1 (its first task killed): %d claims", len(h))
		}
	}
	// The follow-up job: one more worker, which finds every visit kept
	// and writes the same head again.
	os.Remove(filepath.Join(dir, "shared.head"))
	if out, err := exec.Command("sh", filepath.Join(shared, "slurm", "table.sbatch")).CombinedOutput(); err != nil || !strings.Contains(string(out), "model written to") {
		t.Fatalf("table.sbatch: %v: %s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "shared.head")); !bytes.Equal(got, want) {
		t.Fatal("the follow-up job's head is not the head of one process")
	}
}

// TestPretrainPolicyRounds: the GO policy (pretrain without --scored) in
// synchronous rounds. One worker a round gives the plain process's
// policy file byte for byte; two a round give the same policy whether
// one process or two (this test binary run as placer, sharing --rounds)
// run them, or the cells one by one; --list-cells names the steps.
func TestPretrainPolicyRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"pretrain", "--workloads", "trxl2,rnnlm2", "--gpus", "2", "--policy", "small", "--steps", "4", "--warmup", "2",
			"--samples", "4", "--seed", "1", "--out", filepath.Join(dir, out), "-q"}, more...)
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
		{"plain.policy", nil},
		{"k1.policy", []string{"--workers", "1", "--rounds", filepath.Join(dir, "r1")}},
		{"k2.policy", []string{"--workers", "2", "--rounds", filepath.Join(dir, "r2")}},
	} {
		if code, _, errs := placer(t, args(r.out, r.more...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", r.out, code, errs)
		}
	}
	if !bytes.Equal(read("plain.policy"), read("k1.policy")) {
		t.Fatal("rounds of one worker: not the plain process's policy")
	}
	if bytes.Equal(read("plain.policy"), read("k2.policy")) {
		t.Fatal("rounds of two gave the plain policy: nothing averaged")
	}
	code, out, errs := placer(t, args("x", "--workers", "2", "--rounds", "R", "--list-cells")...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 4 ||
		lines[3] != `{"index":3,"round":1,"method":"go-pretrain-step","budget":"4-samples","seed":1,"file":"R/round-1/step-3.policy"}` {
		t.Fatalf("--list-cells: exit %d, %q, %s", code, out, errs)
	}
	var wg sync.WaitGroup
	fails := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := asPlacer("", args(fmt.Sprintf("p%d.policy", i), "--workers", "2", "--rounds", filepath.Join(dir, "shared"))...)
			if out, err := cmd.CombinedOutput(); err != nil {
				fails[i] = fmt.Sprintf("process %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for i, f := range fails {
		if f != "" {
			t.Fatal(f)
		}
		if !bytes.Equal(read(fmt.Sprintf("p%d.policy", i)), read("k2.policy")) {
			t.Fatalf("process %d of 2 ended with another policy than one process", i)
		}
	}
	for i := range 4 {
		if code, _, errs := placer(t, args("cells.policy", "--workers", "2", "--rounds", filepath.Join(dir, "cells"), "--cell", fmt.Sprint(i))...); code != 0 {
			t.Fatalf("cell %d: exit %d: %s", i, code, errs)
		}
	}
	if !bytes.Equal(read("cells.policy"), read("k2.policy")) {
		t.Fatal("the cells one by one: not the policy of one process")
	}
	if code, _, errs := placer(t, args("x", "--workers", "2", "--rounds", "R", "--cell", "4")...); code != 1 ||
		errs != "placer: cell 4: out of range: this run has 4 cells (0 to 3), one per step\n" {
		t.Fatalf("--cell 4 of 4: exit %d, %q", code, errs)
	}
}

// TestRegalTrainRounds: regal train --workers K --rounds DIR: K = 1 gives
// the plain process's model (weights and Adam's state); K = 2 run by two
// processes at once, and cell by cell, gives the model of one process;
// --list-cells lists the steps; a cell out of range is one line, exit 1.
func TestRegalTrainRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer processes")
	}
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"regal", "train", "--workloads", "trxl2,rnnlm2", "--copies", "1", "--gpus", "2", "--steps", "4", "--samples", "2",
			"--batch", "1", "--evaluations", "20", "--dim", "6", "--seed", "1", "--out", filepath.Join(dir, out), "-q"}, more...)
	}
	// The model as it decides what comes next: weights and Adam's state
	// (not the curve's times).
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Params json.RawMessage `json:"params"`
			Train  struct {
				Step  int             `json:"step"`
				AdamM json.RawMessage `json:"adam_m"`
				AdamV json.RawMessage `json:"adam_v"`
				AdamT int             `json:"adam_t"`
			} `json:"train"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.Train.Step != 4 || m.Train.AdamT < 2 {
			t.Fatalf("%s: %v, step %d, adam step %d", name, err, m.Train.Step, m.Train.AdamT)
		}
		return string(m.Params) + string(m.Train.AdamM) + string(m.Train.AdamV)
	}
	for _, r := range []struct {
		out  string
		more []string
	}{
		{"plain.model", nil},
		{"k1.model", []string{"--workers", "1", "--rounds", filepath.Join(dir, "r1")}},
		{"k2.model", []string{"--workers", "2", "--rounds", filepath.Join(dir, "r2")}},
	} {
		if code, _, errs := placer(t, args(r.out, r.more...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", r.out, code, errs)
		}
	}
	if read("plain.model") != read("k1.model") {
		t.Fatal("rounds of one worker: not the plain process's model")
	}
	if read("plain.model") == read("k2.model") {
		t.Fatal("rounds of two gave the plain model: nothing averaged")
	}
	code, out, errs := placer(t, args("x", "--workers", "2", "--rounds", "R", "--list-cells")...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 4 ||
		lines[3] != `{"index":3,"round":1,"method":"regal-train-step","budget":"20-evals","seed":1,"file":"R/round-1/step-3.model"}` {
		t.Fatalf("--list-cells: exit %d, %q, %s", code, out, errs)
	}
	var wg sync.WaitGroup
	fails := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := asPlacer("", args(fmt.Sprintf("p%d.model", i), "--workers", "2", "--rounds", filepath.Join(dir, "shared"))...)
			if out, err := cmd.CombinedOutput(); err != nil {
				fails[i] = fmt.Sprintf("process %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for i, f := range fails {
		if f != "" {
			t.Fatal(f)
		}
		if read(fmt.Sprintf("p%d.model", i)) != read("k2.model") {
			t.Fatalf("process %d of 2 ended with another model than one process", i)
		}
	}
	for i := range 4 {
		if code, out, errs := placer(t, args("cells.model", "--workers", "2", "--rounds", filepath.Join(dir, "cells"), "--cell", fmt.Sprint(i))...); code != 0 ||
			(i < 3) != strings.Contains(out, fmt.Sprintf("cell %d kept", i)) {
			t.Fatalf("cell %d: exit %d: %s %s", i, code, out, errs)
		}
	}
	if read("cells.model") != read("k2.model") {
		t.Fatal("the cells one by one: not the model of one process")
	}
	if code, _, errs := placer(t, args("x", "--workers", "2", "--rounds", "R", "--cell", "4")...); code != 1 ||
		errs != "placer: cell 4: out of range: this run has 4 cells (0 to 3), one per step\n" {
		t.Fatalf("--cell 4 of 4: exit %d, %q", code, errs)
	}
	if code, _, errs := placer(t, args("x", "--workers", "2", "--rounds", "R", "--self-imitation", "1")...); code != 2 || !strings.Contains(errs, "--self-imitation") {
		t.Fatalf("--self-imitation with --workers: exit %d, %q", code, errs)
	}
	// As a Slurm array: one task per step into the shared rounds folder,
	// and one more worker after it that writes the model.
	shared := filepath.Join(dir, "slurm-rounds")
	cl := append([]string{"cluster", "slurm", "--placer", placerBinary(t), "--dir", shared, "--time", "20m", "--"}, args("array.model", "--workers", "2")...)
	if code, _, errs := placer(t, cl...); code != 0 {
		t.Fatalf("cluster slurm -- regal train: exit %d: %s", code, errs)
	}
	for file, want := range map[string]string{
		"cells.sbatch": "--rounds " + shared + ` --cell "$SLURM_ARRAY_TASK_ID"`,
		"table.sbatch": "--rounds " + shared + " --cell=all -q",
	} {
		data, err := os.ReadFile(filepath.Join(shared, "slurm", file))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(data); !strings.Contains(s, want) || !strings.Contains(s, "regal train") || (file == "cells.sbatch" && !strings.Contains(s, "#SBATCH --array=0-3\n")) {
			t.Errorf("%s: %q, want %q", file, s, want)
		}
	}
	if code, _, errs := placer(t, append([]string{"cluster", "slurm", "--dir", shared, "--"}, args("x")...)...); code != 2 || !strings.Contains(errs, "regal train as cells runs in synchronous rounds") {
		t.Errorf("cluster slurm -- regal train without --workers: exit %d, %q", code, errs)
	}
}
