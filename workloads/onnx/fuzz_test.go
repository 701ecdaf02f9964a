package onnx

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// FuzzDecode checks that no input makes Decode panic, that every error is
// one line, and that every graph it returns has non-negative finite costs
// and passes graph's own checks again when written and read back in the
// native format. The seeds are the hand-made MLP, testdata/torch_cnn.onnx
// (torch.onnx's output) and testdata/fuzz/FuzzDecode (valid-* and bad-*
// models; TestFuzzSeeds checks they are what their names say).
func FuzzDecode(f *testing.F) {
	f.Add(encode(f, mlp()))
	torch, err := os.ReadFile("testdata/torch_cnn.onnx")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(torch)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data, "fuzz")
		if err != nil {
			if g != nil {
				t.Fatal("graph and error both returned")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if g.NumOps() == 0 || len(g.Topo()) != g.NumOps() {
			t.Fatalf("%d ops, %d in topological order", g.NumOps(), len(g.Topo()))
		}
		for _, op := range g.Ops() {
			if op.FLOPs < 0 || math.IsInf(op.FLOPs, 0) || math.IsNaN(op.FLOPs) || op.BytesRead < 0 || op.BytesWritten < 0 || op.ParamBytes < 0 {
				t.Fatalf("op %+v", op)
			}
		}
		var buf bytes.Buffer
		if err := graph.Write(&buf, g); err != nil {
			t.Fatal(err)
		}
		if _, err := graph.Decode(buf.Bytes()); err != nil {
			t.Fatalf("imported graph does not re-read: %v", err)
		}
	})
}

// TestFuzzSeeds checks that the committed seeds are what their names say:
// valid-* import, bad-* are rejected.
func TestFuzzSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	if err != nil || len(files) == 0 {
		t.Fatal("no seed corpus")
	}
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(strings.TrimSpace(string(raw)), "\n", 2)
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a []byte corpus file", p)
		}
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		_, err = Decode([]byte(data), "seed")
		switch name := filepath.Base(p); {
		case strings.HasPrefix(name, "valid-") && err != nil:
			t.Errorf("%s: %v", name, err)
		case strings.HasPrefix(name, "bad-") && err == nil:
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWriteSeeds rewrites the seed corpus from the hand-made models when
// PLACER_WRITE_SEEDS is set (go test -run TestWriteSeeds ./workloads/onnx).
func TestWriteSeeds(t *testing.T) {
	if os.Getenv("PLACER_WRITE_SEEDS") == "" {
		t.Skip("set PLACER_WRITE_SEEDS to rewrite testdata/fuzz/FuzzDecode")
	}
	noShape := mlp()
	noShape.Graph.ValueInfo = noShape.Graph.ValueInfo[1:]
	unknown := mlp()
	unknown.Graph.Node[2].OpType = "FancyRelu"
	good := encode(t, mlp())
	seeds := map[string][]byte{
		"valid-mlp":         good,
		"bad-truncated":     good[:len(good)*2/3],
		"bad-missing-shape": encode(t, noShape),
		"bad-unknown-op":    encode(t, unknown),
	}
	for name, data := range seeds {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if err := os.WriteFile(filepath.Join("testdata/fuzz/FuzzDecode", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
