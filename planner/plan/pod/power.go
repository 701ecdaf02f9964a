package pod

import (
	"fmt"
	"math"
	"strconv"
)

// hold prices the pod's compute at the clock its GPUs hold under its
// power limit (HeldClock): its hardware's ComputeSlowdown, which lengthens
// every op's FLOPs (the roofline's compute roof lowered, its memory roof
// where it was), and fused attention's measured rate term likewise
// (coster.attention). No limit (PowerLimit 0) or no held measurement of
// its GPU (Kernels.Held nil): the kernels at their burst rates, as they
// were timed.
func (p *Pod) hold() {
	_, slow := p.HeldClock()
	p.Hardware.ComputeSlowdown = 0
	if slow != 1 {
		p.Hardware.ComputeSlowdown = slow
	}
}

// AtBurst is p with its kernels at their burst rates (no power limit
// modelled): what short timings on a rested GPU measure (layerbench's
// blocks, kernelbench's kernels), which a prediction is checked against
// at the same clock.
func (p Pod) AtBurst() Pod {
	p.PowerLimit, p.Hardware.ComputeSlowdown = 0, 0
	return p
}

// HeldClock is the SM clock (MHz) the pod's GPUs hold through a step
// under its power limit, and how many times longer a compute-bound
// kernel takes at it than at its burst clock: 0 and 1 where the limit is
// not modelled (no limit, or no held measurement of its GPU).
func (p *Pod) HeldClock() (mhz, slowdown float64) {
	h := p.Kernels.Held
	if h == nil || p.PowerLimit <= 0 {
		return 0, 1
	}
	f := h.Clock(p.PowerLimit)
	return f, h.Slowdown(f)
}

// setPower reads power=W (the GPUs' power limit in watts) or power=off
// (the kernels at their burst clock).
func (p *Pod) setPower(v string) error {
	if v == "off" {
		p.PowerLimit = 0
		return nil
	}
	w, err := strconv.ParseFloat(v, 64)
	if err != nil || !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("power=%s: want the GPUs' power limit in watts above 0, or off", v)
	}
	if h := p.Kernels.Held; h != nil && w <= h.IdleW {
		return fmt.Errorf("power=%s: at or below the %g W its GPU draws at rest", v, h.IdleW)
	}
	p.PowerLimit = w
	return nil
}
