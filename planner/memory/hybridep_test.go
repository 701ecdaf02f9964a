package memory

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestHybridEPBuffers: HybridEP's buffers by hand for Qwen3-30B-A3B
// (hidden 2,048, 128 experts: 16 scaling factors a token), a
// micro-batch of 4,096 tokens, no tensor or context parallelism, 8 GPUs
// a node (tmp_state_t scratch 108 x 8 x 8 = 6,912 bytes):
//   - EP 8, one domain: 16 local experts (128 / 8); max 4,096 x 8 =
//     32,768 tokens: tokens 32,768 x 2,048 x 2 = 134,217,728,
//     probabilities 32,768 x 16 x 8 x 4 = 16,777,216, scaling factors
//     32,768 x 16 x 4 = 2,097,152, the all-gathered routing maps 128 x
//     4,096 x 8 = 4,194,304: 157,293,312 bytes.
//   - EP 16, two domains of 8: 8 local experts; max 65,536 tokens:
//     268,435,456 + 16,777,216 (65,536 x 8 x 8 x 4) + 4,194,304 +
//     8,388,608 (128 x 4,096 x 16) + 6,912 = 297,802,496; RDMA over the
//     other domain, flags 4 x 32 (4,096 / 128) x 8 = 1,024 bytes each
//     side: dispatch 16,777,216 (4,096 x 2,048 x 2) + 2,097,152 (4,096 x
//     128 x 4) + 262,144 + 16,777,216 + 1,048,576 (4,096 x 64 x 4) +
//     262,144 + 1,024 = 37,225,472, combine 2 x 16,777,216 + 2 x
//     1,048,576 + 1,024 = 35,652,608: 370,680,576 bytes.
//   - EP 8 at 256 tokens a micro-batch: HybridEP's floor of 512 tokens a
//     rank, max 4,096: 16,777,216 + 2,097,152 + 262,144 + 524,288 (128 x
//     512 x 8) + 6,912 = 19,667,712 bytes.
//
// None under DeepEP (dispatcher=flex), the all-to-all dispatcher, in a
// dense model, or where the group is one GPU.
func TestHybridEPBuffers(t *testing.T) {
	moe := mustSpec(t, "qwen3-30b-a3b:seq=4096,batch=512")
	short := mustSpec(t, "qwen3-30b-a3b:seq=256,batch=512")
	dense := mustSpec(t, "llama3-8b:seq=4096,batch=16")
	if moe.Hidden != 2048 || moe.Experts != 128 {
		t.Fatalf("hidden %d, %d experts; want 2,048 and 128", moe.Hidden, moe.Experts)
	}
	p, err := plan.ParsePod("dgx-h100:2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		ep         int
		dispatcher string
		model      string
		want       int64
	}{
		{"EP 8", 8, plan.DispatcherHybridEP, "moe", 157293312},
		{"EP 16, two domains", 16, plan.DispatcherHybridEP, "moe", 370680576},
		{"EP 8, 256 tokens", 8, plan.DispatcherHybridEP, "short", 19667712},
		{"DeepEP", 8, plan.DispatcherFlex, "moe", 0},
		{"all-to-all", 8, plan.DispatcherAllToAll, "moe", 0},
		{"dense", 8, plan.DispatcherHybridEP, "dense", 0},
		{"one GPU", 1, plan.DispatcherHybridEP, "moe", 0},
	} {
		pl := plan.Plan{EP: c.ep, ETP: 1, TP: 1, CP: 1, MBS: 1}
		pl.Run = plan.Software{Dispatcher: c.dispatcher}.Settings()
		m := map[string]*transformer.Spec{"moe": &moe, "short": &short, "dense": &dense}[c.model]
		if got := HybridEPBuffers(&pl, m, &p); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

// TestHybridEPBuffersInPeak: Qwen3-30B-A3B at EP 16 under HybridEP lists
// its 370,680,576 bytes (TestHybridEPBuffers) as a part outside the
// allocator and no DeepEP part; under DeepEP (dispatcher=flex) the part
// is DeepEP's.
func TestHybridEPBuffersInPeak(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:2")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "qwen3-30b-a3b:seq=4096,batch=1024")
	parts := func(keys string) map[string]int64 {
		s, err := plan.ParseStrategy(keys)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		pk := step.Peak(step.stages(nil))
		got := map[string]int64{}
		for _, pt := range pk.Parts {
			if pt.Outside {
				got[pt.Name] = pt.Bytes
			}
		}
		return got
	}
	const keys = "ep=16,dp=16,mbs=1,distopt=on,grads=bf16,fp8=current,stack=megatron-bridge-26.04"
	h := parts(keys + ",dispatcher=hybridep")
	if h["HybridEP buffers"] != 370680576 || h["DeepEP buffers"] != 0 {
		t.Errorf("hybridep: parts outside the allocator %v, want HybridEP buffers 370,680,576 and no DeepEP", h)
	}
	d := parts(keys + ",dispatcher=flex")
	if d["HybridEP buffers"] != 0 || d["DeepEP buffers"] != DeepEPBuffers(&plan.Plan{EP: 16, ETP: 1, Run: plan.Settings{Dispatcher: plan.DispatcherFlex}}, &m) {
		t.Errorf("flex: parts outside the allocator %v, want DeepEP's only", d)
	}
}
