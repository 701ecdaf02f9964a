package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads/onnx/onnxpb"
)

// Read imports the ONNX model at path. The graph is named after the file,
// without its directory and extension.
func Read(path string) (*graph.Graph, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return Decode(data, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
}

// Decode imports the ONNX model held in data and names the graph name.
func Decode(data []byte, name string) (*graph.Graph, error) {
	what := "onnx"
	if name != "" {
		what += ": " + name
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not an ONNX model (truncated or not a ModelProto): %s", what, oneLine(err.Error()))
	}
	return FromProto(&m, name)
}

// Detect reports whether data looks like an ONNX ModelProto: its first
// field is ir_version (field 1, a varint) followed by producer_name,
// graph or opset_import, the order ONNX's writers use.
func Detect(data []byte) bool {
	if len(data) < 3 || data[0] != 0x08 || data[1] == 0 || data[1] >= 0x80 {
		return false
	}
	switch data[2] {
	case 0x12, 0x1a, 0x22, 0x28, 0x32, 0x3a, 0x42:
		return true
	}
	return false
}

// value is what is known of one named value: its element type and shape.
type value struct {
	elem  int32
	shape []int64
	known bool // the shape is known and every dimension is a number
	why   string
}

// maxElems bounds the element count of one tensor (2^53: float64 counts
// stay exact).
const maxElems = 1 << 53

// maxBytes bounds the bytes one op reads or writes.
const maxBytes = 1 << 60

// FromProto converts a decoded ModelProto.
func FromProto(m *onnxpb.ModelProto, name string) (*graph.Graph, error) {
	what := "onnx"
	if name != "" {
		what += ": " + name
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", what, oneLine(fmt.Sprintf(format, args...)))
	}
	gp := m.GetGraph()
	if gp == nil {
		return nil, fail("no graph (is this an ONNX model?)")
	}
	if len(gp.GetNode()) == 0 {
		return nil, fail("graph %q has no nodes", gp.GetName())
	}
	for _, o := range m.GetOpsetImport() {
		if d := o.GetDomain(); d != "" && d != "ai.onnx" && d != "ai.onnx.ml" {
			return nil, fail("opset domain %q is not supported (only ONNX's default domain)", d)
		}
	}

	values := map[string]*value{}
	setInfo := func(vi *onnxpb.ValueInfoProto) {
		tt := vi.GetType().GetTensorType()
		if tt == nil || vi.GetName() == "" {
			return
		}
		v := &value{elem: tt.GetElemType()}
		if sh := tt.GetShape(); sh == nil {
			v.why = "has no shape"
		} else {
			v.known = true
			for k, d := range sh.GetDim() {
				switch x := d.GetValue().(type) {
				case *onnxpb.TensorShapeProto_Dimension_DimValue:
					if x.DimValue < 0 {
						v.known, v.why = false, fmt.Sprintf("dimension %d is negative (%d)", k, x.DimValue)
					}
					v.shape = append(v.shape, x.DimValue)
				case *onnxpb.TensorShapeProto_Dimension_DimParam:
					v.known, v.why = false, fmt.Sprintf("dimension %d is symbolic (%q): export with fixed sizes", k, x.DimParam)
				default:
					v.known, v.why = false, fmt.Sprintf("dimension %d is unknown", k)
				}
				if !v.known {
					break
				}
			}
		}
		values[vi.GetName()] = v
	}
	for _, vi := range gp.GetInput() {
		setInfo(vi)
	}
	for _, vi := range gp.GetValueInfo() {
		setInfo(vi)
	}
	for _, vi := range gp.GetOutput() {
		setInfo(vi)
	}
	inits := map[string]bool{}
	for i, t := range gp.GetInitializer() {
		if t.GetName() == "" {
			return nil, fail("initializer[%d] has no name", i)
		}
		for k, d := range t.GetDims() {
			if d < 0 {
				return nil, fail("initializer %q: dims[%d] is negative (%d)", t.GetName(), k, d)
			}
		}
		values[t.GetName()] = &value{elem: t.GetDataType(), shape: t.GetDims(), known: true}
		inits[t.GetName()] = true
	}
	// Constant nodes carry their value's shape in an attribute.
	for _, n := range gp.GetNode() {
		if n.GetOpType() != "Constant" || n.GetDomain() != "" || len(n.GetOutput()) != 1 {
			continue
		}
		for _, a := range n.GetAttribute() {
			if a.GetName() == "value" && a.GetT() != nil {
				if _, ok := values[n.GetOutput()[0]]; !ok {
					values[n.GetOutput()[0]] = &value{elem: a.GetT().GetDataType(), shape: a.GetT().GetDims(), known: true}
				}
			}
		}
	}

	// Element counts and sizes, checked once.
	bytesOf := func(v *value) (int64, string) {
		size, ok := elemSize[v.elem]
		if !ok {
			return 0, fmt.Sprintf("element type %d is not supported", v.elem)
		}
		n := int64(1)
		for _, d := range v.shape {
			if d != 0 && n > maxElems/d {
				return 0, "has more than 2^53 elements"
			}
			n *= d
		}
		return n * size, ""
	}
	numel := func(v *value) int64 {
		n := int64(1)
		for _, d := range v.shape {
			n *= d
		}
		return n
	}

	b := graph.NewBuilder(name)
	producer := map[string]int{} // value name -> tensor index
	consumers := map[string]int{}
	for _, n := range gp.GetNode() {
		for _, in := range n.GetInput() {
			if in != "" {
				consumers[in]++
			}
		}
	}

	nodeDesc := func(i int, n *onnxpb.NodeProto) string {
		if n.GetName() != "" {
			return fmt.Sprintf("node[%d] %q (%s)", i, n.GetName(), n.GetOpType())
		}
		return fmt.Sprintf("node[%d] (%s)", i, n.GetOpType())
	}
	uniqueName := func(base string) string {
		nm := base
		for k := 2; ; k++ {
			if _, taken := b.Lookup(nm); !taken {
				return nm
			}
			nm = fmt.Sprintf("%s#%d", base, k)
		}
	}

	// Graph inputs that are not initializers: one Input op each.
	for _, vi := range gp.GetInput() {
		nm := vi.GetName()
		if inits[nm] || nm == "" {
			continue
		}
		if _, dup := producer[nm]; dup {
			return nil, fail("graph input %q is listed twice", nm)
		}
		v := values[nm]
		if v == nil || !v.known {
			why := "has no tensor type"
			if v != nil {
				why = v.why
			}
			return nil, fail("graph input %q %s", nm, why)
		}
		by, msg := bytesOf(v)
		if msg != "" {
			return nil, fail("graph input %q %s", nm, msg)
		}
		op := b.AddOp(graph.Op{Name: uniqueName("input:" + nm), Type: "Input", Class: graph.ClassDataMovement,
			DType: dtypeOf(v.elem), Shape: shapeOf(v.shape)})
		producer[nm] = b.AddTensorFull(graph.Tensor{Name: nm, Producer: op, Bytes: by})
	}
	// Initializers read by more than one node: one Initializer op each.
	for _, t := range gp.GetInitializer() {
		nm := t.GetName()
		if consumers[nm] < 2 {
			continue
		}
		if _, dup := producer[nm]; dup {
			return nil, fail("initializer %q is listed twice", nm)
		}
		v := values[nm]
		by, msg := bytesOf(v)
		if msg != "" {
			return nil, fail("initializer %q %s", nm, msg)
		}
		op := b.AddOp(graph.Op{Name: uniqueName("init:" + nm), Type: "Initializer", Class: graph.ClassDataMovement,
			DType: dtypeOf(v.elem), Shape: shapeOf(v.shape), ParamBytes: by})
		producer[nm] = b.AddTensorFull(graph.Tensor{Name: nm, Producer: op, Bytes: by})
	}

	// Nodes, in file order (ONNX requires a topological order; Build
	// reports a cycle otherwise).
	type pending struct {
		op  int
		ins []string
	}
	var nodes []pending
	for i, n := range gp.GetNode() {
		desc := nodeDesc(i, n)
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			return nil, fail("%s: op domain %q is not supported", desc, d)
		}
		f, ok := formulas[n.GetOpType()]
		if !ok {
			return nil, fail("%s: unknown op type %q (docs/importers.md lists the supported ops)", desc, n.GetOpType())
		}
		if len(n.GetOutput()) == 0 {
			return nil, fail("%s: no outputs", desc)
		}
		// Inputs: shapes needed by the formulas.
		ins := make([]*value, len(n.GetInput()))
		var read int64
		for k, in := range n.GetInput() {
			if in == "" {
				continue // an omitted optional input
			}
			v := values[in]
			if v == nil || !v.known {
				why := "has no shape"
				if v != nil {
					why = v.why
				}
				return nil, fail("%s: input %q %s: run shape inference first (onnx.shape_inference.infer_shapes)", desc, in, why)
			}
			by, msg := bytesOf(v)
			if msg != "" {
				return nil, fail("%s: input %q %s", desc, in, msg)
			}
			ins[k] = v
			if read += by; read > maxBytes {
				return nil, fail("%s: reads more than 2^60 bytes", desc)
			}
		}
		outs := make([]*value, len(n.GetOutput()))
		var written int64
		for k, out := range n.GetOutput() {
			if out == "" {
				continue
			}
			v := values[out]
			if v == nil || !v.known {
				why := "has no shape"
				if v != nil {
					why = v.why
				}
				return nil, fail("%s: output %q %s: run shape inference first (onnx.shape_inference.infer_shapes)", desc, out, why)
			}
			by, msg := bytesOf(v)
			if msg != "" {
				return nil, fail("%s: output %q %s", desc, out, msg)
			}
			outs[k] = v
			if written += by; written > maxBytes {
				return nil, fail("%s: writes more than 2^60 bytes", desc)
			}
		}
		if outs[0] == nil {
			return nil, fail("%s: first output has no name", desc)
		}
		c := f(ins, outs, attrs(n), numel)
		if c.err != "" {
			return nil, fail("%s: %s", desc, c.err)
		}
		if math.IsInf(c.flops, 0) || math.IsNaN(c.flops) || c.flops < 0 {
			return nil, fail("%s: FLOPs out of range", desc)
		}
		op := graph.Op{
			Type: n.GetOpType(), Class: c.class, DType: dtypeOf(outs[0].elem), Shape: shapeOf(outs[0].shape),
			FLOPs: c.flops, BytesRead: read, BytesWritten: written, Alias: c.view,
		}
		if c.view {
			op.BytesRead, op.BytesWritten = 0, 0
		}
		if c.gather {
			// A gather reads the rows it picks and the indices, not the table.
			op.BytesRead = written
			if len(ins) > 1 && ins[1] != nil {
				by, _ := bytesOf(ins[1])
				op.BytesRead += by
			}
		}
		// Initializers read by this node alone are its parameters.
		var ins2 []string
		for k, in := range n.GetInput() {
			if in == "" {
				continue
			}
			if inits[in] && consumers[in] < 2 {
				by, _ := bytesOf(ins[k])
				op.ParamBytes += by
				continue
			}
			ins2 = append(ins2, in)
		}
		base := n.GetName()
		if base == "" {
			base = fmt.Sprintf("%s_%d", n.GetOpType(), i)
		}
		op.Name = uniqueName(base)
		id := b.AddOp(op)
		for _, out := range n.GetOutput() {
			if out == "" {
				continue
			}
			if _, dup := producer[out]; dup {
				return nil, fail("%s: output %q is produced twice", desc, out)
			}
			by, _ := bytesOf(values[out])
			producer[out] = b.AddTensorFull(graph.Tensor{Name: out, Producer: id, Bytes: by})
		}
		nodes = append(nodes, pending{op: id, ins: ins2})
	}
	for k, p := range nodes {
		seen := map[int]bool{}
		for _, in := range p.ins {
			t, ok := producer[in]
			if !ok {
				return nil, fail("%s: input %q is produced by no node, graph input or initializer", nodeDesc(k, gp.GetNode()[k]), in)
			}
			if !seen[t] {
				seen[t] = true
				b.Consume(t, p.op)
			}
		}
	}
	g, err := b.Build()
	if err != nil {
		var cyc *graph.CycleError
		if errors.As(err, &cyc) {
			return nil, fail("cycle through %s", strings.Join(cyc.Ops[:min(len(cyc.Ops), 8)], " -> "))
		}
		return nil, fail("%v", err)
	}
	return g, nil
}

// oneLine folds an error message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// elemSize is the size in bytes of ONNX's element types (TensorProto.DataType).
var elemSize = map[int32]int64{
	1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16, 16: 2,
}

// dtypeOf maps an ONNX element type to placer's; types placer has no
// equivalent for (unsigned, 16-bit integers, complex) count as f32 for the
// arithmetic while their bytes keep their own size.
func dtypeOf(elem int32) graph.DType {
	switch elem {
	case 10:
		return graph.F16
	case 16:
		return graph.BF16
	case 11:
		return graph.F64
	case 6:
		return graph.I32
	case 7:
		return graph.I64
	case 2, 3:
		return graph.I8
	case 9:
		return graph.Bool
	}
	return graph.F32
}

func shapeOf(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return append([]int64(nil), s...)
}
