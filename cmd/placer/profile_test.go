package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/placer/placer/evaluate/profile"
	profilejob "github.com/placer/placer/jobs/profile"
)

// lockedBuffer is a bytes.Buffer written by a command and read by the test
// while the command runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestProfileOneInterrupt: `timeout -s INT N placer profile ...` sends
// SIGINT to placer and then to placer's whole process group (coreutils
// 9.1, src/timeout.c, cleanup()): one interrupt, delivered twice. The
// real binary, in a process group of its own as timeout's child is, gets
// the two 20 ms apart (a loaded machine reads them so; on 2 cores Go saw
// both in 3 of 6 runs of timeout): it stops once, exits 130 and keeps
// what was measured in keep.json.partial, keep.json (a finished profile)
// untouched. Before, the second delivery was read as a second interrupt:
// "second SIGINT: stopping without writing anything more". Runs the real
// measurements (torch, one CPU process, a tiny Llama), about 10 s;
// skipped without the torch virtualenv.
func TestProfileOneInterrupt(t *testing.T) {
	bin := placerBinary(t)
	py := profilejob.TorchPython()
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("no torch at %s (make venv): %v", py, err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "keep.json")
	const old = "a finished profile"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "profile", "--workload", "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=64,vocab=256,batch=4",
		"--device", "cpu", "--procs", "1", "--repeats", "2", "--mbs", "1,2", "--cp", "1", "--out", out)
	cmd.Env = append(os.Environ(), "TORCH_PY="+py)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Once the embedding is measured (the first shape timed), the signal.
	// A hang guard, not a speed (torch's import on a loaded machine takes
	// tens of seconds).
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(stderr.String(), "profile: embedding 1/") {
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("no embedding timed in 3 minutes: %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	time.Sleep(20 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("still running 30 s after the interrupt: %q", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130 (stderr %q)", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if strings.Contains(stderr.String(), "second SIGINT") || !strings.HasPrefix(last, "placer: interrupted by SIGINT; what was measured written to "+out+".partial") {
		t.Errorf("stderr ends %q, want one interrupt that kept what was measured", last)
	}
	if data, _ := os.ReadFile(out); string(data) != old {
		t.Errorf("keep.json replaced: %.80q", data)
	}
	pr, err := profile.ReadFile(out + ".partial")
	if err != nil || pr.Complete || len(pr.Embedding) == 0 {
		t.Fatalf("keep.json.partial: %v, %+v", err, pr)
	}
	if !strings.HasPrefix(stdout.String(), out+".partial: ") {
		t.Errorf("stdout %q does not name the file written", stdout.String())
	}
}

// TestEvalIncompleteProfile: eval --profile says, in a line and its
// --json twin, what an incomplete profile lacks and that the figures
// needing it fall back to the model; a CPU profile without the
// optimizer's step (whose pod's model takes its memory's bandwidth from
// it) is refused in one line, where eval printed a 4 us step and its
// --json failed: "json: unsupported value: NaN".
func TestEvalIncompleteProfile(t *testing.T) {
	dir := t.TempDir()
	const w = "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=64,vocab=256,batch=4"
	layer := func(tp int, sp bool, mbs int) profile.Layer {
		return profile.Layer{TP: tp, SP: sp, MBS: mbs, Seq: 64, Recompute: "none", Forward: 1e-3 * float64(mbs) / float64(tp), Backward: 2e-3 * float64(mbs) / float64(tp)}
	}
	pr := profile.Profile{Format: profile.Format, Version: profile.Version, Kind: profile.KindLayers, Model: w, DType: "fp32",
		Device:    profile.Device{Kind: "cpu", Name: "a CPU", Count: 2, Memory: 8 << 30, Threads: 1, Cores: 2},
		Software:  profile.Software{Torch: "2.14.1", Backend: "gloo", Framework: "pytorch"},
		Layers:    []profile.Layer{layer(1, false, 1), layer(2, false, 1)},
		Embedding: []profile.Layer{{TP: 1, MBS: 1, Seq: 64, Forward: 1e-4, Backward: 2e-4}},
		Loss:      []profile.Layer{{TP: 1, MBS: 1, Seq: 64, Forward: 3e-4, Backward: 4e-4}},
		Optimizer: &profile.Optimizer{Name: "adamw", Params: 36992, Seconds: 3e-4},
		Host:      &profile.Host{Issue: 1e-5, IssueBwd: 2e-5},
		Asked:     &profile.Asked{Layers: 18, Embedding: 3, Loss: 3, Collectives: 24},
	}
	write := func(name string, p profile.Profile) string {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cut := write("cut.json", pr)
	r := runBinary(t, dir, time.Minute, nil, "eval", "--workload", w, "--cluster", "cpu:2", "--strategy", "tp=2", "--profile", cut)
	want := "2 of 3 embedding shapes, 2 of 3 loss shapes, the collectives, 16 of 18 layer shapes"
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(r.stdout, "│", " ")), " "), "profile incomplete, not measured: "+want+"; a figure that needs them is modelled (the roofline)") {
		t.Errorf("eval: exit %d, %s%s: no line saying the profile is incomplete (%q)", r.code, r.stdout, r.stderr, want)
	}
	r = runBinary(t, dir, time.Minute, nil, "eval", "--workload", w, "--cluster", "cpu:2", "--strategy", "tp=2", "--profile", cut, "--json")
	var got struct {
		Missing []string `json:"profile_missing"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || strings.Join(got.Missing, ", ") != want {
		t.Errorf("eval --json: %v, profile_missing %q, want %q (%s)", err, got.Missing, want, r.stderr)
	}
	noOpt := pr
	noOpt.Optimizer = nil
	path := write("no-optimizer.json", noOpt)
	r = runBinary(t, dir, time.Minute, nil, "eval", "--workload", w, "--cluster", "cpu:2", "--strategy", "tp=2", "--profile", path, "--json")
	wantErr := "placer: profile " + path + ": incomplete, no optimizer step measured: the cpu pod's model takes its memory's bandwidth from it (rerun placer profile)\n"
	if r.code != 1 || r.stderr != wantErr || r.stdout != "" {
		t.Errorf("eval of a CPU profile without its optimizer: exit %d, %q %q; want exit 1, %q", r.code, r.stdout, r.stderr, wantErr)
	}
}

// A --framework placer does not know, and what megatron's layer does
// not build (FP8, expert degrees above 1), are refused in one line,
// exit 2, before anything runs (no python started: --python names none).
func TestProfileFrameworkFlag(t *testing.T) {
	const w = "llama:layers=2,hidden=64,heads=2,ffn=128,seq=64,vocab=256,batch=4"
	for _, c := range []struct {
		fw   string
		more []string
		want string
	}{
		{"bogus", nil, `placer: --framework "bogus": want hf, torchtitan or megatron`},
		{"megatron", []string{"--fp8", "current"}, "placer: --framework megatron with --fp8: not profiled"},
		{"megatron", []string{"--workload", w + ",experts=4,topk=2,expert_ffn=64", "--ep", "2"}, "placer: --framework megatron --ep 2: Megatron-Core's MoE layer is timed at expert degree 1 only"},
	} {
		dir := t.TempDir()
		args := append([]string{"profile", "--workload", w, "--framework", c.fw, "--python", filepath.Join(dir, "none"), "--out", filepath.Join(dir, "x.json")}, c.more...)
		r := runBinary(t, dir, time.Minute, nil, args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--framework %s: exit %d, stderr %q; want 2 and one line %q", c.fw, r.code, r.stderr, c.want)
		}
	}
}
