package plan

import "testing"

// TestLoadFactor: the most loaded expert-parallel rank's tokens over the
// even share, by hand: the capacity factor where capacity routing sets
// one, else the imbalance, at least 1.
func TestLoadFactor(t *testing.T) {
	for _, c := range []struct {
		capacity, imbalance, want float64
	}{
		{0, 0, 1},
		{0, 1.3, 1.3},
		{1.25, 1.3, 1.25},
		{0, 0.8, 1},
	} {
		var pl Plan
		pl.Run.Capacity, pl.Imbalance = c.capacity, c.imbalance
		if got := pl.LoadFactor(); got != c.want {
			t.Errorf("capacity %g imbalance %g: %g, want %g", c.capacity, c.imbalance, got, c.want)
		}
	}
}

// TestGradBytes: FP32 main gradients, 4 bytes an element; 2 with
// grads=bf16.
func TestGradBytes(t *testing.T) {
	var pl Plan
	if got := pl.GradBytes(); got != 4 {
		t.Errorf("FP32 gradients: %g bytes, want 4", got)
	}
	pl.GradBF16 = true
	if got := pl.GradBytes(); got != 2 {
		t.Errorf("grads=bf16: %g bytes, want 2", got)
	}
}
