package mechanisms

import (
	"math"
	"testing"
)

// TestNormalMaxMean: the expected largest of n standard normals against
// Harter's 1961 table (Biometrika 48, "Expected values of normal order
// statistics"), to its 5 places: 0.56419 (2, which is 1/sqrt(pi)),
// 1.02938 (4), 1.42360 (8), 1.76599 (16), 2.06967 (32); 64, beyond
// the values quoted here, 2.34373 by the same integral in 200,000 steps
// (a check apart from the 4,800 NormalMaxMean takes); 0 for one.
func TestNormalMaxMean(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{1, 0}, {2, 0.56419}, {4, 1.02938}, {8, 1.42360}, {16, 1.76599}, {32, 2.06967}, {64, 2.34373}} {
		if got := NormalMaxMean(c.n); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("n %d: %.6f, want %.5f", c.n, got, c.want)
		}
	}
}

// TestLoadOf: the most loaded rank's copies over the mean, by hand.
//   - Qwen3-30B-A3B at EP 8, MBS 1 of 4,096 tokens (N = 32,768 tokens in
//     the group, k = 8 of E = 128, 16 experts a rank): v = 8 x 1/8 x 7/8
//     x 120/127 = 0.826772; sd = sqrt(32,768 x 0.826772) = 164.595; mean
//     32,768 x 8/8 = 32,768; sqrt(8/7) = 1.069045, NormalMaxMean(8) =
//     1.423600: 1 + 1.069045 x 1.4236 x 164.595/32,768 = 1.0076446.
//   - GPT-OSS 120B at EP 64, MBS 4 (N = 16,384 x 64 = 1,048,576, k = 4
//     of 128, 2 a rank): v = 4 x 1/64 x 63/64 x 124/127 = 0.0600702; sd =
//     sqrt(1,048,576 x 0.0600702) = 250.97; mean 65,536; sqrt(64/63) =
//     1.007905, NormalMaxMean(64) = 2.343733: 1 + 1.007905 x 2.343733 x
//     250.97/65,536 = 1.0090464.
//   - One rank, no token, E not a multiple of the ranks: 1.
func TestLoadOf(t *testing.T) {
	for _, c := range []struct {
		N       float64
		E, k, n int
		want    float64
	}{
		{32768, 128, 8, 8, 1 + 1.069045*1.4236*164.595/32768},
		{1048576, 128, 4, 64, 1 + 1.007905*2.343733*250.97/65536},
		{32768, 128, 8, 1, 1},
		{0, 128, 8, 8, 1},
		{32768, 100, 8, 8, 1},
	} {
		if got := LoadOf(c.N, c.E, c.k, c.n); math.Abs(got-c.want) > 2e-6 {
			t.Errorf("N %g, %d of %d on %d ranks: %.7f, want %.7f", c.N, c.k, c.E, c.n, got, c.want)
		}
	}
}
