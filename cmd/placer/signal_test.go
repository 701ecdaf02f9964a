package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSearchSignals sends SIGINT and SIGTERM to `placer search` at 0,
// 0.05, 0.1 ... 1 s and at 2 s after it starts catching signals (the
// first package it initializes, internal/earlysig, catches them: the test
// binary runs as placer (asPlacer) and says so in a file; before that, 1
// to 30 ms after exec, no Go
// code runs and a signal has its default effect): every run exits 130 with
// one line on stderr saying it was interrupted and where its result went,
// and the result file is there, a whole result with a decision, or the
// line says that nothing was found yet.
func TestSearchSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs placer")
	}
	dir := t.TempDir()
	var delays []time.Duration
	for ms := 0; ms <= 1000; ms += 50 {
		delays = append(delays, time.Duration(ms)*time.Millisecond)
	}
	delays = append(delays, 2*time.Second)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel() // the runs mostly wait
			signalRuns(t, dir, sig, delays)
		})
	}
}

func signalRuns(t *testing.T, dir string, sig syscall.Signal, delays []time.Duration) {
	{
		for i, d := range delays {
			out := filepath.Join(dir, fmt.Sprintf("r-%d-%d.json", sig, i))
			ready := out + ".ready"
			cmd := asPlacer(ready, "search", "--graph", example, "--gpus", "2", "--steps", "1000000", "--out", out, "-q")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Hang guards, not speeds: a loaded machine starts and stops a
			// process in seconds, these wait minutes.
			for start := time.Now(); ; time.Sleep(100 * time.Microsecond) {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				if time.Since(start) > 2*time.Minute {
					cmd.Process.Kill()
					t.Fatalf("%v at %v: not ready after 2 minutes", sig, d)
				}
			}
			time.Sleep(d)
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("%v at %v: still running 2 minutes later", sig, d)
			}
			what := fmt.Sprintf("%v at %v", sig, d)
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("%s: exit %d, want 130 (stderr %q)", what, code, stderr.String())
				continue
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			if len(lines) != 1 || !strings.HasPrefix(last, "placer: interrupted by "+name+"; ") || strings.Contains(last, "context canceled") {
				t.Errorf("%s: stderr %q, want one line saying it was interrupted", what, stderr.String())
			}
			if strings.Contains(last, "nothing found yet") {
				continue
			}
			if !strings.Contains(last, "written to "+out) {
				t.Errorf("%s: %q does not say where the result went", what, last)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			var r struct {
				StepTime float64 `json:"step_time_s"`
				Decision struct {
					Device []int `json:"device"`
				} `json:"decision"`
			}
			if err := json.Unmarshal(data, &r); err != nil || r.StepTime <= 0 || len(r.Decision.Device) == 0 {
				t.Errorf("%s: result file: %v, %s", what, err, data[:min(len(data), 200)])
			}
		}
	}
}
