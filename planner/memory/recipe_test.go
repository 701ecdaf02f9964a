package memory

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestFP8Params: FP8 primary weights (fp8-params=on) on Megatron-Core's
// stack under the delayed recipe: a stage of 1.1e9 parameters, 1e9 of
// them the blocks', holds the blocks' weights in FP8 (1e9 bytes) and
// the rest in BF16 (0.2e9), and the blocks' transposes (1e9), where
// BF16 primary weights hold 2.2e9 and the row- and column-wise FP8
// copies 2e9. Without the transpose cache one transpose is held at a
// time, the largest linear's: Llama 3 8B's FC1, 4,096 x 2 x 14,336 =
// 117,440,512 bytes (QKV 4,096 x 6,144, the projection 4,096 x 4,096,
// FC2 14,336 x 4,096 are smaller).
func TestFP8Params(t *testing.T) {
	for _, c := range []struct {
		params, noCache bool
		w, copies       float64
	}{{false, false, 2.2e9, 2e9}, {true, false, 1.2e9, 1e9}, {true, true, 1.2e9, 117_440_512}} {
		co := counter{m: mustSpec(t, "llama3-8b:seq=4096,batch=8"), pl: plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32},
			Strategy: plan.Strategy{FP8: plan.FP8Delayed, DistOpt: true, MemoryRecipe: plan.MemoryRecipe{FP8Params: c.params, NoTransposeCache: c.noCache}}}}
		co.pl.TP = 1
		st := Stage{Params: 1.1e9, Layers: 1e9}
		w, copies, _, _ := co.stageState(0, &st)
		if !near(w, c.w) || !near(copies, c.copies) {
			t.Errorf("fp8-params=%v, no transpose cache %v: weights %g, copies %g; want %g, %g", c.params, c.noCache, w, copies, c.w, c.copies)
		}
	}
}

// TestRecipeBlock works one block's saved activations by hand for Llama
// 2 70B (hidden 8,192, 64 heads, 8 key/value heads, FFN 28,672) at
// 8,192 tokens, TP 4 with sequence parallelism, FP8 delayed on placer's
// default Megatron-Core stack (a hidden dropout: one mask unit after
// the attention), in units of s h bytes (unit = 8,192 x 8,192):
//   - FP8: the norms' inputs 4; attention: QKV's FP8 input 1, Q K V
//     2 x 80/64 = 2.5, its output 2, the mask 1, the output
//     projection's FP8 input 1 (7.5); MLP: FC1's FP8 input 1, SwiGLU's
//     input 4 x 3.5 = 14, FC2's FP8 input 3.5 (18.5): 30 units over
//     T = 4, 7.5;
//   - fp8-dpa: Q K V and the output in FP8, 2.25 less: 27.75 / 4;
//   - and fp8-activation: SwiGLU's input in FP8, 7 less: 20.75 / 4;
//   - LoRA on qkv+proj (frozen base) with both: QKV's and the output
//     projection's inputs, FC1's and FC2's, not kept (1 + 1 + 1 +
//     3.5); the QKV adapter's input gathered whole (2 units on every
//     GPU), the projection adapter's, the BF16 attention output that
//     the FP8 attention no longer keeps, 2: (4 + 5.25 + 7) / 4 + 2 =
//     6.0625;
//   - the same with lora-dropout 0.1: each adapter's input dropout
//     keeps its mask, of the QKV adapter's sequence shard 1, of the
//     projection's input 1, and its output 2 in place of the attention
//     output: (4 + 7.25 + 7) / 4 + 2 = 6.5625;
//   - LoRA on all four linears, no dropout, BF16 attention and
//     activation: QKV's, the projection's FP8 copy, FC1's and FC2's
//     inputs not kept (6.5 less); QKV's and FC1's adapters' gathered
//     inputs 2 + 2 whole; the projection adapter's input is the
//     attention output the attention keeps (0); FC2's adapter keeps
//     the activation's output, 2 x 3.5 = 7: (4 + 5.5 + 21) / 4 + 4 =
//     11.625.
func TestRecipeBlock(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000,seq=8192,batch=8")
	const unit = 8192.0 * 8192
	lora := func(targets plan.LoRATargets, dropout float64) plan.FineTune {
		return plan.FineTune{LoRARank: 16, LoRATargets: targets, LoRADropout: dropout}
	}
	for _, c := range []struct {
		name  string
		r     plan.MemoryRecipe
		ft    plan.FineTune
		units float64
	}{
		{"fp8", plan.MemoryRecipe{}, plan.FineTune{}, 7.5},
		// hidden-dropout=0: no mask after the attention, 29 / 4.
		{"fp8 hidden-dropout=0", plan.MemoryRecipe{NoHiddenDropout: true}, plan.FineTune{}, 29.0 / 4},
		{"fp8-dpa", plan.MemoryRecipe{FP8DPA: true}, plan.FineTune{}, 27.75 / 4},
		{"fp8-dpa fp8-activation", plan.MemoryRecipe{FP8DPA: true, FP8Activation: true}, plan.FineTune{}, 20.75 / 4},
		{"lora qkv+proj", plan.MemoryRecipe{FP8DPA: true, FP8Activation: true}, lora(plan.LoRAQKV|plan.LoRAProj, 0), 6.0625},
		{"lora qkv+proj dropout", plan.MemoryRecipe{FP8DPA: true, FP8Activation: true}, lora(plan.LoRAQKV|plan.LoRAProj, 0.1), 6.5625},
		{"lora all", plan.MemoryRecipe{}, lora(plan.LoRAAll, 0), 11.625},
	} {
		s := plan.Strategy{Tensor: 4, Replicas: 2, MicroBatchSize: 1, SequenceParallel: true, FP8: plan.FP8Delayed, MemoryRecipe: c.r, FineTune: c.ft}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := counterAt(m, pl, &p, 4, 8192)
		if got := co.layerMemory().perLayer / unit; !near(got, c.units) {
			t.Errorf("%s: %.6g units a layer, want %.6g", c.name, got, c.units)
		}
	}
}

// TestOffloadedActs: 80 layers of 100 bytes each, 30 of them left on
// the GPU by offload (kept): offloading 10 keeps 70 x 100 + 10 x 30 and
// the two reload buffers of 70 (7,440); offloading one, one buffer
// (79 x 100 + 30 + 70 = 8,000); none, 8,000.
func TestOffloadedActs(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{10, 7440}, {1, 8000}, {0, 8000}, {79, 100 + 79*30 + 2*70}} {
		pl := plan.Plan{Strategy: plan.Strategy{MemoryRecipe: plan.MemoryRecipe{OffloadLayers: c.n}}}
		if got := offloadedActs(&pl, 80, 100, 30); !near(got, c.want) {
			t.Errorf("offload-layers=%d: %g bytes, want %g", c.n, got, c.want)
		}
	}
}

// TestOffloadPeak: on the whole step (Step.Peak), offloading 40 of Llama
// 2 70B's 80 layers at TP 4 (FP8, sequence parallel) takes off 40 layers'
// marked activations less the two reload buffers: a layer holds 7.5
// units of s h (TestRecipeBlock), of which what Transformer Engine does
// not mark stays, SwiGLU's input (14) and the dropout's mask (1), (14 +
// 1) / 4 = 3.75, so 40 x 3.75 - 2 x 3.75 = 38 x 3.75 units = 38 x 3.75
// x 8,192 x 8,192 bytes less.
func TestOffloadPeak(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000,seq=8192,batch=8")
	acts := func(n int) int64 {
		s := plan.Strategy{Tensor: 4, Replicas: 2, MicroBatchSize: 1, SequenceParallel: true, FP8: plan.FP8Delayed,
			MemoryRecipe: plan.MemoryRecipe{OffloadLayers: n}}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		pk := step.Count(step.stages(nil))
		return pk.Activations
	}
	if got, want := float64(acts(0)-acts(40)), 38*3.75*8192.0*8192; !near(got, want) {
		t.Errorf("offload-layers=40 takes off %.0f bytes, want %.0f", got, want)
	}
}

// TestMemoryFractionUsable: memory-fraction=0.5 leaves the allocator
// half the GPU's memory, under the pod's usable memory.
func TestMemoryFractionUsable(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama3-8b:seq=4096,batch=8")
	usable := func(f float64) int64 {
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1, MemoryRecipe: plan.MemoryRecipe{MemoryFraction: f}}, p)
		if err != nil {
			t.Fatal(err)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		pk := step.Count(step.stages(nil))
		return pk.Usable
	}
	if got, want := usable(0.5), p.Hardware.Memory/2; got != want {
		t.Errorf("memory-fraction=0.5: %d usable, want %d", got, want)
	}
	if usable(0) <= p.Hardware.Memory/2 {
		t.Errorf("no fraction: %d usable, want the pod's (over half)", usable(0))
	}
}

// TestGraphBuffers: NVIDIA's MLPerf v4.0 GPT-3 175B plan on 1,344 nodes
// (TP 4 with sequence parallelism, PP 6 x VP 8, global batch 2,688 over
// 448 replicas: 6 micro-batches of one sequence of 2,048) under
// per-layer graphs (graph-pool=layers) keeps on stage 0 a graph for
// each of its 16 layers and 6 micro-batches, four hidden states each of
// 2,048 / 4 tokens x 12,288 x 2 bytes = 12,582,912: 16 x 6 x 4 x
// 12,582,912 = 4,831,838,208 bytes beside its activations.
func TestGraphBuffers(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:1344")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "gpt:layers=96,hidden=12288,heads=96,vocab=50257,seq=2048,batch=2688")
	acts := func(pool string) float64 {
		s, err := plan.ParseStrategy("tp=4,pp=6,vp=8,dp=448,mbs=1,sp=on,distopt=on,fp8=delayed,cuda-graphs=dense" + pool)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCounter(&Step{Model: m, Plan: pl, Pod: &p}, 4)
		lm := co.layerMemory()
		st := StageOf(&m, &pl, 0, float64(transformer.LayerParams(m)), nil)
		a, _ := co.stageActivations(0, &st, &lm)
		return a
	}
	if got, want := acts(",graph-pool=layers")-acts(""), 4_831_838_208.0; !near(got, want) {
		t.Errorf("graph-pool=layers adds %.0f bytes on stage 0, want %.0f", got, want)
	}
}

// TestFP8NoTransposeOnBlackwell: the same stage on a GPU that runs FP8
// GEMMs in every layout (B200: pod.NonTNFP8) keeps no transposed FP8
// copy: BF16 primary weights 2.2e9 with one FP8 copy of the blocks
// (1e9, not 2e9); FP8 primary weights 1.2e9 and no copy (0, not 1e9);
// MXFP8 keeps its row- and column-wise copies (its scales run along one
// dimension): plan.BlockCopyBytes a block parameter, as on the H100.
func TestFP8NoTransposeOnBlackwell(t *testing.T) {
	b200, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	h100, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	if !b200.NonTNFP8() || h100.NonTNFP8() {
		t.Fatalf("NonTNFP8: B200 %v, H100 %v; want true, false", b200.NonTNFP8(), h100.NonTNFP8())
	}
	for _, c := range []struct {
		fp8       string
		params    bool
		pod       *plan.Pod
		w, copies float64
	}{
		{plan.FP8Delayed, false, &b200, 2.2e9, 1e9},
		{plan.FP8Delayed, true, &b200, 1.2e9, 0},
		{plan.FP8Delayed, false, &h100, 2.2e9, 2e9},
		{plan.FP8MX, false, &b200, 2.2e9, plan.BlockCopyBytes(plan.FP8MX) * 1e9},
	} {
		co := counter{m: mustSpec(t, "llama3-8b:seq=4096,batch=8"), pod: c.pod, pl: plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32},
			Strategy: plan.Strategy{FP8: c.fp8, DistOpt: true, MemoryRecipe: plan.MemoryRecipe{FP8Params: c.params}}}}
		st := Stage{Params: 1.1e9, Layers: 1e9}
		w, copies, _, _ := co.stageState(0, &st)
		if !near(w, c.w) || !near(copies, c.copies) {
			t.Errorf("%s fp8-params=%v on %s: weights %g, copies %g; want %g, %g", c.fp8, c.params, c.pod.Hardware.Name, w, copies, c.w, c.copies)
		}
	}
}

// TestCPA2ABuffers: while one layer's attention runs, Transformer
// Engine's a2a context parallelism holds the whole sequence's Q, K and
// V for half the heads on each of cp=2 ranks: 2,048 tokens x (8 + 2 x 8)
// heads x 128 x 2 bytes = 12,582,912 bytes; the p2p ring three chunks
// of the rank's K and V, 3 x 2,048 x 2 x 8 x 128 x 2 = 25,165,824. a2a
// keeps 12,582,912 bytes fewer.
func TestCPA2ABuffers(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=4096,vocab=1024,batch=8")
	acts := func(comm string) float64 {
		s, err := plan.ParseStrategy("cp=2,dp=4,mbs=1,cp-comm-type=" + comm)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCounter(&Step{Model: m, Plan: pl, Pod: &p}, 1)
		lm := co.layerMemory()
		st := StageOf(&m, &pl, 0, float64(transformer.LayerParams(m)), nil)
		a, _ := co.stageActivations(0, &st, &lm)
		return a
	}
	if got, want := acts("a2a")-acts("p2p"), -12_582_912.0; !near(got, want) {
		t.Errorf("cp-comm-type=a2a keeps %.0f bytes more than p2p, want %.0f", got, want)
	}
}
