package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// PowerLimit is a pod's power limit on its GPUs' clock (cost.StepClock):
// the step priced at the clock the compute holds when the limit binds
// its average power (kernels.HeldClock.Balanced), where the pod has a
// limit and a held measurement that slows its compute
// (plan/pod/power.go).
type PowerLimit struct{}

var _ cost.StepClock = PowerLimit{}

// Name is the mechanism's registered name.
func (PowerLimit) Name() string { return "power-limit" }

// When is the limit's declaration: a pod with a power limit its held
// clock slows the compute under.
func (PowerLimit) When() cost.When { return powerWhen }

var powerWhen = cost.When{cost.GPU("power-limited", powerBinds)}

// powerBinds is whether pod p's compute is priced at a held clock under
// its power limit.
func powerBinds(p *plan.Pod) bool {
	return p.Kernels.Held != nil && p.PowerLimit > 0 && p.Hardware.ComputeSlowdown > 1
}

// Clocked is the step at the clock the step's compute holds when the
// pod's power limit binds its average power (HeldClock.Balanced). The
// step is priced at the burst clock (r0) and at the held clock of
// compute alone (r1 = held, slowdown s1); their difference in Compute
// over s1 - 1 is the compute-bound kernels' burst time; the exposed
// data-parallel, embedding, tensor-, context- and expert-parallel and
// host waits at r1 are short idle gaps, the pipeline's bubble one long
// idle stretch (a stage's drain and the next step's fill:
// HeldClock.Balanced credits of it only what the controller's window
// holds beside the busy work); the rest of r1's step memory-bound. The
// step at the balanced clock's slowdown s is taken on the line between
// r0 and r1 (x = (s - 1)/(s1 - 1)): exact for a kernel on one side of
// its roofline's ridge throughout, and at most r1 where the clock's rise
// moves a kernel from compute- to memory-bound (the roofline's time is
// convex in s). Memory figures are r1's (the clock moves no byte).
func (PowerLimit) Clocked(p *plan.Pod, held cost.Breakdown, at func(*plan.Pod) cost.Breakdown) cost.Breakdown {
	if !powerBinds(p) {
		return held
	}
	h, s1 := p.Kernels.Held, p.Hardware.ComputeSlowdown
	r1 := held
	b := p.AtBurst()
	r0 := at(&b)
	cb := (r1.Compute - r0.Compute) / (s1 - 1)
	idle := r1.DPExposed + r1.Embedding + r1.TPExposed + r1.CPExposed + r1.EPExposed + r1.HostExposed
	mem := max(r1.Step-r1.Bubble-idle-cb*s1, 0)
	t := kernels.StepTime{Compute: max(cb, 0), Memory: mem, Idle: idle, Stretch: r1.Bubble}
	f := h.Balanced(p.PowerLimit, t, kernels.MemoryPowerShare)
	x := (h.Slowdown(f) - 1) / (s1 - 1)
	r := r1
	lerp := func(a, b float64) float64 { return a + x*(b-a) }
	r.Step, r.Compute, r.Bubble = lerp(r0.Step, r1.Step), lerp(r0.Compute, r1.Compute), lerp(r0.Bubble, r1.Bubble)
	r.DPExposed, r.Embedding, r.Optimizer = lerp(r0.DPExposed, r1.DPExposed), lerp(r0.Embedding, r1.Embedding), lerp(r0.Optimizer, r1.Optimizer)
	r.TPExposed, r.CPExposed = lerp(r0.TPExposed, r1.TPExposed), lerp(r0.CPExposed, r1.CPExposed)
	r.EPExposed, r.HostExposed = lerp(r0.EPExposed, r1.EPExposed), lerp(r0.HostExposed, r1.HostExposed)
	r.LayerForward, r.LayerBackward = lerp(r0.LayerForward, r1.LayerForward), lerp(r0.LayerBackward, r1.LayerBackward)
	r.TFLOPs *= r1.Step / r.Step
	r.MFU *= r1.Step / r.Step
	return r
}
