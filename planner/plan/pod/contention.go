package pod

import (
	"math/bits"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/kernels"
)

// Comm is what collectives running beside compute take from it: their
// time (seconds), their thread blocks (CTAs, each holding one SM for as
// long as the collective runs) weighted by that time, and the HBM bytes
// they read and write on one GPU. Comms run one after another add
// (Plus); Share is the SMs and bandwidth they hold on average.
type Comm struct {
	Time, ctaTime, hbm float64
}

// Plus is c then d, one after the other beside the same compute.
func (c Comm) Plus(d Comm) Comm {
	return Comm{c.Time + d.Time, c.ctaTime + d.ctaTime, c.hbm + d.hbm}
}

// Share is the CTAs c holds on average over its time and the HBM
// bandwidth its traffic takes, bytes/s (0, 0 for no time).
func (c Comm) Share() (ctas, hbm float64) {
	if c.Time <= 0 {
		return 0, 0
	}
	return c.ctaTime / c.Time, c.hbm / c.Time
}

// Window is a span of compute a collective runs beside: its time, and
// of it the kernels bound by the SMs' arithmetic (Compute: their time
// scales with the SMs they get) and the part that runs at no SM's or
// HBM's rate (Idle: the GPU waiting on its host, or exposed
// communication of its own). The rest is bound by HBM bandwidth (and
// launches): Memory.
type Window struct {
	Busy, Compute, Idle float64
}

// Memory is w's time bound by HBM bandwidth: what is neither Compute nor
// Idle.
func (w Window) Memory() float64 { return max(0, w.Busy-w.Compute-w.Idle) }

// Scale is w with every part times k.
func (w Window) Scale(k float64) Window { return Window{w.Busy * k, w.Compute * k, w.Idle * k} }

// Plus is w and v one after the other.
func (w Window) Plus(v Window) Window {
	return Window{w.Busy + v.Busy, w.Compute + v.Compute, w.Idle + v.Idle}
}

// hbmPerByte is how many bytes of its own HBM a GPU reads and writes for
// each byte collective k moves over its links, from the ring algorithms
// NCCL runs (one a step, over NVLink or a NIC by GPUDirect RDMA): an
// all-gather writes each byte it receives and reads each byte it sends
// (2); a reduce-scatter also reads its own contribution to add to what
// arrives (3); an all-reduce is a reduce-scatter then an all-gather of as
// many bytes each, 5 over the 2 of its busbw; an all-to-all writes what
// it receives and reads what it sends (2).
func hbmPerByte(k roofline.Collective) float64 {
	switch k {
	case roofline.ReduceScatter:
		return 3
	case roofline.AllReduce:
		return 2.5
	}
	return 2
}

// moved is the bytes a GPU sends (as many it receives) in collective k of
// bytes over n GPUs: (n-1)/n of them, twice for an all-reduce (NCCL's
// busbw times the time).
func moved(k roofline.Collective, n int, bytes float64) float64 {
	m := float64(n-1) / float64(n) * bytes
	if k == roofline.AllReduce {
		return 2 * m
	}
	return m
}

// CollCTAs is how many CTAs NCCL's kernel of a collective over group g
// runs with on GPUs of kernels k: k.CTAs within a node,
// k.CTAsAcross across nodes; an all-to-all (p2p: grouped sends
// and receives) runs on NCCL's p2p channels, the collective channels
// rounded up to a power of two (NCCL 2.30.7 src/graph/paths.cc,
// ncclTopoComputeP2pChannels: p2pnChannels = pow2Up(min(nChannels,
// NCCL_MAX_P2P_NCHANNELS))).
func CollCTAs(k kernels.Node, g Group, p2p bool) int {
	n := k.CTAs
	if g.Nodes > 1 {
		n = k.CTAsAcross
	}
	if p2p && n > 1 {
		n = 1 << bits.Len(uint(n-1))
	}
	return n
}

// BesideComm is collective k of bytes over g, taking t seconds, as a
// Comm: its CTAs (CollCTAs) and its HBM traffic (hbmPerByte of what it
// moves).
func (p *Pod) BesideComm(k roofline.Collective, g Group, bytes, t float64) Comm {
	if t <= 0 || g.Size() <= 1 {
		return Comm{}
	}
	return Comm{Time: t, ctaTime: float64(CollCTAs(p.Kernels, g, false)) * t, hbm: hbmPerByte(k) * moved(k, g.Size(), bytes)}
}

// ExchangeComm is an all-to-all over g running t seconds (the experts'
// token exchanges) as a Comm: on sms SMs where its kernels say how many
// they take (DeepEP's), else on NCCL's p2p channels (CollCTAs), moving
// bytes at the rate of g's slowest link (Intra within a node, Inter
// across nodes) the whole time, each byte sent read from HBM and each
// received written to it.
func (p *Pod) ExchangeComm(g Group, t float64, sms int) Comm {
	if t <= 0 || g.Size() <= 1 {
		return Comm{}
	}
	bw, _ := p.Intra()
	if g.Nodes > 1 {
		bw, _ = p.Inter()
	}
	ctas := CollCTAs(p.Kernels, g, true)
	if sms > 0 {
		ctas = sms
	}
	return Comm{Time: t, ctaTime: float64(ctas) * t, hbm: 2 * bw * t}
}

// StateComm is StateCollective's k of bytes over g as a Comm.
func (p *Pod) StateComm(k roofline.Collective, g Group, bytes float64) Comm {
	return p.BesideComm(k, g, bytes, p.StateCollective(k, g, bytes))
}

// Rates is how fast compute runs beside a collective holding ctas SMs
// and taking hbm bytes/s of HBM bandwidth, against alone: an SM-bound
// kernel at the SMs left to it (a GEMM's or fused attention's CTA needs
// most of an SM's shared memory and registers, so none shares an SM with
// an NCCL CTA of up to 640 threads: NCCL 2.30.7 src/include/device.h,
// NCCL_MAX_NTHREADS), an HBM-bound one at the bandwidth left to it of
// what the memory delivers a streaming kernel alone (the hardware's
// elementwise efficiency of its peak), at least a tenth.
func (p *Pod) Rates(ctas, hbm float64) (sm, mem float64) {
	sm, mem = 1, 1
	if n := float64(p.Kernels.SMs); n > 0 && ctas > 0 {
		sm = max(n-ctas, 1) / n
	}
	if bw := p.Hardware.MemBandwidth * p.Hardware.MemEff[graph.ClassElementwise]; bw > 0 && hbm > 0 {
		mem = max(1-hbm/bw, 0.1)
	}
	return sm, mem
}

// BesideIn is what collectives c add to window w of compute they run
// beside: the part of them the window does not hide, or the time the
// compute loses while they run, whichever is longer. While c runs, w's
// SM-bound kernels run at Rates' sm, its HBM-bound ones at its mem and
// its idle part as it is, in the window's proportions: the compute does
// r of its work a second, r = w.Busy / (Compute/sm + Memory/mem + Idle).
// Over c's time it does c.Time r, and the rest after c ends, so the two
// end at max(c.Time, w.Busy + c.Time (1 - r)).
// A pod without CTAs (Kernels.CTAs 0) charges its measured average
// slowdown (Beside).
func (p *Pod) BesideIn(c Comm, w Window) float64 {
	if c.Time <= 0 {
		return 0
	}
	if p.Kernels.Serial || p.Kernels.CTAs <= 0 || w.Busy <= 0 {
		return p.Beside(c.Time, w.Busy)
	}
	sm, mem := p.Rates(c.Share())
	r := w.Busy / (w.Compute/sm + w.Memory()/mem + w.Idle)
	return max(c.Time-w.Busy, c.Time*(1-r))
}

// CopyComm is a memory-bound kernel on a side stream taking t seconds and
// reading and writing bytes of HBM as a Comm (FSDP2's copies beside the
// compute stream): its traffic taken from the compute beside it, its
// thread blocks left out (a copy's CTAs finish in microseconds and
// release their SMs to the compute's waiting ones).
func CopyComm(t, bytes float64) Comm {
	if t <= 0 {
		return Comm{}
	}
	return Comm{Time: t, hbm: bytes}
}
