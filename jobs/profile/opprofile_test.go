package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/torchenv/torchtest"
)

// torchPython is the torch virtualenv's python, or a skip (a failure
// under make test).
func torchPython(t *testing.T) string {
	t.Helper()
	return torchtest.Python(t)
}

// A hub's id: a Hugging Face config.json (a 2-layer Llama, 64 wide, 32
// tokens) built with random weights and profiled, and a torchvision name
// it does not have refused in one line, exit 2. About 8 s of CPU.
func TestProfileModelHub(t *testing.T) {
	py := torchPython(t)
	if testing.Short() {
		t.Skip("runs torch (-short)")
	}
	dir := t.TempDir()
	cfg := `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
 "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256,
 "max_position_embeddings": 128, "tie_word_embeddings": false}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "hf.profile.json")
	o := Options{Out: out, Python: py, Device: "cpu", Threads: 1, ModelOptions: ModelOptions{
		Model: "hf:" + filepath.Join(dir, "config.json"), InputShapes: []string{"32:int64"}, Batch: 2, Steps: 1, Warmup: -1}}
	var progress bytes.Buffer
	pr, err := Run(context.Background(), o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if !pr.Complete || pr.Ops.Batch != 2 || pr.Graph().NumOps() < 100 {
		t.Errorf("hf profile: complete %v, batch %d, %d ops", pr.Complete, pr.Ops.Batch, pr.Graph().NumOps())
	}
	o.Model, o.InputShapes = "torchvision:nope", nil
	_, err = Run(context.Background(), o, &progress)
	var u fail.Usage
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "has no model 'nope'") || strings.Contains(err.Error(), "\n") {
		t.Errorf("torchvision:nope: %v, want one usage line", err)
	}
	if strings.Contains(progress.String(), "no model 'nope'") {
		t.Errorf("the error is in the progress too (two lines):\n%s", progress.String())
	}
}

// opsProfile is evaluate/profile's three-op ops profile (an H100's, torch
// 2.11): mm, relu and add.
var opsProfile = filepath.Join("..", "..", "evaluate", "profile", "testdata", "ops.json")

// The measurements' lines gathered: each op's time the median of the
// steps that matched it, its dispatch time the median of those that
// had one; an op no step matched has none. mm (op 0): 1, 3 and 2 ms:
// 2 ms, dispatch 10 and 30 us: 20 us; relu (op 1): matched in one
// step, 0.5 ms, no dispatch (a CPU's -1); add (op 2): never.
func TestStepReader(t *testing.T) {
	data, err := os.ReadFile(opsProfile)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := profile.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var graphOnly bytes.Buffer
	bare, err := graphWithout(pr.Graph())
	if err != nil {
		t.Fatal(err)
	}
	graphOnly.Write(bare)
	var r stepReader
	lines := []string{
		`{"kind":"meta","dtype":"fp32","device":{"kind":"cpu","name":"x","count":1,"memory_bytes":1},"software":{"torch":"2.14","framework":"pytorch"}}`,
		`{"kind":"graph","batch":4,"graph":` + graphOnly.String() + `,"meta":{"format":"placer-torch-meta"}}`,
		`{"kind":"step","ops":[[0,0.001,0.00001],[1,0.0005,-1]]}`,
		`{"kind":"step","ops":[[0,0.003,0.00003]]}`,
		`{"kind":"step","ops":[[0,0.002,-1]]}`,
	}
	for _, l := range lines {
		if err := r.add([]byte(l)); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	got, err := r.profile("three")
	if err != nil {
		t.Fatal(err)
	}
	if got.Ops.Steps != 3 || got.Ops.Batch != 4 || string(got.Ops.Meta) != `{"format":"placer-torch-meta"}` {
		t.Errorf("steps %d, batch %d, meta %s", got.Ops.Steps, got.Ops.Batch, got.Ops.Meta)
	}
	data, _ = json.Marshal(got)
	back, err := profile.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		has      bool
		time     float64
		hasD     bool
		dispatch float64
	}{{true, 0.002, true, 0.00002}, {true, 0.0005, false, 0}, {false, 0, false, 0}} {
		op := back.Graph().Op(i)
		if op.HasTime != want.has || !closeTo(op.Time, want.time) || op.HasDispatch != want.hasD || !closeTo(op.Dispatch, want.dispatch) {
			t.Errorf("op %s: time %v %v, dispatch %v %v; want %+v", op.Name, op.HasTime, op.Time, op.HasDispatch, op.Dispatch, want)
		}
	}
	for _, bad := range []string{`{"kind":"step","ops":[[0,1,1]]}`, `{"kind":"nope"}`, `{`} {
		var r stepReader
		if err := r.add([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// graphWithout is g's JSON without its ops' times and dispatch times:
// what the exporter sends before any step.
func graphWithout(g *graph.Graph) ([]byte, error) {
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		return nil, err
	}
	for _, op := range raw["ops"].([]any) {
		delete(op.(map[string]any), "time_s")
		delete(op.(map[string]any), "dispatch_s")
	}
	return json.Marshal(raw)
}

// The measurements' stderr: Kineto's own lines dropped, placer's
// progress passed on, an "error: " line held back for placer to print.
func TestQuietWriter(t *testing.T) {
	var out bytes.Buffer
	q := newQuietWriter(&out)
	io.WriteString(q, "profile: exporting mlp\nUSDT:2026-11-27 00:06:11 29464:29464 SyncActivityProfilerHandler.cpp:39] profiler_start\n")
	io.WriteString(q, "ERROR:2026-11-27 00:06:11 29464:29464 DeviceProperties.cpp:56] gpuGetDeviceCount failed\nprofile: step 1/")
	io.WriteString(q, "5\nerror: --model x: no such model\n")
	q.flush()
	if want := "profile: exporting mlp\nprofile: step 1/5\n"; out.String() != want {
		t.Errorf("passed on %q, want %q", out.String(), want)
	}
	if q.err != "--model x: no such model" || q.last != "step 1/5" {
		t.Errorf("err %q, last %q", q.err, q.last)
	}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }
