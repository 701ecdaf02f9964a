package graph

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execGraph is a three-op chain (x -> mm -> adam) with execution settings
// whose update starts at op 2.
func execGraph(t *testing.T, e *Execution) *Graph {
	t.Helper()
	b := NewBuilder("exec")
	x := b.AddOp(Op{Name: "x", Type: "Input", Class: ClassDataMovement})
	mm := b.AddOp(Op{Name: "mm", Type: "mm", Class: ClassMatMul, FLOPs: 8, DType: BF16})
	u := b.AddOp(Op{Name: "opt/_fused_adam_", Type: "_fused_adam_", Class: ClassElementwise, Backward: true})
	b.AddTensor(x, 4, mm)
	b.AddTensor(mm, 4, u)
	b.SetExecution(e)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestExecutionRoundTrip: the execution object writes and reads back
// field for field, by both decoders; Hash leaves it out.
func TestExecutionRoundTrip(t *testing.T) {
	e := &Execution{Device: "cuda", Optimizer: "adam", OptimizerImpl: "fused", OptimizerFrom: 2, Autocast: "bf16",
		TF32MatMul: false, TF32CuDNN: true, CuDNNRNN: true, CUDAGraphs: true, Compile: "reduce-overhead", GradScaler: true}
	g := execGraph(t, e)
	var buf bytes.Buffer
	if err := Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	want := `"execution": {
  "version": 1,
  "device": "cuda",
  "optimizer": "adam",
  "optimizer_impl": "fused",
  "optimizer_from": "opt/_fused_adam_",
  "autocast": "bf16",
  "tf32_cudnn": true,
  "cudnn_rnn": true,
  "cuda_graphs": true,
  "compile": "reduce-overhead",
  "grad_scaler": true
 },`
	if !strings.Contains(buf.String(), want) {
		t.Fatalf("written:\n%s\nwant it to hold\n%s", buf.String(), want)
	}
	if !sameOutcome(t, buf.Bytes()) {
		t.Fatal("the fast path gave up on a file placer wrote")
	}
	g2, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := g2.Execution(); got == nil || *got != *e {
		t.Fatalf("read back %+v, want %+v", got, e)
	}
	if dt, on := g2.Execution().AutocastDType(); dt != BF16 || !on {
		t.Fatalf("AutocastDType = %v, %v", dt, on)
	}
	if Hash(g2) != Hash(execGraph(t, nil)) {
		t.Fatal("Hash depends on the execution settings")
	}
	// Without one: no "execution" key, and nil.
	buf.Reset()
	if err := Write(&buf, execGraph(t, nil)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "execution") {
		t.Fatalf("a graph without settings wrote them:\n%s", buf.String())
	}
	if g3, err := Decode(buf.Bytes()); err != nil || g3.Execution() != nil {
		t.Fatalf("%v, %+v", err, g3.Execution())
	}
	// WithExecution sets and clears them.
	g4, err := WithExecution(g2, nil)
	if err != nil || g4.Execution() != nil || g2.Execution() == nil {
		t.Fatalf("WithExecution(nil): %v", err)
	}
	if _, err := WithExecution(g2, &Execution{Compile: "fast"}); err == nil {
		t.Fatal("WithExecution took compile mode \"fast\"")
	}
}

// TestExecutionByteForByte: the committed graphs that have no execution
// object read and write back byte for byte as before.
func TestExecutionByteForByte(t *testing.T) {
	for _, p := range []string{"testdata/profile/cnn.json", "testdata/profile/cnn-cpu.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, g); err != nil {
			t.Fatal(err)
		}
		var ref bytes.Buffer
		g0, _ := decodeRef(data)
		write(&ref, g0, true)
		if g.Execution() != nil || buf.String() != ref.String() || strings.Contains(buf.String(), "execution") {
			t.Errorf("%s: the execution object appeared", filepath.Base(p))
		}
	}
}

func TestExecutionErrors(t *testing.T) {
	const head = `{"format":"placer-graph","version":1,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4}],"execution":`
	tests := []struct{ name, exec, want string }{
		{"version", `{"version":2}`, `execution.version: 2 is not supported`},
		{"no version", `{"device":"cuda"}`, `execution.version: 0 is not supported`},
		{"device", `{"version":1,"device":"tpu"}`, `execution.device: "tpu": want one of [cuda cpu]`},
		{"impl", `{"version":1,"optimizer_impl":"fast"}`, `execution.optimizer_impl: "fast"`},
		{"autocast", `{"version":1,"autocast":"f8"}`, `execution.autocast: "f8"`},
		{"compile", `{"version":1,"compile":"max"}`, `execution.compile: "max"`},
		{"from missing", `{"version":1,"optimizer_from":"zz"}`, `execution.optimizer_from: op "zz" does not exist`},
		{"from first", `{"version":1,"optimizer_from":"a"}`, `execution.optimizer_from: op "a" is the graph's first op`},
		{"unknown key", `{"version":1,"tf32":true}`, `unknown field "tf32"`},
		{"type", `{"version":1,"cuda_graphs":"yes"}`, `line 1, column`},
		{"grad scaler without update", `{"version":1,"grad_scaler":true}`, `execution.grad_scaler: needs optimizer_from`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(head + tc.exec + "}")
			sameOutcome(t, data)
			_, err := Decode(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// Valid, before the ops, as the fast path reads it.
	ok := []byte(`{"format":"placer-graph","version":1,"execution":{"version":1,"optimizer_from":"b","tf32_matmul":true},"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4}]}`)
	if !sameOutcome(t, ok) {
		t.Fatal("the fast path gave up on a valid execution object")
	}
	g, err := Decode(ok)
	if err != nil || g.Execution().OptimizerFrom != 1 || !g.Execution().TF32MatMul {
		t.Fatalf("%v %+v", err, g.Execution())
	}
}
