package kernels

import (
	"math"
	"testing"
)

// TestHeldClockByHand: the power model and the slowdown with H100Held's
// figures (HeldMHz 1,612.5 at TDP 700 W, IdleW 75.5, exponent 3, Share
// 0.6326, BurstMHz 1,980), worked by hand:
//   - at 700 W, the measured limit, the measured clock: 1,612.5 MHz, and
//     a compute-bound kernel 0.6326 x 1980/1612.5 + 0.3674 = 0.6326 x
//     1.227907 + 0.3674 = 1.144174 times its burst time;
//   - at 500 W: (500 - 75.5) / (700 - 75.5) = 424.5 / 624.5 = 0.679744,
//     its cube root 0.879255, so 1,612.5 x 0.879255 = 1,417.80 MHz, and
//     0.6326 x 1980/1417.80 + 0.3674 = 0.6326 x 1.396530 + 0.3674 =
//     1.250845;
//   - at 1,300 W the model's clock, 1,612.5 x (1224.5/624.5)^(1/3) =
//     2,019 MHz, is above the burst clock: 1,980, no slowdown;
//   - at or below the idle power there is no clock to hold: 0.
func TestHeldClockByHand(t *testing.T) {
	for _, c := range []struct {
		watts, mhz, slowdown float64
	}{
		{700, 1612.5, 1.144174},
		{500, 1417.80, 1.250845},
		{1300, 1980, 1},
		{75.5, 0, 1},
		{0, 0, 1},
	} {
		f := H100Held.Clock(c.watts)
		if math.Abs(f-c.mhz) > 0.01 {
			t.Errorf("%g W: %.3f MHz, by hand %.2f", c.watts, f, c.mhz)
		}
		if s := H100Held.Slowdown(f); math.Abs(s-c.slowdown) > 1e-6 {
			t.Errorf("%g W: slowdown %.7f, by hand %.6f", c.watts, s, c.slowdown)
		}
	}
}

// TestBalancedByHand: the clock a step's compute holds when the limit
// binds the step's average power (HeldClock.Balanced), by hand on
// H100Held (P(f) = 75.5 + 624.5 (f/1,612.5)^3, Slowdown(f) = 0.6326 x
// 1980/f + 0.3674):
//   - compute only: Clock(700) = 1,612.5; Clock(500) = 1,417.80.
//   - 1 s of compute and idle I: at f* = 1,612.5 (1 + 1/9)^(1/3) =
//     1,670.137 MHz, P(f*) - 700 = 624.5/9 = 69.39 W, C(f*) = 1.117367 s,
//     so I = C(f*)/9 = 0.124152 s balances it: f*.
//   - the same slack from memory-bound time at memShare 0.5 (M = 2 I):
//     f*; at memShare 1 memory-bound time gives none: 1,612.5.
//   - idle as long as the compute: P(f) - 700 <= 624.5 even at 1,980
//     (P(1,980) = 75.5 + 624.5 x 1.8513 = 1,231.7 W: 531.7 over), so the
//     burst clock.
func TestBalancedByHand(t *testing.T) {
	h := H100Held
	const i = 1.1173670063311705 / 9
	for _, c := range []struct {
		name  string
		limit float64
		st    StepTime
		mem   float64
		want  float64
	}{
		{"compute only, 700 W", 700, StepTime{Compute: 1}, 0.5, 1612.5},
		{"compute only, 500 W", 500, StepTime{Compute: 1}, 0.5, 1417.80},
		{"idle I", 700, StepTime{Compute: 1, Idle: i}, 0.5, 1670.137},
		{"memory-bound 2I at half", 700, StepTime{Compute: 1, Memory: 2 * i}, 0.5, 1670.137},
		{"memory-bound at the limit", 700, StepTime{Compute: 1, Memory: 2 * i}, 1, 1612.5},
		{"idle as long as compute", 700, StepTime{Compute: 1, Idle: 1}, 0.5, 1980},
	} {
		if got := h.Balanced(c.limit, c.st, c.mem); math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s: %.3f MHz, want %.3f", c.name, got, c.want)
		}
	}
}

// TestBalancedWindowByHand: the controller's window (H100Held.WindowS
// 0.09 s) on TestBalancedByHand's numbers (f* = 1,670.137 MHz balances
// 1 s of compute with an idle I = 0.124152 s; compute at the held clock
// takes 1.144174 times its burst time):
//   - a stage whose bubble (Stretch) is longer than the window, beside 1
//     s of compute: the window that holds the most busy time holds no
//     idle (busy 1.144 s > 0.09 s), so compute alone's clock, 1,612.5
//     MHz, where the whole step's average (window unknown) gives the
//     burst clock, 1,980;
//   - short gaps (Idle) as long as the compute average with it whatever
//     the window: 1,980;
//   - a busy stretch shorter than the window beside a long bubble: with
//     compute c, the window holds busy 1.144174 c and 0.09 - 1.144174 c
//     of the bubble; that is I c (f*) at c = 0.09 / (1.144174 +
//     0.124152) = 0.0709596 s;
//   - a bubble shorter than what the window leaves: compute 0.01 s (busy
//     0.0114417 s, the window leaves 0.0785583 s) and a bubble of I x
//     0.01 = 0.00124152 s, all of it averaged: f*.
func TestBalancedWindowByHand(t *testing.T) {
	const i = 1.1173670063311705 / 9
	unknown := H100Held
	unknown.WindowS = 0
	for _, c := range []struct {
		name string
		h    HeldClock
		st   StepTime
		want float64
	}{
		{"bubble longer than the window", H100Held, StepTime{Compute: 1, Stretch: 1}, 1612.5},
		{"the same, window unknown", unknown, StepTime{Compute: 1, Stretch: 1}, 1980},
		{"short gaps as long as compute", H100Held, StepTime{Compute: 1, Idle: 1}, 1980},
		{"busy shorter than the window", H100Held, StepTime{Compute: 0.09 / (1.144174 + i), Stretch: 1}, 1670.137},
		{"bubble shorter than the window leaves", H100Held, StepTime{Compute: 0.01, Stretch: i * 0.01}, 1670.137},
	} {
		if got := c.h.Balanced(700, c.st, 0.5); math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s: %.3f MHz, want %.3f", c.name, got, c.want)
		}
	}
}

// TestCarriedByHand: H100Held carried to another card (HeldClock.
// Carried), worked by hand:
//   - the H100 PCIe (114 SMs of the SXM's 132, 350 W, burst 1,755 MHz):
//     at rest 75.5/700 x 350 = 37.75 W; each SM's power at its limit
//     (350 - 37.75)/114 = 2.738904 W against the SXM's (700 - 75.5)/132
//     = 4.731061 W, 0.578947 of it (350 x 132 / (700 x 114): the idle
//     share is the same on both), cube root 0.833450, so 1,612.5 x
//     0.833450 = 1,343.939 MHz, and a compute-bound kernel 0.6326 x
//     1755/1343.939 + 0.3674 = 1.193489 times its burst time;
//   - the same card and limit (132 units, 700 W, burst 1,980): the
//     measured clock, 1,612.5;
//   - 132 units at 1,300 W: 2,019 MHz by the curve (TestHeldClockByHand),
//     held at the 1,980 burst;
//   - no units, or no limit: no clock (0).
func TestCarriedByHand(t *testing.T) {
	for _, c := range []struct {
		units, burst, tdp, mhz, slowdown, idle float64
	}{
		{114, 1755, 350, 1343.939, 1.193489, 37.75},
		{132, 1980, 700, 1612.5, 1.144174, 75.5},
		{132, 1980, 1300, 1980, 1, 140.2143},
	} {
		h := H100Held.Carried(132, c.units, c.burst, c.tdp)
		f := h.Clock(c.tdp)
		if math.Abs(f-c.mhz) > 1e-3 || math.Abs(h.Slowdown(f)-c.slowdown) > 1e-6 || math.Abs(h.IdleW-c.idle) > 1e-4 {
			t.Errorf("%g units at %g W: %.4f MHz (slowdown %.7f, rest %.4f W), by hand %.3f (%.6f, %.4f)", c.units, c.tdp, f, h.Slowdown(f), h.IdleW, c.mhz, c.slowdown, c.idle)
		}
		if h.Exponent != 3 || h.Share != H100Held.Share || h.WindowS != H100Held.WindowS || h.BurstMHz != c.burst {
			t.Errorf("%g units: exponent %g, share %g, window %g, burst %g: want H100Held's and %g", c.units, h.Exponent, h.Share, h.WindowS, h.BurstMHz, c.burst)
		}
	}
	for _, h := range []HeldClock{H100Held.Carried(132, 0, 1755, 350), H100Held.Carried(132, 114, 1755, 0), H100Held.Carried(0, 114, 1755, 350)} {
		if f := h.Clock(350); f != 0 {
			t.Errorf("%+v: %g MHz at 350 W, want 0", h, f)
		}
	}
}
