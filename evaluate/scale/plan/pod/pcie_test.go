package pod

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/kernels"
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
// card's 1,513 TFLOP/s.
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
	if k.Held != nil || k.IntraBus != 0 {
		t.Errorf("held %v, intra bus %g: want neither (the SXM's 700 W clock and NVLink are not the card's)", k.Held, k.IntraBus)
	}
}
