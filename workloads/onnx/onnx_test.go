package onnx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads/onnx/onnxpb"
)

// builder helpers for hand-made models.

func vi(name string, elem int32, dims ...int64) *onnxpb.ValueInfoProto {
	sh := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.ValueInfoProto{Name: name, Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: elem, Shape: sh}}}}
}

func init1(name string, dims ...int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: name, DataType: 1, Dims: dims}
}

func node(op, name string, ins, outs []string, at ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: op, Name: name, Input: ins, Output: outs, Attribute: at}
}

func model(g *onnxpb.GraphProto) *onnxpb.ModelProto {
	return &onnxpb.ModelProto{IrVersion: 8, ProducerName: "placer-test", Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}}}
}

// mlp is x [4, 8] -> MatMul W1 [8, 16] -> Add b1 [16] -> Relu -> MatMul W2
// [16, 2] -> Softmax; W1 is read by one node, b1 by two (the Add and an
// extra Mul), so it becomes an Initializer op.
func mlp() *onnxpb.ModelProto {
	return model(&onnxpb.GraphProto{
		Name:        "mlp",
		Input:       []*onnxpb.ValueInfoProto{vi("x", 1, 4, 8)},
		Output:      []*onnxpb.ValueInfoProto{vi("y", 1, 4, 2), vi("z", 1, 4, 16)},
		Initializer: []*onnxpb.TensorProto{init1("W1", 8, 16), init1("b1", 16), init1("W2", 16, 2)},
		ValueInfo:   []*onnxpb.ValueInfoProto{vi("h", 1, 4, 16), vi("a", 1, 4, 16), vi("r", 1, 4, 16), vi("o", 1, 4, 2), vi("rs", 1, 64)},
		Node: []*onnxpb.NodeProto{
			node("MatMul", "mm1", []string{"x", "W1"}, []string{"h"}),
			node("Add", "add", []string{"h", "b1"}, []string{"a"}),
			node("Relu", "", []string{"a"}, []string{"r"}),
			node("MatMul", "mm2", []string{"r", "W2"}, []string{"o"}),
			node("Softmax", "sm", []string{"o"}, []string{"y"}),
			node("Mul", "mul", []string{"r", "b1"}, []string{"z"}),
			node("Reshape", "view", []string{"r"}, []string{"rs"}),
		},
	})
}

func encode(t testing.TB, m *onnxpb.ModelProto) []byte {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestMLP(t *testing.T) {
	g, err := Decode(encode(t, mlp()), "mlp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.AtBatch(g, 1); g.Batch() != 0 || err == nil || !strings.Contains(err.Error(), "no batch information") {
		t.Errorf("batch %d, AtBatch: %v; want no batch information", g.Batch(), err)
	}
	// By hand: ops are the input, the shared initializer b1, then the nodes.
	want := []struct {
		name, typ    string
		class        graph.Class
		flops        float64
		read, writ   int64
		param        int64
		alias        bool
		shape        []int64
		consumerOf   []string
		producesInto int
	}{
		{name: "input:x", typ: "Input", class: graph.ClassDataMovement, shape: []int64{4, 8}},
		{name: "init:b1", typ: "Initializer", class: graph.ClassDataMovement, param: 64, shape: []int64{16}},
		// 2·4·16·8; reads x (128 B) and W1 (512 B), writes 256 B; W1 is its own.
		{name: "mm1", typ: "MatMul", class: graph.ClassMatMul, flops: 1024, read: 640, writ: 256, param: 512, shape: []int64{4, 16}},
		{name: "add", typ: "Add", class: graph.ClassElementwise, flops: 64, read: 256 + 64, writ: 256, shape: []int64{4, 16}},
		{name: "Relu_2", typ: "Relu", class: graph.ClassElementwise, flops: 64, read: 256, writ: 256, shape: []int64{4, 16}},
		// 2·4·2·16.
		{name: "mm2", typ: "MatMul", class: graph.ClassMatMul, flops: 256, read: 256 + 128, writ: 32, param: 128, shape: []int64{4, 2}},
		// 5 per element · 8.
		{name: "sm", typ: "Softmax", class: graph.ClassReduction, flops: 40, read: 32, writ: 32, shape: []int64{4, 2}},
		{name: "mul", typ: "Mul", class: graph.ClassElementwise, flops: 64, read: 256 + 64, writ: 256, shape: []int64{4, 16}},
		{name: "view", typ: "Reshape", class: graph.ClassDataMovement, alias: true, shape: []int64{64}},
	}
	if g.NumOps() != len(want) {
		t.Fatalf("%d ops, want %d", g.NumOps(), len(want))
	}
	for i, w := range want {
		op := g.Op(i)
		if op.Name != w.name || op.Type != w.typ || op.Class != w.class || op.FLOPs != w.flops || op.BytesRead != w.read ||
			op.BytesWritten != w.writ || op.ParamBytes != w.param || op.Alias != w.alias || fmt.Sprint(op.Shape) != fmt.Sprint(w.shape) {
			t.Errorf("op %d = %+v, want %+v", i, op, w)
		}
	}
	if st := g.Stats(); st.ParamBytes != 512+64+128 {
		t.Errorf("param bytes %d, want %d", st.ParamBytes, 512+64+128)
	}
	// b1's tensor goes to add and mul; r to mm2, mul and view.
	for _, ts := range g.Tensors() {
		switch ts.Name {
		case "b1":
			if fmt.Sprint(ts.Consumers) != "[3 7]" || ts.Bytes != 64 {
				t.Errorf("b1 %+v", ts)
			}
		case "r":
			if fmt.Sprint(ts.Consumers) != "[5 7 8]" || ts.Bytes != 256 {
				t.Errorf("r %+v", ts)
			}
		}
	}
}

func TestConvGemm(t *testing.T) {
	at := func(name string, ints ...int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: name, Ints: ints, Type: onnxpb.AttributeProto_INTS}
	}
	m := model(&onnxpb.GraphProto{
		Input:       []*onnxpb.ValueInfoProto{vi("x", 1, 1, 3, 8, 8)},
		Output:      []*onnxpb.ValueInfoProto{vi("y", 1, 1, 5)},
		Initializer: []*onnxpb.TensorProto{init1("W", 4, 3, 3, 3), init1("B", 4), init1("G", 5, 36), init1("C", 5)},
		ValueInfo:   []*onnxpb.ValueInfoProto{vi("c", 1, 1, 4, 6, 6), vi("p", 1, 1, 4, 3, 3), vi("f", 1, 1, 36)},
		Node: []*onnxpb.NodeProto{
			node("Conv", "conv", []string{"x", "W", "B"}, []string{"c"}, at("kernel_shape", 3, 3)),
			node("MaxPool", "pool", []string{"c"}, []string{"p"}, at("kernel_shape", 2, 2)),
			node("Flatten", "flat", []string{"p"}, []string{"f"}),
			node("Gemm", "fc", []string{"f", "G", "C"}, []string{"y"},
				&onnxpb.AttributeProto{Name: "transB", I: 1, Type: onnxpb.AttributeProto_INT}),
		},
	})
	g, err := Decode(encode(t, m), "cnn")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name  string
		flops float64
	}{
		{"conv", 2*144*27 + 144}, // |Y| = 4·6·6 = 144; Cin·k·k = 27; bias
		{"pool", 36 * 4},         // |Y| = 36, window 2·2
		{"flat", 0},
		{"fc", 2*5*36 + 5}, // M·N = 5, K = 36, C added
	} {
		i, ok := g.Lookup(w.name)
		if !ok {
			t.Fatalf("no op %s", w.name)
		}
		if got := g.Op(i).FLOPs; got != w.flops {
			t.Errorf("%s: %g FLOPs, want %g", w.name, got, w.flops)
		}
	}
}

func TestErrors(t *testing.T) {
	good := encode(t, mlp())
	noShape := mlp()
	noShape.Graph.ValueInfo = noShape.Graph.ValueInfo[1:] // drop h
	symbolic := mlp()
	symbolic.Graph.Input[0] = &onnxpb.ValueInfoProto{Name: "x", Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: 1, Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
			{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}}, {Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 8}}}}}}}}
	unknown := mlp()
	unknown.Graph.Node[2].OpType = "FancyRelu"
	dangling := mlp()
	dangling.Graph.Node[1].Input[0] = "nowhere"
	dupOut := mlp()
	dupOut.Graph.Node[1].Output[0] = "h"
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)/2], "onnx: bad: not an ONNX model (truncated or not a ModelProto)"},
		{"not protobuf", []byte("hello, world"), "not an ONNX model"},
		{"empty", nil, "onnx: bad: no graph"},
		{"missing shape", encode(t, noShape), `node[0] "mm1" (MatMul): output "h" has no shape: run shape inference first`},
		{"symbolic", encode(t, symbolic), `graph input "x" dimension 0 is symbolic ("batch")`},
		{"unknown op", encode(t, unknown), `node[2] (FancyRelu): unknown op type "FancyRelu"`},
		{"dangling", encode(t, dangling), `input "nowhere" has no shape`},
		{"produced twice", encode(t, dupOut), `output "h" is produced twice`},
	} {
		g, err := Decode(c.data, "bad")
		if err == nil {
			t.Errorf("%s: no error (%d ops)", c.name, g.NumOps())
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, err, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	if !Detect(encode(t, mlp())) {
		t.Error("an ONNX model is not detected")
	}
	for _, s := range []string{`{"format": "placer-graph"}`, "node {\n name: \"a\"\n}", "", "\x08"} {
		if Detect([]byte(s)) {
			t.Errorf("%q detected as ONNX", s)
		}
	}
}

// TestReadFile reads a model written to disk and names the graph after it.
func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tiny.onnx")
	if err := os.WriteFile(p, encode(t, mlp()), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "tiny" {
		t.Errorf("name %q", g.Name())
	}
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.Decode(buf.Bytes()); err != nil {
		t.Fatalf("imported graph does not re-read: %v", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing.onnx")); err == nil || !strings.HasPrefix(err.Error(), "onnx: ") {
		t.Errorf("missing file: %v", err)
	}
}

// TestTorchExported reads testdata/torch_cnn.onnx: tools/dev/torchexport's
// SmallCNN (eval mode, batch 2, 16x16) exported by torch 1.13's
// torch.onnx.export (opset 13, batch norm folded into the first Conv)
// with onnx 1.12's shape inference run. Expected values by hand.
func TestTorchExported(t *testing.T) {
	g, err := Read("testdata/torch_cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"/features/features.0/Conv":              2*4096*27 + 4096, // Y [2,8,16,16], W [8,3,3,3], bias
		"/features/features.2/Relu":              4096,
		"/features/features.3/MaxPool":           1024 * 4,         // Y [2,8,8,8], 2x2 window
		"/features/features.4/Conv":              2*2048*72 + 2048, // Y [2,16,8,8], W [16,8,3,3], bias
		"/features/features.5/Relu":              2048,
		"/features/features.6/GlobalAveragePool": 2048,
		"/Flatten":                               0,
		"/classifier/Gemm":                       2*2*10*16 + 20, // M 2, N 10, K 16, C
	}
	for name, flops := range want {
		i, ok := g.Lookup(name)
		if !ok {
			t.Fatalf("no op %s", name)
		}
		if got := g.Op(i).FLOPs; got != flops {
			t.Errorf("%s: %g FLOPs, want %g", name, got, flops)
		}
	}
	// Weights: conv1 8·27 + 8, conv2 16·72 + 16, classifier 10·16 + 10, f32.
	if got, want := g.Stats().ParamBytes, int64(4*(8*27+8+16*72+16+10*16+10)); got != want {
		t.Errorf("param bytes %d, want %d", got, want)
	}
	if i, _ := g.Lookup("/Flatten"); !g.Op(i).Alias {
		t.Error("Flatten is not a view")
	}
}
