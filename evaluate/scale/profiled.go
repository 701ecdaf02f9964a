package scale

import (
	"errors"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
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
		flops := 6 * float64(m.LayerParams()) * l.Tokens() / float64(l.TP)
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

// weightBytes is the bytes of a weight as the pod's ranks gather it:
// BF16, but FP32 on the pod of an FP32 profile (a CPU's: its runs keep
// their weights in FP32 and FSDP and the distributed optimizer gather
// them so).
func (p *Pod) weightBytes() float64 {
	if p.Profile != nil && p.Profile.DType == "fp32" {
		return 4
	}
	return bf16
}

var collectiveOp = map[roofline.Collective]string{
	roofline.AllReduce: profile.AllReduce, roofline.AllGather: profile.AllGather, roofline.ReduceScatter: profile.ReduceScatter,
}

// profiledCollective is collective k of bytes over g from the profile:
// its in-node part measured or composed (profile.CollectiveTimeWire:
// those timed on wire first), and across nodes the pod's links' part
// (Collective's rings) added: composed. false: the profile has no
// figure for it.
func (p *Pod) profiledCollective(k roofline.Collective, wire string, g Group, bytes float64) (float64, profile.Source) {
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
	be, le := p.inter()
	n := float64(g.Nodes)
	across := (n-1)/n*bytes/float64(g.PerNode)/be + (n-1)*le
	if k == roofline.AllReduce {
		across *= 2
	}
	return in + across, profile.Composed
}

// profiledAllToAll is AllToAll from the profile (its in-node part;
// across nodes the links' part, as AllToAll takes the longer).
func (p *Pod) profiledAllToAll(g Group, bytes float64) (float64, profile.Source) {
	if p.Profile == nil || g.PerNode <= 1 {
		return 0, profile.Modelled
	}
	in, src := p.Profile.CollectiveTime(profile.AllToAll, g.PerNode, bytes)
	if src == profile.Modelled || g.Nodes <= 1 {
		return in, src
	}
	be, le := p.inter()
	n := float64(g.Size())
	return max(in, bytes*(n-float64(g.PerNode))/n/be+le), profile.Composed
}

// layerShape is the profile's shape of c's layer.
func (c *coster) layerShape() profile.Shape {
	s := profile.Shape{TP: c.pl.T, SP: c.pl.SequenceParallel && c.pl.T > 1, EP: c.pl.EP, MBS: c.pl.MBS, Seq: c.m.Seq / max(1, c.pl.C),
		Recompute: c.pl.Recompute == FullRecompute, Selective: c.pl.Recompute == SelectiveRecompute, FP8: c.pl.FP8}
	if c.m.MoE() {
		s.ETP = c.pl.ETP // a dense plan's ETP is its T: no experts to split
	}
	return s
}

// profiled is part (a layer's block, the embedding, the output layer)
// from the profile where at (its lookup) answers: the measured kernels'
// time in place of the roofline's, the part's communication as costed
// (its phase with communication less its kernels alone), no host wait
// added (the measurement holds its host). Where inPlace answers too (the
// part timed with its tensor-parallel or expert-parallel collectives in
// place, the profile's processes a group: c.inPlace), the part's time is
// that, and its tensor- or expert-parallel communication the in-place
// time less the kernels' alone (split between the tensor-parallel and
// the experts' groups as the roofline costs them: inPlaceShares). A
// model with experts is priced from its profile where the plan runs
// them as the profile's layer did: the profile's tensor, expert-tensor
// and expert-parallel degrees (the shape's lookup answers), forced
// balance, no all-to-all overlap. A plan with fp8=R takes the layers
// measured under R (the shape's FP8); where the profile has none at R
// the roofline's layer stands (Sources says modelled); the embedding and
// the loss, which no recipe covers, take their measured times either
// way. ok false: nothing measured, the
// roofline's part stands.
func (c *coster) profiled(at, inPlace func(profile.Shape) (float64, float64, profile.Source), part func(coster) (phase, phase)) (fwd, bwd phase, ok bool) {
	pr := c.pod.Profile
	// Selective recomputation is the profile's where it recomputes the
	// attention core alone (the profile's "selective"); other modules
	// (recompute-modules) are the roofline's.
	if pr == nil || c.pl.Recompute == SelectiveRecompute && c.pl.Recomputes() != RecomputeCoreAttn || c.pl.Run.Graphs != "" && c.pl.Run.Graphs != GraphsOff {
		return phase{}, phase{}, false
	}
	mf, mb, src := at(c.layerShape())
	if src == profile.Modelled {
		return phase{}, phase{}, false
	}
	comm, alone := *c, *c
	comm.noHost = true
	alone.noComm, alone.noHost = true, true
	f1, b1 := part(comm)
	f0, b0 := part(alone)
	fwd, bwd = f1, b1
	fwd.busy += mf - f0.busy
	bwd.busy += mb - b0.busy
	if pf, pb, psrc := c.inPlace(inPlace); psrc != profile.Modelled {
		// The costed communication of other kinds stays; the tensor-
		// or expert-parallel part is what the in-place timing added.
		fwd.busy += pf - mf - f1.tpExposed - f1.epExposed
		bwd.busy += pb - mb - b1.tpExposed - b1.epExposed
		fc, bc := max(0, pf-mf), max(0, pb-mb)
		ft, fe := inPlaceShares(fc, f1.tpExposed, f1.epExposed, c.pl.T > 1)
		bt, be := inPlaceShares(bc, b1.tpExposed, b1.epExposed, c.pl.T > 1)
		fwd.tpExposed, fwd.tpAll, bwd.tpExposed, bwd.tpAll = ft, ft, bt, bt
		fwd.epExposed, bwd.epExposed = fe, be
	}
	fwd.launches, bwd.launches, fwd.replays, bwd.replays, fwd.hostExposed, bwd.hostExposed = 0, 0, 0, 0, 0, 0
	return fwd, bwd, true
}

// inPlaceShares splits x, the communication an in-place timing added
// to the kernels alone, between the tensor-parallel group and the
// experts' (expert-parallel and expert-tensor) groups in the proportion
// the roofline costs them (tp, ep); where it costs neither, all of it
// to the tensor-parallel group if the plan has one, else the experts'.
func inPlaceShares(x, tp, ep float64, hasTP bool) (tpPart, epPart float64) {
	switch {
	case tp+ep > 0:
		return x * tp / (tp + ep), x * ep / (tp + ep)
	case hasTP:
		return x, 0
	}
	return 0, x
}

// layerAsProfiled is whether the profile's layer can be the plan's: a
// dense layer, or a model with experts run as the profile ran them:
// forced balance (imbalance 1), no all-to-all overlap; its tensor,
// expert-tensor and expert-parallel degrees are the lookup's to match
// (layerShape: a profile without them answers modelled).
func (c *coster) layerAsProfiled() bool {
	return !c.m.MoE() || c.pl.Imbalance <= 1 && !c.pl.EPOverlap
}

// inPlace is lookup f's answer at c's shape where an in-place timing
// can stand for the plan's communication: tensor-parallel (tp > 1, no
// tpoverlap, which the plain PyTorch layer does not run, the group in
// one node) or, with experts, every group of the layer so (expertsInPlace).
// Else Modelled.
func (c *coster) inPlace(f func(profile.Shape) (float64, float64, profile.Source)) (fwd, bwd float64, src profile.Source) {
	if f == nil || c.noComm {
		return 0, 0, profile.Modelled
	}
	tp := c.pl.T > 1 && !c.pl.TPOverlap && c.tpG.Nodes <= 1
	if c.m.MoE() && !c.expertsInPlace(tp) || !c.m.MoE() && !tp {
		return 0, 0, profile.Modelled
	}
	return f(c.layerShape())
}

// expertsInPlace is whether a layer with experts timed in place stands
// for the plan's communication: it has some (tp, etp or ep above 1),
// and each group it has is as the timing ran it: the tensor-parallel
// group as inPlace asks (tp), the expert-parallel group in one node (the
// expert-tensor group always is: resolveExperts).
func (c *coster) expertsInPlace(tp bool) bool {
	_, epG, _ := c.pl.expertGroups(*c.pod)
	some := c.pl.T > 1 || c.pl.ETP > 1 || c.pl.EP > 1
	return some && (c.pl.T == 1 || tp) && (c.pl.EP == 1 || epG.Nodes <= 1)
}

// blockOf is the plan's block's forward and backward as the roofline
// costs it (block's): an MoE block in a model with experts (the
// profile's layer is one: its communication, the dispatcher's
// collectives, is what the roofline adds beside the measured kernels
// where no in-place timing stands for it), else a dense one.
func blockOf(c coster) (phase, phase) { return c.block(c.m.MoE()) }

// Sources says where each of a plan's figures came from: measured on
// this machine (a profile), composed from measured neighbours, or
// modelled (the roofline). Nil without a profile.
type Sources struct {
	Layers    profile.Source `json:"layers"`
	Embedding profile.Source `json:"embedding"`
	Loss      profile.Source `json:"loss"`
	Optimizer profile.Source `json:"optimizer"`
	TP        profile.Source `json:"tensor_parallel,omitempty"`
	EP        profile.Source `json:"expert_parallel,omitempty"`
	DP        profile.Source `json:"data_parallel,omitempty"`
	Pipeline  profile.Source `json:"pipeline,omitempty"`
	Host      profile.Source `json:"host"`
	// DenseLayers is a model with experts' dense layers before them
	// (nil in another model): the profile's dense layers, or modelled.
	DenseLayers *profile.Source `json:"dense_layers,omitempty"`
}

// sources is where plan pl's figures on p come from (p.Profile's
// lookups at the shapes the plan costs).
func sources(m *Plan, c *coster, p *Pod, stageParams float64) *Sources {
	pr := p.Profile
	s := &Sources{Host: profile.Modelled}
	if pr.Host != nil {
		s.Host = profile.Measured
	}
	ok := func(f func(profile.Shape) (float64, float64, profile.Source)) profile.Source {
		if _, _, good := c.profiled(f, nil, blockOf); !good {
			return profile.Modelled
		}
		_, _, src := f(c.layerShape())
		return src
	}
	s.Layers, s.Embedding, s.Loss = profile.Modelled, ok(pr.EmbeddingAt), ok(pr.LossAt)
	if c.layerAsProfiled() {
		s.Layers = ok(pr.Layer)
	}
	s.DenseLayers = denseSource(c)
	act := c.tokens * float64(c.m.Hidden) * bf16
	if m.T > 1 {
		k := roofline.AllReduce
		if m.SequenceParallel {
			k = roofline.ReduceScatter
		}
		_, s.TP = p.profiledCollective(k, "", c.tpG, act)
		if s.Layers != profile.Modelled {
			if _, _, src := c.inPlace(pr.LayerInPlace); src != profile.Modelled {
				s.TP = src
			}
		}
	}
	if c.m.MoE() && (m.EP > 1 || m.ETP > 1) {
		_, epG, _ := m.expertGroups(*p)
		_, s.EP = p.profiledAllToAll(epG, c.tokens*float64(c.m.Hidden)*bf16*float64(c.m.TopK))
		if s.Layers != profile.Modelled {
			if _, _, src := c.inPlace(pr.LayerInPlace); src != profile.Modelled {
				s.EP = src
			}
		}
	}
	if D := m.D * m.C; D > 1 {
		k := roofline.AllReduce
		if m.DistOpt || m.FSDP {
			k = roofline.ReduceScatter
		}
		_, dpG := m.groups(*p, 0)
		_, s.DP = p.profiledCollective(k, p.stateWire(), dpG, stageParams*m.gradBytes())
	}
	if m.P > 1 {
		if m.shareNode(*p, 0, 1) {
			_, s.Pipeline = p.Profile.CollectiveTime(profile.SendRecv, 2, act/float64(m.T))
		} else {
			s.Pipeline = profile.Modelled
		}
	}
	opt := stageParams
	if m.DistOpt || m.FSDP {
		opt /= float64(m.D * m.C)
	}
	_, s.Optimizer = pr.OptimizerTime(opt)
	return s
}
