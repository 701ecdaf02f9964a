package kernels

import (
	"math"
	"testing"
)

// TestGroupedLoopEff: Transformer Engine's grouped GEMM, one cuBLAS GEMM
// an expert over four streams, on the H100 (132 SMs, 0.935), by hand:
//   - 16 experts of 512 rows by 1,536: 4 x 6 = 24 tiles of 128 x 256
//     each, 384 in all, 3 waves as one grouped kernel (0.935 x 16 x 512
//     x 1,536 / (3 x 132 x 128 x 256) = 0.9067) but 4 rounds of 4 GEMMs
//     here: 0.935 x 12,582,912 / (4 x 4,325,376) = 0.6800;
//   - 16 of 4,096 by 1,536: 192 tiles each, 3,072 in all, 24 waves, more
//     than the 4 rounds: the grouped kernel's figure;
//   - 4 of 64 by 2,048: 16 tiles of 64 x 128 each, one wave, one round:
//     the same;
//   - 128 of 64 by 1,536 (no expert parallelism): 12 tiles each, 1,536 in
//     all, 12 waves, but 32 rounds: 0.935 x 128 x 64 x 1,536 / (32 x 132
//     x 64 x 128) = 0.3400.
//
// One stream is a GEMM at a time: 16 rounds for the first case.
func TestGroupedLoopEff(t *testing.T) {
	k := H100
	for _, c := range []struct {
		local, rows, n float64
		streams        int
		want           float64 // 0: GroupedEff's
	}{
		{16, 512, 1536, 4, 0.935 * 16 * 512 * 1536 / (4 * 132 * 128 * 256)},
		{16, 4096, 1536, 4, 0},
		{4, 64, 2048, 4, 0},
		{128, 64, 1536, 4, 0.935 * 128 * 64 * 1536 / (32 * 132 * 64 * 128)},
		{16, 512, 1536, 1, 0.935 * 16 * 512 * 1536 / (16 * 132 * 128 * 256)},
	} {
		want := c.want
		if want == 0 {
			want = k.GroupedEff(c.local, c.rows, c.n)
		}
		if got := k.GroupedLoopEff(c.local, c.rows, c.n, c.streams); math.Abs(got-want) > 1e-12 {
			t.Errorf("%g experts of %g x %g on %d streams: %.4f, want %.4f", c.local, c.rows, c.n, c.streams, got, want)
		}
	}
	if got, want := k.GroupedEff(16, 512, 1536), 0.935*16*512*1536/(3*132*128*256); math.Abs(got-want) > 1e-12 {
		t.Errorf("grouped kernel: %.4f, want %.4f", got, want)
	}
}

// TestRowTiles: an expert's expected row tiles by hand. With no spread
// ceil(rows/tm): 1,024 rows in 128s are 8, 1,035 are 9. With rows
// normal about 1,024, sd 32: P(X > j x 128) is 1 for j = 0..6, 1 - Q(4)
// for j = 7 (Q(4) = 3.167e-5), 1/2 for j = 8 (the mean), Q(4) for j = 9,
// below 1e-15 beyond: 8.5, the mean's tiles as the symmetry gives. About
// 1,035 with sd 31 (GPT-OSS's most loaded H100 rank at EP 8): 7 + (1 -
// Q(139/31)) + Q(-11/31) + Q(117/31) = 7 + (1 - 0.0000037) + 0.638645 +
// 0.0000803 = 8.638721. And a spread widens a grouped
// kernel's waves as the tiles it adds: 16 experts of 1,024 rows by
// 2,880 (12 column tiles of 256) on 132 SMs: 1,536 tiles, 12 waves,
// 0.935 x 16 x 1,024 x 2,880 / (12 x 132 x 128 x 256) = 0.8500; with sd
// 32, 16 x 8.5 x 12 = 1,632 tiles, 13 waves: 0.7846.
func TestRowTiles(t *testing.T) {
	for _, c := range []struct{ rows, sd, want float64 }{
		{1024, 0, 8},
		{1035, 0, 9},
		{1024, 32, 8.5},
		{1035, 31, 8.638721},
	} {
		if got := RowTiles(c.rows, c.sd, 128); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%g rows, sd %g: %.7f tiles, want %.7f", c.rows, c.sd, got, c.want)
		}
	}
	k := H100
	for _, c := range []struct{ sd, want float64 }{
		{0, 0.935 * 16 * 1024 * 2880 / (12 * 132 * 128 * 256)},
		{32, 0.935 * 16 * 1024 * 2880 / (13 * 132 * 128 * 256)},
	} {
		if got := k.GroupedEffSpread(16, 1024, c.sd, 2880); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("sd %g: %.4f, want %.4f", c.sd, got, c.want)
		}
	}
}
