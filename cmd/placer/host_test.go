package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostFlagsErrors: search's and baselines' --host and --dispatch
// (eval's meaning) refuse bad values in one line with exit 2 (a
// transformer planned at cluster scale, which has no host model, as it
// refuses every flag it does not take: exit 2, a command-line mistake),
// never a panic.
func TestHostFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--dispatch", "-1us"}, "--dispatch -1µs: must be 0 or more", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--host", "--dispatch", "-2ms"}, "--dispatch -2ms: must be 0 or more", 2},
		{[]string{"search", "--gpus", "2", "--dispatch", "20us"}, "give --graph FILE or --workload NAME", 2},
		{[]string{"baselines", "--gpus", "2", "--host"}, "give --graph FILE or --workload NAME", 2},
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--host", "--measure"}, "--measure runs the real one", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--dispatch", "5us", "--measure"}, "--measure runs the real one", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--dispatch", "fast"}, "--dispatch", 2},
		{[]string{"search", "--workload", "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8", "--gpus", "8", "--host"}, "--host does not apply", 2},
	} {
		code, _, errs := placer(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line with %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
}

// TestEvalHostByDefault: eval without --host models the host of a graph
// that records an eager PyTorch run (its execution object) and says so,
// in text and JSON; --host=false is the GPU alone, and a graph without
// the record (the MLP example) keeps the GPU alone by default.
func TestEvalHostByDefault(t *testing.T) {
	data, err := os.ReadFile("../../examples/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	eager := filepath.Join(t.TempDir(), "mlp-eager.json")
	data = []byte(strings.Replace(string(data), "{", `{"execution": {"version": 1, "device": "cuda"}, `, 1))
	if err := os.WriteFile(eager, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		wantOn bool // "host model on: ... by default"
	}{
		{[]string{"eval", "--graph", eager, "--hardware", "h100"}, true},
		{[]string{"eval", "--graph", eager, "--hardware", "h100", "--json"}, true},
		{[]string{"baselines", "--graph", eager, "--hardware", "h100", "--gpus", "1", "--methods", "single"}, true},
		{[]string{"eval", "--graph", eager, "--hardware", "h100", "--host=false"}, false},
		{[]string{"eval", "--graph", eager, "--hardware", "h100", "--host=false", "--json"}, false},
		{[]string{"baselines", "--graph", eager, "--hardware", "h100", "--gpus", "1", "--methods", "single", "--host=false"}, false},
		{[]string{"eval", "--graph", "../../examples/mlp.json", "--hardware", "h100"}, false},
	} {
		code, out, errs := placer(t, tc.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", strings.Join(tc.args, " "), code, errs)
		}
		flat := strings.Join(strings.Fields(out), " ") // the text's lines are wrapped
		on := strings.Contains(flat, "host model on: ") || strings.Contains(flat, `"host": "host issue`)
		if on != tc.wantOn || strings.Contains(flat, "eager PyTorch run") != tc.wantOn {
			t.Errorf("%s: host model said %v, want %v (and why); output:\n%s", strings.Join(tc.args, " "), on, tc.wantOn, out)
		}
	}
}
