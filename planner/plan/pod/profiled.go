package pod

import (
	"errors"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// The profile provider (DESIGN §13): with Pod.Profile set, a layer, the
// embedding, the loss, a collective inside a node, a send between two
// GPUs of a node, the optimizer's step and the host's issue take the
// profile's figure where its shape was measured or composed from
// measured neighbours (evaluate/profile's rules, docs/profile.md), and
// the roofline's elsewhere. Without a profile nothing here runs: every
// figure is the roofline's, to the byte.

// WithProfile is pod p priced from profile pr: its collectives, sends,
// layers, optimizer and host from pr where pr has them (the host's issue
// rates replace the pod's).
func WithProfile(p Pod, pr *profile.Profile) Pod {
	p.Profile = pr
	if h := pr.Host; h != nil {
		p.Kernels.Host.Issue, p.Kernels.Host.IssueBwd = h.Issue, h.IssueBwd
	}
	return p
}

// ProfilePod is the pod of a CPU profile: one host of gpus processes
// (gloo), each with the profile's threads, the memory of one process the
// profile recorded (the host's over the processes: no CUDA context or
// NCCL buffers to keep beside it, Pod.CPU). Its roofline, for what the profile did not measure,
// is the rates the profile's own figures give: the first layer's FLOPs
// over its measured time (6 a parameter a token) as the peak of every class (FP32), the
// optimizer's bytes (AdamW: 28 a parameter) over its measured time as
// the memory's bandwidth, the host's issue as a kernel's launch.
func ProfilePod(pr *profile.Profile, gpus int) Pod {
	m := pr.Spec()
	// Its memory is the process's share of the host's.
	h := roofline.Hardware{Name: CPUHardware, Memory: pr.Device.Memory, Source: "profile: " + pr.Device.Name}
	if i := firstUnscaled(pr.Layers); i >= 0 {
		l := pr.Layers[i]
		// Forward and backward: 6 FLOPs a parameter a token (the
		// attention's scores left out).
		flops := 6 * float64(transformer.LayerParams(m)) * l.Tokens() / float64(l.TP)
		h.FP32 = flops / (l.Forward + l.Backward)
	}
	h.FP16Tensor, h.TF32, h.FP16 = h.FP32, h.FP32, h.FP32
	if o := pr.Optimizer; o != nil {
		h.MemBandwidth = 28 * float64(o.Params) / o.Seconds
	}
	if pr.Host != nil {
		h.Launch = pr.Host.Issue
	}
	for c := range graph.NumClasses {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	// Processes of one host exchange through its memory: the pod's
	// "NVLink" is the memory's bandwidth, what the profile did not time
	// of a collective is priced at it.
	h.PCIeBandwidth, h.PCIeLatency = h.MemBandwidth, 50e-6
	pod := Pod{Name: "cpu:1", Hardware: h, Nodes: 1, PerNode: max(1, gpus), NICs: 1, NICBandwidth: h.MemBandwidth, NICLatency: 50e-6}
	// gloo moves the bytes with the same cores that compute: nothing of
	// a collective overlaps the compute beside it.
	pod.Kernels.Serial = true
	pod.Kernels.FP8Peak = fp8Peak(pr, h)
	return WithProfile(pod, pr)
}

// CPUHardware is the hardware's name on a CPU profile's pod (ProfilePod).
const CPUHardware = "cpu"

// CPU is whether p is a CPU profile's pod (ProfilePod): its ranks are
// processes of one host, not GPUs. Its memory holds no CUDA context and
// no NCCL buffers, and it has no peak FLOP rate to take an MFU of: the
// profile measures layers, not the CPU's peak, and the rate the pod's
// roofline takes from its first layer is that layer's own, which the
// step's other shapes (more tokens a micro-batch) run faster than.
func (p *Pod) CPU() bool { return p.Hardware.Name == CPUHardware }

// CheckProfilePod says whether ProfilePod can model the CPU of profile
// pr: its roofline takes the compute's rate from a layer measured without
// an FP8 recipe and the memory's bandwidth from the optimizer's step. An
// incomplete profile without them (interrupted before) gave a rate of 0
// and a step of NaN seconds.
func CheckProfilePod(pr *profile.Profile) error {
	switch {
	case firstUnscaled(pr.Layers) < 0:
		return errors.New("incomplete, no layer measured: the cpu pod's model takes its compute rate from one (rerun placer profile)")
	case pr.Optimizer == nil:
		return errors.New("incomplete, no optimizer step measured: the cpu pod's model takes its memory's bandwidth from it (rerun placer profile)")
	}
	return nil
}

// firstUnscaled is the index of the first layer of ls measured without
// an FP8 recipe (-1: none).
func firstUnscaled(ls []profile.Layer) int {
	for i, l := range ls {
		if l.FP8 == "" {
			return i
		}
	}
	return -1
}

// fp8Peak is a CPU profile's pod's FP8 peak: where the profile measured
// layers under an FP8 recipe (torch._scaled_mm ran on the CPU), its
// BF16 peak (the profile's own rate: what the roofline models of an
// FP8 plan goes no faster than what it measured), so that fp8= plans
// resolve and take the measured layers; else 0, no FP8, as before.
func fp8Peak(pr *profile.Profile, h roofline.Hardware) float64 {
	for _, l := range pr.Layers {
		if l.FP8 != "" {
			return h.FP16Tensor
		}
	}
	return 0
}

// WeightBytes is the bytes of a weight as the pod's ranks gather it:
// BF16, but FP32 on the pod of an FP32 profile (a CPU's: its runs keep
// their weights in FP32 and FSDP and the distributed optimizer gather
// them so).
func (p *Pod) WeightBytes() float64 {
	if p.Profile != nil && p.Profile.DType == "fp32" {
		return 4
	}
	return 2
}

var collectiveOp = map[roofline.Collective]string{
	roofline.AllReduce: profile.AllReduce, roofline.AllGather: profile.AllGather, roofline.ReduceScatter: profile.ReduceScatter,
}

// ProfiledCollective is collective k of bytes over g from the profile:
// its in-node part measured or composed (profile.CollectiveTimeWire:
// those timed on wire first), and across nodes the pod's links' part
// (Collective's rings) added: composed. false: the profile has no
// figure for it.
func (p *Pod) ProfiledCollective(k roofline.Collective, wire string, g Group, bytes float64) (float64, profile.Source) {
	op, ok := collectiveOp[k]
	if !ok || p.Profile == nil {
		return 0, profile.Modelled
	}
	var in float64
	src := profile.Measured
	if g.PerNode > 1 {
		in, src = p.Profile.CollectiveTimeWire(op, wire, g.PerNode, bytes)
		if src == profile.Modelled {
			return 0, profile.Modelled
		}
	}
	if g.Nodes <= 1 {
		return in, src
	}
	be, le := p.Inter()
	n := float64(g.Nodes)
	across := (n-1)/n*bytes/float64(g.PerNode)/be + (n-1)*le
	if k == roofline.AllReduce {
		across *= 2
	}
	return in + across, profile.Composed
}

// ProfiledAllToAll is AllToAll from the profile (its in-node part;
// across nodes the links' part, as AllToAll takes the longer).
func (p *Pod) ProfiledAllToAll(g Group, bytes float64) (float64, profile.Source) {
	if p.Profile == nil || g.PerNode <= 1 {
		return 0, profile.Modelled
	}
	in, src := p.Profile.CollectiveTime(profile.AllToAll, g.PerNode, bytes)
	if src == profile.Modelled || g.Nodes <= 1 {
		return in, src
	}
	be, le := p.Inter()
	n := float64(g.Size())
	return max(in, bytes*(n-float64(g.PerNode))/n/be+le), profile.Composed
}
