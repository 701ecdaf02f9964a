package planner

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestSlidingWindowCost: a sliding window changes a layer's forward by
// exactly its attention kernel's time at the window's FLOPs against the
// causal half's, by hand: 4,096 tokens, 8 heads of 64 on one GPU, every
// layer windowed to 128 keys, computed in tiles of 128 queries by 128
// keys (252 a query on average: TiledKeys; the window's own mean,
// CausalKeys, is 126.015625), cuDNN's forward fit at head dimension 64.
func TestSlidingWindowCost(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	full := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	win := full
	win.Window = 128
	fwd := func(m transformer.Spec) float64 {
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1}, p)
		if err != nil {
			t.Fatal(err)
		}
		c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 4096, NoComm: true}, Points: registered}
		f, _ := c.layer()
		return f.Busy
	}
	const n, heads, d = 4096.0, 8.0, 64.0
	e := n * heads * 2 * d
	r := h100.Attention[0].Fwd
	// The kernel's rate term at the clock the pod's 700 W holds.
	_, slow := p.HeldClock()
	call := func(keys float64) kernels.AttentionCall {
		return kernels.AttentionCall{Flops: 4 * n * keys * heads * d * slow, Elems: e, Tail: n * 2 * d, HeadDim: 64}
	}
	want := r.Time(call(252)) - r.Time(call(2048))
	if got := fwd(win) - fwd(full); math.Abs(got-want) > 1e-12 {
		t.Errorf("the window changes the forward by %g s, want %g", got, want)
	}
}
