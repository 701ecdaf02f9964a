package inputs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGraphFormat: a given format in any case, the detected one, and the
// one-line errors of an unknown --format and of a file no format
// recognizes.
func TestGraphFormat(t *testing.T) {
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, c := range []struct{ path, format, want string }{
		{"../examples/mlp.json", "", "native"},
		{"../workloads/costgraph/testdata/regal_small.pbtxt", "", "costgraph"},
		{"../workloads/msrfiddle/testdata/small.json", "", "msr-fiddle"},
		{"../workloads/msrfiddle/testdata/small.json", "MSR-Fiddle", "msr-fiddle"},
		{"../examples/mlp.json", "costgraph", "costgraph"},
	} {
		got, err := GraphFormat(GraphSpec{Path: c.path, Format: c.format}, read(c.path))
		if err != nil || got != c.want {
			t.Errorf("%s (--format %q): %q, %v; want %q", c.path, c.format, got, err, c.want)
		}
		if !IsGraphFormat(GraphSpec{Path: c.path, Format: c.format}, read(c.path), c.want) {
			t.Errorf("%s: IsGraphFormat %q false", c.path, c.want)
		}
	}
	_, err := GraphFormat(GraphSpec{Path: "x.json", Format: "tf"}, nil)
	if want := `--format "tf": unknown graph format (want one of costgraph, msr-fiddle, native, onnx)`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	// A file no format recognizes: JSON that does not parse says where
	// (a truncated file: "cannot tell the graph format" said nothing of
	// it); anything else asks for --format.
	mlp := read("../examples/mlp.json")
	for _, c := range []struct {
		data []byte
		want string
	}{
		{[]byte("hello"), "x.txt: cannot tell the graph format; give --format (one of costgraph, msr-fiddle, native, onnx)"},
		{[]byte(`{"a": 1}`), "x.txt: cannot tell the graph format; give --format (one of costgraph, msr-fiddle, native, onnx)"},
		{mlp[:20], "x.txt: truncated JSON: the file ends at byte 20, inside a value"},
		{[]byte(` {"a":`), "x.txt: truncated JSON: the file ends at byte 6, inside a value"},
		{[]byte(`[1, 2`), "x.txt: truncated JSON: the file ends at byte 5, inside a value"},
		{[]byte(`{"a": 1,, "b": 2}`), "x.txt: invalid JSON at byte 9: invalid character ',' looking for beginning of object key string"},
	} {
		_, err = GraphFormat(GraphSpec{Path: "x.txt"}, c.data)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v; want %s", c.data, err, c.want)
		}
	}
}

// TestMSRFiddleIDs: the expert file's node ids are the graph file's
// whenever the graph is read as msr-fiddle, detected from either of its
// keys or named by --format in any case.
func TestMSRFiddleIDs(t *testing.T) {
	const p = "../workloads/msrfiddle/testdata/small.json"
	for _, format := range []string{"", "msr-fiddle", "MSR-FIDDLE"} {
		spec := GraphSpec{Path: p, Format: format}
		g, _, err := Graph(spec)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := msrFiddleIDs(spec, g)
		if err != nil || len(ids) != g.NumOps() {
			t.Errorf("--format %q: %d ids for %d ops, %v", format, len(ids), g.NumOps(), err)
		}
	}
	ids, err := msrFiddleIDs(GraphSpec{Path: "../examples/mlp.json"}, nil)
	if ids != nil || err != nil {
		t.Errorf("native graph: ids %v, %v", ids, err)
	}
}

// TestPlacementFormat: msr-fiddle's expert placement wherever its "fpgas"
// is, a decision file otherwise (its reader reports what is wrong).
func TestPlacementFormat(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"fpgas": [{"nodes": [1, 2]}]}`, PlacementMSRFiddle},
		{`{"name": "x", "fpgas": []}`, PlacementMSRFiddle},
		{`{"format": "placer-decision", "version": 1}`, PlacementDecision},
		{`{"decision": {"format": "placer-decision"}}`, PlacementDecision},
		{``, PlacementDecision},
	} {
		if got := PlacementFormat([]byte(c.data)); got != c.want {
			t.Errorf("%s: %s, want %s", c.data, got, c.want)
		}
	}
	if got := PlacementFormats(); !slices.Equal(got, []string{PlacementMSRFiddle, PlacementDecision}) {
		t.Errorf("PlacementFormats() = %v", got)
	}
	p := filepath.Join(t.TempDir(), "e.json")
	os.WriteFile(p, []byte(`{"fpgas": []}`), 0o644)
	if !IsMSRFiddleExpert(p) || IsMSRFiddleExpert("../examples/mlp.json") {
		t.Error("IsMSRFiddleExpert")
	}
}

// FuzzGraphFormat checks that graph format detection never panics, reads
// only the head (the same answer for the head alone and with anything
// after it), names a registered format, and otherwise fails in one line
// (but for the file's name) that starts with the file's name.
func FuzzGraphFormat(f *testing.F) {
	f.Add([]byte(`{"format": "placer-graph", "version": 1}`), "g.json")
	f.Add([]byte(`{"nodes": [], "fpgaLatency": 1}`), "m.json")
	f.Add([]byte("node {\n  name: \"a\"\n}\n"), "c.txt")
	f.Add([]byte{0x08, 0x07, 0x12}, "m.bin")
	f.Add([]byte("hello"), "x.onnx")
	f.Add([]byte("hello"), "x.txt")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		got, err := GraphFormat(GraphSpec{Path: path}, data)
		if err != nil {
			msg, ok := strings.CutPrefix(err.Error(), path+": ")
			if got != "" || !ok || strings.Contains(msg, "\n") {
				t.Fatalf("%q, %q", got, err)
			}
			return
		}
		if !slices.Contains(Formats(), got) {
			t.Fatalf("unknown format %q", got)
		}
		head := data[:min(len(data), headSize)]
		if again := detectGraph(append(append([]byte{}, head...), "trailing bytes"...), path); len(data) >= headSize && again != got {
			t.Fatalf("%q, with bytes after the head %q", got, again)
		}
		if again := detectGraph(head, path); again != got {
			t.Fatalf("%q, from the head alone %q", got, again)
		}
	})
}

// FuzzPlacementFormat checks that placement format detection never panics
// and names a registered format.
func FuzzPlacementFormat(f *testing.F) {
	f.Add([]byte(`{"fpgas": [{"nodes": [0]}]}`))
	f.Add([]byte(`{"format": "placer-decision", "version": 2}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		got := PlacementFormat(data)
		if !slices.Contains(PlacementFormats(), got) {
			t.Fatalf("unknown format %q", got)
		}
		if (got == PlacementMSRFiddle) != strings.Contains(string(data), `"fpgas"`) {
			t.Fatalf("%q for %q", got, data)
		}
	})
}
