package pod

import (
	"fmt"
	"math"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
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
	// B200 node of roofline/hardware's blackwell.go: "8x ConnectX-7 IB
	// NDR 400Gb/s", "B200 TGP 1000W").
	"dgx-b200": {hardware: "b200", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b200", 148, kernels.MUFUBlackwell, 1000), power: 1000,
		source: "DGX B200: 8 x B200 SXM (180 GB, 1,000 W), NVLink 5 NVSwitch, 8 x 400 Gb/s ConnectX-7; kernels modelled"},
	// DGX B300: 8 x B300 (Blackwell Ultra, 270 GB, 1,100 W) on NVLink 5
	// NVSwitch, 8 x 800 Gb/s ConnectX-8 (HGX B300's "networking bandwidth
	// 1.6 TB/s", twice HGX B200's 0.8 TB/s of 8 x 400 Gb/s, both ways: the
	// table of roofline/hardware's blackwell.go [hgx]).
	"dgx-b300": {hardware: "b300", perNode: 8, nics: 8, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b300", 160, kernels.MUFUBlackwellUltra, 1100), power: 1100,
		source: "DGX B300: 8 x B300 (270 GB, 1,100 W), NVLink 5 NVSwitch, 8 x 800 Gb/s ConnectX-8; kernels modelled"},
	// GB200 NVL72: 72 Blackwell GPUs (186 GB, 1,200 W: the technical
	// brief's GB200 configuration) and 36 Grace CPUs in one NVLink 5
	// domain (130 TB/s: 1.8 TB/s a GPU), 18 compute trays of 4 GPUs, each
	// tray with 4 ConnectX-7 400 Gb/s NICs (the MLPerf GB200 NVL72's "for
	// each 4-GPU node: 4x ... BlueField-3 [ConnectX-7 Lx]"): 72 a domain.
	"gb200-nvl72": {hardware: "gb200", perNode: 72, nics: 72, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: onGrace(blackwellKernels("gb200", 148, kernels.MUFUBlackwell, 1200)), power: 1200,
		source: "GB200 NVL72: 72 x Blackwell (186 GB, 1,200 W) in one NVLink 5 domain, 72 x 400 Gb/s ConnectX-7; kernels modelled"},
	// GB300 NVL72: 72 Blackwell Ultra GPUs (279 GB, 1,400 W) in one
	// NVLink 5 domain, a ConnectX-8 SuperNIC of 800 Gb/s per GPU ("72
	// ConnectX-8 NICs", https://glennklockwood.com/garden/processors/B300;
	// "each GPU has ConnectX-8 SuperNIC at 800 Gb/s", vendordeep.com's
	// copy of NVIDIA's GB300 announcement).
	"gb300-nvl72": {hardware: "gb300", perNode: 72, nics: 72, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: onGrace(blackwellKernels("gb300", 160, kernels.MUFUBlackwellUltra, 1400)), power: 1400,
		source: "GB300 NVL72: 72 x Blackwell Ultra (279 GB, 1,400 W) in one NVLink 5 domain, 72 x 800 Gb/s ConnectX-8; kernels modelled"},
}

// blackwellKernels are the modelled kernels of a Blackwell GPU (hardware
// preset gpu, sms streaming multiprocessors, power limit tdpW), from
// published kernel benchmarks (planner/kernels' blackwell.go):
//   - every compute-bound kernel at its sms SMs' rate at the B200's
//     clock (smPeak), not at the GPU's datasheet peak, and held at the
//     clock its power limit allows on the Blackwell SM's power curve
//     (smHeld): the datasheet peaks of one die differ by the clock the
//     product is rated at under its limit (HGX B200 2,250 TF at 1,000 W,
//     GB200's GPU 2,500 TF at 1,200 W, the same 148-SM GPU: NVIDIA's GB200
//     NVL72 and HGX B200 specification table, "FP16/BF16 Tensor Core 5
//     PFLOPS | 4.5 PFLOPS" with sparsity, "Configurable up to 1,200W |
//     Configurable up to 1,000W", as copied at https://zdszero.github.io/
//     Computer/Artificial_Intelligence/Hardware.html), which smHeld
//     prices, so that a GB200 kernel does not also run at the 1.111x
//     higher peak;
//   - GEMMs at kernels.BlackwellGEMM of that rate; FP8 GEMMs with
//     per-tensor and blockwise scales at kernels.BlackwellFP8's speedups,
//     MXFP8 and NVFP4 ones at kernels.BlackwellBlockScaled's (NVFP4's at
//     its share of the GPU's FP4 over BF16 peak);
//   - fused attention: kernels.BlackwellAttention (cuDNN's), its
//     exponentials at mufu MUFU.EX2 results a clock an SM (16 on B200
//     and GB200, 32 on Blackwell Ultra: kernels.MUFUBlackwellUltra) at
//     the same clock (kernels.ExpRate of smPeak);
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
func blackwellKernels(gpu string, sms, mufu int, tdpW float64) kernels.Node {
	h, _ := roofline.Preset(gpu) // this file's own names (TestBlackwellPods)
	rate := smPeak(sms)
	k := kernels.H100
	k.Provenance = "modelled from published kernel benchmarks and the H100's measured ones (docs/hardware.md), not measured on a Blackwell GPU"
	k.GEMM = kernels.BlackwellGEMM() * rate / h.FP16Tensor
	k.ExpRate = kernels.ExpRate(rate, mufu, kernels.TensorPerClockBlackwell)
	k.Attention = []*kernels.Attention{kernels.BlackwellAttention(rate, sms, k.ExpRate)}
	k.SMs = sms
	k.IntraBus = h.NVLinkBandwidth * float64(h.NVLinks) * kernels.H100.IntraBus / (25e9 * 18)
	k.FP8Peak = h.FP8Tensor
	k.FP8Fwd, k.FP8Bwd, k.FP8Block = kernels.BlackwellFP8()
	k.MXFP8Fwd, k.MXFP8Bwd, k.NVFP4Fwd, k.NVFP4Bwd = kernels.BlackwellBlockScaled(h.FP4Tensor / h.FP16Tensor)
	k.Held = smHeld(sms, tdpW)
	// NCCL's channels on NVLink 5 are not derived here (kernels.H100's
	// CTAs are sm90's): the compute beside a collective takes arXiv
	// 2507.03114's mean slowdown (A100, H100, MI250, MI210) instead.
	k.CTAs, k.CTAsAcross = 0, 0
	k.OverlapSlowdown = 0.189
	return k
}

// onGrace is Blackwell kernels k issued from a GB200 or GB300 NVL72
// compute tray's host: its Grace CPUs (Arm Neoverse V2; "36 Grace CPUs"
// in the rack, one a pair of GPUs) in place of the x86 Xeon whose
// measured issue times blackwellKernels carries over from the H100
// (kernels.Host.OnGrace: torch's launch measured 2.75 times the DGX
// H100's on GB200). DGX B200 and B300 keep the x86 host (Xeon Platinum
// 8570 on DGX B200).
func onGrace(k kernels.Node) kernels.Node {
	k.Host = k.Host.OnGrace()
	return k
}

// b200SMs and b200TDP are the B200's: the Blackwell GPU whose datasheet
// peak (2,250 TF dense BF16, roofline's b200) and limit (1,000 W) the
// others' SMs are priced from.
const (
	b200SMs = 148
	b200TDP = 1000
)

// smPeak is the dense BF16 tensor rate of sms Blackwell SMs at the clock
// the B200's peak is rated at (2,250 TF over 148 SMs): 2,250 TF on B200
// and GB200's GPU (the same GPU), 2,432.4 TF on 160 Blackwell Ultra SMs,
// whose SM does as many BF16 FLOPs a clock (kernels.
// TensorPerClockBlackwell on both).
func smPeak(sms int) float64 {
	b, _ := roofline.Preset("b200")
	return b.FP16Tensor * float64(sms) / b200SMs
}

// smHeld is the held clock of a Blackwell GPU of sms SMs at power limit
// tdpW, nothing of it measured under held load: the B200 at its 1,000 W
// holds the H100 SXM's measured shape carried over (kernels.H100Held,
// assumed: the same share of its burst clock, 1,612.5 / 1,980 MHz, at
// rest the same share of its limit, 75.5 / 700 x 1,000 = 107.86 W, the
// same exponent 3, compute share 0.633 and window), and every Blackwell
// SM draws what a B200 SM draws at the same clock: P = Idle + sms k f^3,
// so f = 1,612.5 x ((tdpW - 107.86) / sms / ((1,000 - 107.86) / 148))^(1/3),
// at most the 1,980 MHz burst (B200's "Boost Clock 1.98GHz",
// https://hmc-tech.com/gpus/nvidia-b200-vs-nvidia-b100). A GB200 at
// 1,200 W holds 1,724.97 MHz (a compute-bound kernel 1.0935x its burst
// time, the B200 1.1442x), a B300 (160 SMs, 1,100 W) 1,627.8 (1.1369x),
// a GB300 (160, 1,400 W) 1,777.6 (1.0720x). Assumed: the Blackwell Ultra
// SM's power a clock that of Blackwell's (the same TSMC 4NP process and
// SM, NVIDIA's "Inside NVIDIA Blackwell Ultra" blog), and the idle power
// the B200's on each (its HBM, NVLink and the rest of the package).
func smHeld(sms int, tdpW float64) *kernels.HeldClock {
	h := kernels.H100Held
	idle := h.IdleW / h.TDPW * b200TDP
	perSM := (tdpW - idle) / float64(sms) / ((b200TDP - idle) / b200SMs)
	held := min(h.HeldMHz*math.Cbrt(perSM), h.BurstMHz)
	return &kernels.HeldClock{BurstMHz: h.BurstMHz, HeldMHz: held, TDPW: tdpW, IdleW: idle,
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

// wholeHosts checks n GPUs of a node of the pod named name: on a pod
// whose node spans hosts (an NVL72 rack's 18 compute trays of 4), n is a
// whole number of hosts or fits in one; a torchrun agent a host runs the
// same processes on each (HostGPUs). n = 65 of a rack would leave one
// tray's GPUs split.
func wholeHosts(name string, n int) error {
	name, _, _ = strings.Cut(name, ":")
	name, _, _ = strings.Cut(name, ",")
	if h, ok := hostGPUs[name]; ok && n > h && n%h != 0 {
		return fmt.Errorf("a node of %s is hosts of %d GPUs: want at most %d or a multiple of %d (e.g. %d)", name, h, h, h, n/h*h)
	}
	return nil
}

// usePerNode is the per-node=N option of a cluster: N GPUs of each node
// used (its NVLink domain's first N, with their share of its NICs), as a
// run on NVL72 racks uses 64 of a rack's 72 or one 8-GPU slice of it; on
// a PCIe server (pcie.go) N of its card slots, up to its slots.
func (p *Pod) usePerNode(x float64) error {
	if most := max(p.PerNode, p.slots); x != float64(int(x)) || int(x) > most {
		return fmt.Errorf("per-node=%g: want a whole number of GPUs, at most the node's %d", x, most)
	}
	n := int(x)
	if err := wholeHosts(p.Name, n); err != nil {
		return fmt.Errorf("per-node=%d: %w", n, err)
	}
	p.NICs = max(1, p.NICs*min(n, p.PerNode)/p.PerNode) // more cards than PerNode: the node's NICs, no more
	p.PerNode = n
	return nil
}

// NonTNFP8 is whether the pod's GPUs run FP8 GEMMs in every layout (NN,
// NT and TN), so that Transformer Engine keeps no transposed copy of a
// per-tensor-scaled FP8 tensor: GPUs of compute capability 10 and later
// (Blackwell), told by their FP4 tensor rate (fifth-generation tensor
// cores; blockScaledFits's test). Sources: Transformer Engine 2.x,
// transformer_engine/pytorch/csrc/extensions/util.cpp
// non_tn_fp8_gemm_supported (`major >= 10`), and
// transformer_engine/pytorch/tensor/float8_tensor.py
// Float8Tensor.update_usage, which calls _create_transpose for columnwise
// use only `if not non_tn_fp8_gemm_supported()` ("FP8 GEMM on Hopper
// only supports TN layout"). Block-scaled tensors (MXFP8, NVFP4) keep
// both copies: their scales run along one dimension.
func (p *Pod) NonTNFP8() bool { return p != nil && p.Hardware.FP4Tensor > 0 }
