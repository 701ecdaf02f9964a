package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: no data in x (make data)\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: fine\n"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`
	var w strings.Builder
	failed, slow, err := summarize(strings.NewReader(in), &w)
	if err != nil || failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	if len(slow) != 1 || slow[0] != (timed{"p", "TestB", 0}) {
		t.Errorf("timed tests %+v, want TestB's", slow)
	}
	want := "--- SKIP: TestA (p): a_test.go:9: no data in x (make data)\nok  \tp\t0.1s\n"
	if w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}

	in = `{"Action":"output","Package":"q","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"q","Test":"TestC","Output":"    c_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"q","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"q","Test":"TestC"}
{"Action":"output","Package":"q","Output":"FAIL\n"}
{"Action":"output","Package":"q","Output":"FAIL\tq\t0.1s\n"}
{"Action":"fail","Package":"q"}
`
	w.Reset()
	failed, _, err = summarize(strings.NewReader(in), &w)
	if err != nil || !failed {
		t.Fatalf("a failure: failed %v, err %v", failed, err)
	}
	if s := w.String(); !strings.Contains(s, "c_test.go:5: got 1, want 2") || !strings.Contains(s, "FAIL\tq\t0.1s") {
		t.Errorf("a failure's output is missing: %q", s)
	}
}

// TestUnfinished: a package that fails with a test still running (go
// test's -timeout panic) prints that test's output.
func TestUnfinished(t *testing.T) {
	in := `{"Action":"run","Package":"r","Test":"TestLong"}
{"Action":"output","Package":"r","Test":"TestLong","Output":"=== RUN   TestLong\n"}
{"Action":"output","Package":"r","Test":"TestLong","Output":"panic: test timed out after 9m0s\n"}
{"Action":"output","Package":"r","Output":"FAIL\tr\t540.1s\n"}
{"Action":"fail","Package":"r","Elapsed":540.1}
`
	var w strings.Builder
	failed, _, err := summarize(strings.NewReader(in), &w)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	want := "FAIL\tr\t540.1s\n--- UNFINISHED: TestLong (r)\npanic: test timed out after 9m0s\n"
	if w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}
}

func TestSlowestAndCPU(t *testing.T) {
	in := `{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}
{"Action":"pass","Package":"p","Test":"TestA/sub","Elapsed":1.4}
{"Action":"fail","Package":"q","Test":"TestB","Elapsed":7}
{"Action":"pass","Package":"q","Test":"TestC","Elapsed":0.2}
{"Action":"pass","Package":"p","Elapsed":9}
`
	_, slow, err := summarize(strings.NewReader(in), new(strings.Builder))
	if err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	printSlowest(&w, slow, 2)
	want := "testsummary: the 2 slowest tests (wall s; packages run side by side, so a shared core counts in each)\n" +
		"     7.0  TestB q\n     1.5  TestA p\n"
	if w.String() != want {
		t.Errorf("slowest:\n%s\nwant\n%s", w.String(), want)
	}

	path := filepath.Join(t.TempDir(), "cpu.txt")
	if err := os.WriteFile(path, []byte("a 1.00 0.50 3.00\nb 10.00 2.00 4.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	if err := printCPU(&w, path, 1); err != nil {
		t.Fatal(err)
	}
	want = "testsummary: the 1 packages whose tests took the most CPU (user+sys s of the test binary and what it waited for; wall s)\n" +
		"    12.0      4.0  b\n    13.5           every package's tests (2 packages; user 11.0, sys 2.5)\n"
	if w.String() != want {
		t.Errorf("cpu:\n%s\nwant\n%s", w.String(), want)
	}
	if err := os.WriteFile(path, []byte("a 1.00 x 3.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := printCPU(&w, path, 1); err == nil || !strings.Contains(err.Error(), "cpu.txt:1") {
		t.Errorf("a bad line: error %v, want one naming cpu.txt:1", err)
	}
	w.Reset()
	if err := printCPU(&w, path+".absent", 1); err != nil || !strings.Contains(w.String(), "no CPU times") {
		t.Errorf("no file: %q, %v", w.String(), err)
	}
}

// TestPhaseTable runs phase.sh as make test does: two phases (one
// failing), then the table with and without the start file. The sum of
// the walls and the end-to-end wall are separate lines, so that phases
// run side by side are not read as their sum.
func TestPhaseTable(t *testing.T) {
	d := t.TempDir()
	file, start := filepath.Join(d, "phases.txt"), filepath.Join(d, "start")
	run := func(args ...string) (string, error) {
		out, err := exec.Command("bash", append([]string{"phase.sh"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if err := os.WriteFile(start, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(file, "first", "true"); err != nil || !strings.Contains(out, "phase first: wall") {
		t.Fatalf("first phase: %v %q", err, out)
	}
	out, err := run(file, "second", "false")
	if err == nil || !strings.Contains(out, "FAILED 1") || !strings.Contains(out, "make test phase") {
		t.Fatalf("failed phase: err %v, output %q (want its status and the table so far)", err, out)
	}
	out, err = run("--table", file, start)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "first") || !strings.HasPrefix(lines[3], "total") ||
		!strings.HasPrefix(lines[4], "make test, end to end") {
		t.Fatalf("table:\n%s\nwant header, 2 phases, total, end to end", out)
	}
	// The start file says 1 (1970): end to end is decades of seconds.
	if f := strings.Fields(strings.TrimPrefix(lines[4], "make test, end to end")); len(f) == 0 || len(f[0]) < 10 {
		t.Errorf("end-to-end wall %q, want now - 1", lines[4])
	}
	if out, _ := run("--table", file); strings.Contains(out, "end to end") {
		t.Errorf("table without a start file prints the end-to-end line:\n%s", out)
	}
}
