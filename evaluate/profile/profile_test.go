package profile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

func small(t *testing.T) (*Profile, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "small.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(data)
	if err != nil {
		t.Fatalf("testdata/small.json: %v", err)
	}
	return p, data
}

func TestDecodeRefuses(t *testing.T) {
	_, data := small(t)
	text := string(data)
	cases := []struct {
		name, text, want string
	}{
		{"truncated", text[:len(text)/2], "truncated after"},
		{"empty", "", "truncated after 0 bytes"},
		{"not json", "{x", "not JSON at byte 2"},
		{"format", strings.Replace(text, `"placer-profile"`, `"other"`, 1), `format "other"`},
		{"a graph", `{"format": "placer-graph", "version": 1, "name": "mlp", "ops": []}`, `format "placer-graph": want "placer-profile"`},
		{"version", strings.Replace(text, `"version": 1`, `"version": 3`, 1), "version 3: this placer reads versions 1 and 2"},
		{"version 1 with a kind", strings.Replace(text, `"version": 1`, `"version": 1, "kind": "ops"`, 1), `kind "ops": a version 1 profile has none`},
		{"version 2 without a kind", strings.Replace(text, `"version": 1`, `"version": 2`, 1), `kind "": want layers or ops`},
		{"layers with ops", strings.Replace(text, `"version": 1`, `"version": 2, "kind": "layers", "ops": {}`, 1), "ops: in a layers profile"},
		{"unknown field", strings.Replace(text, `"dtype"`, `"dtypo": 1, "dtype"`, 1), `unknown field "dtypo"`},
		{"device kind", strings.Replace(text, `"kind": "cuda"`, `"kind": "tpu"`, 1), `device.kind "tpu"`},
		{"model", strings.Replace(text, `llama:layers=4`, `llama:layers=-4`, 1), "model:"},
		{"tp heads", strings.Replace(text, `{"tp": 2, "mbs": 1`, `{"tp": 3, "mbs": 1`, 1), "layers[2]: tp 3 does not divide"},
		{"negative time", strings.Replace(text, `"forward_s": 0.001,`, `"forward_s": -0.001,`, 1), "layers[0]: forward_s -0.001"},
		{"sp alone", strings.Replace(text, `{"tp": 1, "mbs": 3`, `{"tp": 1, "sp": true, "mbs": 3`, 1), "layers[1]: sp without"},
		{"collective op", strings.Replace(text, `"op": "send_recv"`, `"op": "broadcast"`, 1), `collectives[3]: op "broadcast"`},
		{"group", strings.Replace(text, `"group": 2`, `"group": 8`, 1), "collectives[3]: group 8: want 2 to device.count 4"},
		{"two values", text + "{}", "more than one JSON value"},
		{"string time", strings.Replace(text, `"forward_s": 0.001,`, `"forward_s": "fast",`, 1), "field layers.forward_s"},
		{"in place at tp 1", strings.Replace(text, `"forward_s": 0.001,`, `"forward_s": 0.001, "forward_inplace_s": 0.002, "backward_inplace_s": 0.003,`, 1),
			"layers[0]: forward_inplace_s, backward_inplace_s at tp 1"},
		{"in place half", strings.Replace(text, `"forward_s": 0.0006,`, `"forward_s": 0.0006, "forward_inplace_s": 0.002,`, 1),
			"layers[2]: forward_inplace_s 0.002, backward_inplace_s 0: want both above 0, or neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one holding %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}

// An ops profile (testdata/ops.json: three ops, two measured) and what
// its reader refuses, each in one line.
func TestDecodeOps(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ops.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	g := p.Graph()
	if p.Kind != KindOps || g == nil || g.NumOps() != 3 || p.Ops.Batch != 4 {
		t.Fatalf("kind %q, graph %v, ops %+v", p.Kind, g, p.Ops)
	}
	for i, want := range []struct {
		has        bool
		time, disp float64
	}{{true, 0.001, 2e-5}, {true, 0.0005, 1e-5}, {false, 0, 0}} {
		op := g.Op(i)
		if op.HasTime != want.has || op.Time != want.time || op.Dispatch != want.disp {
			t.Errorf("op %s: time %v %v, dispatch %v; want %+v", op.Name, op.HasTime, op.Time, op.Dispatch, want)
		}
	}
	if small, _ := small(t); small.Graph() != nil {
		t.Error("a layers profile has a graph")
	}
	text := string(data)
	cases := []struct {
		name, text, want string
	}{
		{"kind", strings.Replace(text, `"kind": "ops"`, `"kind": "graph"`, 1), `kind "graph": want layers or ops`},
		{"no ops", strings.Replace(text, `"ops": {`, `"opz": {`, 1), `unknown field "opz"`},
		{"dtype", strings.Replace(text, `"dtype": "fp32"`, `"dtype": "fp8"`, 1), `dtype "fp8": want fp32, tf32 or bf16`},
		{"model", strings.Replace(text, `"model": "three"`, `"model": " "`, 1), "model"},
		{"batch", strings.Replace(text, `"batch": 4`, `"batch": 0`, 1), "ops: batch 0"},
		{"no steps, complete", strings.Replace(text, `"steps": 5`, `"steps": 0`, 1), "steps 0, in a profile marked complete"},
		{"graph", strings.Replace(text, `"consumers": ["relu"]`, `"consumers": ["nope"]`, 1), "ops.graph:"},
		{"negative time", strings.Replace(text, `"time_s": 0.001`, `"time_s": -0.001`, 1), "ops.graph:"},
		{"a layer", strings.Replace(text, `"dtype": "fp32",`, `"dtype": "fp32", "layers": [{"tp": 1, "mbs": 1, "seq": 1, "forward_s": 1, "backward_s": 1}],`, 1), "in an ops profile"},
		{"truncated", text[:len(text)*2/3], "truncated after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one holding %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
	// Interrupted before its first profiled step: read, nothing measured.
	q, err := Decode([]byte(strings.Replace(strings.Replace(text, `"steps": 5`, `"steps": 0`, 1), `"complete": true`, `"complete": false`, 1)))
	if err != nil || q.Complete {
		t.Fatalf("an interrupted ops profile: %v", err)
	}
}

func TestCheck(t *testing.T) {
	p, _ := small(t)
	spec := func(s string) transformer.Spec {
		m, err := transformer.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	same := spec("llama:layers=16,hidden=256,heads=4,kv_heads=2,ffn=512,seq=512,vocab=1024,batch=64")
	cases := []struct {
		name string
		m    transformer.Spec
		gpu  string
		want string // "" = accepted
	}{
		{"same layer, other depth, sequence and batch", same, "h100", ""},
		{"another hidden", spec("llama:layers=4,hidden=512,heads=4,kv_heads=2,ffn=512,seq=128,vocab=1024,batch=8"), "h100", "another model: hidden 256, the workload's 512"},
		{"another vocabulary", spec("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=128,vocab=2048,batch=8"), "h100", "vocab 1024, the workload's 2048"},
		{"another family", spec("gpt:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,ffn=512,kv_heads=2"), "h100", "family llama"},
		{"another GPU", same, "a100", `another device: cuda "NVIDIA H100 80GB HBM3"`},
		{"a CPU run", same, "cpu", "another device"},
		// A windowed layer costs less than a causal one: the profile's
		// layers (no window) do not price a model with one.
		{"a sliding window", spec("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=128,vocab=1024,batch=8,window=64,window_every=2"), "h100",
			"another model: window 0, the workload's 64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := p.Check(c.m, c.gpu)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one holding %q", err, c.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

func TestLayerRules(t *testing.T) {
	p, _ := small(t)
	p.Layers = append(p.Layers, Layer{TP: 1, MBS: 1, Seq: 128, Recompute: "selective", Forward: 0.001, Backward: 0.0025})
	cases := []struct {
		name     string
		s        Shape
		fwd, bwd float64
		src      Source
	}{
		{"measured", Shape{TP: 1, MBS: 1, Seq: 128}, 0.001, 0.002, Measured},
		// Between mbs 1 (1 ms, 2 ms) and 3 (2 ms, 5 ms): halfway.
		{"between micro-batches", Shape{TP: 1, MBS: 2, Seq: 128}, 0.0015, 0.0035, Composed},
		// Beyond mbs 3: proportional to tokens from it, x 4/3.
		{"beyond", Shape{TP: 1, MBS: 4, Seq: 128}, 0.002 * 4 / 3, 0.005 * 4 / 3, Composed},
		// Another sequence, none of it measured: the nearest below in
		// tokens (mbs 1 x 128 = 128 <= 1 x 256 < 384): linear from
		// 128 to 384 tokens, halfway.
		{"another sequence", Shape{TP: 1, MBS: 1, Seq: 256}, 0.0015, 0.0035, Composed},
		// Full recomputation at tp 1 from none: backward + forward.
		{"recompute from none", Shape{TP: 1, MBS: 1, Seq: 128, Recompute: true}, 0.001, 0.003, Composed},
		// None at tp 2 from full: backward - forward.
		{"none from recompute", Shape{TP: 2, MBS: 1, Seq: 128}, 0.0006, 0.0012, Composed},
		{"sp measured", Shape{TP: 2, SP: true, MBS: 1, Seq: 64}, 0.0004, 0.0008, Measured},
		{"another degree", Shape{TP: 4, MBS: 1, Seq: 128}, 0, 0, Modelled},
		// Selective recomputation: only from its own shapes.
		{"selective measured", Shape{TP: 1, MBS: 1, Seq: 128, Selective: true}, 0.001, 0.0025, Measured},
		{"selective in tokens", Shape{TP: 1, MBS: 2, Seq: 128, Selective: true}, 0.002, 0.005, Composed},
		{"selective from none: no rule", Shape{TP: 2, SP: true, MBS: 1, Seq: 64, Selective: true}, 0, 0, Modelled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, b, src := p.Layer(c.s)
			if src != c.src || !near(f, c.fwd) || !near(b, c.bwd) {
				t.Fatalf("got %g, %g, %s; want %g, %g, %s", f, b, src, c.fwd, c.bwd, c.src)
			}
		})
	}
}

// TestLayerInPlace: the in-place timings answer by Layer's rules over
// the shapes timed in place, and nothing else does.
func TestLayerInPlace(t *testing.T) {
	p, _ := small(t)
	// tp 2 sp, mbs 1 and 3 at sequence 64, timed in place (the kernels
	// alone 0.4/0.8 ms at mbs 1, as small.json has them).
	p.Layers = append(p.Layers,
		Layer{TP: 2, SP: true, MBS: 3, Seq: 64, Recompute: "none", Forward: 0.0012, Backward: 0.0024, ForwardInPlace: 0.003, BackwardInPlace: 0.005})
	for i := range p.Layers {
		if l := &p.Layers[i]; l.TP == 2 && l.SP && l.MBS == 1 {
			l.ForwardInPlace, l.BackwardInPlace = 0.001, 0.002
		}
	}
	cases := []struct {
		name     string
		s        Shape
		fwd, bwd float64
		src      Source
	}{
		{"measured", Shape{TP: 2, SP: true, MBS: 1, Seq: 64}, 0.001, 0.002, Measured},
		// Halfway between mbs 1 (1, 2 ms) and mbs 3 (3, 5 ms).
		{"between", Shape{TP: 2, SP: true, MBS: 2, Seq: 64}, 0.002, 0.0035, Composed},
		// Full recomputation from none: the backward runs the forward
		// (and its collectives) again.
		{"recompute", Shape{TP: 2, SP: true, MBS: 1, Seq: 64, Recompute: true}, 0.001, 0.003, Composed},
		// tp 2 without sp was timed alone only.
		{"alone only", Shape{TP: 2, MBS: 1, Seq: 128}, 0, 0, Modelled},
		{"tp 1", Shape{TP: 1, MBS: 1, Seq: 128}, 0, 0, Modelled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, b, src := p.LayerInPlace(c.s)
			if src != c.src || !near(f, c.fwd) || !near(b, c.bwd) {
				t.Fatalf("got %g, %g, %s; want %g, %g, %s", f, b, src, c.fwd, c.bwd, c.src)
			}
		})
	}
	if f, b, src := p.Layer(Shape{TP: 2, SP: true, MBS: 1, Seq: 64}); src != Measured || !near(f, 0.0004) || !near(b, 0.0008) {
		t.Errorf("the kernels alone: %g, %g, %s; want 0.0004, 0.0008, measured (unchanged by the in-place timing)", f, b, src)
	}
	if _, _, src := p.EmbeddingInPlace(Shape{TP: 2, MBS: 1, Seq: 64}); src != Modelled {
		t.Errorf("an embedding never timed in place answered %s", src)
	}
}

func TestCollectiveRules(t *testing.T) {
	p, _ := small(t)
	cases := []struct {
		name  string
		op    string
		group int
		bytes float64
		want  float64
		src   Source
	}{
		{"measured", AllReduce, 4, 1e6, 0.0011, Measured},
		// Between 1e6 (1.1 ms) and 3e6 (3.1 ms): 1 ms per 1e6 bytes.
		{"between", AllReduce, 4, 2e6, 0.0021, Composed},
		// Above 3e6 at the same bandwidth: 3.1 + 1 ms.
		{"above", AllReduce, 4, 4e6, 0.0041, Composed},
		{"below", AllReduce, 4, 10, 0.0001, Composed},
		// One point only: proportional.
		{"one point", SendRecv, 2, 8192, 0.00004, Composed},
		{"another group", AllReduce, 2, 1e6, 0, Modelled},
		{"another op", AllGather, 4, 1e6, 0, Modelled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, src := p.CollectiveTime(c.op, c.group, c.bytes)
			if src != c.src || !near(got, c.want) {
				t.Fatalf("got %g %s, want %g %s", got, src, c.want, c.src)
			}
		})
	}
	if got, src := p.OptimizerTime(2e6); src != Composed || !near(got, 0.004) {
		t.Errorf("optimizer over 2e6: %g %s, want 0.004 composed", got, src)
	}
}

func FuzzDecode(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "small.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Add([]byte(`{"format":"placer-profile","version":1}`))
	ops, err := os.ReadFile(filepath.Join("testdata", "ops.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ops)
	f.Add(ops[:len(ops)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, l := range p.Layers {
			s := Shape{TP: l.TP, SP: l.SP, EP: l.EP, ETP: l.ETP, MBS: l.MBS, Seq: l.Seq, Recompute: l.full(), Selective: l.selective()}
			s.FP8 = l.FP8
			at := p.Layer
			if l.Block == BlockDense {
				at = p.DenseLayer // the dense layers before the experts: their own lookup
			}
			if f, b, src := at(s); src != Measured || !(f > 0) || !(b > 0) {
				t.Fatalf("layer %+v: %g %g %s", l, f, b, src)
			}
			s.MBS++
			if f, b, _ := at(s); f < 0 || b < 0 || math.IsNaN(f+b) {
				t.Fatalf("composed layer %+v: %g %g", s, f, b)
			}
		}
		if g := p.Graph(); (g == nil) != (p.Kind != KindOps) {
			t.Fatalf("kind %q with graph %v", p.Kind, g)
		}
		for _, c := range p.Collectives {
			if got, _ := p.CollectiveTime(c.Op, c.Group, 2*c.Bytes); math.IsNaN(got) || got < 0 {
				t.Fatalf("collective %+v at twice: %g", c, got)
			}
		}
	})
}

// TestCollectiveWire: an FP32 profile's gradients' and weights'
// collectives, timed uncast (wire fp32), answer CollectiveTimeWire
// where timed; an op or group without them falls back on the
// activations' entries; CollectiveTime never takes them; a wire on an
// all-to-all or a send, or another wire, is refused.
func TestCollectiveWire(t *testing.T) {
	p, err := withCollectives(t, Collective{Op: AllReduce, Group: 4, Bytes: 1e6, Seconds: 0.0005, Wire: WireFP32},
		Collective{Op: AllReduce, Group: 4, Bytes: 3e6, Seconds: 0.0009, Wire: WireFP32})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, op, wire string
		group          int
		bytes, want    float64
		src            Source
	}{
		{"uncast, measured", AllReduce, WireFP32, 4, 1e6, 0.0005, Measured},
		{"uncast, between", AllReduce, WireFP32, 4, 2e6, 0.0007, Composed},
		{"the activations' unchanged", AllReduce, "", 4, 1e6, 0.0011, Measured},
		{"none uncast: the activations'", SendRecv, WireFP32, 2, 8192, 0.00004, Composed},
		{"none at all", AllGather, WireFP32, 4, 1e6, 0, Modelled},
	} {
		got, src := p.CollectiveTimeWire(c.op, c.wire, c.group, c.bytes)
		if src != c.src || !near(got, c.want) {
			t.Errorf("%s: got %g %s, want %g %s", c.name, got, src, c.want, c.src)
		}
	}
	if got, _ := p.CollectiveTime(AllReduce, 4, 2e6); !near(got, 0.0021) {
		t.Errorf("CollectiveTime took the uncast entries: %g, want 0.0021", got)
	}
	for _, bad := range []Collective{{Op: AllToAll, Group: 4, Bytes: 1e6, Seconds: 1e-3, Wire: WireFP32},
		{Op: AllReduce, Group: 4, Bytes: 1e6, Seconds: 1e-3, Wire: "fp16"}} {
		if _, err := withCollectives(t, bad); err == nil || !strings.Contains(err.Error(), "wire") {
			t.Errorf("%+v: got %v, want the wire refused", bad, err)
		}
	}
}

// withCollectives is testdata/small.json with extra collectives, decoded.
func withCollectives(t *testing.T, extra ...Collective) (*Profile, error) {
	t.Helper()
	_, data := small(t)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	cs, _ := doc["collectives"].([]any)
	for _, c := range extra {
		cs = append(cs, c)
	}
	doc["collectives"] = cs
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return Decode(out)
}

// StateOp: the step's state and the optimizer's marker are never timed;
// every op that runs a kernel is, whatever its class.
func TestStateOp(t *testing.T) {
	for typ, want := range map[string]bool{
		"Input": true, "Parameter": true, "Buffer": true, "OptimizerStep": true, "Placeholder": true,
		"MatMul": false, "Relu": false, "AdamW": false, "": false, "input": false,
	} {
		if got := StateOp(&graph.Op{Type: typ}); got != want {
			t.Errorf("StateOp(%q) = %v, want %v", typ, got, want)
		}
	}
}
