package pod

import (
	"fmt"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
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
// nic-gbps= write another. Each card at its datasheet's power limit,
// its compute at the clock it holds under it (power.go; the held clocks
// below): the A100 PCIe's 300 W, the A30's 165 W, the H100 PCIe's 350 W,
// the L40S's 350, the L40's 300, the L4's 72 (roofline/hardware's
// pcie.go); power=W sets another, power=off none.
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
	"pcie-a100": {hardware: "a100-pcie", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: heldKernels(kernels.A100, a100PCIeHeld), power: 300,
		source: "a server of A100 80GB PCIe cards (300 W) on PCIe 4.0, one 100 Gb/s NIC; kernels as dgx-a100's (the same GA100), held at 300 W"},
	"pcie-h100": {hardware: "h100-pcie", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: h100PCIeKernels(), power: 350,
		source: "a server of H100 PCIe cards (350 W) on PCIe 5.0, one 100 Gb/s NIC; the H100 SXM's measured kernels at the card's peak, held at 350 W"},
	"pcie-l40s": {hardware: "l40s", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: heldKernels(modelledKernels("l40s", 142), l40sHeld), power: 350,
		source: "a server of L40S cards (350 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled, held at 350 W"},
	"pcie-l40": {hardware: "l40", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: heldKernels(modelledKernels("l40", 142), l40Held), power: 300,
		source: "a server of L40 cards (300 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled, held at 300 W"},
	"pcie-l4": {hardware: "l4", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: heldKernels(modelledKernels("l4", 58), l4Held), power: 72,
		source: "a server of L4 cards (72 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled, held at 72 W"},
	"pcie-a30": {hardware: "a30", perNode: 8, slots: pcieSlots, nics: 1, nicBandwidth: pcieNIC, nicLatency: 10e-6, kernels: heldKernels(modelledKernels("a30", 56), a30Held), power: 165,
		source: "a server of A30 cards (165 W) on PCIe 4.0, one 100 Gb/s NIC; kernels modelled, held at 165 W"},
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
// at the card's peak; the SXM's held clock carried to the card's 350 W
// and 114 SMs (h100PCIeHeld), NCCL's NVLink bus bandwidth not carried (PCIe: Pod.Intra), its NVLink
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
		s.FullFwd, s.FullBwd = scaledRate(a.FullFwd, f), scaledRate(a.FullBwd, f)
		k.Attention = append(k.Attention, &s)
	}
	k.IntraBus = 0
	k.FP8Peak = pcie.FP8Tensor
	k.Held = &h100PCIeHeld
	k.CTAs, k.CTAsAcross = 0, 0
	k.OverlapSlowdown = 0.189
	return k
}

// scaledRate is r with its rates each times f (a new rate; nil for nil).
func scaledRate(r *kernels.AttentionRate, f float64) *kernels.AttentionRate {
	if r == nil {
		return nil
	}
	s := *r
	s.Rates = scaled(r.Rates, f)
	return &s
}

// scaled is rates each times f (a new slice).
func scaled(rates []float64, f float64) []float64 {
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = r * f
	}
	return out
}

// The clock each card holds under its power limit: the power model of a
// GPU of its die carried to the card's SMs and limit (HeldClock.Carried:
// every SM of a die draws the same power at the same clock; the power at
// rest the same share of the limit; exponent, compute share and window
// the H100 SXM's measured ones), at most its burst clock, the clock its
// datasheet's peaks are rated at. TestHeldPCIe works each by hand.
//   - h100PCIeHeld: the H100 SXM's measured (kernels.H100Held: 1,612.5
//     MHz at 700 W on 132 SMs) carried to the H100 PCIe's 114 SMs (14,592
//     CUDA cores / 128) at 350 W ([h100pcie] in roofline/hardware's
//     pcie.go: "maximum thermal design power (TDP) level of 350 W"),
//     burst 1,755 MHz: the card's boost clock (TechPowerUp's H100 PCIe
//     entry, as https://cputronic.com/de/gpu/nvidia-h100-pcie copies
//     it: "Boost-Takt 1755MHz"), and the clock the card's kernels stand
//     at: they are the SXM's timed at 1,980 MHz times 756.5/989.4, the
//     datasheets' peaks, 114 x 1,755 / (132 x 1,980) = 0.7655 of it. It
//     holds 1,343.9 MHz, above the card's base clock ("Basis-Takt
//     1095MHz", the same page), the clock NVIDIA guarantees at the board's
//     power limit ("the maximum at which the GPU is guaranteed to operate
//     at target performance (base clock) under total board power level",
//     NVIDIA's thermal policy as ADLINK's EGX-MXM-RTX5000 manual copies
//     it): a bound the model keeps. (The measured SXM holds 1,612.5 at
//     700 W.)
//   - a100PCIeHeld, a30Held: the GA100's power model, whose held
//     measurement placer has none of: the A100 SXM taken to hold its
//     1,410 MHz boost at its 400 W limit (assumed, as dgx-a100 prices its
//     kernels at their burst rates: no held clock), carried to the A100
//     80GB PCIe's 108 SMs at 300 W (boost 1,410 MHz, [a100] in
//     roofline/hardware's pcie.go) and to the A30's 56 SMs at 165 W
//     (boost 1,440 MHz: 165 TF dense BF16 over 56 SMs of 2,048 FLOPs a
//     clock, [a30] there). The A100 SXM's held clock at 400 W if below
//     its boost would lower both.
//   - l40sHeld, l40Held, l4Held: no Ada GPU was measured under held
//     load; the H100 SXM's measured model carried by tensor width, not
//     SMs: each dense FP16 tensor FLOP a clock draws at a clock what one
//     of the H100's draws (assumed: the same TSMC 4N process, the Ada
//     Lovelace and Hopper GPUs both made on it; an Ada SM does a quarter
//     of a Hopper SM's tensor work a clock, so counting SMs would give it
//     the power of a Hopper SM's tensor cores it does not have). Widths
//     and clocks from the datasheets' dense peaks ([l40], [l4] in
//     roofline/hardware's pcie.go): the L40S 362.05 TF = 142 SMs x 1,024
//     x 2,490 MHz, the L40 181.05 TF = 142 x 512 x 2,490, the L4 121 TF
//     = 58 x 1,024 x 2,040 (its boost clock; 2,037 by the rounded peak);
//     limits 350, 300 and 72 W. They hold 1,982.8, 2,373.0 and 1,577.5
//     MHz.
var (
	h100PCIeHeld = kernels.H100Held.Carried(132, 114, 1755, 350)
	a100SXMHeld  = kernels.HeldClock{BurstMHz: 1410, HeldMHz: 1410, TDPW: 400, IdleW: kernels.H100Held.IdleW / kernels.H100Held.TDPW * 400,
		Exponent: kernels.H100Held.Exponent, Share: kernels.H100Held.Share, WindowS: kernels.H100Held.WindowS}
	a100PCIeHeld = a100SXMHeld.Carried(108, 108, 1410, 300)
	a30Held      = a100SXMHeld.Carried(108, 56, 1440, 165)
	l40sHeld     = kernels.H100Held.Carried(h100TensorWidth, 142*1024, 2490, 350)
	l40Held      = kernels.H100Held.Carried(h100TensorWidth, 142*512, 2490, 300)
	l4Held       = kernels.H100Held.Carried(h100TensorWidth, 58*1024, 2040, 72)
)

// h100TensorWidth is the H100 SXM's dense FP16 tensor FLOPs a clock:
// 132 SMs of 4,096 (989.4 TF at its 1,830 MHz tensor clock).
const h100TensorWidth = 132 * 4096

// heldKernels is k with its GPU's clock under its power limit h.
func heldKernels(k kernels.Node, h kernels.HeldClock) kernels.Node {
	k.Held = &h
	return k
}

// pcieLanes is the width of the link a card's presets assume: x16, the
// slot every card of pcie.go is made for (roofline/hardware's pcie.go:
// "PCIe Gen5 x16", "PCIe Gen4 x16"), at the attained rates of its
// generation (Gen5 50 GB/s, Gen4 25 GB/s a direction).
const pcieLanes = 16

// usePCIeLanes is the pod's cards each on a link of lanes PCIe lanes
// (pcie-lanes=N; 1, 2, 4, 8 or 16): a server that wires its cards at
// less than their x16 (Lenovo's ThinkSystem SR675 V3 with 8 H100 PCIe
// cards: "accelerator_host_interconnect": "PCIe 5.0x8", MLPerf Training
// v3.1 Lenovo/systems/SR675v3-8xH100_PCIe_80GB_350W.json). A PCIe
// link's rate is its lanes' sum (the PCIe specification's bandwidth a
// lane, a link of N lanes N of them; NCCL's topology prices each PCI
// link at width x speed / 80 GB/s, NVIDIA/nccl v2.17.1
// src/graph/topo.cc ncclTopoAddPci: Gen5 x16 48, x8 24), so the card's
// PCIe bandwidth is the x16 figure's lanes/16; on a server of PCIe cards (no NVLink) that
// is the rate its cards reach each other at (Pod.Intra), each card's
// link one hop of NCCL's ring. Refused on a pod whose GPUs reach each
// other over NVLink: their PCIe link is not the one the node's
// collectives run on.
func (p *Pod) usePCIeLanes(x float64) error {
	n := int(x)
	if float64(n) != x || n < 1 || n > pcieLanes || n&(n-1) != 0 {
		return fmt.Errorf("pcie-lanes=%g: want a PCIe link width of 1, 2, 4, 8 or 16 lanes", x)
	}
	if p.Hardware.Topology != "pcie" || p.Kernels.IntraBus > 0 {
		return fmt.Errorf("pcie-lanes=%d: %s's GPUs reach each other over NVLink, not PCIe (a PCIe server's preset takes pcie-lanes)", n, p.Hardware.Name)
	}
	p.Hardware.PCIeBandwidth *= float64(n) / pcieLanes
	return nil
}
