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
	"syscall"
	"testing"
	"time"

	"github.com/placer/placer/methods/gdp"
)

// TestPretrainSurvivesSIGKILL kills pretraining with SIGKILL at random
// moments (a checkpoint every step, so that many kills land inside a
// checkpoint's write; methods/gdp's checkpoint test loads what a kill
// between its two files leaves), and resumes every time from what is on disk: the checkpoint always
// loads, its step never goes back, and the last run finishes with no
// temporary file left.
func TestPretrainSurvivesSIGKILL(t *testing.T) {
	bin := placerBinary(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "g", "mlp.json"), data, 0o644)
	model := filepath.Join(dir, "m.policy")
	args := func(steps int) []string {
		a := []string{"pretrain", "--graphs", "g", "--gpus", "2", "--policy", "small", "--samples", "4", "--warmup", "2",
			"--checkpoint-every", "1", "--steps", fmt.Sprint(steps), "--out", model, "-q", "--seed", "3"}
		if _, err := os.Stat(gdp.CheckpointState(model)); err == nil {
			a = append(a, "--resume", model)
		}
		return a
	}
	// The first run is killed once its first checkpoint is on disk, so
	// that every run after it resumes however slowly a loaded machine
	// starts them (with kills at random from the first run on, a slow
	// start left most runs killed before any checkpoint).
	first := exec.Command(bin, args(100000)...)
	first.Dir = dir
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for wait := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(gdp.CheckpointState(model)); err == nil {
			break
		}
		if time.Since(wait) > 5*time.Minute {
			first.Process.Kill()
			first.Wait()
			t.Fatal("no checkpoint after 5 minutes of pretraining")
		}
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	rng := rand.New(rand.NewPCG(1, 18))
	last, kills, resumed := -1, 0, 0
	deadline := time.Now().Add(35 * time.Second)
	for i := 0; i < 40 && time.Now().Before(deadline); i++ {
		a := args(100000)
		if len(a) > 0 && a[len(a)-2] == "--resume" {
			resumed++
		}
		cmd := exec.Command(bin, a...)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err == nil || cmd.ProcessState.ExitCode() != -1 {
			t.Fatalf("run %d ended before the kill: %v %s", i, err, errb.String())
		}
		kills++
		if _, err := os.Stat(gdp.CheckpointState(model)); err != nil {
			continue // killed before the first checkpoint
		}
		step, err := pretrainCheckpointStep(model)
		if err != nil {
			t.Fatalf("kill %d: checkpoint does not load: %v", i, err)
		}
		if step < last {
			t.Fatalf("kill %d: checkpoint went back from step %d to %d", i, last, step)
		}
		last = step
	}
	if resumed != kills || kills == 0 {
		t.Fatalf("%d of %d runs resumed, want every one (a checkpoint was on disk before the first)", resumed, kills)
	}
	// Finish: two more steps from the last checkpoint.
	cmd := exec.Command(bin, append(args(last+2), "--json")...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("final resume: %v", err)
	}
	var rep struct {
		Steps int `json:"steps"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.Steps != last+2 {
		t.Fatalf("final resume: %v, steps %d, want %d", err, rep.Steps, last+2)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
	t.Logf("%d kills, %d resumed, last checkpoint step %d", kills, resumed, last)
}
