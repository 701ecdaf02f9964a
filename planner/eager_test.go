package planner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/torchenv/torchtest"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// opKey groups ops as the comparison does: direction, ATen op, class,
// dtype.
type opKey struct {
	bwd         bool
	typ, class  string
	dtype       string
	attnFLOPsNA bool
}

type opSum struct {
	n                    int
	flops, read, written float64
}

func sumOps(ops []eager.Op) map[opKey]opSum {
	out := map[opKey]opSum{}
	for _, o := range ops {
		if o.Comm { // placer's collectives: not the exporter's
			continue
		}
		k := opKey{bwd: o.Backward, typ: o.Type, class: o.Class.String(), dtype: o.DType.String()}
		s := out[k]
		s.n++
		s.flops += o.FLOPs
		s.read += o.Read
		s.written += o.Written
		out[k] = s
	}
	return out
}

// TestEagerOpsMatchExporter holds eager.LayerOps against the project's
// exporter (placer_torch.exporter on fake CPU tensors, CUDA's execution
// settings: placer_torch.profile.eagerops) on three real layers:
// placer_torch.profile.layers' Block at four shard shapes (autocast over
// FP32 weights and BF16 weights, tensor parallelism with and without
// sequence parallelism), transformers' LlamaDecoderLayer at three
// (autocast and BF16) and torchtitan's layer (eagerops.py's
// _TitanBlock, BF16 as FSDP2 runs it) at three (keys repeated 2x, not,
// 6x), and the output part (eager.OutputOps: layers.py's Loss at tp 1,
// torchtitan's norm and loss_fn) at three: for every ATen op, class and
// dtype, in each direction, the same
// number of ops and to the byte the same FLOPs, bytes read and bytes
// written. One exception: SDPA's FLOPs, which the exporter counts as
// the math path's (both products over the whole S x S square, the
// mask's and the softmax's elementwise ops), where the list counts what
// flash attention computes of a causal mask (the two products over the
// lower half: the fused model's attention, costed at the same rate);
// its count and bytes are compared.
func TestEagerOpsMatchExporter(t *testing.T) {
	py := torchtest.Python(t, "transformers")
	cases := []struct {
		hidden, heads, kv, ffn, seq, batch, tp int
		sp, bf16                               bool
		layer                                  eager.CodeBase
		vocab                                  int // the output part (eager.OutputOps) of this vocabulary
	}{
		{256, 4, 2, 512, 64, 2, 1, false, false, eager.LayerLlamaPy, 0},
		{256, 4, 2, 512, 64, 2, 1, false, true, eager.LayerLlamaPy, 0},
		{384, 6, 2, 768, 32, 3, 2, true, false, eager.LayerLlamaPy, 0},
		{384, 6, 6, 1024, 48, 1, 2, false, true, eager.LayerLlamaPy, 0},
		// transformers' LlamaDecoderLayer (tp 1: it has no shards).
		{256, 4, 2, 512, 64, 2, 1, false, false, eager.LayerHF, 0},
		{256, 4, 2, 512, 64, 2, 1, false, true, eager.LayerHF, 0},
		{384, 6, 3, 1024, 48, 1, 1, false, true, eager.LayerHF, 0},
		// torchtitan's layer (eagerops.py's _TitanBlock), BF16 weights
		// as FSDP2 runs it: keys repeated twice, not at all, six times.
		{256, 4, 2, 512, 64, 2, 1, false, true, eager.LayerTitan, 0},
		{384, 6, 6, 1024, 48, 1, 1, false, true, eager.LayerTitan, 0},
		{384, 6, 1, 768, 32, 3, 1, false, true, eager.LayerTitan, 0},
		// The output part: layers.py's Loss (tp 1) under autocast and
		// with BF16 weights; with torchtitan's norm before it.
		{256, 4, 2, 512, 64, 2, 1, false, false, eager.LayerLlamaPy, 1000},
		{384, 6, 2, 768, 48, 1, 1, false, true, eager.LayerLlamaPy, 2048},
		{256, 4, 2, 512, 64, 2, 1, false, true, eager.LayerTitan, 1000},
		// layers.py's Loss at tp 2 and 4 (its vocabulary-parallel loss on
		// this rank's shard; the all-reduces are placer's, not recorded).
		{256, 4, 2, 512, 64, 2, 2, false, true, eager.LayerLlamaPy, 1000},
		{384, 6, 2, 768, 48, 1, 4, false, false, eager.LayerLlamaPy, 2048},
	}
	var names []string
	var args [][]string
	for _, tc := range cases {
		layer := map[eager.CodeBase]string{eager.LayerLlamaPy: "llama", eager.LayerHF: "hf", eager.LayerTitan: "titan"}[tc.layer]
		a := []string{"--layer", layer, "--vocab", strconv.Itoa(tc.vocab), "--hidden", strconv.Itoa(tc.hidden), "--heads", strconv.Itoa(tc.heads), "--kv-heads", strconv.Itoa(tc.kv),
			"--ffn", strconv.Itoa(tc.ffn), "--seq", strconv.Itoa(tc.seq), "--batch", strconv.Itoa(tc.batch), "--tp", strconv.Itoa(tc.tp)}
		if tc.sp {
			a = append(a, "--sp")
		}
		prec := "autocast"
		if tc.bf16 {
			prec = "bf16"
		}
		args = append(args, append(a, "--precision", prec))
		if tc.vocab > 0 {
			layer += fmt.Sprintf("-output-v%d", tc.vocab)
		}
		names = append(names, fmt.Sprintf("%s-h%d-a%d-kv%d-f%d-s%d-b%d-tp%d-sp%v-bf16%v", layer, tc.hidden, tc.heads, tc.kv, tc.ffn, tc.seq, tc.batch, tc.tp, tc.sp, tc.bf16))
	}
	recorded, errs := exporterCases(t, py, args)
	for i, tc := range cases {
		t.Run(names[i], func(t *testing.T) {
			if errs[i] != "" {
				t.Fatal(errs[i])
			}
			m := transformer.Spec{Layers: 1, Hidden: tc.hidden, Heads: tc.heads, KVHeads: tc.kv, FFN: tc.ffn, Vocab: 1024,
				Seq: tc.seq, Batch: tc.batch, Family: "llama"}
			sh := eager.Shape{T: tc.tp, SP: tc.sp, Batch: tc.batch, Seq: tc.seq, FP32Weights: !tc.bf16, Layer: tc.layer}
			list := eager.LayerOps(m, sh)
			if tc.vocab > 0 {
				m.Vocab = tc.vocab
				list = eager.OutputOps(m, sh)
			}
			compareOps(t, recorded[i], sumOps(list), func(k opKey) bool { return strings.HasPrefix(k.typ, "_scaled_dot_product") })
		})
	}
}

// TestEagerLayerOps holds a few of the list's ops by hand: the shape
// h 256, 4 heads of 64 (2 key/value heads), FFN 512, 2 x 64 tokens.
func TestEagerLayerOps(t *testing.T) {
	m := transformer.Spec{Layers: 1, Hidden: 256, Heads: 4, KVHeads: 2, FFN: 512, Vocab: 1024, Seq: 64, Batch: 2, Family: "llama"}
	cases := []struct {
		name        string
		fp32        bool
		launchesF   int
		launchesB   int
		castsF      int
		mmFLOPsF    float64
		firstNormRd float64
	}{
		// Forward: 2 norms of 6, 4 GEMMs, 2 rotary of 7, SDPA (and its
		// allocation, no launch), a clone, silu, mul, 2 adds: 36
		// launches; autocast adds the 4 weights' casts, 2 inputs' and
		// Q's and K's: 8. GEMMs: 2 x 128 x (256 x 512 + 256 x 256 +
		// 256 x 1024 + 512 x 256) = 150,994,944.
		// The first norm's pow reads 128 x 256 elements.
		{"autocast", true, 44, 0, 8, 150994944, 128 * 256 * 4},
		{"bf16", false, 36, 0, 0, 150994944, 128 * 256 * 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops := eager.LayerOps(m, eager.Shape{T: 1, Batch: 2, Seq: 64, FP32Weights: tc.fp32})
			var lf, casts int
			var mmf float64
			for _, o := range ops {
				if o.Backward {
					continue
				}
				lf += o.Launches
				if o.Type == "_to_copy" {
					casts++
				}
				if o.Type == "mm" {
					mmf += o.FLOPs
				}
			}
			if lf != tc.launchesF || casts != tc.castsF || mmf != tc.mmFLOPsF || ops[0].Read != tc.firstNormRd {
				t.Errorf("forward launches %d casts %d GEMM FLOPs %.0f first read %.0f, want %d %d %.0f %.0f",
					lf, casts, mmf, ops[0].Read, tc.launchesF, tc.castsF, tc.mmFLOPsF, tc.firstNormRd)
			}
			if ops[0].Class != graph.ClassElementwise {
				t.Errorf("first op class %v, want elementwise (pow)", ops[0].Class)
			}
		})
	}
}

// TestEagerCosting: what eval says of an eager plan's layers. torchtitan's
// layer forward, by hand: 2 norms of 8 (an FP32 cast each way), 7 GEMMs,
// Q's and K's rotary 3 each (a cast, the complex mul, a cast back: the
// views launch nothing), repeat_kv's 2 copies, SDPA, the output's clone,
// silu, mul, 2 residual adds: 37.
func TestEagerCosting(t *testing.T) {
	p, err := plan.ParsePod("grand-teton:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		plan, want string
		moe        bool
	}{
		{"dp=8,mbs=2,stack=torchtitan-0.2", "eager ATen ops (torchtitan-0.2): torchtitan's TransformerBlock, BF16 weights, 37 kernels forward and", false},
		{"dp=8,mbs=2,stack=torch-eager", "eager ATen ops (torch-eager): placer_torch.profile.layers' Block, autocast BF16 over FP32 weights, 44 kernels forward", false},
		{"dp=8,mbs=2,stack=torchtitan-0.2,compile=on", "", false},
		{"dp=8,mbs=2", "", false},
		// An MoE model (all its layers MoE): transformers' block as 5.24
		// runs it by default (grouped_mm, no host sync); its loop over
		// the 128 experts (grouped-gemm=off) syncs the host 2 x 128 + 1
		// times a layer's forward.
		{"dp=8,mbs=1,stack=hf-eager-bf16", "eager ATen ops (hf-eager-bf16): transformers' LlamaDecoderLayer, BF16 weights, MoE layers eager: the layer's attention half and transformers' Qwen3MoeSparseMoeBlock (grouped_mm, 5.24's default) over 128 local experts", true},
		{"dp=8,mbs=1,stack=hf-eager-bf16,grouped-gemm=off", "eager ATen ops (hf-eager-bf16): transformers' LlamaDecoderLayer, BF16 weights, MoE layers eager: the layer's attention half and transformers' Qwen3MoeSparseMoeBlock (a loop over the experts) over 128 local experts", true},
		{"dp=8,mbs=1,stack=torchtitan-0.2", "eager ATen ops (torchtitan-0.2): torchtitan's TransformerBlock, BF16 weights, MoE layers eager: the layer's attention half and torchtitan's MoE over 128 local experts", true},
		{"dp=8,mbs=1,stack=megatron-bridge-25.11", "", true},
	} {
		m := mustSpec(t, "llama3-8b:seq=8192,batch=16")
		if c.moe {
			m = mustSpec(t, "qwen3-30b-a3b:seq=4096,batch=16")
		}
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if c.moe && c.want != "" {
			syncs := "(no host sync)"
			if strings.Contains(c.plan, "grouped-gemm=off") {
				syncs = "(257 host syncs)"
			}
			if !strings.Contains(r.LayerCosting, syncs) {
				t.Errorf("%s: %q, want it to say %s", c.plan, r.LayerCosting, syncs)
			}
		}
		if !strings.HasPrefix(r.LayerCosting, c.want) || (c.want == "") != (r.LayerCosting == "") {
			t.Errorf("%s: %q, want it to start %q", c.plan, r.LayerCosting, c.want)
		}
	}
}

// TestEagerLossTP holds the output part at tensor degree 4 by hand: h
// 64, vocabulary 1,024 (256 logits a GPU), 2 x 64 = 128 tokens, BF16
// weights. The output layer's shard is 2 x 128 x 64 x 256 = 4,194,304
// FLOPs for each code base. (The norm's ops write at most 128 x 64 x 4
// bytes, under a logit's BF16 shard: the "big" sums below are the
// loss's alone.)
func TestEagerLossTP(t *testing.T) {
	m := transformer.Spec{Layers: 1, Hidden: 64, Heads: 4, KVHeads: 2, FFN: 128, Vocab: 1024, Seq: 64, Batch: 2, Family: "llama"}
	const N, Vl, V, h = 128.0, 256.0, 1024.0, 64.0
	cases := []struct {
		name  string
		layer eager.CodeBase
		// Forward launches; the bytes the forward's collectives carry
		// (and how many); the bytes written by its non-GEMM ops of a
		// logit or more each; the backward's.
		fwd          int
		comm         float64
		comms        int
		big, bigBack float64
	}{
		// torchtitan's loss_parallel: the norm 8 (FP32 cast each way),
		// the GEMM, _log_softmax's 9 with two all-reduces (_to_copy,
		// amax, all-reduce, sub, exp, sum, all-reduce, log, sub), the
		// ignore index's 2, _MaskPartial's 6, gather, the partial zeroed,
		// its all-reduce, neg, the mean's 7, and funcol's copy before
		// each of the 3 all-reduces: 40. Three all-reduces of a
		// float a token, 3 x 128 x 4 = 1,536 B. Of a logit each: the
		// cast, the shift, exp, the result, 4 x 128 x 256 x 4 =
		// 524,288 B; backward zeros_like, exp, add, mul in FP32 and the
		// cast back, 4 x 131,072 + 65,536 = 589,824 B.
		{"titan", eager.LayerTitan, 40, 3 * N * 4, 3, 4 * N * Vl * 4, 4*N*Vl*4 + N*Vl*2},
		// layers.py's Loss: the norm 6, the GEMM, 19: 26. The max's, the
		// exponentials' sum's and the target logit's all-reduces, 1,536
		// B. Of a logit: the cast, the shift, exp, 3 x 131,072; backward
		// the gather's zeros, its scatter_add, exp's mul, the join's
		// add, the cast back: 4 x 131,072 + 65,536.
		{"layers.py", eager.LayerLlamaPy, 26, 3 * N * 4, 3, 3 * N * Vl * 4, 4*N*Vl*4 + N*Vl*2},
		// transformers': the norm 8, the GEMM, the logits' all-gather
		// (128 x 1,024 x 2 = 262,144 B) and cat, the whole loss's 3:
		// 14. Of a logit: the gather, the cat, the FP32 cast and
		// log_softmax over the whole vocabulary: 2 x 262,144 + 2 x
		// 524,288; backward nll_loss_backward, its softmax's and the
		// cast back: 2 x 524,288 + 262,144.
		{"hf", eager.LayerHF, 14, N * V * 2, 1, 2*N*V*2 + 2*N*V*4, 2*N*V*4 + N*V*2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fwd, comms int
			var comm, big, bigBack, gemm float64
			for _, o := range eager.OutputOps(m, eager.Shape{T: 4, Batch: 2, Seq: 64, Layer: tc.layer}) {
				switch {
				case o.Comm && !o.Backward:
					comm += o.Read
					comms++
				case o.Class == graph.ClassMatMul:
					if !o.Backward {
						gemm += o.FLOPs
					}
					continue
				}
				if o.Written >= N*Vl*2 {
					if o.Backward {
						bigBack += o.Written
					} else {
						big += o.Written
					}
				}
				if !o.Backward {
					fwd += o.Launches
				}
			}
			if gemm != 2*N*h*Vl || fwd+1 != tc.fwd || comm != tc.comm || comms != tc.comms || big != tc.big || bigBack != tc.bigBack {
				t.Errorf("GEMM %.0f FLOPs, %d launches forward, collectives %d of %.0f B, big ops %.0f/%.0f B; want %.0f, %d, %d of %.0f, %.0f/%.0f",
					gemm, fwd+1, comms, comm, big, bigBack, 2*N*h*Vl, tc.fwd, tc.comms, tc.comm, tc.big, tc.bigBack)
			}
		})
	}
}
