package kernels

import "math"

// HeldClock is what a GPU's SM clock does under a training step's held
// load: the clock its kernels were timed at (a burst: a rested GPU), the
// clock it holds at its rated power limit (measured), and the power it
// draws at rest, from which Clock takes the clock at another limit and
// Slowdown what that clock costs compute-bound kernels.
//
// The power model (Clock): a GPU at its limit draws P = Idle + k f^a,
// Idle the power that does not follow the SM clock (measured at rest:
// memory, board, leakage at the lowest voltage) and k f^a the dynamic
// power of switching, C V^2 f with the voltage tracking the clock in the
// DVFS range (V ~ f: a = 3). At the measured limit TDP the clock is
// Held, so at a limit P
//
//	f(P) = Held x ((P - Idle) / (TDP - Idle))^(1/a)
//
// no faster than Burst (a limit the load does not reach leaves the GPU at
// its burst clock). That power caps act on the SM clock and that a
// GPU's power splits into a constant part and one growing faster than
// linearly with the clock is what the H100 power-capping studies report
// (Ujeniya et al., arXiv 2604.11391: caps 200-700 W on H100 and H200
// lower the SM clock, the memory's clock held; Afzal et al., arXiv
// 2607.00819: power as a baseline and a nonlinear term in the
// frequency, on A100, H100 and H200); neither states an exponent this
// code could take, so a is the first-principles 3.
//
// What the clock costs (Slowdown): a compute-bound kernel's time is
// Share of cycles of the SM clock and the rest what does not follow it
// (the memory's latency and bandwidth: its clock stays where it is under
// the cap), so at clock f it takes Share x Burst/f + (1 - Share) of its
// burst time. Memory-bound kernels run at the memory's clock, which the
// cap leaves alone: the roofline's memory roof does not move.
type HeldClock struct {
	// BurstMHz is the SM clock the kernels' rates were timed at (short
	// timings on a rested GPU); HeldMHz the clock a transformer block
	// holds under held load at power limit TDPW (watts).
	BurstMHz, HeldMHz, TDPW float64
	// IdleW is the power at rest (watts): the part that does not follow
	// the SM clock.
	IdleW float64
	// Exponent is a in P = Idle + k f^a.
	Exponent float64
	// Share is the part of a compute-bound kernel's burst time that
	// scales with the SM clock.
	Share float64
	// WindowS is how long (seconds) the GPU's power controller averages
	// its draw over when it holds the limit (Balanced): idle stretches
	// shorter than it average with the busy work beside them, a busy
	// stretch longer than it runs at the clock its own power allows. 0:
	// not known, every idle stretch averages with the whole step.
	WindowS float64
}

// Clock is the SM clock (MHz) a GPU holds under held load at power limit
// limitW: HeldMHz at the measured limit, the power model's elsewhere, at
// most BurstMHz. limitW at or below IdleW is refused by Pod (power=);
// here it gives 0.
func (h HeldClock) Clock(limitW float64) float64 {
	if limitW <= h.IdleW || h.TDPW <= h.IdleW || h.Exponent <= 0 {
		return 0
	}
	f := h.HeldMHz * math.Pow((limitW-h.IdleW)/(h.TDPW-h.IdleW), 1/h.Exponent)
	return min(f, h.BurstMHz)
}

// Slowdown is how many times longer a compute-bound kernel runs at
// clockMHz than at its burst clock (1 at BurstMHz).
func (h HeldClock) Slowdown(clockMHz float64) float64 {
	if clockMHz <= 0 || clockMHz >= h.BurstMHz {
		return 1
	}
	return h.Share*h.BurstMHz/clockMHz + 1 - h.Share
}

// H100Held is an H100 SXM's (80 GB HBM3, 700 W), every figure but the
// exponent measured on H100s under held load with nvidia-smi beside them
// (kernelbench's sustained section: a BF16 GEMM and the Megatron rows'
// blocks run back to back, one throughput a second; nvidia-smi's SM
// clock, power and throttle reasons every 0.5 s): three machines,
// measurements/2026-11-26-h100-b (kb-sustained-1.7b.jsonl with
// smi-1.7b.csv, kb-sustained-rows.jsonl with smi-rows.csv) and
// ../shared/data/h100-sustained (sustained.jsonl, smi-sustained.csv);
// TestH100HeldMeasured recomputes each from the files:
//   - BurstMHz 1,980: the SM clock every log reads before the cap acts
//     (its highest sample on each of the three machines);
//   - HeldMHz 1,612.5 at 700 W: the median over the eight blocks held at
//     no idle time (1.7B on all three, 7.1B, 32B, 70B twice, 314B) of
//     each block's median clock from its third second on, throttled by
//     the software power cap (0x4) throughout and, on the hottest
//     machine (80 C), by thermal slowdown too (0x20); the blocks ran at
//     1,395 (314B) to 1,740 MHz (1.7B), the GEMM alone at 1,500-1,605;
//   - IdleW 75.5: the median power of the 29 samples at rest (the GPU at
//     its 345 MHz idle clock), 70.7-104.9 W;
//   - Share 0.633: the held GEMM (the 1.7B row's fc1, 4096 x 2048 x
//     8192) at 610.4, 634.9 and 644.5 TFLOP/s (medians from the third
//     second) at 1,500, 1,530 and 1,605 MHz against its burst's 742.0
//     (kb-gemm.jsonl, same image): the least-squares Share of
//     burst/held - 1 = Share x (1980/f - 1) over the three (0.674,
//     0.574, 0.648 one by one). Its time does not scale with the clock
//     alone: at Share 1 the held GEMM would be 1.24-1.32x its burst,
//     where it was 1.15-1.22x.
//
// At 700 W a compute-bound kernel takes 1.144x its burst time; the
// blocks took 1.113-1.190x theirs (314B's burst, 15.8 ms a timing, was
// itself at the held clock: 0.994), their memory-bound kernels not
// slowed (TestH100HeldBlocks).
//
// WindowS 0.09 s: the power controller's averaging window, between two
// bounds read from ../shared/data/h100-sustained (TestH100WindowBounds
// recomputes both) and taken at their geometric mean, an assumption
// within them (sqrt(0.0327 x 0.245) = 0.0896); NVIDIA documents no
// window (NVML's nvmlDeviceGetPowerUsage: on Ampere and newer the power
// it reads is "averaged over 1 sec", a reading, not the controller's).
//   - longer than 32.7 ms: the 70B block at idle share 0.5 ran batches
//     of 8 steps (32.7 ms busy, medians from the third second) between
//     sleeps as long and held 1,912 MHz, where at no idle it held 1,590:
//     a controller that capped each busy stretch alone would hold it
//     near 1,590;
//   - at most 0.245 s: the GEMM's held run started from rest (74 W) and
//     the first sample after it read 1,575 MHz with the software power
//     cap (0x4) active and 227.5 W over nvidia-smi's last second: 153.5
//     J above rest in that second; a window W averaging 700 W holds
//     (700 - 74) W x W above rest, so W <= 153.5 / 626 = 0.245 s.
var H100Held = HeldClock{BurstMHz: 1980, HeldMHz: 1612.5, TDPW: 700, IdleW: 75.5, Exponent: 3, Share: 0.6326, WindowS: 0.09}

// StepTime is where a step's time goes on its busiest GPU for the energy
// balance (HeldClock.Balanced), seconds: Compute the compute-bound
// kernels' time at the burst clock (the part the SM clock lengthens),
// Memory the memory-bound kernels' (HBM-bound: their time does not follow
// the SM clock), Idle the time the GPU waits in short gaps among its
// kernels (exposed communication, its host), Stretch the one long wait a
// step holds (a pipeline stage's fill and drain: the drain of one step
// and the fill of the next are one stretch on each stage).
type StepTime struct{ Compute, Memory, Idle, Stretch float64 }

// credited is the part of t's Stretch that averages with the busy work
// under the controller's window W (WindowS): the window that holds the
// most busy time holds the whole busy stretch B (Compute at the held
// clock Clock(limitW), the longest it runs, plus Memory and Idle) and W
// - B of the stretch, none of it where B >= W; all of it where W is
// unknown (0) or longer than the step.
func (h HeldClock) credited(limitW float64, t StepTime) float64 {
	if h.WindowS <= 0 {
		return t.Stretch
	}
	busy := t.Compute*h.Slowdown(h.Clock(limitW)) + t.Memory + t.Idle
	return min(t.Stretch, max(h.WindowS-busy, 0))
}

// Balanced is the SM clock (MHz) a step's compute-bound kernels hold
// under limitW when the limit binds the step's average power, not each
// kernel's: the highest f at most BurstMHz with
//
//	C(f) (P(f) - L) <= M (L - Pm) + I (L - IdleW)
//
// C(f) = Compute x Slowdown(f), P(f) = IdleW + (TDPW - IdleW)
// (f/HeldMHz)^Exponent the compute-bound phases' power (P(Clock(L)) = L:
// a step of compute only holds Clock(L), as before), idle phases at
// IdleW (measured at rest) and memory-bound ones at Pm = IdleW + memShare
// (L - IdleW). memShare is an assumption, 0 (memory-bound kernels draw
// what the GPU draws at rest) to 1 (as much as the limit: they give the
// compute no headroom): no sustained memory-bound measurement was made
// (measurements/2026-11-26-h100-b has GEMMs and whole blocks only). The
// left side grows with f above Clock(L), where it is 0, so the clock is
// found by bisection. The balance holds over the controller's window
// (credited): I is Idle plus the part of Stretch in the window that
// holds the step's busy stretch. TestBalancedByHand works it;
// TestH100BalancedIdle checks it against the blocks held at idle shares
// 0.1, 0.25 and 0.5; TestBalancedWindowByHand works the window.
func (h HeldClock) Balanced(limitW float64, t StepTime, memShare float64) float64 {
	lo := h.Clock(limitW)
	if lo <= 0 || t.Compute <= 0 || lo >= h.BurstMHz {
		return lo
	}
	slack := t.Memory*(1-memShare)*(limitW-h.IdleW) + (t.Idle+h.credited(limitW, t))*(limitW-h.IdleW)
	over := func(f float64) float64 {
		p := h.IdleW + (h.TDPW-h.IdleW)*math.Pow(f/h.HeldMHz, h.Exponent)
		return t.Compute*h.Slowdown(f)*(p-limitW) - slack
	}
	if over(h.BurstMHz) <= 0 {
		return h.BurstMHz
	}
	hi := h.BurstMHz
	for range 60 {
		mid := (lo + hi) / 2
		if over(mid) <= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// MemoryPowerShare is where between the power at rest (0) and the limit
// (1) a memory-bound kernel's draw is taken (HeldClock.Balanced): an
// assumption, the middle of its bounds; no sustained memory-bound run
// was measured.
const MemoryPowerShare = 0.5

// Carried is the held clock of another card of the same die (or of the
// same process, where its units are the tensor cores' width) at power
// limit tdpW, its kernels timed at burstMHz, carried from h: units is
// how many of the parts whose switching follows the SM clock it has (its
// SMs), refUnits h's. Each unit draws at a clock what one of h's draws
// (P = Idle + units k f^a, k from h's held clock at h's limit), the
// power at rest is h's share of its limit (IdleW/TDPW) of tdpW, and the
// exponent, the compute's share of the clock (Share) and the
// controller's window are h's:
//
//	f = HeldMHz x ((tdpW - idle)/units / ((TDPW - IdleW)/refUnits))^(1/a)
//
// at most burstMHz (a card whose limit its compute does not reach holds
// its burst clock). As smHeld carries the H100's shape to Blackwell
// (plan/pod/blackwell.go), with each card's own limit and burst clock.
// units, refUnits or tdpW not above 0 gives a clock of 0 (HeldClock.Clock
// refuses such a limit).
func (h HeldClock) Carried(refUnits, units, burstMHz, tdpW float64) HeldClock {
	c := HeldClock{BurstMHz: burstMHz, TDPW: tdpW, Exponent: h.Exponent, Share: h.Share, WindowS: h.WindowS}
	if refUnits <= 0 || units <= 0 || tdpW <= 0 || h.TDPW <= h.IdleW || h.Exponent <= 0 {
		return c
	}
	c.IdleW = h.IdleW / h.TDPW * tdpW
	perUnit := (tdpW - c.IdleW) / units / ((h.TDPW - h.IdleW) / refUnits)
	c.HeldMHz = min(h.HeldMHz*math.Pow(perUnit, 1/h.Exponent), burstMHz)
	return c
}
