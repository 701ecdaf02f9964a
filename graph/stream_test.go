package graph

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// chunkReader serves data n bytes at a time and can seek: Read's streaming
// path with every token split across reads somewhere.
type chunkReader struct {
	*bytes.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.Reader.Read(p[:min(len(p), c.n)])
}

// sameOutcome fails unless the fast decoder's result on data, when it has
// one, is exactly the reference decoder's: the same graph or the same
// error. It reports whether the fast path decoded data.
func sameOutcome(t *testing.T, data []byte) bool {
	t.Helper()
	fast, ferr := fastDecode(nil, data)
	for _, n := range []int{1, 7, 4096} {
		s, serr := fastDecode(&chunkReader{bytes.NewReader(data), n}, nil)
		if (ferr == errSlow) != (serr == errSlow) || !sameResult(fast, ferr, s, serr) {
			t.Fatalf("from a reader (%d bytes a read): %v, %v; from bytes: %v, %v", n, s, serr, fast, ferr)
		}
	}
	if ferr == errSlow {
		return false
	}
	ref, rerr := decodeRef(data)
	if !sameResult(fast, ferr, ref, rerr) {
		t.Fatalf("fast path: %v; reference: %v\ninput %q", ferr, rerr, data)
	}
	return true
}

func sameResult(g1 *Graph, err1 error, g2 *Graph, err2 error) bool {
	if (err1 == nil) != (err2 == nil) {
		return false
	}
	if err1 != nil {
		return err1.Error() == err2.Error()
	}
	return sameGraph(g1, g2)
}

// sameGraph compares two graphs field by field; their name indexes, whose
// layouts may differ, by what they find.
func sameGraph(g1, g2 *Graph) bool {
	c1, c2 := *g1, *g2
	c1.index, c2.index = nameIndex{}, nameIndex{}
	if !reflect.DeepEqual(c1, c2) || g1.index.n != g2.index.n {
		return false
	}
	for i := range g1.ops {
		j1, ok1 := g1.Lookup(g1.ops[i].Name)
		j2, ok2 := g2.Lookup(g1.ops[i].Name)
		if j1 != j2 || ok1 != ok2 {
			return false
		}
	}
	return true
}

// TestFastDecodeWritten: what Write writes always takes the fast path,
// with the reference decoder's result, from bytes and from a file in
// small reads.
func TestFastDecodeWritten(t *testing.T) {
	b := NewBuilder("every field \u00e9")
	a := b.AddOp(Op{Name: "a", Class: ClassMatMul, FLOPs: 10, Shape: []int64{2, 3}, HasTime: true, Time: 1.5e-3})
	m := b.AddOp(Op{Name: "b", Type: "Mul", Class: ClassElementwise, DType: BF16, Backward: true, Alias: true, BytesRead: 5, BytesWritten: 6})
	c := b.AddOp(Op{Name: "c \"quoted\" \u00e9\u2028", Colocation: "g", ParamBytes: 1 << 40, TempBytes: 7, FLOPs: 0.125})
	b.AddOp(Op{Name: "d", Colocation: "g"})
	b.AddTensorFull(Tensor{Name: "t", Producer: a, Consumers: []int{m, c}, Bytes: 3, HasTransferTime: true, TransferTime: 0.25})
	b.AddTensor(m, 0)
	b.AddControl(a, c)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !sameOutcome(t, buf.Bytes()) {
		t.Fatalf("Write's output did not take the fast path:\n%s", buf.Bytes())
	}
	g2, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if Hash(g2) != Hash(g) || g2.Op(2).Name != g.Op(2).Name || g2.Name() != g.Name() {
		t.Fatal("decoding what Write wrote changed the graph")
	}
	p := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g3, err := Read(f)
	if err != nil || !sameGraph(g2, g3) {
		t.Fatalf("Read from a file: %v", err)
	}
}

// TestFastDecodeFallsBack: inputs the fast path leaves to the reference
// decoder come out as the reference decoder has them (a graph, or its
// error message with line and column), through Decode and through Read
// from a file.
func TestFastDecodeFallsBack(t *testing.T) {
	const head = `{"format":"placer-graph","version":1,`
	cases := []struct{ in, want string }{
		{head + `"ops":[{"name":"a","Class":"matmul"}]}`, ""}, // keys match case-insensitively
		{head + `"tensors":[],"ops":[{"name":"a"}]}`, ""},
		{head + `"ops":[{"name":"a","flops":null}]}`, ""},
		{head + `"ops":[{"name":"a","flops":1,"flops":2}]}`, ""},
		{head + `"ops":[{"n\u0061me":"a"}]}`, ""},
		{head + `"ops":[{"name":"a"}]}` + "\v", ""},
		{head + `"ops":[{"name":"a"},{"name":"a"}]}`, `graph: op "a": duplicate op name`},
		{head + `"ops":[{"name":"a","class":"nope"}]}`, `graph: op "a": class: unknown op class "nope"`},
		{head + `"ops":[{"name":""}]}`, `graph: op #0: name: empty`},
		{head + `"ops":[{"name":"a","bytes_read":1.5}]}`, `line 1, column`},
		{head + `"ops":[{"name":"a"}],"tensors":[{"producer":"b","consumers":[]}]}`, `graph: tensor 0: producer: op "b" does not exist`},
		{head + `"ops":[{"name":"a"}],"control":[{"from":"a","to":"z"}]}`, `graph: control[0]: op "z" does not exist`},
		{head + "\n" + `"ops":[{"name":"a","extra":1}]}`, `unknown field "extra"`},
		{head + "\n" + `"ops":[{"name":"a",}]}`, `line 2, column 21`},
		{head + `"ops":[{"name":"a"}]} x`, `unexpected data after the JSON value`},
		{head + `"ops":[{"name":"a"}]`, `truncated`},
		{`{"format":"placer-graph","version":3,"ops":[{"name":"a"}]}`, `format version 3 is not supported`},
	}
	for _, tc := range cases {
		data := []byte(tc.in)
		if _, err := fastDecode(nil, data); err != errSlow {
			t.Errorf("%s: fast path gave %v, want errSlow", tc.in, err)
		}
		ref, rerr := decodeRef(data)
		g, err := Decode(data)
		if !sameResult(g, err, ref, rerr) {
			t.Errorf("%s: Decode gave %v, reference %v", tc.in, err, rerr)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to contain %q", tc.in, err, tc.want)
		}
		p := filepath.Join(t.TempDir(), "g.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		g2, err2 := Read(f)
		f.Close()
		if !sameResult(g2, err2, ref, rerr) {
			t.Errorf("%s: Read gave %v, reference %v", tc.in, err2, rerr)
		}
	}
}

// failingReader fails after its data.
type failingReader struct{ *bytes.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.Reader.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestFastDecodeReadError(t *testing.T) {
	_, err := Read(failingReader{bytes.NewReader([]byte(`{"format":"placer-graph","version":1,"ops":[{"name":"a"}]`))})
	if err == nil || err.Error() != "graph: read: disk on fire" {
		t.Fatalf("err = %v", err)
	}
}

// FuzzFastDecode: wherever the fast path decodes an input, from bytes or
// from a reader in pieces, it agrees with the reference decoder.
func FuzzFastDecode(f *testing.F) {
	f.Add([]byte(`{"format":"placer-graph","version":1,"name":"x","ops":[{"name":"a","class":"matmul","flops":2},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"ops":[{"name":"a","time_s":0.5,"colocation":"g"},{"name":"b","colocation":"g","shape":[2,3],"dtype":"bf16"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4,"transfer_s":0.1}],"control":[{"from":"a","to":"b"}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"name":"\u00e9","ops":[{"name":"a\\"b","type":"T","backward":true,"alias":false,"bytes_read":12,"bytes_written":-0,"param_bytes":1e2,"temp_bytes":3,"flops":-0}],"tensors":[{"name":"t","producer":"a\"b","consumers":[],"bytes":1}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"ops":[{"name":"a","flops":1.5e300,"time_s":1E-7}]}`))
	for i := 0; i < 3; i++ {
		f.Add([]byte(fmt.Sprintf(`{"format":"placer-graph","version":1,"ops":[{"name":"a%d"},{"name":"b"}],"tensors":[{"producer":"b","consumers":["a%d"],"bytes":%d}]}`, i, i, i)))
	}
	// Batch information (version 2), valid and not.
	f.Add([]byte(`{"format":"placer-graph","version":2,"name":"b","batch":8,"ops":[{"name":"x","shape":[8,4],"bytes_written":128},{"name":"mm","flops":1024,"bytes_read":192,"fixed_bytes_read":64,"fixed_flops":0},{"name":"u","flops":2,"fixed_flops":2,"bytes_written":4,"fixed_bytes_written":4,"temp_bytes":8,"fixed_temp_bytes":8}],"tensors":[{"producer":"x","consumers":["mm"],"bytes":128,"batch_dim":0},{"producer":"mm","consumers":["u"],"bytes":8,"batch_dim":-1}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"batch":2,"ops":[{"name":"a"}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":2,"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4,"batch_dim":0}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":2,"ops":[{"name":"a"}],"batch":4,"tensors":[{"producer":"a","consumers":[],"bytes":8,"batch_dim":300}]}`))
	// Execution settings, valid and not.
	f.Add([]byte(`{"format":"placer-graph","version":1,"execution":{"version":1,"device":"cuda","optimizer":"adam","optimizer_impl":"fused","optimizer_from":"b","autocast":"bf16","tf32_cudnn":true,"cudnn_rnn":true,"cuda_graphs":true,"compile":"default"},"ops":[{"name":"a"},{"name":"b"}],"tensors":[{"producer":"a","consumers":["b"],"bytes":4}]}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"ops":[{"name":"a"}],"execution":{"version":1,"optimizer_from":"a"}}`))
	f.Add([]byte(`{"format":"placer-graph","version":1,"ops":[{"name":"a"}],"execution":{"version":1,"compile":"x","tf32_matmul":false}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameOutcome(t, data)
	})
}

// TestFastDecodeLarge: a graph larger than a block of ops, tensors and
// consumer lists (so that lists cross blocks) decodes as the reference
// decoder has it, and finds every op by name.
func TestFastDecodeLarge(t *testing.T) {
	const n = 20000
	b := NewBuilder("large")
	for i := range n {
		b.AddOp(Op{Name: fmt.Sprintf("layer%d/op", i), Type: []string{"MatMul", "Add", "Relu"}[i%3], Class: ClassElementwise, FLOPs: float64(i)})
	}
	for i := range n - 1 {
		var cons []int
		for k := 1; k <= i%4 && i+k < n; k++ {
			cons = append(cons, i+k)
		}
		b.AddTensor(i, int64(i), cons...)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !sameOutcome(t, buf.Bytes()) {
		t.Fatal("did not take the fast path")
	}
	g2, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if Hash(g2) != Hash(g) {
		t.Fatal("the graph changed")
	}
	for i := range n {
		if j, ok := g2.Lookup(fmt.Sprintf("layer%d/op", i)); !ok || j != i {
			t.Fatalf("Lookup(op %d) = %d, %v", i, j, ok)
		}
	}
	if _, ok := g2.Lookup("layer20000/op"); ok {
		t.Fatal("found an op that is not there")
	}
}

// TestNameIndex: every name added is found at its index, a second op of
// a name is reported and leaves the first in place, and names not added
// are not found, across the index's growth.
func TestNameIndex(t *testing.T) {
	var x nameIndex
	var ops []Op
	if _, ok := x.lookup(ops, "a"); ok {
		t.Fatal("found a name in an empty index")
	}
	for i := range 5000 {
		ops = append(ops, Op{Name: strconv.Itoa(i % 4000)})
		if dup := x.add(ops, i); dup != (i >= 4000) {
			t.Fatalf("add(%d): dup = %v", i, dup)
		}
	}
	for i := range 4000 {
		name := strconv.Itoa(i)
		if j, ok := x.lookup(ops, name); !ok || j != i {
			t.Fatalf("lookup(%q) = %d, %v", name, j, ok)
		}
		if j, ok := x.lookupBytes(ops, []byte(name)); !ok || j != i {
			t.Fatalf("lookupBytes(%q) = %d, %v", name, j, ok)
		}
	}
	for _, name := range []string{"4000", "-1", "", "x"} {
		if _, ok := x.lookup(ops, name); ok {
			t.Fatalf("found %q", name)
		}
	}
	if x.n != 4000 || len(x.slots) < 2*x.n {
		t.Fatalf("%d names in %d slots", x.n, len(x.slots))
	}
}
