package pod

import (
	"sort"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// Pod is a cluster of Nodes identical nodes of PerNode GPUs: NVSwitch
// inside a node (every GPU reaches every other at its full NVLink
// bandwidth), NICs between nodes, rail-optimised as DGX SuperPODs are
// wired (GPU i of every node on the same leaf switches), so that a
// collective among GPUs of different nodes crosses the network once per
// step of its algorithm.
type Pod struct {
	Name     string
	Hardware roofline.Hardware
	Nodes    int
	PerNode  int
	// NICs per node, each NICBandwidth bytes/s per direction and
	// NICLatency seconds per message (the network's share of one step of
	// a collective).
	NICs         int
	NICBandwidth float64
	NICLatency   float64
	// Kernels is what the node's kernels and collectives reach beyond
	// the hardware's per-class efficiencies (the preset's measurements).
	Kernels kernels.Node
	// Profile, where set (WithProfile), prices what it measured: layers,
	// collectives inside a node, sends, the optimizer, the host
	// (profiled.go); nil: the roofline alone.
	Profile *profile.Profile
	// MemoryMargin is the share of each GPU's memory a plan must leave
	// free to fit (0: DefaultMemoryMargin; NoMemoryMargin: none).
	MemoryMargin float64
	// MemoryError is the measured error of the peak its caller states for
	// the pod's plans (placer's jobs: the published peaks of the model's
	// family and precision, their largest out-of-sample error), which a
	// memory verdict is judged within where the plan's own stack states
	// none (a traced eager step's): a peak within it of the usable memory
	// is "tight" (Verdict). Zero: judged on the peak alone.
	MemoryError RegimeError
	// PowerLimit is the power limit its GPUs run under, watts: their
	// compute priced at the clock they hold under it (power.go, set in
	// Hardware.ComputeSlowdown when parsed; the preset's stated limit,
	// power=W or power=off). 0: at the kernels' burst clock.
	PowerLimit float64
	// slots is the most GPUs per-node= may name where a node takes more
	// than its preset's PerNode (a PCIe server's card slots: pcie.go);
	// 0: PerNode.
	slots int
}

// podPreset is a node design; a pod is so many of them.
type podPreset struct {
	hardware     string
	perNode      int
	nics         int
	nicBandwidth float64
	nicLatency   float64
	kernels      kernels.Node
	source       string
	// gpu and nvlinks, where set, rename the hardware preset's GPU and
	// change its NVLink count (an export variant of the same die).
	gpu     string
	nvlinks int
	// memory and memBandwidth, where set, replace the hardware preset's
	// device memory (bytes) and its bandwidth (bytes/s): another memory
	// part on the same die.
	memory       int64
	memBandwidth float64
	// power is the GPUs' power limit, watts, as the source states it
	// (Pod.PowerLimit).
	power float64
	// slots, where set, is the most GPUs a node of this design holds
	// (per-node= up to it; Pod.slots).
	slots int
}

var podPresets = map[string]podPreset{
	// DGX H100: 8 H100 SXM5 on NVSwitch (NVLink 4, 900 GB/s per GPU
	// both directions), 8 ConnectX-7 NICs of 400 Gb/s InfiniBand NDR for
	// the compute fabric (DGX H100 user guide; DESIGN §12).
	// Its GPUs at the H100 SXM5's 700 W (NVIDIA H100 Tensor Core GPU
	// datasheet: max thermal design power up to 700 W; nvidia-smi reads
	// 700.00 W as the power limit on the H100 SXMs of measurements/).
	"dgx-h100": {hardware: "h100", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6, kernels: kernels.H100, power: 700,
		source: "DGX H100 user guide: 8 x H100 SXM5 (700 W), NVSwitch, 8 x 400 Gb/s ConnectX-7"},
	// DGX A100: 8 A100 SXM4 80 GB on NVSwitch (NVLink 3, 600 GB/s per
	// GPU), 8 ConnectX-6 NICs of 200 Gb/s InfiniBand HDR. Its GPUs at the
	// A100 SXM4's 400 W (NVIDIA A100 Tensor Core GPU datasheet: max TDP
	// 400 W); no held-load measurement of an A100 (kernels.A100.Held nil),
	// so its kernels stay at their burst rates.
	"dgx-a100": {hardware: "a100", perNode: 8, nics: 8, nicBandwidth: 200e9 / 8, nicLatency: 10e-6, kernels: kernels.A100, power: 400,
		source: "DGX A100 user guide: 8 x A100 SXM4 80GB (400 W), NVSwitch, 8 x 200 Gb/s ConnectX-6"},
	// An H800 node as DeepSeek trained DeepSeek-V3 on 2,048 of them: the
	// H800 SXM5 is the H100 SXM5's die and memory (80 GB HBM3, the same
	// dense BF16 and FP8 tensor peaks in NVIDIA's H800 datasheet) with
	// NVLink cut to 400 GB/s both directions (8 links of NVLink 4's 25
	// GB/s a direction, in place of 18), on NVSwitch; 8 x 400 Gb/s
	// InfiniBand CX7 NICs a node (DeepSeek-AI, "Insights into
	// DeepSeek-V3", arXiv 2505.09343, section 4). Kernels: the H100's
	// measured ones (same die), but NVLink's bus bandwidth the 160 GB/s
	// DeepSeek states its all-to-all reaches on it (arXiv 2412.19437,
	// section 3.2.2: "NVLink offers a bandwidth of 160 GB/s, roughly 3.2
	// times that of IB (50 GB/s)"), not the H100's 362. Nothing fitted to
	// DeepSeek's throughput. Its GPUs at 700 W (NVIDIA's H800 SXM5
	// datasheet: max TDP up to 700 W), held as an H100 SXM (same die).
	"dgx-h800": {hardware: "h100", gpu: "h800", nvlinks: 8, perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6, kernels: h800Kernels, power: 700,
		source: "H800 SXM5 (700 W): the H100 SXM5 with 400 GB/s NVLink; 8 x 400 Gb/s InfiniBand CX7 a node (arXiv 2505.09343)"},
	// torchtitan's benchmark machines (benchmarks/llama3_h100_202412_torchtitan.md):
	// 8 H100s a host on NVLink, each with 96 GB of HBM2e at 2.4 TB/s, a
	// 400 Gb/s RDMA NIC per GPU, run at "the default 500W power limit,
	// although tuning it up to 700W TDP can potentially provide further
	// speedups" (the page's words). The limit is modelled (power.go: the
	// H100 SXM's held clock at 700 W carried to 500 W by the power
	// model; the HBM2e part's own idle power is not measured, the HBM3
	// SXM's stands for it); the compute peak is the SXM's (torchtitan
	// says its peak lies between the SXM's and the NVL's, value unknown),
	// kernels as measured on the 700 W SXM (kernels.H100). Its memory is
	// what torch.cuda.get_device_properties().total_memory reads on
	// these GPUs, 95.0 GiB (102.0 GB), not the 96 GB of the page:
	// torchtitan's memory monitor logs its peak as a share of that
	// figure (metrics.py DeviceMemoryMonitor, at 9dec370), and the logs
	// torchtitan's developers publish from their 8-H100 hosts read
	// 49.66 GiB as 52.28% (pytorch/torchtitan#1287) and 48.87 GiB as
	// 51.44% (torchtitan/experiments/graph_trainer/.claude/CLAUDE.md,
	// "8xH100"): 94.99 and 95.00 GiB.
	"grand-teton": {hardware: "h100", gpu: "h100-96gb", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6, kernels: kernels.H100,
		memory: 95 << 30, memBandwidth: 2.4e12, power: 500,
		source: "Grand Teton (torchtitan benchmarks, 2024-12): 8 x H100 96 GB HBM2e (2.4 TB/s, 500 W), NVLink, 400 Gb/s RDMA per GPU"},
}

// h800Kernels are kernels.H100 with the NVLink bus bandwidth DeepSeek
// states for the H800 (160 GB/s).
var h800Kernels = func() kernels.Node {
	k := kernels.H100
	k.IntraBus = 160e9
	return k
}()

// PodPresets lists the pod presets' names, sorted.
func PodPresets() []string {
	var names []string
	for k := range podPresets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// GPUs is the pod's GPU count.
func (p *Pod) GPUs() int { return p.Nodes * p.PerNode }

// Intra is one GPU's bandwidth to the others of its node (bytes/s per
// direction, through NVSwitch; PCIe without NVLink): NCCL's measured bus
// bandwidth where the pod has it (Kernels.IntraBus), else the links'.
func (p *Pod) Intra() (bw, latency float64) {
	h := &p.Hardware
	if p.Kernels.IntraBus > 0 {
		return p.Kernels.IntraBus, h.NVLinkLatency
	}
	if h.NVLinkGen > 0 && h.NVLinks > 0 {
		return h.NVLinkBandwidth * float64(h.NVLinks), h.NVLinkLatency
	}
	return h.PCIeBandwidth, h.PCIeLatency
}

// IntraFor is Intra for a collective among n GPUs of one node: on a node
// wired GPU to GPU with no switch (Kernels.MeshLink: AMD's Infinity
// Fabric) n-1 links carry it, (n-1) x MeshLink, at most Intra's; on
// NVSwitch Intra whatever n.
func (p *Pod) IntraFor(n int) (bw, latency float64) {
	bw, latency = p.Intra()
	if m := p.Kernels.MeshLink; m > 0 && n > 1 {
		bw = min(bw, float64(n-1)*m)
	}
	return bw, latency
}

// Inter is one GPU's share of its node's NICs when every GPU of the node
// communicates at once, as every tensor rank's data-parallel group does.
func (p *Pod) Inter() (bw, latency float64) {
	return p.nic() * float64(p.NICs) / float64(p.PerNode), p.NICLatency
}

// nic is what one NIC carries, bytes/s: its line rate times the share a
// collective reaches (Kernels.NICEff).
func (p *Pod) nic() float64 {
	if e := p.Kernels.NICEff; e > 0 {
		return p.NICBandwidth * e
	}
	return p.NICBandwidth
}

// Group is a set of GPUs that run a collective together: PerNode of them
// in each of Nodes nodes.
type Group struct{ PerNode, Nodes int }

// Size is the group's GPU count.
func (g Group) Size() int { return g.PerNode * g.Nodes }

// RegimeError is a memory regime's measured error of the peak (the
// largest relative error over a measured sweep's plans, allocated and
// reserved) and where it was measured.
type RegimeError struct {
	Frac   float64
	Source string
}
