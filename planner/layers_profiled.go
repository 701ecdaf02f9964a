package planner

import (
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// profiledLayers is a stack's layer costs (stack) with a profile's
// measurements in their place where the profile measured the plan's
// shape or composes it from measured neighbours (the profile provider,
// DESIGN §13): a decorator newCoster puts around the stack's layer costs
// on a pod with a profile (Pod.Profile). Each part (a block, the
// embedding, the output layer and loss) is the profile's where its
// lookup answers (coster.profiled: the measured kernels' time, the
// stack's communication around it), and the stack's elsewhere, to the
// byte.
type profiledLayers struct{ stack LayerCoster }

var _ LayerCoster = profiledLayers{}

// Name is the stack's layer costs' name: the profile measures them.
func (p profiledLayers) Name() string { return p.stack.Name() }

// When is the stack's layer costs' declaration: the profile stands in
// for them.
func (p profiledLayers) When() cost.When { return p.stack.When() }

// Dense is a dense block: a dense model's from the profile's layers; a
// model with experts' dense layers before them from its dense layers
// (profile.DenseLayer: the dense layer runs alike at every
// expert-parallel degree; a profile written before they were profiled
// has none and leaves them the stack's). The communication around the
// measured kernels is the stack's dense block's: a dense layer has no
// token dispatch, whose all-to-alls and host sync an MoE block adds.
func (p profiledLayers) Dense(b cost.Blocks) (fwd, bwd phase) {
	c := b.(*coster)
	pr := c.Pod.Profile
	at, inPlace := pr.Layer, pr.LayerInPlace
	if c.M.MoE() {
		at, inPlace = pr.DenseLayer, pr.DenseLayerInPlace
	}
	if f, b, ok := c.profiled(at, inPlace, p.stack.Dense); ok {
		return f, b
	}
	return p.stack.Dense(b)
}

// MoE is an MoE block from the profile's layers where the plan runs the
// experts as the profile ran them (layerAsProfiled).
func (p profiledLayers) MoE(b cost.Blocks) (fwd, bwd phase) {
	c := b.(*coster)
	if c.layerAsProfiled() {
		if f, b, ok := c.profiled(c.Pod.Profile.Layer, c.Pod.Profile.LayerInPlace, p.stack.MoE); ok {
			return f, b
		}
	}
	return p.stack.MoE(b)
}

// Embedding is the embedding from the profile's (EmbeddingAt), else the
// stack's.
func (p profiledLayers) Embedding(b cost.Blocks) (fwd, bwd phase) {
	c := b.(*coster)
	if f, b, ok := c.profiled(c.Pod.Profile.EmbeddingAt, c.Pod.Profile.EmbeddingInPlace, p.stack.Embedding); ok {
		return f, b
	}
	return p.stack.Embedding(b)
}

// Output is the output layer and loss from the profile's (LossAt), else
// the stack's.
func (p profiledLayers) Output(b cost.Blocks) (fwd, bwd phase) {
	c := b.(*coster)
	if f, b, ok := c.profiled(c.Pod.Profile.LossAt, c.Pod.Profile.LossInPlace, p.stack.Output); ok {
		return f, b
	}
	return p.stack.Output(b)
}

// layerShape is the profile's shape of c's layer.
func (c *coster) layerShape() profile.Shape {
	s := profile.Shape{TP: c.Plan.TP, SP: c.Plan.SequenceParallel && c.Plan.TP > 1, EP: c.Plan.EP, MBS: c.Plan.MBS, Seq: c.M.Seq / max(1, c.Plan.CP),
		Recompute: c.Plan.Recompute == plan.FullRecompute, Selective: c.Plan.Recompute == plan.SelectiveRecompute, FP8: c.Plan.FP8}
	if c.M.MoE() {
		s.ETP = c.Plan.ETP // a dense plan's ETP is its T: no experts to split
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
func (c *coster) profiled(at, inPlace func(profile.Shape) (float64, float64, profile.Source), part func(cost.Blocks) (phase, phase)) (fwd, bwd phase, ok bool) {
	pr := c.Pod.Profile
	// Selective recomputation is the profile's where it recomputes the
	// attention core alone (the profile's "selective"); other modules
	// (recompute-modules) are the roofline's.
	if pr == nil || c.Plan.Recompute == plan.SelectiveRecompute && c.Plan.Recomputes() != plan.RecomputeCoreAttn || c.Plan.Run.Graphs != "" && c.Plan.Run.Graphs != plan.GraphsOff {
		return phase{}, phase{}, false
	}
	mf, mb, src := at(c.layerShape())
	if src == profile.Modelled {
		return phase{}, phase{}, false
	}
	comm, alone := *c, *c
	comm.NoHost = true
	alone.NoComm, alone.NoHost = true, true
	f1, b1 := part(comm.blocks())
	f0, b0 := part(alone.blocks())
	fwd, bwd = f1, b1
	fwd.Busy += mf - f0.Busy
	bwd.Busy += mb - b0.Busy
	if pf, pb, psrc := c.inPlace(inPlace); psrc != profile.Modelled {
		// The costed communication of other kinds stays; the tensor-
		// or expert-parallel part is what the in-place timing added.
		fwd.Busy += pf - mf - f1.TPExposed - f1.EPExposed
		bwd.Busy += pb - mb - b1.TPExposed - b1.EPExposed
		fc, bc := max(0, pf-mf), max(0, pb-mb)
		ft, fe := inPlaceShares(fc, f1.TPExposed, f1.EPExposed, c.Plan.TP > 1)
		bt, be := inPlaceShares(bc, b1.TPExposed, b1.EPExposed, c.Plan.TP > 1)
		fwd.TPExposed, fwd.TPAll, bwd.TPExposed, bwd.TPAll = ft, ft, bt, bt
		fwd.EPExposed, bwd.EPExposed = fe, be
	}
	fwd.Launches, bwd.Launches, fwd.Replays, bwd.Replays, fwd.HostExposed, bwd.HostExposed = 0, 0, 0, 0, 0, 0
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
	return !c.M.MoE() || c.Plan.Imbalance <= 1 && !c.Plan.EPOverlap
}

// inPlace is lookup f's answer at c's shape where an in-place timing
// can stand for the plan's communication: tensor-parallel (tp > 1, no
// tpoverlap, which the plain PyTorch layer does not run, the group in
// one node) or, with experts, every group of the layer so (expertsInPlace).
// Else Modelled.
func (c *coster) inPlace(f func(profile.Shape) (float64, float64, profile.Source)) (fwd, bwd float64, src profile.Source) {
	if f == nil || c.NoComm {
		return 0, 0, profile.Modelled
	}
	tp := c.Plan.TP > 1 && !c.Plan.TPOverlap && c.TPG.Nodes <= 1
	if c.M.MoE() && !c.expertsInPlace(tp) || !c.M.MoE() && !tp {
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
	_, epG, _ := c.Plan.ExpertGroups(*c.Pod)
	some := c.Plan.TP > 1 || c.Plan.ETP > 1 || c.Plan.EP > 1
	return some && (c.Plan.TP == 1 || tp) && (c.Plan.EP == 1 || epG.Nodes <= 1)
}

// blockOf is the plan's block's forward and backward as the roofline
// costs it (block's): an MoE block in a model with experts (the
// profile's layer is one: its communication, the dispatcher's
// collectives, is what the roofline adds beside the measured kernels
// where no in-place timing stands for it), else a dense one.
func blockOf(b cost.Blocks) (phase, phase) {
	c := b.(*coster)
	return c.block(c.M.MoE())
}

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
func sources(m *plan.Plan, c *coster, p *plan.Pod, stageParams float64) *Sources {
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
	act := c.Tokens * float64(c.M.Hidden) * bf16
	if m.TP > 1 {
		k := roofline.AllReduce
		if m.SequenceParallel {
			k = roofline.ReduceScatter
		}
		_, s.TP = p.ProfiledCollective(k, "", c.TPG, act)
		if s.Layers != profile.Modelled {
			if _, _, src := c.inPlace(pr.LayerInPlace); src != profile.Modelled {
				s.TP = src
			}
		}
	}
	if c.M.MoE() && (m.EP > 1 || m.ETP > 1) {
		_, epG, _ := m.ExpertGroups(*p)
		_, s.EP = p.ProfiledAllToAll(epG, c.Tokens*float64(c.M.Hidden)*bf16*float64(c.M.TopK))
		if s.Layers != profile.Modelled {
			if _, _, src := c.inPlace(pr.LayerInPlace); src != profile.Modelled {
				s.EP = src
			}
		}
	}
	if D := m.DP * m.CP; D > 1 {
		k := roofline.AllReduce
		if m.DistOpt || m.FSDP {
			k = roofline.ReduceScatter
		}
		_, dpG := m.Groups(*p, 0)
		_, s.DP = p.ProfiledCollective(k, p.StateWire(), dpG, stageParams*m.GradBytes())
	}
	if m.PP > 1 {
		if m.ShareNode(*p, 0, 1) {
			_, s.Pipeline = p.Profile.CollectiveTime(profile.SendRecv, 2, act/float64(m.TP))
		} else {
			s.Pipeline = profile.Modelled
		}
	}
	opt := stageParams
	if m.DistOpt || m.FSDP {
		opt /= float64(m.DP * m.CP)
	}
	_, s.Optimizer = pr.OptimizerTime(opt)
	return s
}

// denseSource is where the dense layers before the experts come from
// (nil in a model without them): the profile's dense layers at c's
// shape where they answer, else the roofline (modelled).
func denseSource(c *coster) *profile.Source {
	if !c.M.MoE() || c.M.DenseLayers == 0 || c.Pod.Profile == nil {
		return nil
	}
	src := profile.Modelled
	if _, _, ok := c.profiled(c.Pod.Profile.DenseLayer, nil, blockOf); ok {
		_, _, src = c.Pod.Profile.DenseLayer(c.layerShape())
	}
	return &src
}
