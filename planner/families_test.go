package planner

import (
	"math"
	"slices"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// familyLayer is model m's one-layer forward and backward on one H100 of
// dgx-h100 (8 replicas, micro-batch 1, no communication), and its coster.
func familyLayer(t *testing.T, m transformer.Spec) (fwd, bwd phase, c coster) {
	t.Helper()
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	c = coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: float64(m.Seq), NoComm: true}, Points: registered}
	decide(c.Points, &c.Shard)
	fwd, bwd = c.layer()
	return fwd, bwd, c
}

// TestGlobalEveryCost: Gemma 3's layout (the window in all but every
// sixth layer) changes a layer's forward by exactly its attention
// kernel's time at the keys a query meets on average over the layers,
// by hand: 6 layers, 5 windowed to 128 keys (252 a query at 4,096
// tokens in tiles of 128 by 128: TiledKeys), 1 over the causal half
// (2,048): (5 x 252 + 2,048) / 6.
func TestGlobalEveryCost(t *testing.T) {
	full := mustSpec(t, "llama:layers=6,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	win := mustSpec(t, "llama:layers=6,hidden=512,heads=8,seq=4096,vocab=1000,batch=8,window=128,global_every=6")
	fFull, _, c := familyLayer(t, full)
	fWin, _, _ := familyLayer(t, win)
	const n, heads, d = 4096.0, 8.0, 64.0
	_, slow := c.Pod.HeldClock()
	call := func(keys float64) kernels.AttentionCall {
		return kernels.AttentionCall{Flops: 4 * n * keys * heads * d * slow, Elems: n * heads * 2 * d, Tail: n * 2 * d, HeadDim: 64}
	}
	r := &h100.Attention[0].Fwd
	want := r.Time(call((5*252+2048)/6.0)) - r.Time(call(2048))
	if got := fWin.Busy - fFull.Busy; math.Abs(got-want) > 1e-12 {
		t.Errorf("global_every=6 changes the forward by %g s, want %g", got, want)
	}
}

// TestChunkCost: Llama 4's chunked attention changes a layer's forward
// by exactly its attention kernel's time at the keys a query meets on
// average, by hand: 4 layers at 16,384 tokens, 3 in chunks of 8,192 (a
// query's place in its chunk 8,193 / 2 = 4,096.5 on average), 1 global
// over the causal half (8,192): (3 x 4,096.5 + 8,192) / 4 = 5,120.375.
func TestChunkCost(t *testing.T) {
	full := mustSpec(t, "llama:layers=4,hidden=512,heads=8,seq=16384,vocab=1000,batch=8")
	chunked := mustSpec(t, "llama:layers=4,hidden=512,heads=8,seq=16384,vocab=1000,batch=8,chunk=8192,global_every=4")
	fFull, _, c := familyLayer(t, full)
	fChunk, _, _ := familyLayer(t, chunked)
	const n, heads, d = 16384.0, 8.0, 64.0
	_, slow := c.Pod.HeldClock()
	call := func(keys float64) kernels.AttentionCall {
		return kernels.AttentionCall{Flops: 4 * n * keys * heads * d * slow, Elems: n * heads * 2 * d, Tail: n * 2 * d, HeadDim: 64}
	}
	r := &h100.Attention[0].Fwd
	want := r.Time(call(5120.375)) - r.Time(call(8192))
	if got := fChunk.Busy - fFull.Busy; math.Abs(got-want) > 1e-12 {
		t.Errorf("chunk=8192,global_every=4 changes the forward by %g s, want %g", got, want)
	}
}

// TestPostNormsCost: Gemma's four norms a block cost two norms more than
// two, forward (one kernel each) and backward (twice each), each an RMS
// norm over this GPU's 4,096 x 512 hidden states: 8 FLOPs an element,
// its BF16 input read and its output written (its backward one kernel of
// twice that) (its activations: planner/memory's
// TestPostNormsActivations).
func TestPostNormsCost(t *testing.T) {
	two := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	four := two
	four.Norms = 4
	f2, b2, c := familyLayer(t, two)
	f4, b4, _ := familyLayer(t, four)
	const n, h = 4096.0, 512.0
	k := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h, Read: n * h * 2, Writes: n * h * 2}
	norm, back := c.Run(k).Busy, c.Run(cost.Twice(k)).Busy
	if got := f4.Busy - f2.Busy; math.Abs(got-2*norm) > 1e-15 {
		t.Errorf("forward: %g s more, want two norms' %g", got, 2*norm)
	}
	if got := b4.Busy - b2.Busy; math.Abs(got-2*back) > 1e-15 {
		t.Errorf("backward: %g s more, want two norms' backward %g", got, 2*back)
	}
}

// TestSandwichNorms: Gemma's norms of each half's output
// (families.SandwichNorms) by hand, and asked by the composition only on
// a model that has them. Gemma 3 12B (hidden 3,840) at 4,096 tokens, TP
// 2, no sequence parallelism: one RMS norm of 8 x 4,096 x 3,840 =
// 125,829,120 FLOPs reading and writing 4,096 x 3,840 x 2 = 31,457,280
// bytes a half forward, twice that backward; the attention's and the
// MLP's phases are those without the trait plus exactly these, and the
// trait is named in priced_by for Gemma, not for Llama.
func TestSandwichNorms(t *testing.T) {
	c := stackCoster(t, "hf:../graph/transformer/testdata/hf/gemma-3-12b.json:seq=4096,batch=64", "tp=2,dp=4,mbs=1", "dgx-h100:1")
	norm := cost.Kernel{Class: graph.ClassReduction, FLOPs: 125829120, Read: 31457280, Writes: 31457280}
	wantF, wantB := c.Run(norm), c.Run(cost.Twice(norm))
	var others []cost.Plugin // the families but the trait
	for _, p := range cost.Each[cost.Plugin](families.Registered) {
		if p.Name() != "sandwich-norms" {
			others = append(others, p)
		}
	}
	fams, err := cost.NewRegistry(others...)
	if err != nil {
		t.Fatal(err)
	}
	without := cost.Resolve(fams, mechanisms.Registered, codebases.Registered)
	for _, half := range []struct {
		name string
		of   func(c *coster) (fwd, bwd, rec phase)
	}{
		{"attention", (*coster).attnBlock},
		{"mlp", (*coster).mlpBlock},
	} {
		f, b, _ := half.of(&c)
		bare := c
		bare.Points = without
		decide(bare.Points, &bare.Shard)
		bf, bb, _ := half.of(&bare)
		if f.Launches-bf.Launches != 1 || b.Launches-bb.Launches != 1 || !near(f.Busy-bf.Busy, wantF.Busy) || !near(b.Busy-bb.Busy, wantB.Busy) {
			t.Errorf("%s: +%g s in +%g launches forward, +%g s in +%g backward; want +%g in 1, +%g in 1",
				half.name, f.Busy-bf.Busy, f.Launches-bf.Launches, b.Busy-bb.Busy, b.Launches-bb.Launches, wantF.Busy, wantB.Busy)
		}
	}
	if got := PricedByOf(c.M, c.Plan, c.Pod).Families; !slices.Contains(got, "sandwich-norms") {
		t.Errorf("gemma priced by families %v: want sandwich-norms among them", got)
	}
	l := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=2,dp=4,mbs=1", "dgx-h100:1")
	if got := PricedByOf(l.M, l.Plan, l.Pod).Families; slices.Contains(got, "sandwich-norms") {
		t.Errorf("llama priced by families %v: want no sandwich-norms", got)
	}
}
