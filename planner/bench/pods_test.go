package bench

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestReadNICs: the compute network a system description states, where
// its preset's differs, becomes nics= and nic-gbps= of a multi-node row's
// pod (nicOption). Worked by hand:
//   - Dell's 4 x XE8545 (v3.0 Dell/systems/4xXE8545x4A100-SXM-40GB.json,
//     "2x ConnectX-6 IB HDR 200Gb/Sec"): the DGX A100's 8 NICs of 200
//     Gb/s give a node of 4 GPUs 4 (per-node=4); the description says 2.
//     A GPU's share (Pod.Inter): 200e9 / 8 = 25 GB/s a NIC x 47/50
//     (kernels.A100.NICEff) = 23.5 GB/s, x 2 NICs / 4 GPUs = 11.75 GB/s
//     (the preset's 4 / 4: 23.5 GB/s).
//   - The same system on one node: nothing crosses its NICs; no option.
//   - Two DGX H100 nodes stating 8 x 400 Gb/s, a Dell R750xa pair
//     stating 1 x 100 Gb/s: the presets' own; no option.
//   - A description that states no line rate: the preset's.
func TestReadNICs(t *testing.T) {
	row := func(gpu, acc string, mem float64, nodes, per, nics int, gbps float64) Row {
		r := bertRow()
		r.GPU, r.Accelerator, r.GPUMemGiB = gpu, acc, mem
		r.Nodes, r.GPUsPerNode, r.GPUs = nodes, per, nodes*per
		r.DP, r.GBS = nodes*per, nodes*per*48*2
		r.HostNICs, r.HostNICGbps = nics, gbps
		return r
	}
	for _, c := range []struct {
		row     Row
		cluster string
		inter   float64 // bytes/s a GPU between nodes
	}{
		{row("A100", "NVIDIA A100-SXM-40GB", 37.3, 4, 4, 2, 200), "dgx-a100-40gb:4,per-node=4,nics=2,nic-gbps=200", 11.75e9},
		{row("A100", "NVIDIA A100-SXM-40GB", 37.3, 1, 4, 2, 200), "dgx-a100-40gb:1,per-node=4", 23.5e9},
		{row("A100", "NVIDIA A100-SXM-40GB", 37.3, 4, 4, 0, 0), "dgx-a100-40gb:4,per-node=4", 23.5e9},
		{row("H100", "NVIDIA H100-SXM5-80GB", 79.6, 2, 8, 8, 400), "dgx-h100:2", 47e9},
		{row("A100", "NVIDIA A100-PCIe-80GB", 74.5, 2, 4, 1, 100), "pcie-a100:2,per-node=4", 2.9375e9},
	} {
		rd, err := Read(c.row)
		if err != nil {
			t.Fatalf("%s x %d: %v", c.row.Accelerator, c.row.Nodes, err)
		}
		p, err := plan.ParsePod(rd.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		bw, _ := p.Inter()
		if rd.Cluster != c.cluster || math.Abs(bw-c.inter) > 1 {
			t.Errorf("%s x %d: cluster %q (%.4g B/s a GPU between nodes), want %q (%.4g)", c.row.Accelerator, c.row.Nodes, rd.Cluster, bw, c.cluster, c.inter)
		}
	}
}
