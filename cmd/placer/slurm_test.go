package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
)

// slurmUp skips the test unless make test-slurm said a cluster is up
// (PLACER_TEST_SLURM=1, after make slurm-up), and then fails it if the
// cluster is not there.
func slurmUp(t *testing.T) {
	t.Helper()
	if os.Getenv("PLACER_TEST_SLURM") != "1" {
		t.Skip("SKIP: no Slurm cluster: make test-slurm starts one (make slurm-up: slurmctld and slurmd on this machine) and runs this test with PLACER_TEST_SLURM=1")
	}
	for _, c := range []string{"sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("PLACER_TEST_SLURM=1 but %s is not installed (make slurm-up installs it): %v", c, err)
		}
	}
	out, err := exec.Command("sinfo", "-h", "-N", "-o", "%t").CombinedOutput()
	if err != nil || !regexp.MustCompile(`^(idle|mix|alloc)`).Match(out) {
		t.Fatalf("PLACER_TEST_SLURM=1 but the node is not up (sinfo: %q, %v): make slurm-up", out, err)
	}
}

// slurmWait polls squeue until none of jobs is queued or running. Its
// limits are hang guards, minutes past what a loaded machine takes (the
// whole test took 122 s at load 20 on 2 cores, 2026-11-28), not speeds.
func slurmWait(t *testing.T, limit time.Duration, jobs ...string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		out, err := exec.Command("squeue", "-h", "-o", "%i %T", "-j", strings.Join(jobs, ",")).CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		if err != nil && strings.Contains(string(out), "Invalid job id") {
			return // finished and purged
		}
		if time.Now().After(deadline) {
			exec.Command("scancel", jobs...).Run()
			t.Fatalf("jobs %v still queued after %v: %s", jobs, limit, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// slurmJobs writes the grid's Slurm scripts into dir/slurm.
func slurmJobs(t *testing.T, evals int, dir string) {
	t.Helper()
	grid := cellGrid(evals, dir)
	report := grid[:len(grid)-3] // without --dir DIR -q
	args := append([]string{"cluster", "slurm", "--placer", placerBinary(t), "--dir", dir, "--parallel", "2", "--time", "10m", "--"}, report...)
	if code, _, errs := placer(t, args...); code != 0 {
		t.Fatalf("cluster slurm: exit %d: %s", code, errs)
	}
}

func sbatch(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("sbatch", "--parsable", script).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %s: %v: %s", script, err, out)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return id
}

// TestSlurm runs the cells of a small report as a Slurm job array on the
// single-node cluster of make slurm-up, with the follow-up job printing
// the table: the table equals one process's. Then it submits a larger
// grid, cancels the array (scancel) once a cell has finished and others
// are running, and resubmits it: every cell is finished exactly once,
// and the table again equals one process's.
func TestSlurm(t *testing.T) {
	slurmUp(t)
	t.Run("array and table", func(t *testing.T) {
		const evals = 3000
		want := singleTable(t, evals)
		dir := t.TempDir()
		os.Chmod(dir, 0o777)
		slurmJobs(t, evals, dir)
		out, err := exec.Command("sh", filepath.Join(dir, "slurm", "submit.sh")).CombinedOutput()
		if err != nil {
			t.Fatalf("submit.sh: %v: %s", err, out)
		}
		m := regexp.MustCompile(`cells: job (\d+); table: job (\d+)`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("submit.sh said %q", out)
		}
		start := time.Now()
		slurmWait(t, 10*time.Minute, m[1], m[2])
		t.Logf("array %s and table job %s done in %v", m[1], m[2], time.Since(start).Round(time.Millisecond))
		table, err := os.ReadFile(filepath.Join(dir, "slurm", "table.txt"))
		if err != nil || !bytes.Contains(table, []byte("REGAL table 1")) || bytes.Contains(table, []byte("not kept")) {
			t.Fatalf("the table job printed %q (%v)", table, err)
		}
		checkOnce(t, dir, true)
		if got := mergedTable(t, evals, dir); got != want {
			t.Fatalf("the Slurm array's table differs from one process's:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("cancelled and resubmitted", func(t *testing.T) {
		const evals = 40000
		dir := t.TempDir()
		os.Chmod(dir, 0o777)
		slurmJobs(t, evals, dir)
		cells := cellsOf(t, evals)
		job := sbatch(t, filepath.Join(dir, "slurm", "cells.sbatch"))
		// Cancel once a cell is kept and another has just been claimed
		// (claimed now, not at the last look): a cell caught near its end
		// could finish before scancel takes effect, and the cancel would
		// then hit no running cell.
		deadline := time.Now().Add(10 * time.Minute)
		seen := map[string]bool{}
		for {
			kept, running, fresh := 0, 0, 0
			for _, c := range cells {
				f := filepath.Join(dir, c)
				if _, err := os.Stat(f); err == nil {
					kept++
				} else if h, _ := claim.History(f); len(h) > 0 {
					running++
					if !seen[c] {
						fresh++
					}
					seen[c] = true
				}
			}
			if kept >= 1 && fresh >= 1 {
				t.Logf("cancelling with %d cells kept, %d running (%d just claimed)", kept, running, fresh)
				break
			}
			if kept == len(cells) || time.Now().After(deadline) {
				t.Fatalf("no moment with a cell kept and another running (kept %d): cells too short", kept)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v: %s", err, out)
		}
		slurmWait(t, 5*time.Minute, job)
		missing := 0
		for _, c := range cells {
			if _, err := os.Stat(filepath.Join(dir, c)); err != nil {
				missing++
			}
		}
		if missing == 0 {
			t.Fatal("every cell finished before the cancel took effect")
		}
		t.Logf("after scancel: %d of %d cells not kept", missing, len(cells))
		out, err := exec.Command("sh", filepath.Join(dir, "slurm", "submit.sh")).CombinedOutput()
		if err != nil {
			t.Fatalf("submit.sh: %v: %s", err, out)
		}
		m := regexp.MustCompile(`cells: job (\d+); table: job (\d+)`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("submit.sh said %q", out)
		}
		slurmWait(t, 10*time.Minute, m[1], m[2])
		checkOnce(t, dir, true)
		stopped := 0
		for _, c := range cells {
			h, _ := claim.History(filepath.Join(dir, c))
			for _, cl := range h {
				if cl.State != claim.Done {
					stopped++
				}
			}
		}
		if stopped == 0 {
			t.Error("no claim shows a cancelled task: the cancel hit no running cell")
		}
		t.Logf("claims of cancelled tasks: %d", stopped)
		if got, want := mergedTable(t, evals, dir), singleTable(t, evals); got != want {
			t.Fatalf("the resubmitted array's table differs from one process's:\n%s\nwant\n%s", got, want)
		}
	})
}

// cellsOf are the grid's cell files, relative to its dir.
func cellsOf(t *testing.T, evals int) []string {
	t.Helper()
	code, out, errs := placer(t, cellGrid(evals, "", "--list-cells")...)
	if code != 0 {
		t.Fatalf("--list-cells: exit %d: %s", code, errs)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		m := regexp.MustCompile(`"file":"([^"]+)"`).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("listed %q", l)
		}
		files = append(files, m[1])
	}
	if len(files) != 6 {
		t.Fatalf("%d cells, want 6", len(files))
	}
	return files
}
