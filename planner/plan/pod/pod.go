package pod

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
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

// ParsePod reads a pod written PRESET:NODES ("dgx-h100:288" is 288 DGX
// H100 nodes, 2,304 GPUs), optionally followed by overrides of the
// network between nodes: ",nics=N" (NICs per node) and ",nic-gbps=G"
// (each NIC's line rate in Gb/s), e.g. "dgx-h100:64,nics=4,nic-gbps=200".
func ParsePod(text string) (Pod, error) {
	head, opts, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ",")
	name, n, ok := strings.Cut(head, ":")
	p, known := podPresets[name]
	if !known {
		return Pod{}, fmt.Errorf("cluster %q: unknown node %q (presets %s; write PRESET:NODES, e.g. dgx-h100:288)", text, name, strings.Join(PodPresets(), ", "))
	}
	nodes := 1
	if ok {
		var err error
		if nodes, err = strconv.Atoi(n); err != nil || nodes < 1 {
			return Pod{}, fmt.Errorf("cluster %q: %q is not a number of nodes of at least 1", text, n)
		}
	}
	h, err := roofline.Preset(p.hardware)
	if err != nil {
		return Pod{}, err
	}
	if p.kernels.GEMM > 0 {
		h.ComputeEff[graph.ClassMatMul] = p.kernels.GEMM
	}
	if p.gpu != "" {
		h.Name = p.gpu
	}
	if p.nvlinks > 0 {
		h.NVLinks = p.nvlinks
	}
	if p.memory > 0 {
		h.Memory, h.MemBandwidth = p.memory, p.memBandwidth
	}
	pod := Pod{Name: head, Hardware: h, Nodes: nodes, PerNode: p.perNode,
		NICs: p.nics, NICBandwidth: p.nicBandwidth, NICLatency: p.nicLatency, Kernels: p.kernels, PowerLimit: p.power, slots: p.slots}
	if !ok {
		pod.Name = name + ":1"
	}
	if opts != "" {
		for _, kv := range strings.Split(opts, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "attention" {
				// The fused attention kernel the node's software runs
				// (torch's SDPA picks flash or cuDNN by version:
				// Kernels.Attention).
				if pod.Kernels, err = pod.Kernels.WithAttention(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			if k == "host" {
				// The CPU that issues the kernels (host.go): the
				// DGX H100's Xeon or a Grace.
				if err := pod.setHost(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			if k == "power" {
				// The GPUs' power limit (power.go), or off: the
				// kernels at their burst clock.
				if err := pod.setPower(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return Pod{}, fmt.Errorf("cluster %q: %q is not key=number above 0 (keys nics, nic-gbps, per-node, pcie-lanes; attention=flash or cudnn; power=W or off; host=x86 or grace)", text, kv)
			}
			switch k {
			case "nics":
				if x != math.Trunc(x) || x > 64 {
					return Pod{}, fmt.Errorf("cluster %q: nics=%s: want a whole number of NICs per node, at most 64", text, v)
				}
				pod.NICs = int(x)
			case "nic-gbps":
				pod.NICBandwidth = x * 1e9 / 8
			case "per-node":
				if err := pod.usePerNode(x); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
			case "pcie-lanes":
				if err := pod.usePCIeLanes(x); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
			default:
				return Pod{}, fmt.Errorf("cluster %q: unknown key %q (keys nics, nic-gbps, per-node, pcie-lanes, attention, power)", text, k)
			}
		}
		pod.Name += "," + opts
	}
	pod.hold()
	return pod, nil
}

// PodOf is the pod of preset name with the fewest nodes that hold gpus
// GPUs (whole nodes; gpus below a node's size is one node's first gpus).
func PodOf(name string, gpus int) (Pod, error) {
	p, err := ParsePod(name)
	if err != nil {
		return Pod{}, err
	}
	if gpus < 1 {
		return Pod{}, fmt.Errorf("cluster %s: %d GPUs: want at least 1", name, gpus)
	}
	if node := p.PerNode; gpus < node {
		p.PerNode = gpus
		p.NICs = max(1, p.NICs*gpus/node)
	}
	p.Nodes = (gpus + p.PerNode - 1) / p.PerNode
	if p.Nodes*p.PerNode != gpus {
		return Pod{}, fmt.Errorf("cluster %s: %d GPUs is not a whole number of %d-GPU nodes", name, gpus, p.PerNode)
	}
	p.Name = name + ":" + strconv.Itoa(p.Nodes)
	return p, nil
}

// PodFor is the pod the text of --cluster names for gpus GPUs (0: the
// text's own): its GPUs where they are gpus; with a node count
// (gb200-nvl72:8) gpus of them spread evenly, the same number of each
// node (per-node=, gpus / nodes: gb200-nvl72:8 for 512 GPUs is
// gb200-nvl72:8,per-node=64, gb200-nvl72:1 for 64 is 64 of one rack);
// without one (gb200-nvl72) the fewest nodes that hold gpus evenly, so
// spread. Any other gpus (more GPUs than the nodes named, a count the
// nodes do not share evenly, per-node= written and disagreeing) is an
// error naming the spelling that works, where one does.
func PodFor(text string, gpus int) (Pod, error) {
	p, err := ParsePod(text)
	if err != nil || gpus <= 0 || gpus == p.GPUs() {
		return p, err
	}
	head, opts, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ",")
	name, _, counted := strings.Cut(head, ":")
	disagree := fmt.Errorf("--gpus %d and --cluster %s (%d GPUs) disagree", gpus, text, p.GPUs())
	if strings.Contains(","+opts, ",per-node=") {
		return Pod{}, disagree
	}
	nodes := p.Nodes
	if !counted {
		nodes = (gpus + p.PerNode - 1) / p.PerNode
	}
	if gpus <= nodes*p.PerNode && gpus%nodes == 0 && wholeHosts(name, gpus/nodes) == nil {
		spelled := fmt.Sprintf("%s:%d,per-node=%d", name, nodes, gpus/nodes)
		if gpus/nodes == p.PerNode {
			spelled = fmt.Sprintf("%s:%d", name, nodes)
		}
		if opts != "" {
			spelled += "," + opts
		}
		return ParsePod(spelled)
	}
	// The fewest nodes that share gpus evenly, in whole hosts.
	for n := (gpus + p.PerNode - 1) / p.PerNode; n <= gpus; n++ {
		if gpus%n == 0 && wholeHosts(name, gpus/n) == nil {
			hint := fmt.Sprintf("%s:%d,per-node=%d", name, n, gpus/n)
			if gpus/n == p.PerNode {
				hint = fmt.Sprintf("%s:%d", name, n)
			}
			return Pod{}, fmt.Errorf("%w: %d GPUs of %s's %d-GPU nodes are --cluster %s", disagree, gpus, name, p.PerNode, hint)
		}
	}
	return Pod{}, disagree
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

// Collective is how long collective k of bytes (S, the whole buffer: an
// all-reduce's input, an all-gather's output, a reduce-scatter's input)
// takes over group g, hierarchically as NCCL runs it across nodes: inside
// each node over NVSwitch (a ring), then across nodes on every GPU's
// share of the NICs with S/PerNode bytes each (a ring; for an all-reduce
// the faster of a ring and a tree, NCCL's choice by size), and which
// algorithm crossed the nodes.
//
// Ring all-gather or reduce-scatter over n GPUs: (n-1)/n x S / bandwidth
// + (n-1) latencies; ring all-reduce twice that; tree all-reduce: 2 x S /
// bandwidth + 2 ceil(log2 n) latencies (DESIGN §10).
func (p *Pod) Collective(k roofline.Collective, g Group, bytes float64) (float64, roofline.Algorithm) {
	return p.collective(k, "", g, bytes)
}

// StateCollective is Collective of the model's state: the gradients'
// reductions and the weights' gathers. On the pod of an FP32 profile (a
// CPU's) they move FP32 tensors as they are, which the profile times
// apart from the activations' collectives (cast to BF16 for the wire
// and back): profile.WireFP32; elsewhere Collective.
func (p *Pod) StateCollective(k roofline.Collective, g Group, bytes float64) float64 {
	t, _ := p.collective(k, p.StateWire(), g, bytes)
	return t
}

// StateWire is the profile's wire of the state's collectives
// (StateCollective): profile.WireFP32 on an FP32 profile's pod, else "".
func (p *Pod) StateWire() string {
	if p.Profile != nil && p.Profile.DType == "fp32" {
		return profile.WireFP32
	}
	return ""
}

func (p *Pod) collective(k roofline.Collective, wire string, g Group, bytes float64) (float64, roofline.Algorithm) {
	if g.Size() <= 1 || bytes <= 0 {
		return 0, roofline.Ring
	}
	if p.Profile != nil {
		if t, src := p.ProfiledCollective(k, wire, g, bytes); src != profile.Modelled {
			return t, roofline.Ring
		}
	}
	bi, li := p.IntraFor(g.PerNode)
	be, le := p.Inter()
	ring := func(n int, s, bw, lat float64) float64 {
		if n <= 1 {
			return 0
		}
		return float64(n-1)/float64(n)*s/bw + float64(n-1)*lat
	}
	in := ring(g.PerNode, bytes, bi, li)
	across := ring(g.Nodes, bytes/float64(g.PerNode), be, le)
	if k != roofline.AllReduce {
		return in + across, roofline.Ring
	}
	if g.Nodes <= 1 {
		return 2 * in, roofline.Ring
	}
	tree := 2*bytes/float64(g.PerNode)/be + 2*math.Ceil(math.Log2(float64(g.Nodes)))*le
	if tree < 2*across {
		return 2*in + tree, roofline.Tree
	}
	return 2 * (in + across), roofline.Ring
}

// Rooted is how long a broadcast or a reduce of bytes S (the root's
// buffer) takes over group g as NCCL runs them: a ring only, the data
// pipelined in chunks along a chain from the root (NVIDIA/nccl
// src/graph/tuning.cc at 01afd20a: for ncclCollBroadcast and
// ncclCollReduce no tree is tuned, nsteps = nRanks, and the algorithm
// bandwidth is the bus bandwidth x nRanks/nsteps, the bus bandwidth
// itself; nccl-tests doc/PERFORMANCE.md: busBw = algBw for both). Every
// link of the chain carries all of S, so S crosses at the slowest:
// NVSwitch inside a node (Intra), and across nodes the NICs' share of
// the group's GPUs in a node (Inter x PerNode: NCCL's channels, one a
// NIC). The chain's hops each pay a step's latency, as the pod's rings
// do: n - Nodes inside the nodes and Nodes - 1 across them. One GPU: 0.
func (p *Pod) Rooted(g Group, bytes float64) float64 {
	n := g.Size()
	if n <= 1 || bytes <= 0 {
		return 0
	}
	bi, li := p.IntraFor(g.PerNode)
	if g.Nodes <= 1 {
		return bytes/bi + float64(n-1)*li
	}
	be, le := p.Inter()
	bw := be * float64(g.PerNode)
	if g.PerNode > 1 {
		bw = min(bi, bw)
	}
	return bytes/bw + float64(n-g.Nodes)*li + float64(g.Nodes-1)*le
}

// AllToAll is an all-to-all over group g in which every GPU sends bytes
// in all, an equal share to each GPU of the group (its own share stays
// where it is). NCCL runs it as a send and a receive to every peer at
// once (ncclSend/ncclRecv in one group: NCCL's documentation,
// "Point-to-point communication", all-to-all), so a GPU's traffic is the
// (n-1)/n of bytes that leaves it (nccl-tests count an all-to-all's bus
// bandwidth as its algorithm bandwidth x (n-1)/n, doc/PERFORMANCE.md):
// the share to its node's other GPUs over NVSwitch and the share to
// other nodes over its share of the NICs, the two at once, each one
// latency.
func (p *Pod) AllToAll(g Group, bytes float64) float64 {
	n := float64(g.Size())
	if n <= 1 || bytes <= 0 {
		return 0
	}
	if p.Profile != nil {
		if t, src := p.ProfiledAllToAll(g, bytes); src != profile.Modelled {
			return t
		}
	}
	var in, across float64
	if g.PerNode > 1 {
		bi, li := p.IntraFor(g.PerNode)
		in = bytes*float64(g.PerNode-1)/n/bi + li
	}
	if g.Nodes > 1 {
		be, le := p.Inter()
		across = bytes*(n-float64(g.PerNode))/n/be + le
	}
	return max(in, across)
}

// SendTime is a point-to-point transfer of bytes between two GPUs, in one
// node or across nodes.
func (p *Pod) SendTime(sameNode bool, bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	if sameNode && p.Profile != nil {
		if t, src := p.Profile.CollectiveTime(profile.SendRecv, 2, bytes); src != profile.Modelled {
			return t
		}
	}
	if sameNode {
		bw, lat := p.IntraFor(2)
		return bytes/bw + lat
	}
	// One GPU's own NIC: a pipeline's sends do not all cross at once.
	return bytes/p.nic() + p.NICLatency
}

// Beside is what a data-parallel collective of comm seconds adds to a
// window of compute it overlaps (Kernels.Beside).
func (p *Pod) Beside(comm, window float64) float64 { return p.Kernels.Beside(comm, window) }

// setHost sets the CPU that issues the pod's kernels: "x86", the DGX
// H100's Xeon (kernels.H100's measured host, which the Hopper and
// Blackwell presets carry), or "grace", the same issued from a Grace CPU
// (kernels.Host.OnGrace, the GB200 and GB300 presets' host). It is for
// the presets whose host is one of those two; a mechanism's evidence
// (jobs/benchreport's evidence test) prices a Grace row on x86 with it.
func (p *Pod) setHost(v string) error {
	x86 := kernels.H100.Host
	if p.Kernels.Host != x86 && p.Kernels.Host != x86.OnGrace() {
		return fmt.Errorf("host=%s: the %s preset's host is neither the DGX H100's Xeon nor a Grace (host= is for the Hopper and Blackwell presets)", v, p.Name)
	}
	switch v {
	case "x86":
		p.Kernels.Host = x86
	case "grace":
		p.Kernels.Host = x86.OnGrace()
	default:
		return fmt.Errorf("host=%s: want x86 or grace", v)
	}
	return nil
}
