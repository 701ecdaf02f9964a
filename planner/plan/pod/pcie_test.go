package pod

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// TestPCIePods: each pod of pcie.go parses on its GPU's preset, and a
// PCIe server writes the nodes MLPerf's BERT rows ran on. Worked by hand:
// pcie-a100:2,per-node=4 is 8 GPUs of 80 GB, each reaching the others of
// its node at the card's PCIe 4.0 rate (25 GB/s, no NVLink) and the other
// node at its share of one 100 Gb/s NIC at 47/50 of its line rate: 12.5
// GB/s x 0.94 / 4 = 2.9375 GB/s; pcie-l40:1,per-node=10 is 10 cards (more
// than the preset's 8, within its 16 slots); per-node=17 is refused;
// dgx-a100-40gb:4,per-node=4 is 16 GPUs of 40 GiB on NVLink 3 (12 x 25
// GB/s a direction), 4 of its 8 NICs a node.
func TestPCIePods(t *testing.T) {
	for _, c := range []struct {
		text      string
		gpu       string
		gpus      int
		memory    int64
		intra     float64 // bytes/s a direction
		inter     float64 // bytes/s a GPU
		nics      int
		provWords string
	}{
		{"pcie-a100:2,per-node=4", "a100-pcie", 8, 80 << 30, 25e9, 100e9 / 8 * 0.94 / 4, 1, "modelled"},
		{"pcie-h100:1", "h100-pcie", 8, 80 << 30, 50e9, 100e9 / 8 * 0.94 / 8, 1, "H100 PCIe"},
		{"pcie-l40:1,per-node=10", "l40", 10, 48e9, 25e9, 100e9 / 8 * 0.94 / 10, 1, "modelled"},
		{"pcie-l40s:1,per-node=16", "l40s", 16, 48e9, 25e9, 100e9 / 8 * 0.94 / 16, 1, "modelled"},
		{"pcie-l4:1,per-node=6", "l4", 6, 24e9, 25e9, 100e9 / 8 * 0.94 / 6, 1, "modelled"},
		{"pcie-a30:3", "a30", 24, 24 << 30, 25e9, 100e9 / 8 * 0.94 / 8, 1, "modelled"},
		{"dgx-a100-40gb:4,per-node=4", "a100-40gb", 16, 40 << 30, 300e9, 200e9 / 8 * 0.94 * 4 / 4, 4, "modelled"},
	} {
		p, err := ParsePod(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		intra, _ := p.Intra()
		inter, _ := p.Inter()
		for _, f := range []struct {
			what      string
			got, want float64
		}{
			{"GPUs", float64(p.GPUs()), float64(c.gpus)},
			{"memory", float64(p.Hardware.Memory), float64(c.memory)},
			{"intra", intra, c.intra},
			{"inter", inter, c.inter},
			{"NICs", float64(p.NICs), float64(c.nics)},
		} {
			if math.Abs(f.got-f.want) > 1e-9*f.want {
				t.Errorf("%s: %s = %g, want %g", c.text, f.what, f.got, f.want)
			}
		}
		if p.Hardware.Name != c.gpu || !strings.Contains(p.Kernels.Provenance, c.provWords) {
			t.Errorf("%s: GPU %q (%s), want %q (%q)", c.text, p.Hardware.Name, p.Kernels.Provenance, c.gpu, c.provWords)
		}
	}
	for gpu, fp8 := range map[string]float64{"pcie-l40s:1": 733e12, "pcie-l4:1": 242.5e12, "pcie-a30:1": 0} {
		if p, _ := ParsePod(gpu); p.Kernels.FP8Peak != fp8 {
			t.Errorf("%s FP8 peak %g, want %g (the datasheet's dense)", gpu, p.Kernels.FP8Peak, fp8)
		}
	}
	if _, err := ParsePod("pcie-l40s:1,per-node=17"); err == nil || !strings.Contains(err.Error(), "at most the node's 16") {
		t.Errorf("per-node=17 of a 16-slot server: %v, want refused", err)
	}
	if _, err := ParsePod("dgx-a100-40gb:1,per-node=10"); err == nil || !strings.Contains(err.Error(), "at most the node's 8") {
		t.Errorf("per-node=10 of a DGX: %v, want refused", err)
	}
}

// TestH100PCIeKernels: the H100 PCIe's kernels are the SXM's measured
// ones at the ratio of the datasheets' dense BF16 peaks, 756.5 / 989.4 =
// 0.76461: cuDNN's forward attention rate at head dimension 64, 469.7
// TFLOP/s on the SXM, is 359.14 on the card; its GEMMs keep the SXM's
// measured fraction (0.756) of the card's own peak; its FP8 peak is the
// card's 1,513 TFLOP/s; its clock held at the card's 350 W.
func TestH100PCIeKernels(t *testing.T) {
	k := h100PCIeKernels()
	sxm, _ := roofline.Preset("h100")
	if len(k.Attention) == 0 || k.Attention[0].Backend != "cudnn" {
		t.Fatalf("attention %v, want the SXM's cuDNN first", k.Attention)
	}
	for _, f := range []struct {
		what      string
		got, want float64
	}{
		{"cudnn fwd d64", k.Attention[0].Fwd.Rates[0], 469.7e12 * 756.5 / 989.4},
		{"GEMM fraction", k.GEMM, 0.756},
		{"FP8 peak", k.FP8Peak, 1513e12},
		{"SXM untouched", kernels.H100.Attention[0].Fwd.Rates[0], 469.7e12},
		{"SXM preset", sxm.FP16Tensor, 989.4e12},
	} {
		if math.Abs(f.got-f.want) > 1e-6*f.want {
			t.Errorf("%s = %g, want %g", f.what, f.got, f.want)
		}
	}
	if k.Held == nil || k.Held.TDPW != 350 || k.Held.BurstMHz != 1755 || k.IntraBus != 0 {
		t.Errorf("held %v, intra bus %g: want the card's 350 W clock (TestHeldPCIe) and no NVLink bus", k.Held, k.IntraBus)
	}
}

// TestHeldPCIe: the clock each PCIe card holds at its datasheet's limit
// (pcie.go's heldPCIe figures: HeldClock.Carried), worked by hand; the
// compute-bound slowdown is 0.6326 x burst/f + 0.3674:
//   - pcie-h100: 1,343.939 MHz (TestCarriedByHand), 1.193489;
//   - pcie-a100: the A100 SXM's 1,410 MHz at 400 W (rest 75.5/700 x 400
//     = 43.143 W) carried to 300 W on the same 108 SMs: the ratio 300/400
//     = 0.75 (the same idle share on both), cube root 0.908560, 1,281.070
//     MHz, 0.6326 x 1410/1281.070 + 0.3674 = 1.063666;
//   - pcie-a30: 56 SMs at 165 W (rest 17.796 W): (147.204/56) /
//     (356.857/108) = 0.795536, root 0.926588, 1,306.489 MHz, against its
//     1,440 MHz burst 1.064646;
//   - pcie-l40s, -l40, -l4 by tensor width (the H100 SXM's 132 x 4,096
//     dense FP16 FLOPs a clock, 624.5 W above rest at 1,612.5 MHz):
//     L40S 142 x 1,024 at 350 W, (312.25/145,408) / (624.5/540,672) =
//     1.859155, root 1.229623, 1,982.767 MHz, 1.161832 against 2,490;
//     L40 142 x 512 at 300 W, 3.187123, root 1.471633, 2,373.009 MHz,
//     1.031188; L4 58 x 1,024 at 72 W (rest 7.766 W), 0.936355, root
//     0.978318, 1,577.538 MHz, 1.185449 against 2,040;
//   - dgx-a100 keeps its burst rates (no held clock): 0 MHz, 1.
func TestHeldPCIe(t *testing.T) {
	for _, c := range []struct {
		pod           string
		watts         float64
		mhz, slowdown float64
	}{
		{"pcie-h100:1", 350, 1343.939, 1.193489},
		{"pcie-a100:1", 300, 1281.070, 1.063666},
		{"pcie-a30:1", 165, 1306.489, 1.064646},
		{"pcie-l40s:1", 350, 1982.767, 1.161832},
		{"pcie-l40:1", 300, 2373.009, 1.031188},
		{"pcie-l4:1", 72, 1577.538, 1.185449},
		{"dgx-a100:1", 400, 0, 1},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatalf("%s: %v", c.pod, err)
		}
		f, s := p.HeldClock()
		if p.PowerLimit != c.watts || math.Abs(f-c.mhz) > 1e-3 || math.Abs(s-c.slowdown) > 1e-6 {
			t.Errorf("%s: %g W, %.4f MHz, slowdown %.7f; by hand %g W, %.3f MHz, %.6f", c.pod, p.PowerLimit, f, s, c.watts, c.mhz, c.slowdown)
		}
	}
}

// TestPCIeLanes: pcie-lanes=N puts each card on a link of N lanes, the
// x16 rate's N/16. Worked by hand: pcie-h100:1,pcie-lanes=8 (Lenovo's
// SR675 V3, "PCIe 5.0x8") reaches the node's other cards at 50 x 8/16 =
// 25 GB/s a direction; a ring all-gather of 1 GB over its 8 cards takes
// 7/8 x 1e9 / 25e9 + 7 x 12 us = 35.084 ms (35 ms + seven PCIe
// latencies), twice the x16 link's 17.584 ms in bandwidth; pcie-a100 at
// x4: 25 x 4/16 = 6.25 GB/s. Refused, one line each: a width not a power
// of two up to 16, and an NVLink pod (its collectives do not run on
// PCIe).
func TestPCIeLanes(t *testing.T) {
	for _, c := range []struct {
		text  string
		intra float64
		ag    float64 // s, all-gather of 1 GB over the node's 8 cards
	}{
		{"pcie-h100:1", 50e9, 7.0/8*1e9/50e9 + 7*12e-6},
		{"pcie-h100:1,pcie-lanes=8", 25e9, 0.035084},
		{"pcie-h100:1,pcie-lanes=16", 50e9, 0.017584},
		{"pcie-a100:1,pcie-lanes=4", 6.25e9, 7.0/8*1e9/6.25e9 + 7*15e-6},
	} {
		p, err := ParsePod(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		intra, _ := p.Intra()
		ag, _ := p.Collective(roofline.AllGather, Group{PerNode: 8, Nodes: 1}, 1e9)
		if math.Abs(intra-c.intra) > 1e-9*c.intra || math.Abs(ag-c.ag) > 1e-9*c.ag {
			t.Errorf("%s: intra %g, all-gather %g s; want %g, %g", c.text, intra, ag, c.intra, c.ag)
		}
	}
	for text, words := range map[string]string{
		"pcie-h100:1,pcie-lanes=3":  "1, 2, 4, 8 or 16 lanes",
		"pcie-h100:1,pcie-lanes=32": "1, 2, 4, 8 or 16 lanes",
		"dgx-h100:1,pcie-lanes=8":   "over NVLink",
	} {
		if _, err := ParsePod(text); err == nil || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", text, err, words)
		}
	}
}
