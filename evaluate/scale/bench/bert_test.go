package bench

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/plan"
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
func TestReadBERT(t *testing.T) {
	rd, err := Read(bertRow())
	if err != nil {
		t.Fatal(err)
	}
	if rd.Workload != "bert-large:seq=512,batch=384" || rd.Cluster != "dgx-h100:1" ||
		rd.Strategy != "dp=8,mbs=48,recompute=none,stack="+plan.StackNVIDIABERT+",distopt=on,graphs=full,pack=on,pack-len=256" {
		t.Errorf("read %q %q %q", rd.Workload, rd.Cluster, rd.Strategy)
	}
	un := bertRow()
	un.Packing, un.Unpad, un.MBS, un.GBS, un.CUDAGraph = 1, "1", 56, 448, "0"
	rd, err = Read(un)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Workload != "bert-large:seq=254,batch=448" || rd.Strategy != "dp=8,mbs=56,recompute=none,stack="+plan.StackNVIDIABERT+",distopt=on,graphs=off" {
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
