package roofline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// bigKernelGraph builds a graph whose fused kernels stress initUnit and
// the fusion pass:
//
//   - "chain": one fused kernel of 60 members, each of whose outputs also
//     feeds three matmuls (a long plan); a random fusion order merges the
//     chain in pieces from anywhere, into deep merge trees;
//   - "fan": a matmul read by 200 elementwise ops, 63 of which join it;
//   - "wide": 3,000 two-op kernels all signalled by one source, so that
//     3,000 kernels are set up at once.
func bigKernelGraph(kind string) *graph.Graph {
	b := graph.NewBuilder("slots-" + kind)
	op := func(name string, c graph.Class) int {
		return b.AddOp(graph.Op{Name: name, Type: c.String(), Class: c, FLOPs: 1 << 20, BytesRead: 1 << 16, BytesWritten: 1 << 16, ParamBytes: 64})
	}
	switch kind {
	case "chain":
		prev := op("mm", graph.ClassMatMul)
		for i := 1; i < 60; i++ {
			v := op(fmt.Sprint("ew", i), graph.ClassElementwise)
			t := b.AddTensor(prev, 1<<12, v)
			for j := 0; j < 3; j++ {
				b.Consume(t, op(fmt.Sprintf("side%d.%d", i, j), graph.ClassMatMul))
			}
			prev = v
		}
		b.AddTensor(prev, 1<<12, op("end", graph.ClassMatMul))
	case "fan":
		src := op("src", graph.ClassMatMul)
		end := op("end", graph.ClassMatMul)
		t := b.AddTensor(src, 1<<12)
		for i := 0; i < 200; i++ {
			v := op(fmt.Sprint("ew", i), graph.ClassElementwise)
			b.Consume(t, v)
			b.AddTensor(v, 1<<10, end)
		}
	case "wide":
		src := op("src", graph.ClassMatMul)
		t := b.AddTensor(src, 1<<12)
		prev := -1
		for i := 0; i < 3000; i++ {
			mm := op(fmt.Sprint("mm", i), graph.ClassMatMul)
			b.Consume(t, mm)
			ew := op(fmt.Sprint("ew", i), graph.ClassElementwise)
			b.AddTensor(mm, 1<<10, ew)
			r := op(fmt.Sprint("r", i), graph.ClassMatMul) // not fusible into ew
			b.AddTensor(ew, 1<<10, r)
			if prev >= 0 {
				b.AddTensor(prev, 1<<8, r)
			}
			prev = r
		}
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// TestBigKernels: the graphs of bigKernelGraph give the reference's
// results and timelines, under the topological fusion order and a random
// one, on one and two devices. (The random order on "chain" found the
// reference's union-find leaving ops outside their group: see its fuse.)
func TestBigKernels(t *testing.T) {
	h, _ := Preset("a100")
	for _, kind := range []string{"chain", "fan", "wide"} {
		g := bigKernelGraph(kind)
		for _, devs := range []int{1, 2} {
			c, _ := NewCluster(h, devs, "")
			m := mustModel(t, g, c, Options{})
			rng := rand.New(rand.NewPCG(uint64(devs), 3))
			for _, order := range []string{"topological", "random"} {
				d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
				if order == "random" {
					d.Fusion = rng.Perm(g.NumOps())
				}
				for i := range d.Device {
					d.Device[i] = i * devs / g.NumOps()
				}
				rtl, tl := &Timeline{}, &Timeline{}
				want := refRun(t, g, c, Options{}, d, rtl)
				r, err := NewSimulator(m, tl).Run(d)
				if err != nil {
					t.Fatalf("%s, %d devices, %s fusion: %v", kind, devs, order, err)
				}
				if got := r.Clone(); !sameResult(got, want) || !sameTimeline(tl, rtl) {
					t.Fatalf("%s, %d devices, %s fusion: %+v, want %+v", kind, devs, order, got, want)
				}
			}
		}
	}
}
