package pod

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/kernels"
)

// The DGX A100 with 40 GB GPUs, and servers of PCIe cards: the nodes of
// MLPerf Training's BERT rows that are not NVSwitch boards of 80 GB
// GPUs. Each GPU's figures are roofline/hardware's (pcie.go there, every
// one from its datasheet).
//
// A PCIe server (pcie-*): PerNode cards (8, the common server: Supermicro
// AS-4125GS-TNRT's 8 x H100 PCIe, Lenovo SR675 V3's 8 x H100 PCIe or 8 x
// L40S) of up to slots 16 (per-node=N takes N of them: xFusion's G5500 V7
// holds 10, Fujitsu's composable PRIMERGY CDI 16 L40S on one host), every
// card reaching the others through PCIe (Pod.Intra: the card's PCIe
// rate; NVLink bridges between pairs not modelled, hardware/pcie.go), and
// one 100 Gb/s NIC a node: what the multi-node PCIe systems of MLPerf
// Training v3.0-v3.1 state ("host_networking": Dell's R750xa x4 A100
// PCIe "1x ConnectX-5 IB EDR 100Gb/Sec" or "1x Cornelis Networks
// Omni-Path HFI Adapter 100 Series 100Gb/Sec"; Clemson's R750 x2 A100
// PCIe "Compute: 1 x ConnectX - 6 IB HDR100 100 Gb / Sec"); nics= and
// nic-gbps= write another. Power limits are not modelled on them (no
// held-clock measurement of these GPUs: kernels at their burst rates).
func init() {
	for k, p := range pciePods {
		podPresets[k] = p
	}
}

// pcieSlots is the most cards a PCIe server preset's node takes
// (per-node= up to it): Fujitsu's PRIMERGY CDI with 16 L40S (MLPerf
// Training v4.0, Fujitsu/systems/PRIMERGY-CDI-L40Sx16.json).
const pcieSlots = 16

// pcieNIC is the PCIe servers' one NIC a node, 100 Gb/s (see above).
const pcieNIC = 100e9 / 8

var pciePods = map[string]podPreset{
	// DGX A100 320 GB: 8 x A100 SXM4 40 GB on NVSwitch, 8 x 200 Gb/s
	// ConnectX-6 (the DGX A100 user guide covers both memory sizes);
	// kernels and 400 W as dgx-a100's.
	"dgx-a100-40gb": {hardware: "a100-40gb", perNode: 8, nics: 8, nicBandwidth: 200e9 / 8, nicLatency: 10e-6, kernels: kernels.A100, power: 400,
		source: "DGX A100 (320 GB) user guide: 8 x A100 SXM4 40GB (400 W), NVSwitch, 8 x 200 Gb/s ConnectX-6"},
	"pcie-a100": {hardware: "a100-pcie", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: kernels.A100,
		source: "a server of A100 80GB PCIe cards (300 W) on PCIe 4.0, one 100 Gb/s NIC; kernels as dgx-a100's (the same GA100)"},
	"pcie-h100": {hardware: "h100-pcie", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: h100PCIeKernels(),
		source: "a server of H100 PCIe cards (350 W) on PCIe 5.0, one 100 Gb/s NIC; the H100 SXM's measured kernels at the card's peak"},
	"pcie-l40s": {hardware: "l40s", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: modelledKernels("l40s", 142),
		source: "a server of L40S cards (350 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled"},
	"pcie-l40": {hardware: "l40", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: modelledKernels("l40", 142),
		source: "a server of L40 cards (300 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled"},
	"pcie-l4": {hardware: "l4", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: modelledKernels("l4", 58),
		source: "a server of L4 cards (72 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled"},
	"pcie-a30": {hardware: "a30", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: modelledKernels("a30", 56),
		source: "a server of A30 cards (165 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled"},
}

// modelledKernels are the kernels of a GPU nothing measured (the L40S,
// L40, L4, A30), of sms SMs (the datasheets' CUDA cores over an SM's:
// 18,176 / 128 on the L40S and L40, 7,424 / 128 on the L4, 3,584 / 64 on
// the A30): GEMMs and every other class at the hardware preset's
// efficiencies, fused attention at the matmul class's (no kernel timed by
// shape), FP8 GEMMs at the preset gpu's FP8 peak (0 on the A30: none), the NIC at the share of its line rate measured on an NDR NIC
// (kernels.H100's 47 of 50) and the compute beside a collective 18.9%
// slower (arXiv 2507.03114's mean over A100, H100, MI250 and MI210, as
// the Blackwell pods take it).
func modelledKernels(gpu string, sms int) kernels.Node {
	h, _ := roofline.Preset(gpu) // roofline/hardware's pcie.go (TestPCIePods)
	return kernels.Node{
		FP8Peak:    h.FP8Tensor,
		Provenance: "modelled: the datasheet's peaks at the classes' efficiencies, fused attention at the matmul class's (no kernel measured on this GPU)",
		SMs:        sms, OverlapSMs: 16,
		NICEff:          kernels.H100.NICEff,
		OverlapSlowdown: 0.189,
	}
}

// h100PCIeKernels are the H100 SXM's measured kernels (kernels.H100) on
// the H100 PCIe: 114 SMs (14,592 CUDA cores / 128) whose every
// compute-bound rate is the SXM's times the ratio of the datasheets'
// dense BF16 peaks (756.5 / 989.4 = 0.7646: fewer SMs at a lower clock),
// its GEMMs at the SXM's measured fraction of the card's own peak, FP8
// at the card's peak; the held clock of the 700 W SXM not carried over,
// NCCL's NVLink bus bandwidth neither (PCIe: Pod.Intra), its NVLink
// channels neither (the overlapped compute's 18.9% slowdown instead, as
// modelledKernels).
func h100PCIeKernels() kernels.Node {
	pcie, _ := roofline.Preset("h100-pcie") // roofline/hardware's pcie.go (TestPCIePods)
	sxm, _ := roofline.Preset("h100")
	f := pcie.FP16Tensor / sxm.FP16Tensor
	k := kernels.H100
	k.Provenance = "the H100 SXM's measured kernels at the H100 PCIe's datasheet peak (docs/hardware.md)"
	k.SMs = 114
	k.ExpRate = kernels.H100.ExpRate * f
	k.Attention = nil
	for _, a := range kernels.H100.Attention {
		s := *a
		s.Fwd.Rates = scaled(a.Fwd.Rates, f)
		s.Bwd.Rates = scaled(a.Bwd.Rates, f)
		k.Attention = append(k.Attention, &s)
	}
	k.IntraBus = 0
	k.FP8Peak = pcie.FP8Tensor
	k.Held = nil
	k.CTAs, k.CTAsAcross = 0, 0
	k.OverlapSlowdown = 0.189
	return k
}

// scaled is rates each times f (a new slice).
func scaled(rates []float64, f float64) []float64 {
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = r * f
	}
	return out
}
