package msrfiddle

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

func TestSmallFixture(t *testing.T) {
	g, meta, err := ReadWithMeta("testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.AtBatch(g, 1); g.Batch() != 0 || err == nil || !strings.Contains(err.Error(), "no batch information") {
		t.Errorf("batch %d, AtBatch: %v; want no batch information", g.Batch(), err)
	}
	if g.Name() != "small" {
		t.Errorf("name %q, want small", g.Name())
	}
	want := Meta{MaxBytesPerDevice: 1_000_000_000, Devices: 2, CPUs: 1, CPUOnly: 1}
	if meta != want {
		t.Errorf("meta %+v, want %+v", meta, want)
	}
	ops := []graph.Op{
		{Name: "input", HasTime: true, Time: 0.0005, ParamBytes: 1000},
		{Name: "conv", HasTime: true, Time: 0.002, ParamBytes: 4096, Colocation: "color-2"},
		{Name: "relu", HasTime: true, Time: 0.00025},
		{Name: "conv_grad", HasTime: true, Time: 0.0035, ParamBytes: 4096, Colocation: "color-2", Backward: true},
		{Name: "input_grad", HasTime: true, Time: 0.001, ParamBytes: 1001, Backward: true},
	}
	if len(g.Ops()) != len(ops) {
		t.Fatalf("%d ops, want %d", len(g.Ops()), len(ops))
	}
	for i, op := range g.Ops() {
		w := ops[i]
		if op.Name != w.Name || op.HasTime != w.HasTime || math.Abs(op.Time-w.Time) > 1e-15 || op.ParamBytes != w.ParamBytes ||
			op.Colocation != w.Colocation || op.Backward != w.Backward || op.Class != graph.ClassUnknown {
			t.Errorf("op %d = %+v, want %+v", i, op, w)
		}
	}
	tensors := []graph.Tensor{
		{Producer: 0, Consumers: []int{1}, Bytes: 100, HasTransferTime: true, TransferTime: 0.0001},
		{Producer: 1, Consumers: []int{2, 3}, Bytes: 200, HasTransferTime: true, TransferTime: 0.0002},
		{Producer: 1, Consumers: []int{3}, Bytes: 50, HasTransferTime: true, TransferTime: 0.0002},
		{Producer: 2, Consumers: []int{3}, Bytes: 300, HasTransferTime: true, TransferTime: 0.0003},
		{Producer: 3, Consumers: []int{4}, Bytes: 1, HasTransferTime: true, TransferTime: 0.0004},
	}
	if len(g.Tensors()) != len(tensors) {
		t.Fatalf("%d tensors, want %d", len(g.Tensors()), len(tensors))
	}
	for i, ts := range g.Tensors() {
		w := tensors[i]
		if ts.Producer != w.Producer || !slices.Equal(ts.Consumers, w.Consumers) || ts.Bytes != w.Bytes ||
			ts.HasTransferTime != w.HasTransferTime || math.Abs(ts.TransferTime-w.TransferTime) > 1e-15 {
			t.Errorf("tensor %d = %+v, want %+v", i, ts, w)
		}
	}
	if n := g.NumColocationGroups(); n != 1 {
		t.Errorf("%d co-location groups, want 1 (a class of one node is no group)", n)
	}
	if got := totalTime(g); math.Abs(got-0.00725) > 1e-12 {
		t.Errorf("total time %g s, want 0.00725", got)
	}
}

func TestMinimalFixture(t *testing.T) {
	g, meta, err := ReadWithMeta("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	if meta != (Meta{}) {
		t.Errorf("meta %+v, want zero", meta)
	}
	var names []string
	for _, op := range g.Ops() {
		names = append(names, op.Name)
	}
	if want := []string{"node0", "x#7", "x#8"}; !slices.Equal(names, want) {
		t.Errorf("op names %q, want %q", names, want)
	}
	if g.NumTensors() != 1 {
		t.Fatalf("%d tensors, want 1", g.NumTensors())
	}
	ts := g.Tensor(0)
	if !slices.Equal(ts.Consumers, []int{1, 2}) || ts.Bytes != 0 || ts.HasTransferTime {
		t.Errorf("tensor = %+v, want consumers [1 2], 0 bytes, no transfer time", *ts)
	}
}

// sharedDir finds shared/data/msr-fiddle in this directory's ancestors
// (or at $PLACER_MSR_FIDDLE).
func sharedDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PLACER_MSR_FIDDLE"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		for _, c := range []string{filepath.Join(dir, "shared", "data", "msr-fiddle"), filepath.Join(dir, "data", "msr-fiddle")} {
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				return c
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("no shared/data/msr-fiddle folder found")
		}
		dir = up
	}
}

// reference is what a sample holds, read with plain encoding/json.
type reference struct {
	MaxSizePerFPGA float64 `json:"maxSizePerFPGA"`
	MaxFPGAs       int     `json:"maxFPGAs"`
	MaxCPUs        int     `json:"maxCPUs"`
	Nodes          []struct {
		ID          int64   `json:"id"`
		FpgaLatency float64 `json:"fpgaLatency"`
		ColorClass  *int64  `json:"colorClass"`
		Size        float64 `json:"size"`
		Backward    any     `json:"isBackwardNode"`
		Supported   any     `json:"supportedOnFpga"`
	} `json:"nodes"`
	Edges []struct {
		SourceID int64   `json:"sourceId"`
		DestID   int64   `json:"destId"`
		Cost     float64 `json:"cost"`
		Size     float64 `json:"size"`
	} `json:"edges"`
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case float64:
		return v != 0
	}
	return false
}

func TestSharedSamples(t *testing.T) {
	dir := sharedDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Skipf("no samples in %s", dir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var ref reference
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatal(err)
			}
			g, meta, err := ReadWithMeta(path)
			if err != nil {
				t.Fatal(err)
			}
			if g.NumOps() != len(ref.Nodes) {
				t.Errorf("%d ops, want %d nodes", g.NumOps(), len(ref.Nodes))
			}
			// Every edge is one (tensor, consumer) pair; tensors are the
			// distinct (source, size) pairs.
			pairs := 0
			for _, ts := range g.Tensors() {
				pairs += len(ts.Consumers)
			}
			if pairs != len(ref.Edges) {
				t.Errorf("%d consumptions, want %d edges", pairs, len(ref.Edges))
			}
			type key struct {
				src  int64
				size float64
			}
			distinct := map[key]bool{}
			for _, e := range ref.Edges {
				distinct[key{e.SourceID, e.Size}] = true
			}
			if g.NumTensors() != len(distinct) {
				t.Errorf("%d tensors, want %d distinct (source, size)", g.NumTensors(), len(distinct))
			}
			classes := map[int64]int{}
			var ms float64
			var params int64
			backward := 0
			for _, n := range ref.Nodes {
				if n.ColorClass != nil {
					classes[*n.ColorClass]++
				}
				ms += n.FpgaLatency
				params += int64(math.Ceil(n.Size))
				if truthy(n.Backward) {
					backward++
				}
			}
			groups := 0
			for _, c := range classes {
				if c > 1 {
					groups++
				}
			}
			if g.NumColocationGroups() != groups {
				t.Errorf("%d co-location groups, want %d", g.NumColocationGroups(), groups)
			}
			// Ops of one group share the file's colorClass.
			for i, n := range ref.Nodes {
				if op := g.Op(i); n.ColorClass != nil && classes[*n.ColorClass] > 1 {
					if want := "color-" + itoa(*n.ColorClass); op.Colocation != want {
						t.Errorf("op %s: colocation %q, want %q", op.Name, op.Colocation, want)
					}
				} else if op.Colocation != "" {
					t.Errorf("op %s: colocation %q, want none", op.Name, op.Colocation)
				}
			}
			st := g.Stats()
			if got := totalTime(g); math.Abs(got-ms/1000) > 1e-9 {
				t.Errorf("total measured time %g s, want %g", got, ms/1000)
			}
			if st.Measured != g.NumOps() || st.ParamBytes != params || st.Backward != backward {
				t.Errorf("measured %d, param bytes %d, backward %d; want %d, %d, %d",
					st.Measured, st.ParamBytes, st.Backward, g.NumOps(), params, backward)
			}
			if meta.Devices != ref.MaxFPGAs || meta.CPUs != ref.MaxCPUs || meta.MaxBytesPerDevice != int64(ref.MaxSizePerFPGA) {
				t.Errorf("meta %+v, file %v/%v/%v", meta, ref.MaxSizePerFPGA, ref.MaxFPGAs, ref.MaxCPUs)
			}
			t.Logf("%s: %d ops, %d tensors, %d edges, %d co-location groups, total measured time %.6f s, param bytes %d, devices %d x %d B",
				g.Name(), g.NumOps(), g.NumTensors(), len(ref.Edges), g.NumColocationGroups(), totalTime(g), st.ParamBytes, meta.Devices, meta.MaxBytesPerDevice)
			roundTrip(t, g)
		})
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func totalTime(g *graph.Graph) float64 {
	s := 0.0
	for _, op := range g.Ops() {
		s += op.Time
	}
	return s
}

// roundTrip writes g in the native format, reads it back and compares.
func roundTrip(t *testing.T, g *graph.Graph) {
	t.Helper()
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	h, err := graph.Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("re-reading the native file: %v", err)
	}
	if msg := diff(g, h); msg != "" {
		t.Error("round trip through graph.Write/graph.Decode: " + msg)
	}
}

// diff compares the ops, tensors and control edges of two graphs.
func diff(a, b *graph.Graph) string {
	if a.NumOps() != b.NumOps() || a.NumTensors() != b.NumTensors() || len(a.Control()) != len(b.Control()) {
		return "sizes differ"
	}
	for i := range a.Ops() {
		x, y := a.Op(i), b.Op(i)
		if x.Name != y.Name || x.Type != y.Type || x.Class != y.Class || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) ||
			x.FLOPs != y.FLOPs || x.BytesRead != y.BytesRead || x.BytesWritten != y.BytesWritten ||
			x.ParamBytes != y.ParamBytes || x.TempBytes != y.TempBytes || x.HasTime != y.HasTime || x.Time != y.Time ||
			x.Colocation != y.Colocation || x.Backward != y.Backward {
			return "op " + x.Name + " differs"
		}
	}
	for i := range a.Tensors() {
		x, y := a.Tensor(i), b.Tensor(i)
		if x.Name != y.Name || x.Producer != y.Producer || !slices.Equal(x.Consumers, y.Consumers) || x.Bytes != y.Bytes ||
			x.HasTransferTime != y.HasTransferTime || x.TransferTime != y.TransferTime {
			return "tensor " + itoa(int64(i)) + " differs"
		}
	}
	if !slices.Equal(a.Control(), b.Control()) {
		return "control edges differ"
	}
	return ""
}

func TestRoundTripFixtures(t *testing.T) {
	for _, f := range []string{"testdata/small.json", "testdata/minimal.json"} {
		g, err := Read(f)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, g)
	}
}

func TestMalformed(t *testing.T) {
	two := func(edges string) string {
		return `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1}, {"id": 2, "name": "b", "fpgaLatency": 1}], "edges": [` + edges + `]}`
	}
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"empty", ``, []string{"msrfiddle: t: ", "unexpected end"}},
		{"truncated", "{\n\"nodes\": [", []string{"unexpected end", "line 2"}},
		{"syntax", "{\n  \"nodes\": [\n    {\"id\": 1,, \"fpgaLatency\": 1}\n  ]\n}", []string{"line 3, column 15", "invalid character"}},
		{"top-level array", `[1, 2]`, []string{"line 1, column 2: want an object, got an array"}},
		{"nodes not an array", `{"nodes": 3}`, []string{`line 1, column 12: field "nodes": want an array, got a number`}},
		{"node not an object", `{"nodes": [{"id": 1, "fpgaLatency": 1}, 7]}`, []string{`line 1, column 42: field "nodes": want an object, got a number`}},
		{"no nodes", `{"nodes": [], "edges": []}`, []string{"no nodes"}},
		{"missing id", `{"nodes": [{"fpgaLatency": 1}]}`, []string{"nodes[0]: id: missing"}},
		{"fractional id", `{"nodes": [{"id": 1.5, "fpgaLatency": 1}]}`, []string{"nodes[0]: id: want a whole number, got 1.5"}},
		{"string id", `{"nodes": [{"id": "x", "fpgaLatency": 1}]}`, []string{"nodes[0]: id: want a number, got the string \"x\""}},
		{"duplicate id", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1}, {"id": 1, "name": "b", "fpgaLatency": 2}]}`,
			[]string{`nodes[1] (id 1 "b"): id: duplicate: nodes[0] has id 1 too`}},
		{"missing latency", `{"nodes": [{"id": 1, "name": "a"}]}`, []string{`nodes[0] (id 1 "a"): fpgaLatency: missing`}},
		{"negative latency", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": -0.5}]}`, []string{`nodes[0] (id 1 "a"): fpgaLatency: is negative`}},
		{"NaN latency", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": NaN}]}`, []string{`nodes[0] (id 1 "a"): fpgaLatency: is NaN`}},
		{"infinite latency", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": Infinity}]}`, []string{`fpgaLatency: is infinite`}},
		{"overflowing latency", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1e999}]}`, []string{`fpgaLatency: is infinite`}},
		{"string latency", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": "1"}]}`, []string{`fpgaLatency: want a number, got the string "1"`}},
		{"negative size", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "size": -1}]}`, []string{`nodes[0] (id 1 "a"): size: is negative`}},
		{"infinite size", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "size": -Infinity}]}`, []string{`size: is infinite`}},
		{"huge size", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "size": 1e19}]}`, []string{`size: is too large`}},
		{"bad flag", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "isBackwardNode": 2}]}`, []string{`isBackwardNode: want true, false, 0 or 1, got 2`}},
		{"bad color", `{"nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "colorClass": [1]}]}`, []string{`colorClass: want a number, got an array`}},
		{"bad name", `{"nodes": [{"id": 1, "name": 5, "fpgaLatency": 1}]}`, []string{`nodes[0] (id 1): name: want a string, got a number`}},
		{"missing dest", two(`{"sourceId": 1, "destId": 9, "cost": 1}`), []string{`edges[0] (1 -> 9): destId: node id 9 does not exist`}},
		{"missing source", two(`{"sourceId": 7, "destId": 1, "cost": 1}`), []string{`edges[0] (7 -> 1): sourceId: node id 7 does not exist`}},
		{"edge without dest", two(`{"sourceId": 1, "cost": 1}`), []string{`edges[0]: destId: missing`}},
		{"negative cost", two(`{"sourceId": 1, "destId": 2, "cost": -1}`), []string{`edges[0] (1 -> 2): cost: is negative`}},
		{"NaN cost", two(`{"sourceId": 1, "destId": 2, "cost": NaN}`), []string{`edges[0] (1 -> 2): cost: is NaN`}},
		{"negative edge size", two(`{"sourceId": 1, "destId": 2, "cost": 1, "size": -3}`), []string{`edges[0] (1 -> 2): size: is negative`}},
		{"self loop", two(`{"sourceId": 2, "destId": 2, "cost": 1}`), []string{`edges[0] (2 -> 2): cycle: node 2 "b" depends on itself`}},
		{"cycle", two(`{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 2, "destId": 1, "cost": 1}`),
			[]string{`msrfiddle: t: cycle: node 1 "a" -> node 2 "b" -> node 1 "a"`}},
		{"negative maxFPGAs", `{"maxFPGAs": -1, "nodes": [{"id": 1, "fpgaLatency": 1}]}`, []string{`maxFPGAs: is negative`}},
		{"NaN maxSizePerFPGA", `{"maxSizePerFPGA": NaN, "nodes": [{"id": 1, "fpgaLatency": 1}]}`, []string{`maxSizePerFPGA: is NaN`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Decode([]byte(c.in), "t")
			if err == nil {
				t.Fatalf("no error; graph with %d ops", g.NumOps())
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestNonFiniteKeepsErrorPositions(t *testing.T) {
	// Quoting a bare NaN must not move the column of a later syntax error.
	_, e1 := Decode([]byte("{\"a\": 1.0, \"b\": -12345678, \"nodes\": [}"), "t")
	_, e2 := Decode([]byte("{\"a\": NaN, \"b\": -Infinity, \"nodes\": [}"), "t")
	if e1 == nil || e2 == nil || !strings.Contains(e2.Error(), "line 1, column") || e1.Error() != e2.Error() {
		t.Errorf("errors differ:\n%v\n%v", e1, e2)
	}
}

func TestPythonNonFiniteInStrings(t *testing.T) {
	// NaN and Infinity inside strings are names, not numbers.
	in := `{"nodes": [{"id": 1, "name": "NaN -Infinity \"Infinity", "fpgaLatency": 1}]}`
	g, err := Decode([]byte(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Op(0).Name; got != `NaN -Infinity "Infinity` {
		t.Errorf("name %q", got)
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "nope.json"))
	if err == nil || !strings.HasPrefix(err.Error(), "msrfiddle: ") {
		t.Errorf("err = %v", err)
	}
}
