package costgraph

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads/costgraph/costgraphpb"
)

var fixtures = []string{"testdata/regal_small.pbtxt", "testdata/tf_costmodel.pbtxt"}

func TestREGALFixture(t *testing.T) {
	g, err := Read("testdata/regal_small.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "regal_small" {
		t.Errorf("name %q", g.Name())
	}
	if _, err := graph.AtBatch(g, 1); g.Batch() != 0 || err == nil || !strings.Contains(err.Error(), "no batch information") {
		t.Errorf("batch %d, AtBatch: %v; want no batch information", g.Batch(), err)
	}
	names := []string{"_SOURCE", "node_0", "node_1", "node_2", "node_3", "_SINK"}
	times := []float64{0, 61e-6, 150e-6, 97e-6, 171e-6, 0}
	if g.NumOps() != len(names) {
		t.Fatalf("%d ops, want %d", g.NumOps(), len(names))
	}
	for i, op := range g.Ops() {
		if op.Name != names[i] || !op.HasTime || op.Time != times[i] || op.Class != graph.ClassUnknown ||
			op.DType != graph.F32 || op.Shape != nil || op.ParamBytes != 0 || op.TempBytes != 0 {
			t.Errorf("op %d = %+v, want %s with time %g", i, op, names[i], times[i])
		}
	}
	want := []graph.Tensor{
		{Name: "node_0:0", Producer: 1, Consumers: []int{2, 3}, Bytes: 48},
		{Name: "node_1:0", Producer: 2, Consumers: []int{4}, Bytes: 52},
		{Name: "node_1:1", Producer: 2, Consumers: []int{3, 4}, Bytes: 39},
		{Name: "node_3:0", Producer: 4, Consumers: []int{5}, Bytes: 57},
	}
	checkTensors(t, g, want)
	if got, want := g.Control(), []graph.Edge{{From: 0, To: 1}, {From: 1, To: 3}, {From: 3, To: 5}}; !slices.Equal(got, want) {
		t.Errorf("control %v, want %v", got, want)
	}
}

func TestTFFixture(t *testing.T) {
	g, err := Read("testdata/tf_costmodel.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	ops := []graph.Op{
		{Name: "w", DType: graph.F32, Shape: []int64{1024, 1024}, ParamBytes: 4194304, Time: 2e-6},
		{Name: "x", DType: graph.F16, Time: 1e-6},
		{Name: "matmul", DType: graph.BF16, Shape: []int64{64, 1024}, TempBytes: 65536, Time: 1250e-6},
		{Name: "loss", DType: graph.F64, Shape: []int64{}, TempBytes: 128, Time: 0},
		{Name: "update", DType: graph.F32, ParamBytes: 512, Time: 40e-6},
	}
	if g.NumOps() != len(ops) {
		t.Fatalf("%d ops, want %d", g.NumOps(), len(ops))
	}
	for i, op := range g.Ops() {
		w := ops[i]
		if op.Name != w.Name || op.DType != w.DType || !slices.Equal(op.Shape, w.Shape) || (op.Shape == nil) != (w.Shape == nil) ||
			op.ParamBytes != w.ParamBytes || op.TempBytes != w.TempBytes || !op.HasTime || op.Time != w.Time {
			t.Errorf("op %d = %+v, want %+v", i, op, w)
		}
	}
	checkTensors(t, g, []graph.Tensor{
		{Name: "w:0", Producer: 0, Consumers: []int{2}, Bytes: 4194304},
		{Name: "x:0", Producer: 1, Consumers: []int{2}, Bytes: 0},
		{Name: "matmul:0", Producer: 2, Consumers: []int{3}, Bytes: 262144},
		{Name: "loss:0", Producer: 3, Consumers: []int{4}, Bytes: 4},
		{Name: "update:0", Producer: 4, Consumers: nil, Bytes: 4194304},
	})
	if got, want := g.Control(), []graph.Edge{{From: 0, To: 3}, {From: 0, To: 4}, {From: 2, To: 4}}; !slices.Equal(got, want) {
		t.Errorf("control %v, want %v", got, want)
	}
}

func checkTensors(t *testing.T, g *graph.Graph, want []graph.Tensor) {
	t.Helper()
	if g.NumTensors() != len(want) {
		t.Fatalf("%d tensors, want %d", g.NumTensors(), len(want))
	}
	for i, ts := range g.Tensors() {
		w := want[i]
		if ts.Name != w.Name || ts.Producer != w.Producer || !slices.Equal(ts.Consumers, w.Consumers) || ts.Bytes != w.Bytes || ts.HasTransferTime {
			t.Errorf("tensor %d = %+v, want %+v", i, ts, w)
		}
	}
}

// diff compares the ops, tensors and control edges of two graphs.
func diff(a, b *graph.Graph) string {
	if a.Name() != b.Name() {
		return fmt.Sprintf("names %q and %q", a.Name(), b.Name())
	}
	if a.NumOps() != b.NumOps() || a.NumTensors() != b.NumTensors() || len(a.Control()) != len(b.Control()) {
		return fmt.Sprintf("sizes %d/%d/%d and %d/%d/%d", a.NumOps(), a.NumTensors(), len(a.Control()), b.NumOps(), b.NumTensors(), len(b.Control()))
	}
	for i := range a.Ops() {
		x, y := a.Op(i), b.Op(i)
		if x.Name != y.Name || x.Type != y.Type || x.Class != y.Class || x.DType != y.DType ||
			!slices.Equal(x.Shape, y.Shape) || (x.Shape == nil) != (y.Shape == nil) ||
			x.FLOPs != y.FLOPs || x.BytesRead != y.BytesRead || x.BytesWritten != y.BytesWritten ||
			x.ParamBytes != y.ParamBytes || x.TempBytes != y.TempBytes || x.HasTime != y.HasTime || x.Time != y.Time ||
			x.Colocation != y.Colocation || x.Backward != y.Backward {
			return fmt.Sprintf("op %d: %+v vs %+v", i, *x, *y)
		}
	}
	for i := range a.Tensors() {
		x, y := a.Tensor(i), b.Tensor(i)
		if x.Name != y.Name || x.Producer != y.Producer || !slices.Equal(x.Consumers, y.Consumers) || x.Bytes != y.Bytes ||
			x.HasTransferTime != y.HasTransferTime || x.TransferTime != y.TransferTime {
			return fmt.Sprintf("tensor %d: %+v vs %+v", i, *x, *y)
		}
	}
	if !slices.Equal(a.Control(), b.Control()) {
		return fmt.Sprintf("control %v vs %v", a.Control(), b.Control())
	}
	return ""
}

// roundTrip checks Decode(Encode(g)) == g and that encoding is stable.
func roundTrip(t *testing.T, g *graph.Graph) {
	t.Helper()
	text, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Decode(text, g.Name())
	if err != nil {
		t.Fatalf("decoding the encoded graph: %v\n%s", err, text)
	}
	if msg := diff(g, h); msg != "" {
		t.Fatalf("Decode(Encode(g)) differs: %s\n%s", msg, text)
	}
	again, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(text, again) {
		t.Errorf("Encode is not stable:\n%s\n---\n%s", text, again)
	}
}

func TestRoundTripFixtures(t *testing.T) {
	for _, f := range fixtures {
		g, err := Read(f)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, g)
	}
}

func TestEncodeREGALStyle(t *testing.T) {
	g, err := Read("testdata/regal_small.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	text, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	want := `node {
  name: "node_1"
  id: 2
  input_info {
    preceding_node: 1
  }
  output_info {
    size: 52
    alias_input_port: -1
    dtype: DT_FLOAT
  }
  output_info {
    size: 39
    alias_input_port: -1
  }
  compute_cost: 150
}
`
	if !strings.HasPrefix(string(text), "node {\n  name: \"_SOURCE\"\n}\n") || !strings.Contains(string(text), want) {
		t.Errorf("encoded text:\n%s\nwant it to contain:\n%s", text, want)
	}
}

// TestEncodeBuiltGraph encodes a graph made with graph.Builder: what a
// CostGraphDef can hold comes back; the rest is documented as lost.
func TestEncodeBuiltGraph(t *testing.T) {
	b := graph.NewBuilder("built")
	a := b.AddOp(graph.Op{Name: "a", Type: "MatMul", Class: graph.ClassMatMul, DType: graph.BF16, Shape: []int64{8, 8}, FLOPs: 1024,
		ParamBytes: 128, TempBytes: 64, HasTime: true, Time: 1.5e-3, Colocation: "g", Backward: true})
	c := b.AddOp(graph.Op{Name: "c \"quoted\"\n\ttab é", DType: graph.I64})
	d := b.AddOp(graph.Op{Name: "d", DType: graph.I32, HasTime: true, Time: 0.1234567891}) // not whole microseconds
	b.AddTensorFull(graph.Tensor{Name: "ignored", Producer: a, Consumers: []int{c, d}, Bytes: 256, HasTransferTime: true, TransferTime: 1})
	b.AddTensor(c, 8, d)
	b.AddControl(a, d)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	text, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Decode(text, "built")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	x := h.Op(0)
	if x.Name != "a" || x.DType != graph.BF16 || !slices.Equal(x.Shape, []int64{8, 8}) || x.ParamBytes != 128 || x.TempBytes != 64 ||
		!x.HasTime || x.Time != 1.5e-3 || x.Class != graph.ClassUnknown || x.FLOPs != 0 || x.Colocation != "" || x.Backward {
		t.Errorf("op a = %+v", *x)
	}
	if h.Op(1).Name != g.Op(1).Name || !h.Op(1).HasTime || h.Op(1).Time != 0 {
		t.Errorf("op c = %+v (an op without a measured time reads back as measured 0)", *h.Op(1))
	}
	if got := h.Op(2).Time; got != 0.123457 {
		t.Errorf("op d time %v, want whole microseconds 0.123457", got)
	}
	if h.Op(1).DType != graph.I64 {
		t.Errorf("op c dtype %v, want i64", h.Op(1).DType)
	}
	if h.Op(2).DType != graph.F32 {
		t.Errorf("op d dtype %v: an op without outputs has nowhere to keep its dtype", h.Op(2).DType)
	}
	if ts := h.Tensor(0); ts.Bytes != 256 || !slices.Equal(ts.Consumers, []int{1, 2}) || ts.HasTransferTime || ts.Name != "a:0" {
		t.Errorf("tensor 0 = %+v", *ts)
	}
	if !slices.Equal(h.Control(), g.Control()) {
		t.Errorf("control %v, want %v", h.Control(), g.Control())
	}
}

// TestMarshalTextMatchesPrototext checks the hand-written text writer
// against protobuf-go's parser on every field of the schema.
func TestMarshalTextMatchesPrototext(t *testing.T) {
	full := &costgraphpb.CostGraphDef{
		Node: []*costgraphpb.CostGraphDef_Node{{
			Name: "n \"q\" \\ \n\r\t\x01\x7f é 世", Device: "/device:GPU:0", Id: -3,
			InputInfo: []*costgraphpb.CostGraphDef_Node_InputInfo{{PrecedingNode: 1, PrecedingPort: 2}, {}},
			OutputInfo: []*costgraphpb.CostGraphDef_Node_OutputInfo{{Size: -1, AliasInputPort: 2,
				Shape: &costgraphpb.TensorShapeProto{Dim: []*costgraphpb.TensorShapeProto_Dim{{Size: 3, Name: "batch"}, {Size: -1}}, UnknownRank: true},
				Dtype: costgraphpb.DataType_DT_UINT2_REF}, {Shape: &costgraphpb.TensorShapeProto{}}, {Dtype: costgraphpb.DataType(77)}},
			TemporaryMemorySize: 1, PersistentMemorySize: 2, HostTempMemorySize: 3, DeviceTempMemorySize: 4,
			DevicePersistentMemorySize: 5, ComputeCost: 6, ComputeTime: 7, MemoryTime: 8, IsFinal: true,
			ControlInput: []int32{0, -1, 2147483647}, Inaccurate: true,
		}, {}},
		Cost: []*costgraphpb.CostGraphDef_AggregatedCost{{Cost: 1.25, Dimension: "memory"}, {Cost: 3e38}, {Cost: 1e-7}, {}},
	}
	defs := []*costgraphpb.CostGraphDef{full}
	for _, f := range fixtures {
		g, err := Read(f)
		if err != nil {
			t.Fatal(err)
		}
		def, err := ToProto(g)
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, def)
	}
	for _, def := range defs {
		text := marshalText(def)
		var back costgraphpb.CostGraphDef
		if err := prototext.Unmarshal(text, &back); err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if !proto.Equal(def, &back) {
			t.Errorf("text does not parse back to the same message:\n%s\nwant %v\ngot  %v", text, def, &back)
		}
	}
}

func TestFromProtoMatchesDecode(t *testing.T) {
	for _, f := range fixtures {
		g, err := Read(f)
		if err != nil {
			t.Fatal(err)
		}
		def, err := ToProto(g)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := proto.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		var back costgraphpb.CostGraphDef
		if err := proto.Unmarshal(wire, &back); err != nil {
			t.Fatal(err)
		}
		h, err := FromProto(&back, g.Name())
		if err != nil {
			t.Fatal(err)
		}
		if msg := diff(g, h); msg != "" {
			t.Errorf("%s through the wire format: %s", f, msg)
		}
	}
}

func TestMalformed(t *testing.T) {
	two := func(second string) string {
		return "node { name: \"a\" id: 1 output_info { size: 4 } }\nnode { name: \"b\" id: 2 " + second + " }"
	}
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"empty", ``, []string{"costgraph: t: no nodes"}},
		{"unknown field", "node {\n  name: \"a\"\n  colour: 3\n}", []string{"costgraph: t: line 3, column 3: unknown field: colour"}},
		{"bad enum", "node { name: \"a\" output_info { dtype: DT_NOPE } }", []string{"line 1, column", "DT_NOPE"}},
		{"int32 overflow", "node { name: \"a\" id: 99999999999 }", []string{"line 1, column", "int32"}},
		{"syntax", "node { name: \"a\" }}", []string{"line 1, column"}},
		{"truncated", "node {\n  name: \"a\"\n", []string{"truncated: unexpected end of input at line 3"}},
		{"binary junk", "\x00\x01\x02", []string{`line 1, column 1: syntax error: invalid field name: \x00`}},
		{"invalid UTF-8", "node { name: \"\xff\" }", []string{"line 1, column", "UTF-8"}},
		{"empty name", "node { id: 4 }", []string{`node[0] (id 4 ""): name: empty`}},
		{"duplicate name", "node { name: \"a\" id: 1 } node { name: \"a\" id: 2 }", []string{`node[1] (id 2 "a"): name: duplicate: node[0] has it too`}},
		{"duplicate id", "node { name: \"a\" id: 1 } node { name: \"b\" id: 1 }", []string{`node[1] (id 1 "b"): id: duplicate: node[0] (id 1 "a") has id 1 too`}},
		{"negative compute_cost", "node { name: \"a\" compute_cost: -5 }", []string{`node[0] (id 0 "a"): compute_cost: is negative (-5)`}},
		{"huge compute_cost", "node { name: \"a\" compute_cost: 9223372036854775807 }", []string{`compute_cost: is too large`}},
		{"negative temp", "node { name: \"a\" temporary_memory_size: -2 }", []string{`temporary_memory_size: is negative (-2)`}},
		{"negative old persistent", "node { name: \"a\" device_persistent_memory_size: -9 }", []string{`device_persistent_memory_size: is negative (-9)`}},
		{"negative size", "node { name: \"a\" output_info { size: -7 } }", []string{`node[0] (id 0 "a"): output_info[0].size: is negative (-7)`}},
		{"negative dim", "node { name: \"a\" output_info { shape { dim { size: 2 } dim { size: -3 } } } }", []string{`output_info[0].shape.dim[1].size: is negative (-3)`}},
		{"missing input node", two("input_info { preceding_node: 9 }"), []string{`node[1] (id 2 "b"): input_info[0].preceding_node: node id 9 does not exist`}},
		{"missing port", two("input_info { preceding_node: 1 preceding_port: 1 }"), []string{`node[1] (id 2 "b"): input_info[0].preceding_port: node[0] (id 1 "a") has no output 1 (it has 1)`}},
		{"negative port", two("input_info { preceding_node: 1 preceding_port: -2 }"), []string{`input_info[0].preceding_port: node[0] (id 1 "a") has no output -2`}},
		{"self input", two("input_info { preceding_node: 2 }"), []string{`node[1] (id 2 "b"): input_info[0]: cycle`}},
		{"missing control", two("control_input: 5"), []string{`node[1] (id 2 "b"): control_input[0]: node id 5 does not exist`}},
		{"self control", two("control_input: 2"), []string{`node[1] (id 2 "b"): control_input[0]: cycle`}},
		{"cycle", "node { name: \"a\" id: 1 output_info { size: 4 } control_input: 2 }\nnode { name: \"b\" id: 2 input_info { preceding_node: 1 } }",
			[]string{`costgraph: t: cycle: node 1 "a" -> node 2 "b" -> node 1 "a"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Decode([]byte(c.in), "t")
			if err == nil {
				t.Fatalf("no error; graph with %d ops", g.NumOps())
			}
			msg := err.Error()
			t.Log(msg)
			if strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "\u00a0") {
				t.Errorf("error is not one plain line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, err := Encode(nil); err == nil {
		t.Error("Encode(nil): no error")
	}
	// A time too long for a CostGraphDef is refused when the graph is
	// built (graph.MaxTime), before Encode sees it.
	b := graph.NewBuilder("long")
	b.AddOp(graph.Op{Name: "forever", HasTime: true, Time: 1e300})
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), `op "forever": time`) {
		t.Errorf("err = %v", err)
	}
}

func TestReadMissingFile(t *testing.T) {
	if _, err := Read(t.TempDir() + "/nope.pbtxt"); err == nil || !strings.HasPrefix(err.Error(), "costgraph: ") {
		t.Errorf("err = %v", err)
	}
}
