package plan

import (
	"fmt"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
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
// (h100Kernels) stands, said as such beside it; none is fitted to a
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
	// the H100's measured ones (the same GH100 die; h100Kernels), its
	// held clock too (the H100 SXM's at 700 W; the HBM3e part's own power
	// at rest is not measured: the HBM3 SXM's stands for it).
	"dgx-h200": {hardware: "h200", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6, kernels: h100Kernels, power: 700,
		source: "DGX H100/H200 user guide: 8 x H200 SXM (141 GB, 700 W), NVSwitch, 8 x 400 Gb/s ConnectX-7"},
	// DGX B200: 8 x B200 SXM (180 GB, 1,000 W TGP) on NVLink 5 NVSwitch
	// (1.8 TB/s a GPU both ways), 8 x ConnectX-7 NDR 400 Gb/s (the MLPerf
	// B200 node of roofline's hardware_blackwell.go: "8x ConnectX-7 IB
	// NDR 400Gb/s", "B200 TGP 1000W").
	"dgx-b200": {hardware: "b200", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b200", 148, carriedHeld(1980, 1000)), power: 1000,
		source: "DGX B200: 8 x B200 SXM (180 GB, 1,000 W), NVLink 5 NVSwitch, 8 x 400 Gb/s ConnectX-7; kernels modelled"},
	// DGX B300: 8 x B300 (Blackwell Ultra, 270 GB, 1,100 W) on NVLink 5
	// NVSwitch, 8 x 800 Gb/s ConnectX-8 (HGX B300's "networking bandwidth
	// 1.6 TB/s", twice HGX B200's 0.8 TB/s of 8 x 400 Gb/s, both ways: the
	// table of roofline's hardware_blackwell.go [hgx]).
	"dgx-b300": {hardware: "b300", perNode: 8, nics: 8, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("b300", 160, carriedHeld(1980, 1100)), power: 1100,
		source: "DGX B300: 8 x B300 (270 GB, 1,100 W), NVLink 5 NVSwitch, 8 x 800 Gb/s ConnectX-8; kernels modelled"},
	// GB200 NVL72: 72 Blackwell GPUs (186 GB, 1,200 W: the technical
	// brief's GB200 configuration) and 36 Grace CPUs in one NVLink 5
	// domain (130 TB/s: 1.8 TB/s a GPU), 18 compute trays of 4 GPUs, each
	// tray with 4 ConnectX-7 400 Gb/s NICs (the MLPerf GB200 NVL72's "for
	// each 4-GPU node: 4x ... BlueField-3 [ConnectX-7 Lx]"): 72 a domain.
	"gb200-nvl72": {hardware: "gb200", perNode: 72, nics: 72, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("gb200", 148, carriedHeld(2112, 1200)), power: 1200,
		source: "GB200 NVL72: 72 x Blackwell (186 GB, 1,200 W) in one NVLink 5 domain, 72 x 400 Gb/s ConnectX-7; kernels modelled"},
	// GB300 NVL72: 72 Blackwell Ultra GPUs (279 GB, 1,400 W) in one
	// NVLink 5 domain, a ConnectX-8 SuperNIC of 800 Gb/s per GPU ("72
	// ConnectX-8 NICs", https://glennklockwood.com/garden/processors/B300;
	// "each GPU has ConnectX-8 SuperNIC at 800 Gb/s", vendordeep.com's
	// copy of NVIDIA's GB300 announcement).
	"gb300-nvl72": {hardware: "gb300", perNode: 72, nics: 72, nicBandwidth: 800e9 / 8, nicLatency: 10e-6,
		kernels: blackwellKernels("gb300", 160, carriedHeld(1980, 1400)), power: 1400,
		source: "GB300 NVL72: 72 x Blackwell Ultra (279 GB, 1,400 W) in one NVLink 5 domain, 72 x 800 Gb/s ConnectX-8; kernels modelled"},
}

// blackwellKernels are the modelled kernels of a Blackwell GPU (hardware
// preset gpu, sms streaming multiprocessors, held its clock under held
// load):
//   - GEMMs at blackwellGEMM of the BF16 peak, FP8 GEMMs with per-tensor
//     scales at teFP8Fwd and teFP8Bwd times the BF16 GEMM's speed, and
//     blockwise FP8 (which Transformer Engine runs as MXFP8 on Blackwell)
//     at MXFP8's (teGEMMs: published kernel benchmarks of a B300);
//   - fused attention: blackwellAttention (cuDNN's, from the H100's fit
//     and FlashAttention-4's published B200 figures);
//   - NVLink 5's bus bandwidth at the share of its line rate NCCL
//     measured on NVLink 4 (362 of 450 GB/s on DGX H100: 724 of 900
//     GB/s), the NIC at the 47 of 50 GB/s measured on an NDR NIC, the
//     overlapped compute's 18.9% slowdown (A100/H100/MI250/MI210), the
//     grouped expert GEMMs' 0.935 (sm90's tile rule, now over sms SMs)
//     and the host's issue times (h100Host): the H100's, assumed;
//   - 16 of sms SMs taken by tensor-parallel overlap (Transformer
//     Engine's userbuffers default num_sm = 16, as on H100). SMs: 148
//     on B200 and GB200's GPU (https://hmc-tech.com/gpus/nvidia-b200-vs-
//     nvidia-b100: "SMs 148"), 160 on Blackwell Ultra
//     (https://awesomeagents.ai/hardware/nvidia-gb300-nvl72: "160
//     streaming multiprocessors").
func blackwellKernels(gpu string, sms int, held *HeldClock) Kernels {
	h, _ := roofline.Preset(gpu) // this file's own names (TestBlackwellPods)
	k := h100Kernels
	k.GEMM = blackwellGEMM()
	k.Attention = []*AttentionKernel{blackwellAttention(h.FP16Tensor, sms)}
	k.SMs = sms
	k.IntraBus = h.NVLinkBandwidth * float64(h.NVLinks) * h100Kernels.IntraBus / (25e9 * 18)
	k.FP8Peak = h.FP8Tensor
	k.FP8Fwd, k.FP8Bwd = teGEMMs.fp8.over(teGEMMs.bf16)
	k.FP8Block = teGEMMs.bf16.total() / teGEMMs.mxfp8.total()
	k.Held = held
	return k
}

// gemmSums are one precision's per-layer GEMM times (ms) in Transformer
// Engine's GEMM profiling tutorial: the sums of a layer's four GEMMs'
// forward (Fprop), data-gradient (Dgrad) and weight-gradient (Wgrad)
// shapes.
type gemmSums struct{ fprop, dgrad, wgrad float64 }

func (g gemmSums) total() float64 { return g.fprop + g.dgrad + g.wgrad }

// over is how many times faster g's GEMMs run than base's, forward and
// backward (the data and weight gradients together).
func (g gemmSums) over(base gemmSums) (fwd, bwd float64) {
	return base.fprop / g.fprop, (base.dgrad + base.wgrad) / (g.dgrad + g.wgrad)
}

// teGEMMs are a published kernel benchmark: Transformer Engine's GEMM
// profiling tutorial (NVIDIA/TransformerEngine docs/examples/
// gemm_profiling/gemm_profiling.rst at commit 1609c890, 2026-06-01; its
// tool benchmarks/gemm/benchmark_gemm.py), a 5B model's layer (hidden
// 4,096, FFN 16,384, 32 heads, M = 31 x 512 = 15,872 tokens: QKV
// 4,096 x 12,288, attention output 4,096 x 4,096, MLP up 4,096 x 16,384,
// down 16,384 x 4,096; teLayerFLOPs) timed with CUDA events, 100
// iterations, on an "NVIDIA B300 SXM6 AC" and an "NVIDIA H200 NVL".
// The low-precision rows are its pre-quantized ones (--pre-quantize:
// the GEMM kernels alone, their inputs quantized before the timed loop;
// its autocast rows add a quantization of both inputs to every call,
// which a training step does not run: the casts are costed apart,
// evaluate/scale's cast). BF16 (torch.matmul) is timed in both runs;
// each GPU's BF16 is the mean of its two (B300 12.758 and 13.102 ms a
// layer, H200 NVL 32.014 and 31.909: the Fprop, Dgrad and Wgrad sums;
// the table prints 31.968 for the latter's total).
var teGEMMs = struct {
	bf16, fp8, mxfp8, nvfp4, bf16Autocast gemmSums
	h200, h200Autocast                    gemmSums
}{
	bf16:         gemmSums{4.250, 4.434, 4.418},
	fp8:          gemmSums{2.158, 2.329, 2.325}, // FP8CurrentScaling (per-tensor)
	mxfp8:        gemmSums{2.365, 2.397, 2.400},
	nvfp4:        gemmSums{1.254, 1.305, 1.205},
	bf16Autocast: gemmSums{4.196, 4.290, 4.272},
	h200:         gemmSums{10.632, 10.747, 10.530},
	h200Autocast: gemmSums{10.653, 10.813, 10.548},
}

// teLayerFLOPs is the FLOPs of teGEMMs' layer's twelve GEMMs: 3 x 2 x
// 15,872 x 4,096 x (12,288 + 4,096 + 16,384 + 16,384).
const teLayerFLOPs = 3 * 2 * 15872 * 4096 * (12288 + 4096 + 16384 + 16384.0)

// The dense BF16 peaks of teGEMMs' GPUs: the B300's 2,250 TFLOP/s
// (roofline's b300), the H200 NVL's 835.5 (NVIDIA's H200 datasheet:
// 1,671 TFLOP/s "with sparsity", twice the dense rate).
const (
	teB300BF16Peak = 2250e12
	teH200NVLPeak  = 835.5e12
)

// blackwellGEMM is the fraction of the BF16 peak a Blackwell GPU's GEMMs
// reach at a transformer shard's shapes: the H100's measured 0.756
// (h100Kernels) times how much less of its peak a Blackwell GEMM reaches
// than a Hopper one at the same shapes in the same published benchmark
// (teGEMMs): the B300's 0.6590 of 2.25 PF (1,483 TFLOP/s) over the H200
// NVL's 0.7180 of 835.5 TF (599.9 TFLOP/s), 0.9179: 0.6939. The two
// runs' BF16 alone give 0.9044 and 0.9318. The same fraction stands for
// every Blackwell part (one tensor-core generation; B200 and B300 share
// the BF16 peak).
func blackwellGEMM() float64 {
	eff := func(a, b gemmSums, peak float64) float64 {
		return teLayerFLOPs / ((a.total() + b.total()) / 2 * 1e-3) / peak
	}
	return h100Kernels.GEMM * eff(teGEMMs.bf16, teGEMMs.bf16Autocast, teB300BF16Peak) /
		eff(teGEMMs.h200, teGEMMs.h200Autocast, teH200NVLPeak)
}

// BlockScaledSpeedups is how many times faster a block-scaled GEMM of
// recipe (FP8MX or FP4NV) runs than the BF16 GEMM of its shape on a GPU
// whose FP4 tensor peak is fp4Ratio times its BF16 peak, forward and
// backward, from teGEMMs' pre-quantized B300 rows: MXFP8 1.797x
// forward and 1.845x backward (per-tensor FP8's 1.969x and 1.902x: an
// MXFP8 GEMM reads a scale per 32 elements of each operand); NVFP4
// 3.389x and 3.527x on the B300, whose FP4 peak is 13,125 / 2,250 =
// 5.833 times its BF16, that is 0.5810 and 0.6046 of the peaks' ratio,
// the share taken on each Blackwell part (B200's and GB200's 4x: 2.324x
// and 2.418x; GB300's 6x: 3.486x and 3.627x). No NVFP4 GEMM of a B200
// or GB200 was found published. 0, 0 for any other recipe.
func BlockScaledSpeedups(recipe string, fp4Ratio float64) (fwd, bwd float64) {
	switch recipe {
	case FP8MX:
		return teGEMMs.mxfp8.over(teGEMMs.bf16)
	case FP4NV:
		f, b := teGEMMs.nvfp4.over(teGEMMs.bf16)
		r := 13125.0 / 2250 // the B300's FP4 over BF16 peak (roofline's b300)
		return f / r * fp4Ratio, b / r * fp4Ratio
	}
	return 0, 0
}

// blackwellAttention is cuDNN's fused attention (what Transformer Engine
// runs on sm100 for Megatron-Core) on a Blackwell GPU of BF16 peak bf16
// and sms SMs, modelled from the H100's measured fit (h100CuDNNAttention)
// and published B200 figures: FlashAttention-4 (Zadouri et al., arXiv
// 2603.05451, BF16 on B200) reaches at best 1,613 TFLOP/s, "up to 1.3x"
// cuDNN 9.13's, so cuDNN reaches at least 1,613 / 1.3 = 1,240.8 TFLOP/s
// at that shape, 1.871 times the H100 fit's 663.2 at head dimension 128:
// the rates at every head dimension, forward and backward (no published
// B200 backward figure was found: the forward's ratio stands), taken
// 1.871 times, and by bf16 over the B200's 2,250 TF on the other parts.
// Its per-element terms (Beta, Tail: the softmax's exponentials and the
// shared-memory traffic, whose units per SM Blackwell did not grow, as
// the FlashAttention-4 authors state) spread over sms SMs instead of the
// H100's 132; its fixed T0 as measured.
func blackwellAttention(bf16 float64, sms int) *AttentionKernel {
	r := 1613e12 / 1.3 / h100CuDNNAttention.Fwd.Rate(128) * bf16 / teB300BF16Peak
	e := 132 / float64(sms)
	k := h100CuDNNAttention
	scale := func(a AttentionRate) AttentionRate {
		a.Rates = append([]float64(nil), a.Rates...)
		for i := range a.Rates {
			a.Rates[i] *= r
		}
		a.Beta, a.Tail = a.Beta*e, a.Tail*e
		return a
	}
	k.Fwd, k.Bwd = scale(k.Fwd), scale(k.Bwd)
	return &k
}

// carriedHeld is the held clock of a GPU of burst clock burstMHz at power
// limit tdpW with nothing of it measured under held load: the H100 SXM's
// measured shape carried over (h100Held), assumed. It holds the same
// share of its burst clock at its own limit (1,612.5 / 1,980), rests at
// the same share of it (75.5 / 700 W), and its compute-bound kernels
// follow the clock by the same share (0.633), so at the pod's stated
// limit a compute-bound kernel takes the H100's 1.144x its burst time;
// power=off prices the burst. The burst clocks: B200 1,980 MHz
// ("Boost Clock 1.98GHz", https://hmc-tech.com/gpus/nvidia-b200-vs-
// nvidia-b100), GB200's GPU 2,112 MHz (https://hmc-tech.com/gpu/
// nvidia-h100-vs-nvidia-h200-sxm-vs-nvidia-gb200); for Blackwell Ultra
// none was found and the B200's stands (only the ratio enters the
// slowdown).
func carriedHeld(burstMHz, tdpW float64) *HeldClock {
	h := h100Held
	r := burstMHz / h.BurstMHz
	return &HeldClock{BurstMHz: burstMHz, HeldMHz: h.HeldMHz * r, TDPW: tdpW, IdleW: h.IdleW / h.TDPW * tdpW,
		Exponent: h.Exponent, Share: h.Share}
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
