package graph

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// tinyBatched is docs/graph-format.md's example with batch information: a
// batch of 64 rows x (64 x 1024, f16) times a 1024 x 4096 weight, a ReLU,
// and the weight's SGD update.
func tinyBatched(t *testing.T) *Graph { return tinyGraph(t, true) }

// tinyGraph is tinyBatched, without its batch information unless batched.
func tinyGraph(t *testing.T, batched bool) *Graph {
	t.Helper()
	b := NewBuilder("tiny")
	x := b.AddOp(Op{Name: "x", Type: "Placeholder", Class: ClassDataMovement, DType: F16, Shape: []int64{64, 1024}, BytesWritten: 131072})
	mm := b.AddOp(Op{Name: "dense/MatMul", Type: "MatMul", Class: ClassMatMul, DType: F16, Shape: []int64{64, 4096},
		FLOPs: 536870912, BytesRead: 8519680, BytesWritten: 524288, FixedBytesRead: 8388608, Colocation: "dense"})
	relu := b.AddOp(Op{Name: "dense/Relu", Type: "Relu", Class: ClassElementwise, DType: F16, Shape: []int64{64, 4096},
		FLOPs: 262144, BytesRead: 524288, BytesWritten: 524288, HasTime: true, Time: 8e-6})
	sgd := b.AddOp(Op{Name: "sgd/dense", Type: "ApplyGradientDescent", Class: ClassElementwise, DType: F16,
		FLOPs: 8388608, BytesRead: 16777216, BytesWritten: 8388608, ParamBytes: 16777216, Colocation: "dense", Backward: true,
		FixedFLOPs: 8388608, FixedBytesRead: 16777216, FixedBytesWritten: 8388608, HasTime: true, Time: 2e-5})
	b.AddTensorFull(Tensor{Producer: x, Consumers: []int{mm}, Bytes: 131072, BatchDim: 0})
	b.AddTensorFull(Tensor{Producer: mm, Consumers: []int{relu}, Bytes: 524288, BatchDim: 0, HasTransferTime: true, TransferTime: 4e-5})
	b.AddTensor(relu, 100) // no batch dimension
	b.AddControl(relu, sgd)
	if batched {
		b.SetBatch(64)
	} else {
		for i := range 4 {
			op := b.Op(i)
			op.FixedFLOPs, op.FixedBytesRead, op.FixedBytesWritten = 0, 0, 0
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAtBatchByHand: at a quarter of the batch the matmul has a quarter
// of its FLOPs and activation bytes and all of its weight read, the
// update is unchanged, a batched tensor has a quarter of its bytes.
func TestAtBatchByHand(t *testing.T) {
	g := tinyBatched(t)
	q, err := AtBatch(g, 16)
	if err != nil {
		t.Fatal(err)
	}
	if q.Batch() != 16 || g.Batch() != 64 {
		t.Fatalf("batches %d, %d", q.Batch(), g.Batch())
	}
	mm := q.Op(1)
	if mm.FLOPs != 536870912/4 || mm.BytesRead != 8388608+131072/4 || mm.BytesWritten != 524288/4 || mm.FixedBytesRead != 8388608 {
		t.Fatalf("matmul at 16: %+v", *mm)
	}
	if s := mm.Shape; len(s) != 2 || s[0] != 16 || s[1] != 4096 {
		t.Fatalf("matmul shape %v", s)
	}
	if s := q.Op(0).Shape; s[0] != 16 || s[1] != 1024 || g.Op(0).Shape[0] != 64 {
		t.Fatalf("placeholder shape %v (was %v)", s, g.Op(0).Shape)
	}
	if relu := q.Op(2); relu.FLOPs != 65536 || relu.BytesRead != 131072 || relu.Time != 2e-6 {
		t.Fatalf("relu at 16: %+v", *relu)
	}
	if sgd, was := q.Op(3), g.Op(3); sgd.FLOPs != was.FLOPs || sgd.BytesRead != was.BytesRead || sgd.BytesWritten != was.BytesWritten ||
		sgd.ParamBytes != was.ParamBytes || sgd.Time != was.Time {
		t.Fatalf("update at 16: %+v", *sgd)
	}
	if b0, b1, b2 := q.Tensor(0).Bytes, q.Tensor(1).Bytes, q.Tensor(2).Bytes; b0 != 32768 || b1 != 131072 || b2 != 100 {
		t.Fatalf("tensor bytes %d %d %d", b0, b1, b2)
	}
	if tt := q.Tensor(1).TransferTime; tt != 1e-5 {
		t.Fatalf("transfer time %g", tt)
	}
	// Rounded up where b/B does not divide: 131072 x 3 / 64 is whole,
	// an odd byte count is not.
	three, err := AtBatch(g, 3)
	if err != nil {
		t.Fatal(err)
	}
	if three.Tensor(0).Bytes != 6144 || three.Op(0).Shape[0] != 3 {
		t.Fatalf("at 3: %d bytes, shape %v", three.Tensor(0).Bytes, three.Op(0).Shape)
	}
	if scaleUp(7, 1, 2) != 4 || scaleUp(MaxBytes, 3, 7) != (MaxBytes*3+6)/7 || scaleUp(1<<62, 1<<30-1, 1<<30) != (1<<62)/(1<<30)*(1<<30-1) {
		t.Fatal("scaleUp rounds wrong")
	}
	// The adjacency is shared, the original untouched.
	if &q.Topo()[0] != &g.Topo()[0] || g.Op(1).FLOPs != 536870912 || g.Tensor(0).Bytes != 131072 {
		t.Fatal("AtBatch changed g or copied its adjacency")
	}
	if j, ok := q.Lookup("sgd/dense"); !ok || j != 3 {
		t.Fatal("lookup at 16")
	}
	if same, _ := AtBatch(g, 64); same != g {
		t.Fatal("AtBatch(g, B) is not g")
	}
}

func TestAtBatchRefused(t *testing.T) {
	g, err := chainBuilder().Build()
	if err != nil {
		t.Fatal(err)
	}
	if g.Batch() != 0 || g.Tensor(0).BatchDim != NoBatch {
		t.Fatalf("no batch: batch %d, batch dim %d", g.Batch(), g.Tensor(0).BatchDim)
	}
	tiny := tinyBatched(t)
	for _, tc := range []struct {
		g    *Graph
		b    int
		want string
	}{
		{g, 1, `graph "chain" has no batch information`},
		{tiny, 0, "micro-batch 0 is out of range: its batch is 64 examples (want 1 to 64)"},
		{tiny, 65, "micro-batch 65 is out of range"},
		{tiny, -3, "micro-batch -3 is out of range"},
	} {
		_, err := AtBatch(tc.g, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("AtBatch(%s, %d) = %v, want one line with %q", tc.g.Name(), tc.b, err, tc.want)
		}
	}
}

func TestBatchValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(b *Builder)
		want string
	}{
		{"fixed without batch", func(b *Builder) { b.Op(0).FixedFLOPs = 1 }, `op "a": fixed_flops: set, but the graph has no batch`},
		{"fixed above total", func(b *Builder) { b.SetBatch(8); b.Op(0).FixedFLOPs = 11 }, `op "a": fixed_flops: 11 is more than flops, 10`},
		{"fixed bytes above total", func(b *Builder) { b.SetBatch(8); b.Op(1).FixedBytesWritten = 1 }, `op "b": fixed_bytes_written: 1 is more than bytes_written, 0`},
		{"negative fixed", func(b *Builder) { b.SetBatch(8); b.Op(1).FixedTempBytes = -1 }, `op "b": fixed_temp_bytes: is negative`},
		{"NaN fixed", func(b *Builder) { b.SetBatch(8); b.Op(0).FixedFLOPs = nan() }, `op "a": fixed_flops: is NaN`},
		{"negative batch", func(b *Builder) { b.SetBatch(-2) }, `batch: -2 is not a batch size`},
		{"bad batch dim", func(b *Builder) { b.SetBatch(8); b.Tensor(0).BatchDim = -2 }, `tensor 0: batch_dim: -2 is not a dimension`},
		{"batch dim too large", func(b *Builder) { b.SetBatch(8); b.Tensor(1).BatchDim = 256 }, `tensor 1: batch_dim: 256 is not a dimension`},
	} {
		b := chainBuilder()
		tc.edit(b)
		_, err := b.Build()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Without a batch, a tensor's batch dimension means nothing and reads
	// NoBatch; with one, AddTensor's tensors have none.
	b := chainBuilder()
	b.Tensor(0).BatchDim = 3
	g, err := b.Build()
	if err != nil || g.Tensor(0).BatchDim != NoBatch {
		t.Fatalf("batch dim in a graph without batch: %v, %d", err, g.Tensor(0).BatchDim)
	}
	b = chainBuilder()
	b.SetBatch(2)
	if g, err = b.Build(); err != nil || g.Tensor(1).BatchDim != NoBatch || g.Batch() != 2 {
		t.Fatalf("AddTensor with a batch: %v", err)
	}
}

// TestBatchJSON: batch information round-trips through both decoders as
// version 2; a graph without it writes version 1 as before; Hash ignores
// it; version 1 files with it, and batch dimensions without a batch, are
// refused.
func TestBatchJSON(t *testing.T) {
	g := tinyBatched(t)
	var buf bytes.Buffer
	if err := Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`"version": 2`, `"batch": 64`, `"fixed_bytes_read": 8388608`, `"fixed_flops": 8388608`, `"fixed_bytes_written": 8388608`, `"batch_dim": 0`} {
		if !strings.Contains(out, want) {
			t.Fatalf("Write's output lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, `"batch_dim"`) != 2 {
		t.Fatalf("want two batch_dim keys:\n%s", out)
	}
	if !sameOutcome(t, buf.Bytes()) {
		t.Fatal("a version 2 file did not take the fast path")
	}
	g2, err := decodeRef(buf.Bytes())
	if err != nil || g2.Batch() != 64 || g2.Tensor(1).BatchDim != 0 || g2.Tensor(2).BatchDim != NoBatch || !reflect.DeepEqual(g2.Op(3), g.Op(3)) {
		t.Fatalf("round trip: %v", err)
	}
	var buf2 bytes.Buffer
	Write(&buf2, g2)
	if buf2.String() != out {
		t.Fatal("round trip changed the file")
	}
	q, _ := AtBatch(g, 16)
	if Hash(g) == Hash(q) {
		t.Fatal("Hash does not tell the graph at 16 from the graph at 64")
	}

	// Without the batch information: version 1, the hash of the same
	// graph with the batch marks.
	var pb bytes.Buffer
	Write(&pb, tinyGraph(t, false))
	plain := pb.String()
	gp, err := Decode([]byte(plain))
	if err != nil {
		t.Fatalf("%v\n%s", err, plain)
	}
	if gp.Batch() != 0 || Hash(gp) != Hash(g) {
		t.Fatalf("batch %d; hashes %s, %s", gp.Batch(), Hash(gp), Hash(g))
	}
	var b1 bytes.Buffer
	Write(&b1, gp)
	if !strings.Contains(b1.String(), `"version": 1`) || strings.Contains(b1.String(), "batch") || strings.Contains(b1.String(), "fixed_") {
		t.Fatalf("a graph without batch information:\n%s", b1.String())
	}

	const head = `{"format":"placer-graph","version":`
	for _, tc := range []struct{ in, want string }{
		{head + `1,"batch":8,"ops":[{"name":"a"}]}`, `graph: batch: batch information needs format version 2 (this file says version 1)`},
		{head + `2,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4,"batch_dim":0}]}`, `graph: tensor 0: batch_dim: set, but the graph has no batch`},
		{head + `2,"ops":[{"name":"a","flops":2,"fixed_flops":1}]}`, `graph: op "a": fixed_flops: set, but the graph has no batch`},
		{head + `2,"batch":8,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4,"batch_dim":-7}]}`, `graph: tensor 0: batch_dim: -7 is not a dimension`},
		{head + `2,"batch":-8,"ops":[{"name":"a"}]}`, `graph: batch: -8 is not a batch size`},
		{head + `3,"ops":[{"name":"a"}]}`, `format version 3 is not supported (this placer reads versions 1 and 2)`},
		{head + `2,"ops":[{"name":"a"}],"batch":4,"tensors":[{"producer":"a","consumers":[],"bytes":8,"batch_dim":1}]}`, ``},
		{head + `2,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4,"batch_dim":-1}]}`, ``},
	} {
		sameOutcome(t, []byte(tc.in))
		g, err := Decode([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.want == "" && g.NumTensors() > 0 && g.Batch() > 0 && g.Tensor(0).BatchDim != 1:
			t.Errorf("%s: batch dim %d", tc.in, g.Tensor(0).BatchDim)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestScaleOps: op 1 at a quarter: 4 GFLOPs of which 2 fixed -> 1 and
// 0.5; 1,000 bytes read (600 fixed) -> 250 (150); 10 written -> 3
// (rounded up); op 0 untouched, and g itself unchanged.
func TestScaleOps(t *testing.T) {
	b := NewBuilder("s")
	b.SetBatch(2)
	a := b.AddOp(Op{Name: "a", FLOPs: 8, BytesRead: 8})
	c := b.AddOp(Op{Name: "c", FLOPs: 4e9, FixedFLOPs: 2e9, BytesRead: 1000, FixedBytesRead: 600, BytesWritten: 10})
	b.AddTensor(a, 8, c)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ScaleOps(g, []float64{1, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Op(c)
	if got.FLOPs != 1e9 || got.FixedFLOPs != 0.5e9 || got.BytesRead != 250 || got.FixedBytesRead != 150 || got.BytesWritten != 3 {
		t.Errorf("scaled op: %+v", got)
	}
	if s.Op(a).FLOPs != 8 || g.Op(c).FLOPs != 4e9 {
		t.Errorf("op 0 %v, the original's op 1 %v", s.Op(a).FLOPs, g.Op(c).FLOPs)
	}
	for _, f := range [][]float64{{1}, {1, 0}, {1, 1.5}} {
		if _, err := ScaleOps(g, f); err == nil {
			t.Errorf("factors %v: no error", f)
		}
	}
}

// WithDispatch gives each op with a dispatch time of 0 or more that time
// and leaves the others (negative) as they were; g is not changed; a
// time out of range, or a slice of another length, is refused.
func TestWithDispatch(t *testing.T) {
	g := tinyBatched(t)
	got, err := WithDispatch(g, []float64{-1, 2e-5, 0, -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		has bool
		d   float64
	}{{false, 0}, {true, 2e-5}, {true, 0}, {false, 0}} {
		if op := got.Op(i); op.HasDispatch != want.has || op.Dispatch != want.d {
			t.Errorf("op %d: dispatch %v %v, want %v %v", i, op.HasDispatch, op.Dispatch, want.has, want.d)
		}
		if g.Op(i).HasDispatch {
			t.Errorf("op %d: g changed", i)
		}
	}
	for _, bad := range [][]float64{{1}, {nan(), -1, -1, -1}, {inf(), -1, -1, -1}, {2 * MaxTime, -1, -1, -1}} {
		if _, err := WithDispatch(g, bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

// TestAtBatchConvShapes: a convolution's derived shapes follow the batch.
// ResNet-50's 3x3 layer of 64 channels at 56 x 56 px, a graph of batch
// 32 (DenseConv {32, 64, 64, 9, 3136}: 7,398,752,256 forward FLOPs, as
// TestDenseConv) and RegNetY's grouped layer (48 channels, 24 a group,
// 2,080,899,072 FLOPs at 32, as TestGroupedFLOPs), both at a micro-batch
// of 8: batch 8 and a quarter of the FLOPs (1,849,688,064 and
// 520,224,768), the graph at 32 untouched.
func TestAtBatchConvShapes(t *testing.T) {
	b := NewBuilder("convs")
	add := func(name string, weight, in, out []int64) int {
		w := b.AddOp(Op{Name: name + "/w", Type: "Parameter", Class: ClassDataMovement, Shape: weight})
		x := b.AddOp(Op{Name: name + "/x", Type: "Input", Class: ClassDataMovement, Shape: in})
		c := b.AddOp(Op{Name: name, Type: "convolution", Class: ClassConv, DType: F32, Shape: out, FLOPs: 1})
		b.AddTensor(w, 4, c)
		b.AddTensorFull(Tensor{Producer: x, Consumers: []int{c}, Bytes: 4, BatchDim: 0})
		y := b.AddOp(Op{Name: name + "/relu", Type: "relu", Class: ClassElementwise, Shape: out})
		b.AddTensorFull(Tensor{Producer: c, Consumers: []int{y}, Bytes: 4, BatchDim: 0})
		return c
	}
	dense := add("dense", []int64{64, 64, 3, 3}, []int64{32, 64, 56, 56}, []int64{32, 64, 56, 56})
	grouped := add("grouped", []int64{48, 24, 3, 3}, []int64{32, 48, 112, 112}, []int64{32, 48, 56, 56})
	b.SetBatch(32)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	q, err := AtBatch(g, 8)
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Op(dense).DenseConv; s != (ConvShape{8, 64, 64, 9, 3136}) || s.FLOPs() != 1849688064 {
		t.Errorf("dense at 8: %+v (%g FLOPs)", s, s.FLOPs())
	}
	if f := q.Op(grouped).GroupedFLOPs; f != 520224768 {
		t.Errorf("grouped at 8: %g FLOPs, want 520224768", f)
	}
	if g.Op(dense).DenseConv.Batch != 32 || g.Op(grouped).GroupedFLOPs != 2080899072 {
		t.Error("AtBatch changed g's convolutions")
	}
}
