package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// placer runs the CLI in-process and returns its exit code and output.
func placer(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const example = "../../examples/mlp.json"

func TestEvalExample(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.json")
	code, out, errs := placer(t, "eval", "--graph", example, "--gpus", "2", "--placement", "round-robin", "--fusion", "default", "--trace", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"step time", "lower bound", "efficiency", "peak memory", "bytes moved", "out of memory"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil || len(tr.TraceEvents) == 0 {
		t.Fatalf("trace is not trace-event JSON: %v", err)
	}
	kinds := map[string]int{}
	for _, e := range tr.TraceEvents {
		kinds[e["ph"].(string)]++
	}
	if kinds["X"] == 0 || kinds["C"] == 0 || kinds["M"] == 0 {
		t.Fatalf("trace lacks spans, counters or names: %v", kinds)
	}
}

func TestEvalJSONMatchesTable(t *testing.T) {
	code, out, errs := placer(t, "eval", "--graph", example, "--gpus", "2", "--placement", "round-robin", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		StepTime float64 `json:"step_time_s"`
		Devices  []struct {
			Peak int64 `json:"peak_memory"`
		} `json:"devices_detail"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.StepTime <= 0 || len(r.Devices) != 2 || r.Devices[0].Peak <= 0 {
		t.Fatalf("json = %s", out)
	}
}

func TestExitCodesAndOneLineErrors(t *testing.T) {
	cyc := writeFile(t, "cyc.json", `{"format":"placer-graph","version":1,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":1},{"producer":"b","consumers":["a"],"bytes":1}]}`)
	trunc := writeFile(t, "trunc.json", `{"format":"placer-graph","version":1,"ops":[{"name":"a"}`)
	neg := writeFile(t, "neg.json", `{"format":"placer-graph","version":1,"ops":[{"name":"a","bytes_read":-4}],"tensors":[]}`)
	badDec := writeFile(t, "dec.json", `{"format":"placer-decision","version":1,"graph":"mlp","ops":28,"devices":2,"device":[0,1]}`)
	farDec := writeFile(t, "far.json", `{"format":"placer-decision","version":1,"graph":"mlp","ops":28,"devices":2,"device":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,9]}`)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ok", []string{"version"}, 0, ""},
		{"no graph", []string{"eval"}, 2, "give --graph FILE or --workload NAME"},
		{"unknown flag", []string{"eval", "--bogus"}, 2, "unknown flag"},
		{"unknown command", []string{"evaluate"}, 2, "unknown command"},
		{"bad int", []string{"eval", "--graph", example, "--gpus", "two"}, 2, "invalid argument"},
		{"missing file", []string{"eval", "--graph", "/nonexistent/g.json"}, 1, "no such file"},
		{"cycle", []string{"eval", "--graph", cyc}, 1, "cycle: a -> b -> a"},
		{"truncated", []string{"eval", "--graph", trunc}, 1, "truncated"},
		{"negative", []string{"eval", "--graph", neg}, 1, `op "a": bytes_read: is negative`},
		{"unknown hardware", []string{"eval", "--graph", example, "--hardware", "tpu9"}, 2, `--hardware "tpu9": not a preset`},
		{"unknown topology", []string{"eval", "--graph", example, "--gpus", "2", "--topology", "ring"}, 2, `--topology "ring": unknown topology`},
		{"decision of wrong length", []string{"eval", "--graph", example, "--gpus", "2", "--placement", badDec}, 1, "has 2 entries"},
		{"device that does not exist", []string{"eval", "--graph", example, "--gpus", "2", "--placement", farDec}, 1, "device 9 does not exist"},
		{"decision for other cluster", []string{"eval", "--graph", example, "--gpus", "4", "--placement", badDec}, 1, "made for 2 devices"},
		{"unknown strategy", []string{"eval", "--graph", example, "--placement", "magic"}, 2, `"magic" is neither a known strategy nor a file`},
		{"measure without CUDA", []string{"eval", "--graph", example, "--measure"}, 1, "built without CUDA"},
		{"hw bench without CUDA", []string{"hw", "bench"}, 1, "without CUDA"},
		{"unknown format", []string{"eval", "--graph", example, "--format", "nosuch"}, 2, `--format "nosuch": unknown graph format`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := placer(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errs)
			}
			if tc.want == "" {
				return
			}
			if !strings.Contains(errs, tc.want) {
				t.Fatalf("stderr %q lacks %q", errs, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(errs), "\n"); n != 0 {
				t.Fatalf("stderr has %d lines: %q", n+1, errs)
			}
			if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") {
				t.Fatalf("stack trace: %q", errs)
			}
		})
	}
}
