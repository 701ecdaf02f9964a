package planner

import (
	"testing"

	"github.com/placer/placer/planner/mechanisms"
)

// TestMultihotTail: the host after DeepEP's dispatch where its received
// indices are made into the multihot map unfused (stack=model-zoo-moe-dev:
// no --enable-experimental), Qwen3-30B-A3B at EP 8, 4,096 tokens, by hand.
// After the received count's wait the dispatch (half of DeepEP's two
// launches) and the conversion's first run of 4 kernels, issued behind
// the dispatch's GPU time: no stall. Then the runs of 5 and 3 kernels
// between the conversion's synchronizations and its last run of 4, each
// issued one by one from an empty queue, each kernel r seconds of
// memory-bound GPU time (the conversion's bytes evenly over its 16
// kernels) against Issue of host time: a run of n idles the GPU
// n x Issue - (n - 1) x r, of which the first issue is the
// synchronization's (expose): (n - 1) x (Issue - r); the last run's
// permute waits on its own issue too: 4 x (Issue - r); (4 + 2 + 4) x
// (Issue - r) in all, the permute's and the experts' GPU time outlasting
// every issue after them. The tail holds 1 + 4 + 5 + 3 + 4 conversion
// and dispatch launches, the permute, the experts (3 launches, 32
// calls), the unpermute and the combine: 23 launches. Against the same
// plan with the conversion fused (the default stack's flex,
// router-fusion=off, whose tail does not stall): 3 synchronizations
// more, each Sync + Issue in the exposed host time, and the stall.
func TestMultihotTail(t *testing.T) {
	zoo := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,stack=model-zoo-moe-dev", "dgx-h100:1")
	fused := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,dispatcher=flex,router-fusion=off", "dgx-h100:1")
	f, _, _ := zoo.moe()
	f0, _, _ := fused.moe()
	h := &zoo.Pod.Kernels.Host
	w := zoo.expertWork()
	recv, _ := mechanisms.Dispatcher{Shard: &zoo.Shard}.DeepEPReceived(w.nl)
	runs, _ := mechanisms.Dispatcher{Shard: &zoo.Shard}.Multihot(recv, 8, 16)
	r := runs[0].Busy / 4
	if !(r > 0 && r < h.Issue) {
		t.Fatalf("a conversion kernel takes %g s, not under an issue's %g", r, h.Issue)
	}
	for i, n := range mechanisms.MultihotRuns {
		if runs[i].Launches != float64(n) || !near(runs[i].Busy, float64(n)*r) {
			t.Errorf("run %d: %g launches, %g s; want %d, %g", i, runs[i].Launches, runs[i].Busy, n, float64(n)*r)
		}
	}
	if want := 10 * (h.Issue - r); f.Tail.Launches != 23 || f.Tail.Calls != 32 || !near(f.Tail.Stall, want) {
		t.Errorf("tail %+v; want 23 launches, 32 calls, stall %g", f.Tail, want)
	}
	if f0.Tail.Stall != 0 || f.Syncs-f0.Syncs != 3 {
		t.Errorf("fused: stall %g, syncs %g and %g; want 0 and 3 more", f0.Tail.Stall, f0.Syncs, f.Syncs)
	}
	e, e0 := expose(registered, h, f, false), expose(registered, h, f0, false)
	if want := 3*(h.Sync+h.Issue) + 10*(h.Issue-r); !near(e.HostExposed-e0.HostExposed, want) {
		t.Errorf("exposed host %g more than fused, want %g", e.HostExposed-e0.HostExposed, want)
	}
}

// TestMultihotStacks: which plans convert unfused (unfusedMultihot):
// Megatron-Core's DeepEP manager takes the fused kernel only with
// --enable-experimental and moe_permute_fusion. The model zoo's stack
// (neither --enable-experimental) and any flex plan with
// permute-fusion=off do; the default stack's flex does not (its
// settings are Megatron-Core's fused path); HybridEP, the alltoall and
// the allgather dispatchers never do, and HybridEP on the zoo's stack
// issues what it issues on the default stack with the same router.
func TestMultihotStacks(t *testing.T) {
	for _, c := range []struct {
		keys string
		want bool
	}{
		{"stack=model-zoo-moe-dev", true},
		{"dispatcher=flex,permute-fusion=off", true},
		{"dispatcher=flex", false},
		{"stack=model-zoo-moe-dev,dispatcher=hybridep", false},
		{"stack=model-zoo-moe-dev,dispatcher=alltoall", false},
		{"stack=model-zoo-moe-dev,dispatcher=allgather", false},
		{"dispatcher=hybridep,permute-fusion=off", false},
	} {
		cc := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,"+c.keys, "dgx-h100:1")
		if got := (mechanisms.Dispatcher{Shard: &cc.Shard}).UnfusedMultihot(); got != c.want {
			t.Errorf("%s: unfused multihot %v, want %v", c.keys, got, c.want)
		}
	}
	zoo := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,stack=model-zoo-moe-dev,dispatcher=hybridep", "dgx-h100:1")
	def := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,dispatcher=hybridep,router-fusion=off", "dgx-h100:1")
	f, b, _ := zoo.moe()
	f0, b0, _ := def.moe()
	if f.Launches != f0.Launches || b.Launches != b0.Launches || f.Syncs != f0.Syncs || !near(f.Busy, f0.Busy) {
		t.Errorf("hybridep on the zoo's stack: %g/%g launches, %g syncs, %g s; default stack %g/%g, %g, %g s",
			f.Launches, b.Launches, f.Syncs, f.Busy, f0.Launches, b0.Launches, f0.Syncs, f0.Busy)
	}
}
