package pod

import (
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/kernels"
)

// TestInstinctPods: each AMD Instinct pod preset as its sources state it
// (instinct.go), worked by hand: 8 GPUs a node and a host, 8 NICs of 400
// Gb/s (50 GB/s), the TBP (750, 1,000, 1,400 W), the FP8 peak fp8= is
// priced at (2,614.9 TF on CDNA 3, 5,033.2 on the MI355X), the memory,
// the GEMMs' share of the BF16 peak (hipBLASLt's 8,192 GEMM: 785.30 /
// 1,307.4 = 0.60066 on CDNA 3, 1,521.25 / 2,516.6 = 0.60449 on CDNA 4),
// and RCCL over the mesh at 48 of a link's 64 GB/s: 7 x 48 = 336 GB/s
// for the 8-GPU ring, 1 x 48 for a pair, 3 x 48 = 144 for 4 GPUs; on the
// MI355X 76.8 x 0.75 = 57.6 a link, 403.2 for 8; the compute at the
// clock each board holds (1,447 / 1,207 = 1.19884x on the MI300X).
func TestInstinctPods(t *testing.T) {
	for _, c := range []struct {
		text                                         string
		gpus                                         int
		power, fp8, mem, gemm, ring, pair, quad, bw4 float64
		slow                                         float64
	}{
		{"mi300x:1", 8, 750, 2614.9e12, 192e9, 0.600661, 336e9, 48e9, 144e9, 5.3e12, 1.19884},
		{"mi325x:2", 16, 1000, 2614.9e12, 256e9, 0.600661, 336e9, 48e9, 144e9, 6.0e12, 1},
		{"mi355x:1", 8, 1400, 5033.2e12, 288e9, 0.604488, 403.2e9, 57.6e9, 172.8e9, 8.0e12, 1},
	} {
		p, err := ParsePod(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if p.GPUs() != c.gpus || p.PerNode != 8 || p.HostGPUs() != 8 || p.NICs != 8 || p.NICBandwidth != 50e9 ||
			p.PowerLimit != c.power || p.Kernels.FP8Peak != c.fp8 || float64(p.Hardware.Memory) != c.mem ||
			p.Hardware.MemBandwidth != c.bw4 || !p.Kernels.ROCm {
			t.Errorf("%s: %d GPUs, %d a node, %d a host, %d NICs of %g B/s, %g W, FP8 %g, memory %d at %g, ROCm %v",
				c.text, p.GPUs(), p.PerNode, p.HostGPUs(), p.NICs, p.NICBandwidth, p.PowerLimit, p.Kernels.FP8Peak,
				p.Hardware.Memory, p.Hardware.MemBandwidth, p.Kernels.ROCm)
		}
		if g := p.Hardware.ComputeEff[graph.ClassMatMul]; !within(g, c.gemm, 1e-5) || !within(p.Kernels.GEMM, c.gemm, 1e-5) {
			t.Errorf("%s: GEMM share %g (kernels %g), want %g", c.text, g, p.Kernels.GEMM, c.gemm)
		}
		for _, n := range []struct {
			gpus int
			want float64
		}{{8, c.ring}, {2, c.pair}, {4, c.quad}} {
			if bw, lat := p.IntraFor(n.gpus); !near(bw, n.want) || lat != 6e-6 {
				t.Errorf("%s: %d GPUs of a node at %g B/s (%g s), want %g", c.text, n.gpus, bw, lat, n.want)
			}
		}
		if h, _ := roofline.Preset(p.Hardware.Name); p.Kernels.FP8Peak != h.FP8Tensor {
			t.Errorf("%s: kernels' FP8 peak %g, its hardware's %g", c.text, p.Kernels.FP8Peak, h.FP8Tensor)
		}
		// The hosts: AMD EPYC, the H100's measured x86 issue times assumed.
		if p.Kernels.Host != kernels.H100.Host || p.Kernels.Host.Issue != 14.04e-6 {
			t.Errorf("%s: host %+v, want the H100's (issue 14.04 us)", c.text, p.Kernels.Host)
		}
		// The held clock at the board's limit (kernels.InstinctHeld): the
		// MI300X's 1,207 MHz against the MI325X's 1,447 its rates stand
		// at, 1.19884x; the MI325X's and the MI355X's (none held) 1.
		if _, slow := p.HeldClock(); !within(slow, c.slow, 1e-5) {
			t.Errorf("%s: compute slowdown %g at %g W, want %g", c.text, slow, p.PowerLimit, c.slow)
		}
	}
	// An NVSwitch pod keeps one bus bandwidth whatever the group: NCCL's
	// 362 GB/s on DGX H100 for 2 GPUs as for 8.
	if p, _ := ParsePod("dgx-h100:1"); p.Kernels.MeshLink != 0 {
		t.Errorf("dgx-h100: mesh link %g, want 0 (NVSwitch)", p.Kernels.MeshLink)
	} else if a, _ := p.IntraFor(2); a != 362e9 {
		t.Errorf("dgx-h100: a pair at %g B/s, want 362e9", a)
	}
}

// TestInstinctCollectives: one collective of each kind on an MI300X pod,
// worked by hand (S = 1 GB, the link latency 6 us, the NIC's 10 us):
//   - all-gather over the node's 8 GPUs: a ring on 7 links of 48 GB/s,
//     7/8 x 1e9 / 336e9 + 7 x 6e-6 = 2.64617 ms;
//   - over 2 GPUs (one link): 1/2 x 1e9 / 48e9 + 6e-6 = 10.42267 ms, where
//     an NVSwitch node at the same 336 GB/s would take 1.494 ms;
//   - over 2 nodes of 8: 2.64617 ms in the node, then each GPU's 125 MB
//     on its NIC at 47 of 50 GB/s (the H100's share): 1/2 x 125e6 / 47e9
//   - 10e-6 = 1.33979 ms; 3.98596 ms;
//   - a send between two GPUs of a node: one link, 1e9 / 48e9 + 6e-6 =
//     20.8393 ms.
func TestInstinctCollectives(t *testing.T) {
	p, err := ParsePod("mi300x:2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  float64
		want float64
	}{
		{"all-gather over 8", first(p.Collective(roofline.AllGather, Group{PerNode: 8, Nodes: 1}, 1e9)), 2.6461667e-3},
		{"all-gather over 2", first(p.Collective(roofline.AllGather, Group{PerNode: 2, Nodes: 1}, 1e9)), 10.4226667e-3},
		{"all-gather over 2 x 8", first(p.Collective(roofline.AllGather, Group{PerNode: 8, Nodes: 2}, 1e9)), 2.6461667e-3 + 1.3397872e-3},
		{"send in a node", p.SendTime(true, 1e9), 1e9/48e9 + 6e-6},
	} {
		if !within(c.got, c.want, 1e-6) {
			t.Errorf("mi300x: %s = %g s, want %g", c.what, c.got, c.want)
		}
	}
}

func first(t float64, _ roofline.Algorithm) float64 { return t }
