package kernels

import (
	"math"
	"testing"
)

// TestBlockScaledSpeedups: a Node's MXFP8 and NVFP4 speedups where it has
// them, else its peak over the BF16 peak: MXFP8 at 4,500 / 2,250 = 2 and
// NVFP4 at 9,000 / 2,250 = 4 on a B200's peaks with none set; 1.8 / 1.85
// and 2.3 / 2.4 where set.
func TestBlockScaledSpeedups(t *testing.T) {
	none := Node{FP8Peak: 4500e12}
	set := Node{FP8Peak: 4500e12, MXFP8Fwd: 1.8, MXFP8Bwd: 1.85, NVFP4Fwd: 2.3, NVFP4Bwd: 2.4}
	for _, c := range []struct {
		k        Node
		fp4      bool
		fwd, bwd float64
	}{
		{none, false, 2, 2},
		{none, true, 4, 4},
		{set, false, 1.8, 1.85},
		{set, true, 2.3, 2.4},
	} {
		f, b := c.k.BlockScaledSpeedups(c.fp4, 2250e12, 9000e12)
		if f != c.fwd || b != c.bwd {
			t.Errorf("%+v fp4 %v: %g / %g, want %g / %g", c.k, c.fp4, f, b, c.fwd, c.bwd)
		}
	}
}

// TestBlackwellAttentionBackward: the modelled cuDNN kernel's backward on
// a B200 (148 SMs, 2,250 TF): the H100 fit's 566.6 TFLOP/s at head
// dimension 128 times 1,240.77 / 663.2 = 1.87088: 1,060.04 TFLOP/s; its
// Beta 2.901e-12 x 132 / 148 = 2.58738e-12 s; T0 the H100's 92.10 us.
func TestBlackwellAttentionBackward(t *testing.T) {
	b := BlackwellAttention(2250e12, 148, ExpRate(2250e12, MUFUBlackwell, TensorPerClockBlackwell)).Bwd
	if math.Abs(b.Rate(128)/1060.04e12-1) > 1e-5 || math.Abs(b.Beta/2.58738e-12-1) > 1e-5 || b.T0 != 92.10e-6 {
		t.Errorf("backward: %g FLOP/s at d 128, Beta %g, T0 %g; want 1060.04e12, 2.58738e-12, 92.10e-6", b.Rate(128), b.Beta, b.T0)
	}
}
