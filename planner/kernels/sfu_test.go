package kernels

import (
	"math"
	"testing"
)

// TestExpRate: exponentials a second from the BF16 peak and the per-SM
// rates of a clock. H100 989.4e12 x 16 / 4,096 = 3.8648e12
// (FlashAttention-3's 3.9 TFLOP/s); A100 312e12 x 16 / 2,048 =
// 2.4375e12 (108 x 16 x 1,410 MHz); B200 2.25e15 x 16 / 8,192 =
// 4.3945e12; GB300 2.5e15 x 32 / 8,192 = 9.7656e12.
func TestExpRate(t *testing.T) {
	for _, c := range []struct {
		name         string
		peak         float64
		mufu, tensor int
		want         float64
	}{
		{"h100", 989.4e12, MUFUHopper, TensorPerClockHopper, 3.8648e12},
		{"a100", 312e12, MUFUHopper, 2048, 2.4375e12},
		{"b200", 2250e12, MUFUBlackwell, TensorPerClockBlackwell, 4.3945e12},
		{"gb300", 2500e12, MUFUBlackwellUltra, TensorPerClockBlackwell, 9.7656e12},
	} {
		if got := ExpRate(c.peak, c.mufu, c.tensor); math.Abs(got/c.want-1) > 1e-4 {
			t.Errorf("%s: %g exponentials/s, want %g", c.name, got, c.want)
		}
	}
}

// TestExpSplit: the H100 cuDNN fit's time per score split at head
// dimensions 64 and 128 (tensor unit g = mul 4 d / 989.4e12, exponential
// unit 1 / 3.8648e12 = 2.5875e-13 s). Forward: t(64) = 256 / 469.7e12 =
// 5.4503e-13, t(128) = 512 / 663.2e12 = 7.7201e-13; a = (7.7201 -
// 5.4503) / (5.1749 - 2.5875) = 0.8773, b = (5.4503 - 0.8773 x 2.5875) /
// 2.5875 = 1.2291. Backward (mul 2.5): t(64) = 640 / 466.6e12 =
// 1.37163e-12, t(128) = 1,280 / 566.6e12 = 2.25909e-12; a = 0.88746 /
// 0.64686 = 1.3720, b = (1.37163 - 0.88746) / 0.25875 = 1.8712.
func TestExpSplit(t *testing.T) {
	for _, c := range []struct {
		name string
		r    AttentionRate
		mul  float64
		a, b float64
	}{
		{"forward", h100CuDNNAttention.Fwd, 1, 0.8773, 1.2291},
		{"backward", h100CuDNNAttention.Bwd, 2.5, 1.3720, 1.8712},
	} {
		a, b := expSplit(c.r, c.mul, h100Peak, h100Exp)
		if math.Abs(a/c.a-1) > 1e-3 || math.Abs(b/c.b-1) > 1e-3 {
			t.Errorf("%s: a %.4f, b %.4f; want %.4f, %.4f", c.name, a, b, c.a, c.b)
		}
	}
}

// TestAttentionByGPU: one attention layer's forward at head width 64
// and 128 on an H100 (measured: the fit's rates, exponentials included),
// a B200 and a GB300 (modelled: BlackwellAttention). With the split of
// TestExpSplit (a 0.8773, b 1.2291) and s the factor that takes the B200
// to 1,613 / 1.3 = 1,240.8 TFLOP/s at 128 (512 / 1,240.8e12 = 4.1264e-13
// s a score over 0.8773 x 512 / 2.25e15 + 1.2291 / 4.3945e12 = 4.7933e-13:
// s 0.86086):
//   - B200 at 64: 0.86086 x (0.8773 x 256 / 2.25e15 + 1.2291 / 4.3945e12)
//     = 3.2672e-13 s a score: 256 / 3.2672e-13 = 783.6 TFLOP/s (the
//     H100's ratio alone gave 469.7 x 1.8709 = 878.8);
//   - GB300 (2.5e15, 9.7656e12 exponentials a second) at 64: 0.86086 x
//     (0.8983e-13 + 1.2586e-13) = 1.8568e-13: 1,378.7 TFLOP/s; at 128
//     0.86086 x (1.7967e-13 + 1.2586e-13) = 2.6302e-13: 1,946.6.
//
// The layer: 32 heads of 4,096 tokens, causal, F = 32 x 4,096^2 x 2 d
// (the causal half of 4 d a score): 6.8719e10 FLOPs at 64, 1.3744e11 at
// 128; its time F / R + T0 (11.62 us; no per-element or tail terms in
// this call), H100 at 64: 6.8719e10 / 469.7e12 + 11.62e-6 = 157.92 us.
func TestAttentionByGPU(t *testing.T) {
	h100 := &h100CuDNNAttention
	b200 := BlackwellAttention(2250e12, 148, ExpRate(2250e12, MUFUBlackwell, TensorPerClockBlackwell))
	gb300 := BlackwellAttention(2500e12, 160, ExpRate(2500e12, MUFUBlackwellUltra, TensorPerClockBlackwell))
	for _, c := range []struct {
		gpu  string
		k    *Attention
		d    int
		rate float64 // forward FLOP/s
		us   float64 // the layer's forward, microseconds
	}{
		{"h100", h100, 64, 469.7e12, 157.92},
		{"h100", h100, 128, 663.2e12, 218.86},
		{"b200", b200, 64, 783.6e12, 99.32},
		{"b200", b200, 128, 1240.8e12, 122.39},
		{"gb300", gb300, 64, 1378.7e12, 61.46},
		{"gb300", gb300, 128, 1946.6e12, 82.23},
	} {
		f := 32 * 4096.0 * 4096 * 2 * float64(c.d)
		got := c.k.Fwd.Time(AttentionCall{Flops: f, HeadDim: c.d})
		if r := c.k.Fwd.Rate(c.d); math.Abs(r/c.rate-1) > 5e-4 || math.Abs(got*1e6/c.us-1) > 5e-4 {
			t.Errorf("%s at %d: %.1f TFLOP/s, %.2f us; want %.1f, %.2f", c.gpu, c.d, r/1e12, got*1e6, c.rate/1e12, c.us)
		}
	}
}
