package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The tests in this file and its siblings (crash_test.go, malformed_test.go)
// run the real binary, built once per test run with go build.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	// Run as placer itself (asPlacer): the packages' init has run, so
	// internal/earlysig catches signals; the ready file says so to the
	// test that waits for it.
	if os.Getenv("PLACER_TEST_AS_PLACER") != "" {
		if p := os.Getenv("PLACER_TEST_SIGNALS_READY"); p != "" {
			if f, err := os.Create(p); err == nil {
				f.Close()
			}
		}
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// placerBinary builds cmd/placer into a temporary folder (once) and
// returns its path; the test is skipped under -short.
func placerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	binOnce.Do(func() {
		// PLACER_TEST_BINARY runs the tests on another build (to measure
		// an older one against them).
		if p := os.Getenv("PLACER_TEST_BINARY"); p != "" {
			binPath = p
			return
		}
		binDir, binErr = os.MkdirTemp("", "placer-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "placer")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err, string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + ": " + e.out }

// asPlacer is a command that runs this test binary as placer (see
// TestMain) with args, creating the file ready once signals are caught.
func asPlacer(ready string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PLACER_TEST_AS_PLACER=1", "PLACER_TEST_SIGNALS_READY="+ready)
	return cmd
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
	timedOut       bool
	signaled       bool
}

// runBinary runs the binary with args in dir (with env added), killing it
// after limit.
func runBinary(t *testing.T, dir string, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	return runProgram(t, dir, limit, env, placerBinary(t), args...)
}

// runBinaryAs runs program (a shell that runs the binary) as runBinary
// runs the binary.
func runBinaryAs(t *testing.T, dir string, limit time.Duration, program string, args ...string) result {
	t.Helper()
	return runProgram(t, dir, limit, nil, program, args...)
}

func runProgram(t *testing.T, dir string, limit time.Duration, env []string, program string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		r.timedOut = true
	}
	if ee, ok := err.(*exec.ExitError); ok && r.code == -1 {
		_ = ee
		r.signaled = true
	}
	return r
}
