package plan

import (
	"fmt"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/kernels"
)

// The H200 and Blackwell pods. A pod's "node" is its NVLink domain: the
// GPUs every one of which reaches every other through NVSwitch at its
// full NVLink bandwidth. On a DGX that is the 8-GPU server; on a GB200 or
// GB300 NVL72 it is the rack's 72 GPUs (18 compute trays of 4 GPUs, one
// NVLink Switch fabric), so a tensor, expert, context or data-parallel
// group of up to 72 GPUs stays on NVLink, and only groups that span racks
// cross the NICs. The NICs of a node are the domain's compute NICs (one
// per GPU on each of these), rail-wired as Pod describes.
//
// Kernels on the Blackwell pods are modelled: nothing here measured a
// Blackwell GPU (measurements/ holds H100 and H200 runs only). Where no
// published kernel benchmark was found the H100's measured figure
// (kernels.H100) stands, said as such beside it; none is fitted to a
// published step time. A profile from the user's own GPU (placer
// profile, --profile) replaces them.
func init() {
	for k, p := range blackwellPods {
		podPresets[k] = p
	}
}

var blackwellPods = map[string]podPreset{
	// DGX H200: the DGX H100 with H200 SXMs (one NVIDIA DGX H100/H200
	// user guide covers both): 8 x H200 SXM (141 GB HBM3e at 4.8 TB/s;
	// max TDP up to 700 W, NVIDIA H200 datasheet) on NVSwitch (NVLink 4,
	// 900 GB/s both ways), 8 x 400 Gb/s ConnectX-7 compute NICs. Kernels:
	// the H100's measured ones (the same GH100 die; kernels.H100), its
	// held clock too (the H100 SXM's at 700 W; the HBM3e part's own power
	// at rest is not measured: the HBM3 SXM's stands for it).
	"dgx-h200": {hardware: "h200", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6, kernels: kernels.H100, power: 700,
		source: "DGX H100/H200 user guide: 8 x H200 SXM (141 GB, 700 W), NVSwitch, 8 x 400 Gb/s ConnectX-7"},
	// DGX B200: 8 x B200 SXM (180 GB, 1,000 W TGP) on NVLink 5 NVSwitch
	// (1.8 TB/s a GPU both ways), 8 x ConnectX-7 NDR 400 Gb/s (the MLPerf
	// B200 node of roofline's hardware_blackwell.go: "8x ConnectX-7 IB
	// NDR 400Gb/s", "B200 TGP 1000W").
	"dgx-b200": {hardware: "b200", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b200", 148, kernels.MUFUBlackwell, carriedHeld(1980, 1000)), power: 1000,
		source: "DGX B200: 8 x B200 SXM (180 GB, 1,000 W), NVLink 5 NVSwitch, 8 x 400 Gb/s ConnectX-7; kernels modelled"},
	// DGX B300: 8 x B300 (Blackwell Ultra, 270 GB, 1,100 W) on NVLink 5
	// NVSwitch, 8 x 800 Gb/s ConnectX-8 (HGX B300's "networking bandwidth
	// 1.6 TB/s", twice HGX B200's 0.8 TB/s of 8 x 400 Gb/s, both ways: the
	// table of roofline's hardware_blackwell.go [hgx]).
	"dgx-b300": {hardware: "b300", perNode: 8, nics: 8, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b300", 160, kernels.MUFUBlackwellUltra, carriedHeld(1980, 1100)), power: 1100,
		source: "DGX B300: 8 x B300 (270 GB, 1,100 W), NVLink 5 NVSwitch, 8 x 800 Gb/s ConnectX-8; kernels modelled"},
	// GB200 NVL72: 72 Blackwell GPUs (186 GB, 1,200 W: the technical
	// brief's GB200 configuration) and 36 Grace CPUs in one NVLink 5
	// domain (130 TB/s: 1.8 TB/s a GPU), 18 compute trays of 4 GPUs, each
	// tray with 4 ConnectX-7 400 Gb/s NICs (the MLPerf GB200 NVL72's "for
	// each 4-GPU node: 4x ... BlueField-3 [ConnectX-7 Lx]"): 72 a domain.
	"gb200-nvl72": {hardware: "gb200", perNode: 72, nics: 72, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("gb200", 148, kernels.MUFUBlackwell, carriedHeld(2112, 1200)), power: 1200,
		source: "GB200 NVL72: 72 x Blackwell (186 GB, 1,200 W) in one NVLink 5 domain, 72 x 400 Gb/s ConnectX-7; kernels modelled"},
	// GB300 NVL72: 72 Blackwell Ultra GPUs (279 GB, 1,400 W) in one
	// NVLink 5 domain, a ConnectX-8 SuperNIC of 800 Gb/s per GPU ("72
	// ConnectX-8 NICs", https://glennklockwood.com/garden/processors/B300;
	// "each GPU has ConnectX-8 SuperNIC at 800 Gb/s", vendordeep.com's
	// copy of NVIDIA's GB300 announcement).
	"gb300-nvl72": {hardware: "gb300", perNode: 72, nics: 72, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("gb300", 160, kernels.MUFUBlackwellUltra, carriedHeld(1980, 1400)), power: 1400,
		source: "GB300 NVL72: 72 x Blackwell Ultra (279 GB, 1,400 W) in one NVLink 5 domain, 72 x 800 Gb/s ConnectX-8; kernels modelled"},
}

// blackwellKernels are the modelled kernels of a Blackwell GPU (hardware
// preset gpu, sms streaming multiprocessors, held its clock under held
// load), from published kernel benchmarks (evaluate/scale/kernels'
// blackwell.go):
//   - GEMMs at kernels.BlackwellGEMM of the BF16 peak; FP8 GEMMs with
//     per-tensor and blockwise scales at kernels.BlackwellFP8's speedups,
//     MXFP8 and NVFP4 ones at kernels.BlackwellBlockScaled's (NVFP4's at
//     its share of the GPU's FP4 over BF16 peak);
//   - fused attention: kernels.BlackwellAttention (cuDNN's), its
//     exponentials at mufu MUFU.EX2 results a clock an SM (16 on B200
//     and GB200, 32 on Blackwell Ultra: kernels.MUFUBlackwellUltra) at
//     the clock the BF16 peak implies (kernels.ExpRate);
//   - NVLink 5's bus bandwidth at the share of its line rate NCCL
//     measured on NVLink 4 (362 of 450 GB/s on DGX H100: 724 of 900
//     GB/s), the NIC at the 47 of 50 GB/s measured on an NDR NIC, the
//     overlapped compute's 18.9% slowdown (A100/H100/MI250/MI210), the
//     grouped expert GEMMs' 0.935 (sm90's tile rule, now over sms SMs)
//     and the host's issue times (kernels.H100.Host): the H100's, assumed;
//   - 16 of sms SMs taken by tensor-parallel overlap (Transformer
//     Engine's userbuffers default num_sm = 16, as on H100). SMs: 148
//     on B200 and GB200's GPU (https://hmc-tech.com/gpus/nvidia-b200-vs-
//     nvidia-b100: "SMs 148"), 160 on Blackwell Ultra
//     (https://awesomeagents.ai/hardware/nvidia-gb300-nvl72: "160
//     streaming multiprocessors").
func blackwellKernels(gpu string, sms, mufu int, held *kernels.HeldClock) kernels.Node {
	h, _ := roofline.Preset(gpu) // this file's own names (TestBlackwellPods)
	k := kernels.H100
	k.Provenance = "modelled from published kernel benchmarks and the H100's measured ones (docs/hardware.md), not measured on a Blackwell GPU"
	k.GEMM = kernels.BlackwellGEMM()
	k.ExpRate = kernels.ExpRate(h.FP16Tensor, mufu, kernels.TensorPerClockBlackwell)
	k.Attention = []*kernels.Attention{kernels.BlackwellAttention(h.FP16Tensor, sms, k.ExpRate)}
	k.SMs = sms
	k.IntraBus = h.NVLinkBandwidth * float64(h.NVLinks) * kernels.H100.IntraBus / (25e9 * 18)
	k.FP8Peak = h.FP8Tensor
	k.FP8Fwd, k.FP8Bwd, k.FP8Block = kernels.BlackwellFP8()
	k.MXFP8Fwd, k.MXFP8Bwd, k.NVFP4Fwd, k.NVFP4Bwd = kernels.BlackwellBlockScaled(h.FP4Tensor / h.FP16Tensor)
	k.Held = held
	// NCCL's channels on NVLink 5 are not derived here (kernels.H100's
	// CTAs are sm90's): the compute beside a collective takes arXiv
	// 2507.03114's mean slowdown (A100, H100, MI250, MI210) instead.
	k.CTAs, k.CTAsAcross = 0, 0
	k.OverlapSlowdown = 0.189
	return k
}

// carriedHeld is the held clock of a GPU of burst clock burstMHz at power
// limit tdpW with nothing of it measured under held load: the H100 SXM's
// measured shape carried over (kernels.H100Held), assumed. It holds the same
// share of its burst clock at its own limit (1,612.5 / 1,980), rests at
// the same share of it (75.5 / 700 W), and its compute-bound kernels
// follow the clock by the same share (0.633), its power controller
// averages over the same window (0.09 s), so at the pod's stated
// limit a compute-bound kernel takes the H100's 1.144x its burst time;
// power=off prices the burst. The burst clocks: B200 1,980 MHz
// ("Boost Clock 1.98GHz", https://hmc-tech.com/gpus/nvidia-b200-vs-
// nvidia-b100), GB200's GPU 2,112 MHz (https://hmc-tech.com/gpu/
// nvidia-h100-vs-nvidia-h200-sxm-vs-nvidia-gb200); for Blackwell Ultra
// none was found and the B200's stands (only the ratio enters the
// slowdown).
func carriedHeld(burstMHz, tdpW float64) *kernels.HeldClock {
	h := kernels.H100Held
	r := burstMHz / h.BurstMHz
	return &kernels.HeldClock{BurstMHz: burstMHz, HeldMHz: h.HeldMHz * r, TDPW: tdpW, IdleW: h.IdleW / h.TDPW * tdpW,
		Exponent: h.Exponent, Share: h.Share, WindowS: h.WindowS}
}

// hostGPUs is the GPUs of one host (one operating system, one torchrun
// agent) of the pods whose NVLink domain spans hosts: a compute tray of
// 4 GPUs on the NVL72 racks.
var hostGPUs = map[string]int{"gb200-nvl72": 4, "gb300-nvl72": 4}

// HostGPUs is the GPUs of one of the pod's hosts: what a launcher's
// processes per node are. A node (PerNode) is its NVLink domain, which
// on a DGX is one host and on an NVL72 rack 18 of them.
func (p *Pod) HostGPUs() int {
	name, _, _ := strings.Cut(p.Name, ":")
	name, _, _ = strings.Cut(name, ",")
	if n, ok := hostGPUs[name]; ok && p.PerNode%n == 0 {
		return n
	}
	return p.PerNode
}

// usePerNode is the per-node=N option of a cluster: N GPUs of each node
// used (its NVLink domain's first N, with their share of its NICs), as a
// run on NVL72 racks uses 64 of a rack's 72 or one 8-GPU slice of it.
func (p *Pod) usePerNode(x float64) error {
	if x != float64(int(x)) || int(x) > p.PerNode {
		return fmt.Errorf("per-node=%g: want a whole number of GPUs, at most the node's %d", x, p.PerNode)
	}
	n := int(x)
	p.NICs = max(1, p.NICs*n/p.PerNode)
	p.PerNode = n
	return nil
}
