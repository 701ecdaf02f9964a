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

// TestReadBERTPods: a row's pod preset by its GPU, form factor and
// memory (pods.go). Dell's 2 x R750xa with 4 A100 PCIe 80 GB cards each
// is pcie-a100:2,per-node=4; xFusion's G5500 V7 with 10 L40 cards is
// pcie-l40:1,per-node=10 (more cards than the preset's 8, within its 16
// slots); an A30 server of 8 is pcie-a30:1; Dell's 4 x XE8545 with 4 A100
// SXM4 40 GB each (gpu_mem_gib 37.3) is dgx-a100-40gb:4,per-node=4, the
// 80 GB one (74.5) dgx-a100:4,per-node=4; an H100 PCIe row of 8 cards is
// pcie-h100:1. Each parses to the row's GPUs.
func TestReadBERTPods(t *testing.T) {
	row := func(gpu, acc string, mem float64, nodes, per int) Row {
		r := bertRow()
		r.GPU, r.Accelerator, r.GPUMemGiB = gpu, acc, mem
		r.Nodes, r.GPUsPerNode, r.GPUs = nodes, per, nodes*per
		r.DP, r.GBS = nodes*per, nodes*per*48*2
		return r
	}
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
