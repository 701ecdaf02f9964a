package pod

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// The AMD Instinct pods: a node is the AMD Instinct platform, 8 OAM GPUs
// on one universal baseboard, each wired to each of the other 7 by its
// own Infinity Fabric (xGMI) link, no switch (the hardware presets'
// instinct.go); so a collective among n of a node's GPUs runs on n-1
// links (kernels.Node.MeshLink), and a tensor group of 2 has one link
// where an 8-GPU NVSwitch node gives any pair the whole fabric. The NICs:
// one 400 Gb/s RDMA NIC a GPU, rail-wired ("Each GPU has a dedicated RDMA
// NIC ... With 8 GPUs per node, there are 8 independent rails",
// TensorWave's MI300X/MI325X cluster documentation,
// https://docs.tensorwave.com/slurm/performance, read 2026-11-29; the
// MI355X platform's AMD Pensando Pollara 400 AI NICs, 400 Gb/s, one a GPU
// as well: assumed the same 8). Hosts: two AMD EPYC CPUs (x86), whose
// kernel issue times are not published: the H100's measured x86 host
// (kernels.H100.Host) is assumed. HIP graphs exist and the stack's
// switches are kept as they are (cuda-graphs= prices HIP's graphs).
//
// Kernels are modelled from published measurements (planner/kernels'
// instinct.go), not measured on an AMD GPU; a profile from the user's own
// GPU (placer profile, --profile) replaces them.
func init() {
	for k, p := range instinctPods {
		podPresets[k] = p
	}
}

var instinctPods = map[string]podPreset{
	// MI300X platform: 8 x MI300X (192 GB HBM3, 750 W TBP), 7 Infinity
	// Fabric links of 64 GB/s a GPU, 8 x 400 Gb/s NICs.
	"mi300x": {hardware: "mi300x", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: instinctKernels("mi300x", 3, 304), power: 750,
		source: "AMD Instinct MI300X platform: 8 x MI300X (192 GB, 750 W), Infinity Fabric mesh (7 x 64 GB/s a GPU), 8 x 400 Gb/s NICs; kernels modelled"},
	// MI325X platform: 8 x MI325X (256 GB HBM3E, 1,000 W TBP), the
	// MI300X's fabric and NICs (a drop-in replacement on the same
	// baseboard).
	"mi325x": {hardware: "mi325x", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: instinctKernels("mi325x", 3, 304), power: 1000,
		source: "AMD Instinct MI325X platform: 8 x MI325X (256 GB, 1,000 W), Infinity Fabric mesh (7 x 64 GB/s a GPU), 8 x 400 Gb/s NICs; kernels modelled"},
	// MI355X platform: 8 x MI355X (288 GB HBM3E, 1,400 W TBP), 7 Infinity
	// Fabric links of 76.8 GB/s a GPU, 8 x 400 Gb/s Pollara NICs.
	"mi355x": {hardware: "mi355x", perNode: 8, nics: 8, nicBandwidth: 400e9 / 8, nicLatency: 10e-6,
		kernels: instinctKernels("mi355x", 4, 256), power: 1400,
		source: "AMD Instinct MI355X platform: 8 x MI355X (288 GB, 1,400 W), Infinity Fabric mesh (7 x 76.8 GB/s a GPU), 8 x 400 Gb/s NICs; kernels modelled"},
}

// instinctKernels are the modelled kernels of an Instinct GPU (hardware
// preset gpu, CDNA generation cdna, cus compute units):
//   - GEMMs at kernels.InstinctGEMM of the BF16 peak (hipBLASLt's
//     measured 8,192 GEMM); per-tensor FP8 GEMMs at kernels.InstinctFP8's
//     speedup (AMD's max-achievable FP8 over BF16 on CDNA 3: 1.802);
//     MXFP8 on CDNA 4 at the peaks' ratio (FP8 over BF16, 2: no
//     published MXFP8 GEMM measurement);
//   - fused attention: kernels.InstinctAttention (AITER's flash kernel
//     on CDNA 4; on CDNA 3 the H100's measured FlashAttention-2 at AMD's
//     published MI300X ratios to it);
//   - RCCL over the mesh: each link at kernels.XGMIShare of its rate
//     (48 of 64 GB/s on CDNA 3, 57.6 of 76.8 on CDNA 4: MeshLink), the
//     8-GPU ring on all 7 (336 and 403.2 GB/s: IntraBus);
//   - the NIC at the 47 of 50 GB/s measured on an NDR NIC (the H100's,
//     assumed for a 400 Gb/s RoCE NIC), the compute beside a collective
//     at arXiv 2507.03114's mean 18.9% slowdown (A100, H100, MI250, MI210:
//     its AMD GPUs among them), the grouped expert GEMMs' 0.935 (sm90's
//     tile rule, assumed), 16 of the CUs taken by tensor-parallel overlap
//     (Transformer Engine's userbuffers default, assumed), the host's
//     issue times the H100's x86 host's (assumed: AMD EPYC hosts);
//   - on CDNA 3 the clock each part holds at its board limit
//     (kernels.InstinctHeld: AMD's published held clocks, 1,207 MHz on
//     the MI300X at 750 W against the 1,447 of the MI325X at 1,000 W that
//     the CDNA 3 rates were measured at), so that an MI300X's compute
//     takes 1.1988x an MI325X's and power= moves either; the MI355X none
//     (Held nil: its rates were timed at its own limit, power= changes
//     nothing).
func instinctKernels(gpu string, cdna, cus int) kernels.Node {
	h, _ := roofline.Preset(gpu) // this file's own names (TestInstinctPods)
	link := h.NVLinkBandwidth * kernels.XGMIShare
	return kernels.Node{
		Provenance:      "modelled from published ROCm kernel benchmarks (hipBLASLt, AITER, RCCL; docs/hardware.md), not measured on an AMD GPU",
		GEMM:            kernels.InstinctGEMM(cdna),
		Attention:       []*kernels.Attention{kernels.InstinctAttention(cdna, h.FP16Tensor)},
		SMs:             cus,
		OverlapSMs:      16,
		OverlapSlowdown: 0.189,
		IntraBus:        link * float64(h.NVLinks),
		MeshLink:        link,
		NICEff:          kernels.H100.NICEff,
		FP8Peak:         h.FP8Tensor,
		FP8Fwd:          kernels.InstinctFP8(cdna),
		FP8Bwd:          kernels.InstinctFP8(cdna),
		GroupedGEMM:     kernels.H100.GroupedGEMM,
		Host:            kernels.H100.Host,
		ROCm:            true,
		Held:            kernels.InstinctHeld(gpu),
	}
}
