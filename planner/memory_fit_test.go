package planner

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

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
	L := 4 * float64(transformer.LayerParams(m))
	P := L + float64(transformer.EmbeddingParams(m)) + float64(transformer.OutputParams(m))
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
