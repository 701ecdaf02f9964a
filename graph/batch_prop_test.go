package graph_test

import (
	"bytes"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
)

// TestAtBatchProperties: on random layered graphs with batch information
// (some measured), AtBatch(g, B) is g; every op's and tensor's cost at b
// is at most its cost at b+1 and at least its fixed part; parameter bytes
// never change; the graph at b writes and reads back with batch b.
func TestAtBatchProperties(t *testing.T) {
	for seed := uint64(0); seed < 6; seed++ {
		const B = 16
		g := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 10, Seed: seed, Batch: B, Measured: seed%2 == 1})
		if same, err := graph.AtBatch(g, B); err != nil || same != g {
			t.Fatalf("seed %d: AtBatch(g, B) = %v, %v", seed, same, err)
		}
		prev, err := graph.AtBatch(g, 1)
		if err != nil {
			t.Fatal(err)
		}
		for b := 2; b <= B; b++ {
			cur, err := graph.AtBatch(g, b)
			if err != nil {
				t.Fatal(err)
			}
			if cur.Batch() != b || cur.NumOps() != g.NumOps() || cur.NumTensors() != g.NumTensors() {
				t.Fatalf("seed %d, b %d: batch %d, %d ops", seed, b, cur.Batch(), cur.NumOps())
			}
			for i := range g.NumOps() {
				p, c, o := prev.Op(i), cur.Op(i), g.Op(i)
				if p.FLOPs > c.FLOPs || p.BytesRead > c.BytesRead || p.BytesWritten > c.BytesWritten || p.TempBytes > c.TempBytes || p.Time > c.Time {
					t.Fatalf("seed %d, op %d: not monotone from %d to %d: %+v then %+v", seed, i, b-1, b, *p, *c)
				}
				if c.FLOPs < o.FixedFLOPs || c.BytesRead < o.FixedBytesRead || c.BytesWritten < o.FixedBytesWritten || c.ParamBytes != o.ParamBytes {
					t.Fatalf("seed %d, op %d at %d: below its fixed part: %+v", seed, i, b, *c)
				}
				if o.FixedFLOPs == o.FLOPs && c.FLOPs != o.FLOPs || o.FixedBytesRead == o.BytesRead && c.BytesRead != o.BytesRead {
					t.Fatalf("seed %d, op %d: all fixed, yet it changed at %d", seed, i, b)
				}
			}
			for k := range g.NumTensors() {
				p, c, o := prev.Tensor(k), cur.Tensor(k), g.Tensor(k)
				if p.Bytes > c.Bytes || c.Bytes > o.Bytes || o.BatchDim == graph.NoBatch && c.Bytes != o.Bytes {
					t.Fatalf("seed %d, tensor %d at %d: bytes %d after %d (%d at B)", seed, k, b, c.Bytes, p.Bytes, o.Bytes)
				}
				if want := (o.Bytes*int64(b) + B - 1) / B; o.BatchDim == 0 && c.Bytes != want {
					t.Fatalf("seed %d, tensor %d at %d: %d bytes, want %d", seed, k, b, c.Bytes, want)
				}
			}
			prev = cur
		}
		h, _ := graph.AtBatch(g, B/2)
		var buf bytes.Buffer
		if err := graph.Write(&buf, h); err != nil {
			t.Fatal(err)
		}
		back, err := graph.Decode(buf.Bytes())
		if err != nil || back.Batch() != B/2 || graph.Hash(back) != graph.Hash(h) {
			t.Fatalf("seed %d: the graph at %d does not read back: %v", seed, B/2, err)
		}
	}
	// The batch option changes nothing but the batch information: the
	// same graph without it (Hash leaves it out).
	plain := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 10, Seed: 1})
	batched := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 10, Seed: 1, Batch: 16})
	if plain.Batch() != 0 || batched.Batch() != 16 || graph.Hash(plain) != graph.Hash(batched) {
		t.Fatal("the batch option changed the graph")
	}
}

// BenchmarkAtBatch: the 80,000-op layered graph (gnmt8's size) at half
// its batch.
func BenchmarkAtBatch(b *testing.B) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 80000, Width: 200, Seed: 1, Batch: 64})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := graph.AtBatch(g, 32); err != nil {
			b.Fatal(err)
		}
	}
}
