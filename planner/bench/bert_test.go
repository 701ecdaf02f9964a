package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// bertRow is a BERT row as runs.csv holds NVIDIA's 8-GPU DGX H100
// submission: 48 packed sequences of 2 samples a GPU, global batch 768
// samples, CUDA graphs, distributed LAMB.
func bertRow() Row {
	return Row{ID: "v3.0/ACME/dgxh100/bert", Round: "v3.0", Benchmark: "bert", GPU: "H100", Accelerator: "NVIDIA H100-SXM5-80GB",
		GPUs: 8, Nodes: 1, GPUsPerNode: 8, TP: 1, PP: 1, DP: 8, MBS: 48, GBS: 768, Seq: 512, GradAccum: 1, Packing: 2,
		Precision: "fp16", Optimizer: "lamb", CUDAGraph: "1", CUDAGraphMode: "segmented", DistOptimizer: "1", Unpad: "0"}
}

// TestReadBERT: 768 samples / 2 a packed sequence = 384 sequences of 512
// = 8 GPUs x 48 x 1; packed as two samples of 512 / 2 = 256 tokens. An
// unpadded row (one sample a sequence, --unpad) of 8 x 56 = 448 samples
// is 448 sequences of the training set's mean sample, 254 tokens.
// DistributedFusedLAMB reduces after the backward (grad-overlap=off)
// unless the config's flags hold dwu-overlap-reductions.
func TestReadBERT(t *testing.T) {
	rd, err := Read(bertRow())
	if err != nil {
		t.Fatal(err)
	}
	if rd.Workload != "bert-large:seq=512,batch=384" || rd.Cluster != "dgx-h100:1" ||
		rd.Strategy != "dp=8,mbs=48,recompute=none,stack="+plan.StackNVIDIABERT+",distopt=on,grad-overlap=off,graphs=full,pack=on,pack-len=256" {
		t.Errorf("read %q %q %q", rd.Workload, rd.Cluster, rd.Strategy)
	}
	ov := bertRow()
	ov.RecipeFlags = "distributed_lamb dwu-num-blocks dwu-overlap-reductions fp16"
	if rd, err := Read(ov); err != nil || !strings.Contains(rd.Strategy, "distopt=on,graphs=full") {
		t.Errorf("--dwu-overlap-reductions: read %q, %v", rd.Strategy, err)
	}
	un := bertRow()
	un.Packing, un.Unpad, un.MBS, un.GBS, un.CUDAGraph = 1, "1", 56, 448, "0"
	rd, err = Read(un)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Workload != "bert-large:seq=254,batch=448" || rd.Strategy != "dp=8,mbs=56,recompute=none,stack="+plan.StackNVIDIABERT+",distopt=on,grad-overlap=off,graphs=off" {
		t.Errorf("unpadded: read %q %q", rd.Workload, rd.Strategy)
	}
	if !strings.Contains(strings.Join(rd.Assumed, ";"), "mean 254 tokens") {
		t.Errorf("unpadded: assumed %q", rd.Assumed)
	}
	bad := bertRow()
	bad.GBS = 700 // not 8 x 48 x 2
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), "is not 8 GPUs x micro-batch 48") {
		t.Errorf("global batch 700: %v", err)
	}
}

// TestReadBERTPods: a row's pod preset by its GPU, form factor and
// memory (pods.go). Dell's 2 x R750xa with 4 A100 PCIe 80 GB cards each
// is pcie-a100:2,per-node=4; xFusion's G5500 V7 with 10 L40 cards is
// pcie-l40:1,per-node=10 (more cards than the preset's 8, within its 16
// slots); an A30 server of 8 is pcie-a30:1; Dell's 4 x XE8545 with 4 A100
// SXM4 40 GB each (gpu_mem_gib 37.3) is dgx-a100-40gb:4,per-node=4, the
// 80 GB one (74.5) dgx-a100:4,per-node=4; an H100 PCIe row of 8 cards is
// pcie-h100:1, and Lenovo's v3.1 SR675 V3 of 8 H100 PCIe cards, whose
// system description wires them "PCIe 5.0x8", pcie-h100:1,pcie-lanes=8
// (pods.go: 25 GB/s a card, half the x16 link's 50). Each parses to the
// row's GPUs.
func TestReadBERTPods(t *testing.T) {
	row := func(gpu, acc string, mem float64, nodes, per int) Row {
		r := bertRow()
		r.GPU, r.Accelerator, r.GPUMemGiB = gpu, acc, mem
		r.Nodes, r.GPUsPerNode, r.GPUs = nodes, per, nodes*per
		r.DP, r.GBS = nodes*per, nodes*per*48*2
		return r
	}
	lenovo := row("H100", "NVIDIA H100-PCIe-80GB", 74.5, 1, 8)
	lenovo.Round, lenovo.Submitter, lenovo.System = "v3.1", "Lenovo", "SR675v3-8xH100_PCIe_80GB_350W"
	for _, c := range []struct {
		row     Row
		cluster string
		gpu     string
	}{
		{row("A100", "NVIDIA A100-PCIe-80GB", 74.5, 2, 4), "pcie-a100:2,per-node=4", "a100-pcie"},
		{row("L40", "NVIDIA L40", 44.7, 1, 10), "pcie-l40:1,per-node=10", "l40"},
		{row("A30", "NVIDIA A30", 24, 1, 8), "pcie-a30:1", "a30"},
		{row("A100", "NVIDIA A100-SXM-40GB", 37.3, 4, 4), "dgx-a100-40gb:4,per-node=4", "a100-40gb"},
		{row("A100", "NVIDIA A100-SXM-80GB CTS", 74.5, 4, 4), "dgx-a100:4,per-node=4", "a100"},
		{row("H100", "NVIDIA H100-PCIe-80GB", 74.5, 1, 8), "pcie-h100:1", "h100-pcie"},
		{lenovo, "pcie-h100:1,pcie-lanes=8", "h100-pcie"},
	} {
		rd, err := Read(c.row)
		if err != nil {
			t.Fatalf("%s %s: %v", c.row.GPU, c.row.Accelerator, err)
		}
		p, err := plan.ParsePod(rd.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Cluster != c.cluster || p.Hardware.Name != c.gpu || p.GPUs() != c.row.GPUs {
			t.Errorf("%s %s: cluster %q (%s, %d GPUs), want %q (%s, %d)", c.row.GPU, c.row.Accelerator, rd.Cluster, p.Hardware.Name, p.GPUs(), c.cluster, c.gpu, c.row.GPUs)
		}
	}
}

// TestReadBERTDenseSeqOutput: a row whose config does not set
// --dense_seq_output (NVIDIA's 64- to 434-node configs) runs BERT's MLM
// head on all 512 positions of a sequence, not on its 76 masked ones
// (modeling.py's BertPreTrainingHeads gathers them only with it): the
// workload says predicted=512. Worked by hand, the step on one DGX H100
// at micro-batch 48 grows by what the head costs on 512 - 76 = 436 more
// positions a sequence, 20,928 for 48:
//   - its GEMMs forward and backward (3 x 2 FLOPs a multiply-add), the
//     transform (1,024 x 1,024) and the decoder to the vocabulary (1,024
//     x 30,522): 6 x 20,928 x 1,024 x 31,546 = 4.056 TFLOP at the pod's
//     989.4 TFLOP/s x 0.756 (kernels.H100.GEMM): 5.423 ms;
//   - the loss over its 20,928 x 30,522 = 638.76 M logits as the cost
//     model prices an unfused cross-entropy (cost_ends.go: forward
//     elementwise passes of 2+4, 4+4, 4+4 and 4+4 bytes a logit at 0.85
//     of 3.35 TB/s, reductions of 4 and 4 at 0.75; backward 4+4 and 4+2
//     at 0.85): 638.76e6 x (30 / 2.8475e12 + 8 / 2.5125e12 + 14 /
//     2.8475e12) = 6.730 + 2.034 + 3.141 = 11.904 ms;
//
// 17.33 ms in all, within 3% (the transform's GeLU and layer norm on the
// extra positions, 20,928 x 1,024 elements, are small beside them).
func TestReadBERTDenseSeqOutput(t *testing.T) {
	dense := bertRow()
	dense.DenseSeqOutput = "1"
	all := bertRow()
	all.DenseSeqOutput = "0"
	step := func(r Row) float64 {
		rd, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		m, err1 := transformer.Parse(rd.Workload)
		p, err2 := plan.ParsePod(rd.Cluster)
		s, err3 := plan.ParseStrategy(rd.Strategy)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", rd.Workload, err1, err2, err3)
		}
		res, err := planner.Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Step
	}
	rd, _ := Read(all)
	if rd.Workload != "bert-large:seq=512,batch=384,predicted=512" {
		t.Errorf("workload %q, want the MLM head on all 512 positions", rd.Workload)
	}
	const pos = 436.0 * 48
	gemms := 6 * pos * 1024 * (1024 + 30522) / (989.4e12 * 0.756)
	logits := pos * 30522
	loss := logits * (30/(3.35e12*0.85) + 8/(3.35e12*0.75) + 14/(3.35e12*0.85))
	if d, want := step(all)-step(dense), gemms+loss; math.Abs(d-want) > 0.03*want {
		t.Errorf("the MLM head on all positions adds %.2f ms, want %.2f (GEMMs %.2f, loss %.2f)", d*1e3, want*1e3, gemms*1e3, loss*1e3)
	}
}

// TestReadBERTFP8: a row whose config passes --use_transformer_engine2
// (NVIDIA's H100 and H200 configs of rounds v3.0-v4.0) runs the blocks'
// four GEMMs in FP8 with delayed scaling (te_layers.py's fp8_gemm under
// modeling.py's fp8_autocast, recipe.DelayedScaling): the reader writes
// fp8=delayed; without the flag the GEMMs stay 16-bit. Worked by hand,
// one block's forward on a DGX H100 at its burst clock (power=off) at
// micro-batch 48 of 512 tokens, n = 24,576 tokens, h = 1,024, FFN f =
// 4,096:
//   - the GEMMs, QKV 6nh^2, projection 2nh^2, FC1 and FC2 8nh^2 each:
//     24 x 24,576 x 1,024^2 = 618.47 GFLOP at 989.4 TFLOP/s x 0.756
//     (kernels.H100.GEMM) = 0.82685 ms in 16 bits, over the measured
//     forward FP8 speedup 1.850 (kernels.H100.FP8Fwd) 0.44695 ms: 0.37990
//     ms less;
//   - delayed scaling's one cast pass a GEMM input (read 2 bytes, write
//     1): QKV's, the projection's and FC1's inputs of nh elements, FC2's
//     of nf, (3 x 1,024 + 4,096) x 24,576 = 176.16 M elements x 3 bytes
//     at 3.35 TB/s x 0.85 = 0.18559 ms, and 4 launches of 5 us = 0.02 ms;
//
// the FP8 block's forward 0.37990 - 0.18559 - 0.02 = 0.17431 ms shorter.
func TestReadBERTFP8(t *testing.T) {
	fp8 := bertRow()
	fp8.RecipeFlags = "cuda_graph_mode dense_seq_output distributed_lamb fp16 fused_bias_fc fused_bias_mha fused_dropout_add fused_gemm_gelu packed_samples pad_fmha use_cuda_graph use_transformer_engine2"
	half := bertRow()
	half.RecipeFlags = "dense_seq_output distributed_lamb fp16 fused_bias_fc fused_bias_mha fused_dropout_add fused_gemm_gelu unpad unpad_fmha"
	fwd := func(r Row, wantFP8 bool) float64 {
		rd, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(rd.Strategy, "fp8=delayed"); got != wantFP8 {
			t.Errorf("flags %q: strategy %q, fp8=delayed %v, want %v", r.RecipeFlags, rd.Strategy, got, wantFP8)
		}
		m, err1 := transformer.Parse(rd.Workload)
		p, err2 := plan.ParsePod(rd.Cluster + ",power=off")
		s, err3 := plan.ParseStrategy(rd.Strategy)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", rd.Workload, err1, err2, err3)
		}
		res, err := planner.Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.LayerForward
	}
	const n, h, f = 48 * 512.0, 1024.0, 4096.0
	gemm := 24 * n * h * h / (989.4e12 * 0.756)
	casts := (3*h+f)*n*3/(3.35e12*0.85) + 4*5e-6
	want := gemm*(1-1/1.850) - casts
	if d := fwd(half, false) - fwd(fp8, true); math.Abs(d-want) > 1e-3*want {
		t.Errorf("the FP8 block's forward %.5f ms shorter, want %.5f (GEMMs %.5f less, casts %.5f)", d*1e3, want*1e3, gemm*(1-1/1.850)*1e3, casts*1e3)
	}
}

// TestReadBERTAttention: NVIDIA's modeling.py builds the fused multi-head
// attention (FMHA) only with --unpad_fmha or --pad_fmha; with --unpad and
// --fused_mha (xFusion's L4/L40/L40S and Dell's R760xa L40S configs)
// run_pretraining.py turns fused_mha off and the layer runs
// FastUnpadBertSelfAttention's four kernels, read as attention=unfused.
// On the unfused pod a sequence of s = 254 tokens and a = 16 heads writes
// a s^2 = 16 x 254^2 = 1,032,256 scores a layer (2,064,512 bytes in
// FP16) that the fused kernel keeps on chip (cost.Shard.UnfusedAttention,
// TestUnfusedAttention works its kernels by hand); the layer's forward is
// slower than on the fused pod. A row without flags is left to the pod.
func TestReadBERTAttention(t *testing.T) {
	cases := []struct {
		flags   string
		unfused bool
	}{
		{"dense_seq_output distributed_lamb exchange_padding fp16 fused_bias_fc fused_bias_mha fused_dropout_add fused_gemm_gelu fused_mha unpad", true},
		{"dense_seq_output distributed_lamb fp16 unpad", true},
		{"dense_seq_output distributed_lamb fp16 fused_bias_fc unpad unpad_fmha", false},
		{"cuda_graph_mode dense_seq_output distributed_lamb fp16 packed_samples pad_fmha use_cuda_graph", false},
		{"", false},
	}
	fwd := map[bool]float64{}
	for _, c := range cases {
		r := bertRow()
		r.Packing, r.GBS, r.Unpad, r.RecipeFlags = 1, 8*48, "1", c.flags
		rd, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.HasSuffix(rd.Cluster, ",attention=unfused"); got != c.unfused {
			t.Errorf("flags %q: cluster %q, unfused %v, want %v", c.flags, rd.Cluster, got, c.unfused)
		}
		m, err1 := transformer.Parse(rd.Workload)
		p, err2 := plan.ParsePod(rd.Cluster + ",power=off")
		s, err3 := plan.ParseStrategy(rd.Strategy)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", rd.Workload, err1, err2, err3)
		}
		if m.Seq != 254 || m.Heads != 16 {
			t.Fatalf("%s: seq %d heads %d, want 254 and 16", rd.Workload, m.Seq, m.Heads)
		}
		if p.Kernels.UnfusedAttention != c.unfused {
			t.Errorf("flags %q: pod's UnfusedAttention %v", c.flags, p.Kernels.UnfusedAttention)
		}
		res, err := planner.Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		fwd[c.unfused] = res.LayerForward
	}
	if !(fwd[true] > fwd[false]) {
		t.Errorf("layer forward unfused %g s, fused %g s: want the unfused slower", fwd[true], fwd[false])
	}
}
