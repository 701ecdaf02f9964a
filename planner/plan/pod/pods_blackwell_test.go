package pod

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// TestBlackwellPods: each H200 and Blackwell pod preset as its sources
// state it (pods_blackwell.go), worked by hand: GPUs = nodes x the NVLink
// domain's GPUs, a host's GPUs (4 a compute tray on the NVL72 racks),
// NICs and their line rate, the power limit, the FP8 peak the cost model
// prices fp8= at (the hardware's dense FP8: 4,500 TF on B200, 5,000 on
// GB200's and GB300's GPUs, 4,500 on B300, the H100's 1,978.9 on H200), NVLink's bus
// bandwidth (NVLink 5's 900 GB/s x 362/450, NCCL's measured share on
// NVLink 4: 724 GB/s) and a compute-bound kernel's time at the stated
// limit over its burst (smHeld: 0.6326 x 1980 / f + 0.3674 at the clock
// f its limit allows; the H200 the H100's measured 1,612.5 MHz, 1.14417;
// the Blackwell pods in TestSMHeld).
func TestBlackwellPods(t *testing.T) {
	for _, c := range []struct {
		text                             string
		gpus, perNode, host, nics        int
		nicBytes, power, fp8, intra, mem float64
		slow                             float64
	}{
		{"dgx-h200:2", 16, 8, 8, 8, 50e9, 700, 1978.9e12, 362e9, 141e9, 1.14417},
		{"dgx-b200:4", 32, 8, 8, 8, 50e9, 1000, 4500e12, 724e9, 180e9, 1.14417},
		{"dgx-b300:1", 8, 8, 8, 8, 100e9, 1100, 4500e12, 724e9, 270e9, 1.13689},
		{"gb200-nvl72:1", 72, 72, 4, 72, 50e9, 1200, 5000e12, 724e9, 186e9, 1.09353},
		{"gb300-nvl72:2", 144, 72, 4, 72, 100e9, 1400, 5000e12, 724e9, 279e9, 1.07202},
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
		if _, slow := p.HeldClock(); !within(slow, c.slow, 1e-5) {
			t.Errorf("%s: compute-bound slowdown at %g W = %g, want %g", c.text, p.PowerLimit, slow, c.slow)
		}
		if h, _ := roofline.Preset(p.Hardware.Name); p.Kernels.FP8Peak != h.FP8Tensor {
			t.Errorf("%s: kernels' FP8 peak %g, its hardware's %g", c.text, p.Kernels.FP8Peak, h.FP8Tensor)
		}
	}
	// The host that issues the kernels: the DGX's x86 Xeon, the H100's
	// measured one (kernels.H100.Host), on DGX H200, B200 and B300; a
	// Grace CPU on the NVL72 racks (kernels.Host.OnGrace: Issue 14.04 us
	// x 37.08 / 13.48 = 38.62 us).
	for _, c := range []struct {
		pod   string
		issue float64
	}{{"dgx-h200:1", 14.04e-6}, {"dgx-b200:1", 14.04e-6}, {"dgx-b300:1", 14.04e-6}, {"gb200-nvl72:1", 38.6204e-6}, {"gb300-nvl72:1", 38.6204e-6}} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		if !within(p.Kernels.Host.Issue, c.issue, 1e-5) || p.Kernels.Host.Sync != kernels.H100.Host.Sync {
			t.Errorf("%s: host issue %g, sync %g; want %g, the H100's %g", c.pod, p.Kernels.Host.Issue, p.Kernels.Host.Sync, c.issue, kernels.H100.Host.Sync)
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

// near reports whether got is want to 1e-9 (relative above 1).
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// within is whether got is want to rel of want.
func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestSMHeld: a Blackwell GPU's held clock on the B200's power curve an
// SM, worked by hand. The B200 rests at 75.5 / 700 x 1,000 = 107.857 W and
// holds 1,612.5 MHz at 1,000 W: (1,000 - 107.857) / 148 = 6.02799 W an SM
// above rest. GB200 (148 SMs, 1,200 W): 1,092.143 / 148 = 7.37934, cube
// root of 7.37934 / 6.02799 = 1.22418 is 1.06978: 1,724.97 MHz, a
// compute-bound kernel 0.6326 x 1,980 / 1,724.97 + 0.3674 = 1.09353x its
// burst time. B300 (160, 1,100 W): 992.143 / 160 = 6.20089, ratio
// 1.02868, root 1.00947: 1,627.77 MHz, 1.13689x. GB300 (160, 1,400 W):
// 1,292.143 / 160 = 8.07589, ratio 1.33973, root 1.10241: 1,777.63 MHz,
// 1.07202x. A GB200 limited to 1,000 W holds the B200's clock; at 3,000 W
// the curve passes the 1,980 MHz burst and stops there. smPeak: 2,250 TF
// on 148 SMs, 2,250 x 160 / 148 = 2,432.43 TF on 160.
func TestSMHeld(t *testing.T) {
	for _, c := range []struct {
		sms            int
		tdp, mhz, slow float64
	}{
		{148, 1000, 1612.5, 1.14417},
		{148, 1200, 1724.97, 1.09353},
		{160, 1100, 1627.77, 1.13689},
		{160, 1400, 1777.63, 1.07202},
	} {
		h := smHeld(c.sms, c.tdp)
		if f := h.Clock(c.tdp); !within(f, c.mhz, 1e-5) || !within(h.Slowdown(f), c.slow, 1e-5) || !within(h.IdleW, 107.857, 1e-5) {
			t.Errorf("%d SMs at %g W: %g MHz (slowdown %g, rest %g W), want %g (%g, 107.857)", c.sms, c.tdp, f, h.Slowdown(f), h.IdleW, c.mhz, c.slow)
		}
	}
	if f := smHeld(148, 1200).Clock(1000); !within(f, 1612.5, 1e-9) {
		t.Errorf("GB200 at 1,000 W: %g MHz, want the B200's 1,612.5", f)
	}
	if h := smHeld(148, 3000); h.HeldMHz != 1980 {
		t.Errorf("148 SMs at 3,000 W: %g MHz, want the 1,980 burst", h.HeldMHz)
	}
	if !within(smPeak(148), 2250e12, 1e-12) || !within(smPeak(160), 2432.43e12, 2e-6) {
		t.Errorf("smPeak: %g on 148 SMs, %g on 160; want 2,250 and 2,432.43 TF", smPeak(148), smPeak(160))
	}
}
