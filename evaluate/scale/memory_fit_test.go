package scale

import (
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph/transformer"
)

// TestKorthikantiTable2 checks one layer's activations against
// Korthikanti et al. (arXiv 2205.05198), table 2, for a GPT layer with
// unfused attention (Megatron-LM of 2022: the dgx-a100 pod), per GPU,
// bytes: tensor parallelism sbh(10 + 24/t + 5as/(ht)), with sequence
// parallelism sbh(34/t + 5as/(ht)). The 22B model of its table 3: h
// 6,144, a 64, s 2,048, b 1, t 8: sbh = 12,582,912, 5as/h = 106.67.
func TestKorthikantiTable2(t *testing.T) {
	p, err := plan.PodOf("dgx-a100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "gpt:layers=48,hidden=6144,heads=64,seq=2048,vocab=51200,batch=1")
	for _, c := range []struct {
		name string
		s    plan.Strategy
		want float64 // by hand from the table's formula
	}{
		{"tensor parallel", plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1}, 331_350_016},                             // 12,582,912 x 26.333
		{"+ sequence parallel", plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true}, 221_249_536}, // x 17.583
	} {
		pl, err := plan.Resolve(m, c.s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 8, 2048)
		if got := co.layerMemory().perLayer; math.Abs(got/c.want-1) > 1e-9 {
			t.Errorf("%s: %.0f bytes a layer, Korthikanti's table 2 %.0f", c.name, got, c.want)
		}
	}
}

// megatronWeightsAndOptimizer is Megatron-LM's own estimate of the
// weights' and optimizer's bytes on the most loaded GPU of a dense GPT
// or Llama (megatron/training/theoretical_memory_usage.py,
// compute_weight_and_optimizer_memory, NVIDIA/Megatron-LM at
// d98e8a64dd): the first stage's share of the blocks and the embedding
// over the tensor-parallel GPUs, the norms whole, at 18 bytes a
// parameter, 6 + 12/(DP x CP) with the distributed optimizer. A second
// opinion, not a published peak.
func megatronWeightsAndOptimizer(layers, h, heads, kv, ffn, vocab int, swiglu, rms bool, tp, pp, dp int, distOpt bool) float64 {
	H, F, V := float64(h), float64(ffn), float64(vocab)
	attn := 2 * H * H * (1 + float64(kv)/float64(heads))
	mult := 1.0
	if swiglu {
		mult = 1.5
	}
	mlp := 2 * H * F * mult
	norm := 1.0
	if !rms {
		norm = 2
	}
	ln := 2 * H * norm
	tpSharded := ((attn+mlp)*float64(layers)/float64(pp) + H*V) / float64(tp)
	replicated := (ln*float64(layers) + norm*H) / float64(pp)
	per := 18.0
	if distOpt {
		per = 6 + 12/float64(dp)
	}
	return (tpSharded + replicated) * per
}

// TestWeightsBesideMegatron: placer's weights, gradients and optimizer
// state of the most loaded GPU beside Megatron-LM's own estimate for
// Megatron's weak-scaling rows read as placer reads them (within 3%:
// Megatron's estimate puts the embedding on the first stage and the
// output layer nowhere, placer on the stage that holds each).
func TestWeightsBesideMegatron(t *testing.T) {
	for _, c := range []struct {
		workload, cluster string
		s                 plan.Strategy
		l, h, a, f, v     int
	}{
		{"gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152", "dgx-h100:288",
			plan.Strategy{Tensor: 8, Pipeline: 6, Replicas: 48, MicroBatchSize: 1, SequenceParallel: true, DistOpt: true}, 96, 12288, 96, 4 * 12288, 131072},
		{"gpt:layers=48,hidden=6144,heads=64,seq=2048,vocab=51200,batch=4", "dgx-a100:1",
			plan.Strategy{Tensor: 8, Pipeline: 1, Replicas: 1, MicroBatchSize: 1}, 48, 6144, 64, 4 * 6144, 51200},
	} {
		m := mustSpec(t, c.workload)
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, c.s, p)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(r.Weights + r.Grads + r.OptState)
		want := megatronWeightsAndOptimizer(c.l, c.h, c.a, c.a, c.f, c.v, false, false, c.s.Tensor, max(c.s.Pipeline, 1), c.s.Replicas, c.s.DistOpt)
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("%s %+v: %.2f GB of weights, gradients and optimizer state; Megatron-LM's estimate %.2f GB", c.workload, c.s, got/1e9, want/1e9)
		}
	}
}

// TestMemoryMargin: the margin is a share of the GPU's memory kept free
// beside the CUDA context and NCCL's buffers; out of [0, 0.5] refused.
func TestMemoryMargin(t *testing.T) {
	for _, c := range []struct {
		f  float64
		ok bool
	}{{0, true}, {0.06, true}, {0.5, true}, {-0.01, false}, {0.51, false}, {math.NaN(), false}} {
		if err := plan.CheckMemoryMargin(c.f); (err == nil) != c.ok {
			t.Errorf("CheckMemoryMargin(%g) = %v", c.f, err)
		}
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama3-8b:seq=8192,batch=8")
	s := plan.Strategy{Replicas: 8, MicroBatchSize: 1}
	var usable []int64
	for _, margin := range []float64{plan.NoMemoryMargin, 0, 0.2} {
		p.MemoryMargin = margin
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		var outside int64
		for _, pt := range r.MemoryParts {
			if pt.Outside {
				outside += pt.Bytes
			}
		}
		// The context and one data-parallel group's NCCL buffers.
		if outside != plan.CUDAContext+plan.NCCLBuffersPerGroup {
			t.Errorf("margin %g: %d bytes outside the allocator, want %d", margin, outside, plan.CUDAContext+plan.NCCLBuffersPerGroup)
		}
		usable = append(usable, r.Usable)
	}
	c := float64(p.Hardware.Memory)
	outside := int64(plan.CUDAContext + plan.NCCLBuffersPerGroup)
	for i, f := range []float64{0, plan.DefaultMemoryMargin, 0.2} {
		if want := int64(c*(1-f)) - outside; usable[i] != want {
			t.Errorf("margin %g: %d usable, want %d", f, usable[i], want)
		}
	}
}

// TestTitanParts: torchtitan's parts as its source holds them, by hand
// for Llama 3.1 70B (hidden 8,192, 64 heads, 8 key/value heads, head
// 128) at 8,192 tokens: the loss's bytes a logit (12 eager on one GPU's
// vocabulary, 16 with loss parallel, 2 more under a pipeline), the
// gathered inputs of a sequence-parallel block (4 units of s h whole,
// 2 with Float8, less the 1/T Megatron-Core's count has) and the keys
// and values repeat_kv widens to every head.
func TestTitanParts(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=8192,batch=8")
	const n, h = 8192.0, 8192.0
	unit := n * h
	kvWide := 2 * 2 * (64 - 8) * 128 / h // 14 units of s h, over T
	for _, c := range []struct {
		name      string
		pl        plan.Plan
		loss      float64
		extra     float64
		buffersS0 float64 // titanStageBuffers of stage 0 with 1 in flight
	}{
		{"fsdp", plan.Plan{T: 1, P: 1, M: 1}, 12, kvWide * unit, 0},
		{"tp 8 sp", plan.Plan{T: 8, P: 1, M: 1, Strategy: plan.Strategy{SequenceParallel: true}}, 16, 4*unit*7/8 + kvWide*unit/8, 0},
		{"tp 8 sp fp8", plan.Plan{T: 8, P: 1, M: 1, Strategy: plan.Strategy{SequenceParallel: true, FP8: "current"}}, 16, 2*unit*7/8 + kvWide*unit/8, 0},
		// 8 micro-batches: stage 0 receives the gradient of each and
		// keeps the output of the one in flight, 2 s h / T bytes each.
		{"tp 8 sp pp 4", plan.Plan{T: 8, P: 4, M: 8, Strategy: plan.Strategy{SequenceParallel: true}}, 18, 4*unit*7/8 + kvWide*unit/8, (8 + 1) * 2 * unit / 8},
	} {
		c.pl.Software.Stack = "torchtitan-0.2"
		if got := titanLossBytes(&c.pl); got != c.loss {
			t.Errorf("%s: %g bytes a logit, want %g", c.name, got, c.loss)
		}
		co := coster{m: m, pl: c.pl, tokens: n}
		if got := co.titanBlockExtra(); math.Abs(got/c.extra-1) > 1e-12 {
			t.Errorf("%s: %.0f bytes beyond Megatron-Core's count, want %.0f", c.name, got, c.extra)
		}
		if got := co.titanStageBuffers(0, 1); math.Abs(got-c.buffersS0) > 1e-3 {
			t.Errorf("%s: stage 0's buffers %.0f bytes, want %.0f", c.name, got, c.buffersS0)
		}
	}
}

// TestMoEDistOptShards: Megatron-Core's distributed optimizer shards a
// model with experts' dense parameters over the data-parallel and
// context ranks and its experts' over the expert-data-parallel ranks
// (megatron/core/optimizer: the dense and expert parameter groups'
// buffers, each over its own data-parallel group). By hand, a stage of
// 1e9 parameters of which 6e8 experts' and 9e8 in its blocks, D 8, C 2,
// EDP 4, BF16 weights and gradients: optimizer 4e8 x 12 / 16 + 6e8 x
// 12 / 4 = 2.1e9 bytes, weights and gradients 2e9 each (unsharded).
func TestMoEDistOptShards(t *testing.T) {
	m := mustSpec(t, "qwen3-30b-a3b:seq=4096,batch=64")
	pl := plan.Plan{T: 1, P: 1, D: 8, C: 2, EP: 4, EDP: 4, ETP: 1, Stages: []int{48}, Strategy: plan.Strategy{DistOpt: true, GradBF16: true}}
	co := coster{m: m, pl: pl}
	st := stageCost{params: 1e9, experts: 6e8, layers: 9e8}
	w, fp8, g, o := co.stageState(0, &st)
	if w != 2e9 || fp8 != 0 || g != 2e9 || math.Abs(o-2.1e9) > 1 {
		t.Errorf("weights %.0f, FP8 copies %.0f, gradients %.0f, optimizer %.0f; want 2e9, 0, 2e9, 2.1e9", w, fp8, g, o)
	}
	// Without the distributed optimizer every GPU keeps all 12 bytes.
	co.pl.DistOpt = false
	if _, _, _, o := co.stageState(0, &st); o != 12e9 {
		t.Errorf("optimizer without distopt %.0f, want 1.2e10", o)
	}
}

// TestEagerState: a plain PyTorch plan (torch-eager: autocast over FP32
// weights; torch-eager-bf16) holds its weights, gradients and AdamW's
// moments in the weights' dtype at its peak (the loss's backward of a
// step's second micro-batch: every .grad made), and under autocast the
// BF16 copy of each weight a GEMM reads (the blocks' but their norms',
// and the output layer's), every one saved at that instant; by hand for
// the tiny Llama on one GPU (no pipeline, no sharding): P parameters, L
// of them the blocks', G those the GEMMs read.
func TestEagerState(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		t.Fatal(err)
	}
	L := 4 * float64(m.LayerParams())
	P := L + float64(m.EmbeddingParams()) + float64(m.OutputParams())
	G := L - 4*2*256 + 1024*256 // less the blocks' two norms, plus the output layer
	for _, c := range []struct {
		stack            string
		weights, g, o, l float64 // bytes a parameter, and a GEMM weight's autocast copy
	}{
		{"torch-eager", 4, 4, 8, 2},
		{"torch-eager-bf16", 2, 2, 4, 0},
		{"", 2, 4, 12, 0}, // Megatron's count, unchanged
	} {
		text := "tp=1,pp=1,dp=1,mbs=1"
		if c.stack != "" {
			text += ",stack=" + c.stack
		}
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		w, g, o := c.weights*P+c.l*G, c.g*P, c.o*P
		if math.Abs(float64(r.Weights)-w) > 2 || math.Abs(float64(r.Grads)-g) > 2 || math.Abs(float64(r.OptState)-o) > 2 {
			t.Errorf("%s: weights %d, gradients %d, optimizer %d bytes; by hand %.0f, %.0f, %.0f",
				text, r.Weights, r.Grads, r.OptState, w, g, o)
		}
	}
}

// TestInflightInterleaved checks the micro-batches in flight on a
// stage, by hand: 1F1B min(M, P - s); interleaved Megatron-Core's (and
// torch's ScheduleInterleaved1F1B's) warm-up of (P-s-1)2 + (V-1)P model
// chunks and the one it runs, each 1/V of the stage, at most the step's
// M V chunks (M micro-batches of the whole stage): on the first stage
// P (1 + (P-1)/(P V)).
func TestInflightInterleaved(t *testing.T) {
	for _, c := range []struct {
		p, v, m, s int
		want       float64
	}{
		{8, 1, 32, 0, 8},    // 1F1B: P
		{8, 1, 32, 5, 3},    // 1F1B, stage 5: P - s
		{8, 1, 4, 0, 4},     // fewer micro-batches than stages
		{8, 2, 32, 0, 11.5}, // (14 + 8 + 1) chunks / 2
		{8, 2, 8, 0, 8},     // torchtitan's default M = P: all 16 chunks, 8 micro-batches
		{8, 2, 10, 0, 10},   // 20 chunks < 23
		{4, 3, 16, 0, 5},    // (6 + 8 + 1) / 3
		{4, 3, 4, 0, 4},     // 12 chunks < 15
		{8, 2, 8, 7, 4.5},   // the last stage: (8 + 1) chunks / 2, not 1
		{8, 2, 32, 3, 8.5},  // stage 3: (8 + 8 + 1) / 2
		{4, 3, 16, 3, 3},    // the last stage: (8 + 1) / 3
		{8, 1, 8, 7, 1},     // 1F1B's last stage: 1
	} {
		pl := plan.Plan{P: c.p, V: c.v, M: c.m}
		pl.Schedule = decision.OneFOneB
		pl.Software.Stack = "torchtitan-0.2"
		if got := inflight(&pl, c.s); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P %d V %d M %d stage %d: %g micro-batches in flight, want %g", c.p, c.v, c.m, c.s, got, c.want)
		}
	}
	// Megatron-Core's stack: the first stage's count alike, the others
	// 1F1B's P - s (Plan.inflight says why).
	for _, c := range []struct {
		s    int
		want float64
	}{{0, 11.5}, {3, 5}, {7, 1}} {
		pl := plan.Plan{P: 8, V: 2, M: 32}
		pl.Schedule = decision.OneFOneB
		if got := inflight(&pl, c.s); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Megatron-Core, stage %d: %g micro-batches in flight, want %g", c.s, got, c.want)
		}
	}
}

// TestTitanPipelineBuffers: torch's pipelining as torchtitan runs it, by
// hand for Llama 3.1 405B (hidden 16,384, vocabulary 128,256) at 8,192
// tokens a micro-batch, T 8 with sequence parallelism, P 8, M 8: a
// stage boundary's tensor is 2 x 8,192 x 16,384 / 8 = 33,554,432
// bytes; the last stage keeps the other 7 micro-batches' BF16 logits
// (output_chunks) beside the one whose loss runs, 8,192 x 16,032 x 2
// bytes each; with V 2 each of a rank's two chunks has its buffers.
func TestTitanPipelineBuffers(t *testing.T) {
	m := mustSpec(t, "llama3.1-405b:seq=8192,batch=64")
	const n, boundary = 8192.0, 33554432.0
	for _, c := range []struct {
		name     string
		v, s     int
		inflight float64
		want     float64 // boundaries
	}{
		// 1F1B: stage 0 receives 8 gradients and keeps 8 outputs; the
		// last receives 8 activations, 1 of them in flight.
		{"1f1b first", 1, 0, 8, 8 + 8},
		{"1f1b last", 1, 7, 1, 8 - 1},
		{"1f1b middle", 1, 3, 5, (8 - 5) + 8 + 5},
		// Interleaved: rank 0's second chunk receives activations (8, 16
		// chunks in flight, 8 of them its), both chunks gradients (16),
		// both keep outputs (16); the last rank's first chunk receives
		// and sends, its second receives only: 9 chunks in flight.
		{"interleaved first", 2, 0, 8, (8 - 8) + 16 + 16},
		{"interleaved last", 2, 7, 4.5, (16 - 9) + 8 + 4.5},
	} {
		pl := plan.Plan{T: 8, P: 8, V: c.v, M: 8, Strategy: plan.Strategy{SequenceParallel: true}}
		pl.Software.Stack = "torchtitan-0.2"
		co := coster{m: m, pl: pl, tokens: n}
		if got := co.titanStageBuffers(c.s, c.inflight); math.Abs(got-c.want*boundary) > 1e-3 {
			t.Errorf("%s: %.0f bytes of buffers, want %.0f", c.name, got, c.want*boundary)
		}
	}
	pl := plan.Plan{T: 8, P: 8, M: 8}
	pl.Software.Stack = "torchtitan-0.2"
	if got := titanOutputChunks(&pl); got != 7 {
		t.Errorf("P 8 M 8: %g output chunks held, want 7", got)
	}
	pl.P = 1
	if got := titanOutputChunks(&pl); got != 0 {
		t.Errorf("no pipeline: %g output chunks held, want 0", got)
	}
}

// TestTitanUnitOrder: torch's ScheduleInterleaved1F1B's order of units
// (chunk x M + micro-batch), by hand for P 2, V 2, M 4: the forwards a
// round of P micro-batches a chunk at a time (c0 0 1, c1 0 1, c0 2 3,
// c1 2 3), the backwards from the last chunk (c1 0 1, c0 0 1, c1 2 3,
// c0 2 3); none for 1F1B or another stack.
func TestTitanUnitOrder(t *testing.T) {
	pl := plan.Plan{P: 2, V: 2, M: 4}
	pl.Software.Stack = "torchtitan-0.2"
	ord := titanUnitOrder(&pl)
	if ord == nil {
		t.Fatal("no order for torchtitan's interleaved schedule")
	}
	fwd, bwd := []int{0, 1, 4, 5, 2, 3, 6, 7}, []int{4, 5, 0, 1, 6, 7, 2, 3}
	for k := range 8 {
		if got := ord(k, false); got != fwd[k] {
			t.Errorf("forward %d: unit %d, want %d", k, got, fwd[k])
		}
		if got := ord(k, true); got != bwd[k] {
			t.Errorf("backward %d: unit %d, want %d", k, got, bwd[k])
		}
	}
	pl.V = 1
	if titanUnitOrder(&pl) != nil {
		t.Error("1F1B: an order, want none")
	}
	pl.V, pl.Software.Stack = 2, ""
	if titanUnitOrder(&pl) != nil {
		t.Error("Megatron-Core: an order, want none")
	}
}

// TestTitanFP8Weights: torchao's Float8Linear (eab345c) saves its
// weight's float8 transpose for the backward, one byte a block
// parameter a micro-batch in flight, unless a checkpoint drops it. By
// hand, a stage of 8e9 block parameters on this GPU: 8e9 bytes without
// recomputation; none with full or per-op recomputation, without Float8
// or on another stack.
func TestTitanFP8Weights(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=8192,batch=8")
	st := stageCost{params: 9e9, layers: 8e9}
	for _, c := range []struct {
		name, stack, fp8 string
		rec              plan.Recompute
		want             float64
	}{
		{"float8, no recomputation", "torchtitan-0.2", "current", plan.NoRecompute, 8e9},
		{"float8, full", "torchtitan-0.2", "current", plan.FullRecompute, 0},
		{"float8, per-op", "torchtitan-0.2", "current", plan.SelectiveRecompute, 0},
		{"bf16", "torchtitan-0.2", "", plan.NoRecompute, 0},
		{"megatron-core", "", "current", plan.NoRecompute, 0},
	} {
		pl := plan.Plan{T: 1, P: 1, M: 1, Strategy: plan.Strategy{FP8: c.fp8, Recompute: c.rec}}
		pl.Software.Stack = c.stack
		co := coster{m: m, pl: pl}
		if got := co.titanFP8Weights(&st); got != c.want {
			t.Errorf("%s: %.0f bytes, want %.0f", c.name, got, c.want)
		}
	}
}
