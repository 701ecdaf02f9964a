package workloads

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// sameAtBatch reports how the graph at batch b (got, from graph.AtBatch)
// differs from the graph built at b (want): op by op and tensor by
// tensor, every cost, shape and batch mark.
func sameAtBatch(got, want *graph.Graph) []string {
	var bad []string
	if got.NumOps() != want.NumOps() || got.NumTensors() != want.NumTensors() || got.Batch() != want.Batch() {
		return []string{fmt.Sprintf("%d ops, %d tensors, batch %d; built: %d, %d, %d", got.NumOps(), got.NumTensors(), got.Batch(),
			want.NumOps(), want.NumTensors(), want.Batch())}
	}
	for i := range got.NumOps() {
		g, w := got.Op(i), want.Op(i)
		if g.Name != w.Name || math.Abs(g.FLOPs-w.FLOPs) > 1e-9*w.FLOPs || g.BytesRead != w.BytesRead || g.BytesWritten != w.BytesWritten ||
			g.TempBytes != w.TempBytes || g.ParamBytes != w.ParamBytes || !slices.Equal(g.Shape, w.Shape) ||
			g.FixedFLOPs != w.FixedFLOPs || g.FixedBytesRead != w.FixedBytesRead || g.FixedBytesWritten != w.FixedBytesWritten {
			bad = append(bad, fmt.Sprintf("op %s (%s): flops %g/%g (fixed %g/%g), read %d/%d (fixed %d/%d), written %d/%d (fixed %d/%d), shape %v/%v",
				g.Name, g.Type, g.FLOPs, w.FLOPs, g.FixedFLOPs, w.FixedFLOPs, g.BytesRead, w.BytesRead, g.FixedBytesRead, w.FixedBytesRead,
				g.BytesWritten, w.BytesWritten, g.FixedBytesWritten, w.FixedBytesWritten, g.Shape, w.Shape))
		}
	}
	for t := range got.NumTensors() {
		g, w := got.Tensor(t), want.Tensor(t)
		if g.Bytes != w.Bytes || g.BatchDim != w.BatchDim {
			bad = append(bad, fmt.Sprintf("tensor %d of %s: %d bytes, batch dim %d; built: %d, %d", t, got.Op(g.Producer).Name, g.Bytes, g.BatchDim, w.Bytes, w.BatchDim))
		}
	}
	return bad
}

// TestBatchExact: every workload family, small and at its registered
// size, at half its batch (graph.AtBatch) is exactly the same workload
// built at half the batch: the batch marks the builders set are the
// truth, op by op and tensor by tensor.
func TestBatchExact(t *testing.T) {
	cases := []struct {
		name  string
		build func(Config) (*graph.Graph, error)
		c     Config
	}{
		{"rnnlm", BuildRNNLM, Config{Layers: 2, Hidden: 13, Batch: 10, SeqLen: 3, Vocab: 51}},
		{"rnnlm-sgd-noclip", BuildRNNLM, Config{Layers: 1, Hidden: 11, Batch: 6, SeqLen: 2, Vocab: 37, Optimizer: SGD, NoClip: true, KeepProb: 1}},
		{"gnmt", BuildGNMT, Config{Layers: 3, Hidden: 11, Batch: 10, SeqLen: 3, Vocab: 53}},
		{"trxl", BuildTRXL, Config{Layers: 2, Hidden: 22, FF: 38, Heads: 2, HeadDim: 11, Batch: 10, SeqLen: 15, Segment: 5, Vocab: 57, KeepProb: 0.9}},
		{"trxl-one-segment", BuildTRXL, Config{Layers: 1, Hidden: 14, FF: 26, Heads: 2, HeadDim: 7, Batch: 6, SeqLen: 7, Segment: 7, Vocab: 23}},
		{"inception", BuildInception, Config{Batch: 6, Classes: 17}},
		{"amoebanet", BuildAmoebaNet, Config{Cells: 1, Filters: 12, Batch: 6, ImageSize: 67, Classes: 17}},
		{"wavenet", BuildWaveNet, Config{Stacks: 2, LayersPer: 3, Hidden: 7, Skip: 11, Batch: 10, SeqLen: 23, Vocab: 13}},
	}
	for _, name := range []string{"rnnlm2", "gnmt2", "trxl2", "inception_b32", "amoebanet", "wavenet2x18"} {
		s, _ := Lookup(name)
		cases = append(cases, struct {
			name  string
			build func(Config) (*graph.Graph, error)
			c     Config
		}{name, s.Builder, s.Config})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.build(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			B := g.Batch()
			if B == 0 || B%2 != 0 {
				t.Fatalf("batch %d", B)
			}
			half := tc.c
			half.Batch = B / 2
			want, err := tc.build(half)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graph.AtBatch(g, B/2)
			if err != nil {
				t.Fatal(err)
			}
			if bad := sameAtBatch(got, want); len(bad) > 0 {
				t.Fatalf("%d differences at batch %d; the first:\n%s", len(bad), B/2, strings.Join(bad[:min(len(bad), 12)], "\n"))
			}
		})
	}
}

// TestBatchHalf: every registered workload at half its batch keeps its
// parameter bytes and its fixed parts (weights read, weight gradients
// written, the optimizer's update) and halves the rest: its activation
// bytes (tensors with a batch dimension) and its scaling FLOPs and bytes
// exactly, its whole FLOPs to about half. The log shows the numbers.
func TestBatchHalf(t *testing.T) {
	type sums struct {
		flops, scaledFLOPs, act, params, fixedBytes, movedBytes float64
		batched                                                 int
	}
	sum := func(g *graph.Graph) (s sums) {
		for i := range g.NumOps() {
			op := g.Op(i)
			s.flops += op.FLOPs
			s.scaledFLOPs += op.FLOPs - op.FixedFLOPs
			s.params += float64(op.ParamBytes)
			s.fixedBytes += float64(op.FixedBytesRead + op.FixedBytesWritten)
			s.movedBytes += float64(op.BytesRead + op.BytesWritten)
		}
		for k := range g.NumTensors() {
			if ts := g.Tensor(k); ts.BatchDim != graph.NoBatch {
				s.act += float64(ts.Bytes)
				s.batched++
			}
		}
		return s
	}
	t.Logf("%-14s %5s %7s %9s %11s %11s %8s %10s %10s %7s %10s", "workload", "batch", "ops", "batched", "act GB", "at B/2", "ratio", "GFLOPs", "at B/2", "ratio", "params MB")
	for _, name := range Names() {
		g := mustBuild(t, name)
		B := g.Batch()
		s, _ := Lookup(name)
		if B != s.Config.Batch || B%2 != 0 {
			t.Fatalf("%s: batch %d, config %d", name, B, s.Config.Batch)
		}
		h, err := graph.AtBatch(g, B/2)
		if err != nil {
			t.Fatal(err)
		}
		a, b := sum(g), sum(h)
		t.Logf("%-14s %5d %7d %8.1f%% %11.3f %11.3f %8.4f %10.1f %10.1f %7.4f %10.1f", name, B, g.NumOps(), 100*float64(a.batched)/float64(g.NumTensors()),
			a.act/1e9, b.act/1e9, b.act/a.act, a.flops/1e9, b.flops/1e9, b.flops/a.flops, a.params/1e6)
		if a.params != b.params || a.fixedBytes != b.fixedBytes || a.params == 0 {
			t.Errorf("%s: parameter bytes %g -> %g, fixed bytes %g -> %g", name, a.params, b.params, a.fixedBytes, b.fixedBytes)
		}
		if a.act == 0 || b.act != a.act/2 || b.scaledFLOPs != a.scaledFLOPs/2 || b.movedBytes-b.fixedBytes != (a.movedBytes-a.fixedBytes)/2 {
			t.Errorf("%s: activations %g -> %g, scaling FLOPs %g -> %g, scaling bytes %g -> %g: not halved", name, a.act, b.act,
				a.scaledFLOPs, b.scaledFLOPs, a.movedBytes-a.fixedBytes, b.movedBytes-b.fixedBytes)
		}
		if r := b.flops / a.flops; r < 0.5 || r > 0.51 {
			t.Errorf("%s: FLOPs at half the batch are %.4f of the whole", name, r)
		}
	}
}
