package roofline

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
)

// messyDAG is a random DAG whose op indices are not a topological order
// (ops are numbered in a shuffled order), whose tensors are not numbered
// by producer, with ops of zero, one or several outputs, tensors nobody
// consumes, control edges (some duplicated), co-location groups, temp and
// parameter bytes, views (alias ops), and optionally measured op and
// transfer times.
func messyDAG(n int, rng *rand.Rand, measured bool) *graph.Graph {
	b := graph.NewBuilder("messy")
	perm := rng.Perm(n) // topological rank -> op index
	classes := graph.Classes()
	for i := 0; i < n; i++ {
		c := classes[rng.IntN(len(classes))]
		op := graph.Op{Name: fmt.Sprintf("op%d", i), Type: c.String(), Class: c, DType: graph.DType(rng.IntN(graph.NumDTypes)),
			FLOPs: float64(rng.IntN(1 << 22)), BytesRead: int64(rng.IntN(1 << 20)), BytesWritten: int64(rng.IntN(1 << 20)),
			ParamBytes: int64(rng.IntN(1 << 12)), TempBytes: int64(rng.IntN(3) * rng.IntN(1<<10))}
		if measured && rng.IntN(3) > 0 {
			op.HasTime, op.Time = true, float64(1+rng.IntN(16))/64
		}
		if rng.IntN(9) == 0 {
			op.Colocation = fmt.Sprintf("g%d", rng.IntN(4))
		}
		op.Alias = rng.IntN(8) == 0 // a view: its outputs hold no memory of their own on its device
		b.AddOp(op)
	}
	type pending struct {
		producer int
		bytes    int64
		cons     []int
		xfer     float64
	}
	var ts []pending
	outs := make([][]int, n) // by rank: indices into ts
	for r := 0; r < n; r++ {
		k := rng.IntN(4) // outputs of the op of rank r (0..3, mostly 1)
		if k == 3 {
			k = 1
		}
		for j := 0; j < k; j++ {
			outs[r] = append(outs[r], len(ts))
			p := pending{producer: perm[r], bytes: int64(rng.IntN(1 << 16))}
			if measured && rng.IntN(4) == 0 {
				p.xfer = float64(rng.IntN(8)) / 128
			}
			ts = append(ts, p)
		}
	}
	for r := 1; r < n; r++ {
		k := rng.IntN(4)
		seen := map[int]bool{}
		for j := 0; j < k; j++ {
			pr := max(0, r-1-rng.IntN(min(r, 6)))
			if rng.IntN(5) == 0 {
				pr = rng.IntN(r)
			}
			if len(outs[pr]) == 0 {
				continue
			}
			t := outs[pr][rng.IntN(len(outs[pr]))]
			if !seen[t] {
				seen[t] = true
				ts[t].cons = append(ts[t].cons, perm[r])
			}
		}
		if rng.IntN(8) == 0 {
			from := perm[rng.IntN(r)]
			b.AddControl(from, perm[r])
			if rng.IntN(4) == 0 {
				b.AddControl(from, perm[r])
			}
		}
	}
	for _, i := range rng.Perm(len(ts)) { // tensors numbered out of producer order
		p := ts[i]
		b.AddTensorFull(graph.Tensor{Producer: p.producer, Bytes: p.bytes, Consumers: p.cons, HasTransferTime: p.xfer > 0, TransferTime: p.xfer})
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// refRun runs the frozen reference simulator.
func refRun(t testing.TB, g *graph.Graph, c *Cluster, o Options, d decision.Decision, tl *Timeline) evaluate.Result {
	rm, err := newRefModel(g, c, o)
	if err != nil {
		t.Fatal(err)
	}
	var rec Recorder
	if tl != nil {
		rec = tl
	}
	r, err := newRefSimulator(rm, rec).Run(d)
	if err != nil {
		t.Fatal(err)
	}
	return r.Clone()
}

func sameResult(a, b evaluate.Result) bool {
	return reflect.DeepEqual(a, b)
}

func sameTimeline(a, b *Timeline) bool {
	return reflect.DeepEqual(a.Kernels, b.Kernels) && reflect.DeepEqual(a.Transfers, b.Transfers) && reflect.DeepEqual(a.Mem, b.Mem)
}

// TestMatchesReference: on random DAGs (layered ones and messy ones) and
// every kind of decision (priorities or FIFO, fusion by random priorities,
// topological fusion or none, transfer priorities or FIFO, synchronous
// transfers, small fusion caps), the simulator gives exactly the result
// and the timeline of the reference simulator, with and without a
// recorder, and again when the same Simulator is reused.
func TestMatchesReference(t *testing.T) {
	h, _ := Preset("v100")
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		var g *graph.Graph
		n := 10 + rng.IntN(300)
		if seed%3 == 0 {
			g = layeredDAGSpan(n, 1+rng.IntN(20), rng.IntN(3), seed, seed%2 == 0)
		} else {
			g = messyDAG(n, rng, seed%4 == 1)
		}
		devices := 1 + rng.IntN(8)
		topo := []string{"nvswitch", "hybrid-cube-mesh", "pcie"}[seed%3]
		c, err := NewCluster(h, devices, topo)
		if err != nil {
			t.Fatal(err)
		}
		if seed%7 == 0 {
			c = testCluster(devices, 1e9, 1e-6, true)
		}
		for _, o := range []Options{{}, {SyncTransfers: true}, {MaxFusion: 1 + rng.IntN(4)}, {SyncTransfers: true, MaxFusion: 3}} {
			m := mustModel(t, g, c, o)
			s := NewSimulator(m, nil)
			tl := &Timeline{}
			sr := NewSimulator(m, tl)
			for k := 0; k < 12; k++ {
				d := randomDecision(g, devices, rng, k&1 == 1, k&2 == 2, k&4 == 4)
				if k >= 8 {
					// placements by blocks of topological order, as real placers make
					d.Device = make([]int, g.NumOps())
					blk := 1 + rng.IntN(8)
					for i := range d.Device {
						d.Device[i] = (g.TopoIndex(i) / blk) % devices
					}
					if k&2 == 2 {
						d.Fusion = decision.TopologicalFusion(g)
					}
				}
				rtl := &Timeline{}
				want := refRun(t, g, c, o, d, rtl)
				for rep := 0; rep < 2; rep++ {
					r, err := s.Run(d)
					if err != nil {
						t.Fatal(err)
					}
					if got := r.Clone(); !sameResult(got, want) {
						t.Fatalf("seed %d opts %+v decision %d rep %d: result\n%+v\nwant\n%+v", seed, o, k, rep, got, want)
					}
				}
				*tl = Timeline{}
				r, err := sr.Run(d)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Clone(); !sameResult(got, want) {
					t.Fatalf("seed %d opts %+v decision %d (recorded): result\n%+v\nwant\n%+v", seed, o, k, got, want)
				}
				if !sameTimeline(tl, rtl) {
					t.Fatalf("seed %d opts %+v decision %d: timeline differs from the reference", seed, o, k)
				}
			}
		}
	}
}
