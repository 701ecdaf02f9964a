package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestDeepEPBuffers: DeepEP's buffers under Megatron-Core's flex
// dispatcher, by hand for hidden 4,096 (Qwen3-235B-A22B's; a token
// 8,192 bytes), 20 SMs (10 channels):
//   - EP 8, one NVLink domain: both configs receive 256 tokens a chunk;
//     a token's share of the NVLink buffer 8,192 + 8 (source meta) +
//     128 x 8 + 128 x 4 (top-k indices, weights) + 128 x 4 (scales) =
//     10,248 bytes; 10 x 8 x (2 x 1 + 3) x 4 = 1,600 +
//     10 x 8 x 256 x 10,248 = 209,879,040, 209,880,640 rounded up to
//     128: 209,880,704; with the signals and pointers (160) and the
//     32 MiB workspace 243,435,296 bytes; no RDMA buffer.
//   - EP 32 (4 NVLink domains): 288 tokens a chunk: 10 x 8 x 11 x 4 =
//     3,520 + 10 x 8 x 288 x 10,248 = 236,113,920, 236,117,504 rounded;
//     RDMA 128 tokens (a multiple of 32 and of 8 already): 10 x 4 x 18
//     x 2 x 4 = 5,760 + 10 x 4 x 128 x (10,248 + 16) x 2 = 105,103,360:
//     105,109,120, one 512 MiB piece of the NVSHMEM heap; 236,117,504 +
//     160 + 33,554,432 + 536,870,912 = 806,543,008.
//   - EP 4 x ETP 2 is a group of 8: as EP 8. EP 48, which buffer.py
//     has no config for, is counted with 64's: 288 tokens, 6 domains:
//     NVLink 10 x 8 x 15 x 4 = 4,800 + 236,113,920 = 236,118,720,
//     236,118,784 rounded; RDMA (dispatch 28 a send chunk: 140 tokens,
//     combine 20: 140) 10 x 6 x 18 x 8 = 8,640 + 10 x 6 x 140 x 20,528
//     = 172,435,200: 172,443,840, one piece: 236,118,784 + 160 +
//     33,554,432 + 536,870,912 = 806,544,288.
//
// None under the all-to-all dispatcher, in a dense model, or where the
// group is one GPU.
func TestDeepEPBuffers(t *testing.T) {
	moe := mustSpec(t, "qwen3-235b-a22b:seq=4096,batch=2048")
	dense := mustSpec(t, "llama3-8b:seq=8192,batch=16")
	if moe.Hidden != 4096 || dense.Hidden != 4096 {
		t.Fatalf("hidden %d and %d, want 4,096", moe.Hidden, dense.Hidden)
	}
	for _, c := range []struct {
		name       string
		ep, etp    int
		dispatcher string
		denseModel bool
		want       int64
	}{
		{"EP 8", 8, 1, plan.DispatcherFlex, false, 243435296},
		{"EP 32", 32, 1, plan.DispatcherFlex, false, 806543008},
		{"EP 4 x ETP 2", 4, 2, plan.DispatcherFlex, false, 243435296},
		{"EP 48", 48, 1, plan.DispatcherFlex, false, 806544288},
		{"all-to-all", 8, 1, plan.DispatcherAllToAll, false, 0},
		{"dense", 8, 1, plan.DispatcherFlex, true, 0},
		{"one GPU", 1, 1, plan.DispatcherFlex, false, 0},
	} {
		pl := plan.Plan{EP: c.ep, ETP: c.etp}
		pl.Run.Dispatcher = c.dispatcher
		m := &moe
		if c.denseModel {
			m = &dense
		}
		if got := DeepEPBuffers(&pl, m); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

// TestDeepEPBuffersInPeak: the model zoo's Qwen3-235B-A22B plan (ETP 1
// x EP 32, the flex dispatcher) lists DeepEP's 806,543,008 bytes
// (TestDeepEPBuffers) as a part outside the allocator, and its usable
// memory is that much less than the same plan's under the all-to-all
// dispatcher, which lists none.
func TestDeepEPBuffersInPeak(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:32")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "qwen3-235b-a22b:seq=4096,batch=2048")
	peak := func(keys string) Peak {
		s, err := plan.ParseStrategy(keys)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		return step.Peak(step.stages(nil))
	}
	const keys = "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,recompute-modules=layernorm+moe_act,stack=model-zoo-moe-dev"
	flex, a2a := peak(keys), peak(keys+",dispatcher=alltoall")
	part := func(pk *Peak) (int64, bool) {
		for _, pt := range pk.Parts {
			if pt.Name == "DeepEP buffers" {
				return pt.Bytes, pt.Outside
			}
		}
		return 0, false
	}
	if b, outside := part(&flex); b != 806543008 || !outside {
		t.Errorf("flex: DeepEP buffers %d bytes (outside the allocator: %v), want 806,543,008 outside", b, outside)
	}
	if b, _ := part(&a2a); b != 0 {
		t.Errorf("alltoall: DeepEP buffers %d bytes, want none", b)
	}
	if d := a2a.Usable - flex.Usable; d != 806543008 {
		t.Errorf("usable memory %d bytes less under flex, want 806,543,008", d)
	}
}
