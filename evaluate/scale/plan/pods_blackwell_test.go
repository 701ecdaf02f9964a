package plan

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// TestBlackwellPods: each H200 and Blackwell pod preset as its sources
// state it (pods_blackwell.go), worked by hand: GPUs = nodes x the NVLink
// domain's GPUs, a host's GPUs (4 a compute tray on the NVL72 racks),
// NICs and their line rate, the power limit, the FP8 peak the cost model
// prices fp8= at (the hardware's dense FP8: 4,500 TF on B200, 5,000 on
// GB200's and GB300's GPUs, 4,500 on B300, the H100's 1,978.9 on H200), NVLink's bus
// bandwidth (NVLink 5's 900 GB/s x 362/450, NCCL's measured share on
// NVLink 4: 724 GB/s) and a compute-bound kernel's time at the stated
// limit over its burst (the H100's shape carried: 0.6326 x 1980/1612.5 +
// 0.3674 = 1.14417).
func TestBlackwellPods(t *testing.T) {
	for _, c := range []struct {
		text                             string
		gpus, perNode, host, nics        int
		nicBytes, power, fp8, intra, mem float64
	}{
		{"dgx-h200:2", 16, 8, 8, 8, 50e9, 700, 1978.9e12, 362e9, 141e9},
		{"dgx-b200:4", 32, 8, 8, 8, 50e9, 1000, 4500e12, 724e9, 180e9},
		{"dgx-b300:1", 8, 8, 8, 8, 100e9, 1100, 4500e12, 724e9, 270e9},
		{"gb200-nvl72:1", 72, 72, 4, 72, 50e9, 1200, 5000e12, 724e9, 186e9},
		{"gb300-nvl72:2", 144, 72, 4, 72, 100e9, 1400, 5000e12, 724e9, 279e9},
	} {
		p, err := ParsePod(c.text)
		if err != nil {
			t.Fatal(err)
		}
		bw, _ := p.Intra()
		if p.GPUs() != c.gpus || p.PerNode != c.perNode || p.HostGPUs() != c.host || p.NICs != c.nics ||
			p.NICBandwidth != c.nicBytes || p.PowerLimit != c.power || p.Kernels.FP8Peak != c.fp8 ||
			!near(bw, c.intra) || float64(p.Hardware.Memory) != c.mem {
			t.Errorf("%s: %d GPUs, %d a node, %d a host, %d NICs of %g B/s, %g W, FP8 %g, NVLink bus %g, memory %d",
				c.text, p.GPUs(), p.PerNode, p.HostGPUs(), p.NICs, p.NICBandwidth, p.PowerLimit, p.Kernels.FP8Peak, bw, p.Hardware.Memory)
		}
		if _, slow := p.HeldClock(); !within(slow, 1.14417, 1e-5) {
			t.Errorf("%s: compute-bound slowdown at %g W = %g, want 1.14417", c.text, p.PowerLimit, slow)
		}
		if h, _ := roofline.Preset(p.Hardware.Name); p.Kernels.FP8Peak != h.FP8Tensor {
			t.Errorf("%s: kernels' FP8 peak %g, its hardware's %g", c.text, p.Kernels.FP8Peak, h.FP8Tensor)
		}
	}
	// A pod of fewer GPUs than a rack: a host's 4 where they make whole
	// hosts, else the GPUs themselves.
	for _, c := range []struct{ gpus, host int }{{8, 4}, {2, 2}, {144, 4}} {
		if p, err := PodOf("gb200-nvl72", c.gpus); err != nil || p.HostGPUs() != c.host {
			t.Errorf("gb200-nvl72 for %d GPUs: %d a host (%v), want %d", c.gpus, p.HostGPUs(), err, c.host)
		}
	}
}

// TestNVL72GroupsOnNVLink: with tensor parallelism 8, the data-parallel
// group of 9 sits in one NVL72 rack (72 / 8 = 9 ranks a domain) and its
// all-gather of 1 GB runs on NVLink: 8/9 x 1e9 / 724e9 + 8 x 6 us =
// 1.27575 ms; on nine DGX B200s the same group has one rank a node and
// crosses the NICs: 8/9 x 1e9 / 47e9 (a GPU's 50 GB/s NIC at the 47
// reached) + 8 x 10 us = 18.9925 ms.
func TestNVL72GroupsOnNVLink(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=4096,batch=36")
	s, err := ParseStrategy("tp=8,pp=1,dp=9,sp=on,distopt=on")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pod  string
		dp   Group
		want float64
	}{
		{"gb200-nvl72:1", Group{PerNode: 9, Nodes: 1}, 1.275747e-3},
		{"dgx-b200:9", Group{PerNode: 1, Nodes: 9}, 18.99253e-3},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		_, dp := pl.Groups(p, 0)
		if dp != c.dp {
			t.Errorf("%s: data-parallel group %+v, want %+v", c.pod, dp, c.dp)
		}
		if got, _ := p.Collective(roofline.AllGather, dp, 1e9); !within(got, c.want, 1e-6) {
			t.Errorf("%s: all-gather of 1 GB over %+v: %g s, want %g", c.pod, dp, got, c.want)
		}
	}
}

// TestBlackwellFP8Peak: an fp8= plan's GEMMs on a Blackwell pod run at
// the hardware's FP8 peak over its BF16 peak, forward and backward, with
// either scaling: 4,500 / 2,250 = 2 on B200 (no measured FP8 ratio
// carried); the H200 keeps the H100's measured 1.850 / 1.766.
func TestBlackwellFP8Peak(t *testing.T) {
	for _, c := range []struct {
		pod, recipe string
		fwd, bwd    float64
	}{
		{"dgx-b200", FP8Current, 2, 2},
		{"dgx-b200", FP8Blockwise, 2, 2},
		{"gb300-nvl72", FP8Current, 2, 2},
		{"dgx-h200", FP8Current, 1.850, 1.766},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		fwd, bwd := p.Kernels.FP8Speedups(c.recipe == FP8Blockwise, p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16))
		if !near(fwd, c.fwd) || !near(bwd, c.bwd) {
			t.Errorf("%s fp8=%s: %g / %g, want %g / %g", c.pod, c.recipe, fwd, bwd, c.fwd, c.bwd)
		}
	}
}

// near reports whether got is want to 1e-9 (relative above 1).
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// within is whether got is want to rel of want.
func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }
