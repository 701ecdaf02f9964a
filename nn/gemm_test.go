package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func naiveGemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range k {
				var av, bv float64
				if tA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = beta*c[i*ldc+j] + s
		}
	}
}

func randSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64()*2 - 1
	}
	return s
}

func TestGemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := [][3]int{{1, 1, 1}, {6, 16, 3}, {7, 17, 5}, {13, 25, 300}, {100, 300, 40}, {97, 257, 513}, {5, 3, 0}, {200, 31, 7}}
	for _, sz := range sizes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, beta := range []float64{0, 1} {
					m, n, k := sz[0], sz[1], sz[2]
					lda, ldb, ldc := k+2, n+3, n+1
					if tA {
						lda = m + 2
					}
					if tB {
						ldb = k + 3
					}
					rowsA, rowsB := m, k
					if tA {
						rowsA = k
					}
					if tB {
						rowsB = n
					}
					a := randSlice(r, max(rowsA*lda, 1))
					b := randSlice(r, max(rowsB*ldb, 1))
					c := randSlice(r, m*ldc)
					want := append([]float64(nil), c...)
					naiveGemm(tA, tB, m, n, k, a, lda, b, ldb, beta, want, ldc)
					name := fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/beta=%v", m, n, k, tA, tB, beta)
					t.Run(name, func(t *testing.T) {
						c64 := append([]float64(nil), c...)
						Gemm(tA, tB, m, n, k, a, lda, b, ldb, beta, c64, ldc)
						c32 := Convert[float32](c)
						GemmSerial(tA, tB, m, n, k, Convert[float32](a), lda, Convert[float32](b), ldb, float32(beta), c32, ldc)
						c32p := Convert[float32](c)
						Gemm(tA, tB, m, n, k, Convert[float32](a), lda, Convert[float32](b), ldb, float32(beta), c32p, ldc)
						for i := range want {
							if math.Abs(c64[i]-want[i]) > 1e-9*float64(k+1) {
								t.Fatalf("float64 c[%d] = %v, want %v", i, c64[i], want[i])
							}
							if math.Abs(float64(c32[i])-want[i]) > 1e-5*float64(k+1) {
								t.Fatalf("float32 c[%d] = %v, want %v", i, c32[i], want[i])
							}
							if c32p[i] != c32[i] {
								t.Fatalf("parallel float32 c[%d] = %v, serial %v", i, c32p[i], c32[i])
							}
						}
					})
				}
			}
		}
	}
}

func BenchmarkSgemm(b *testing.B) {
	for _, sz := range [][3]int{{84000, 384, 128}, {84000, 128, 256}, {128, 384, 84000}, {64, 128, 25}} {
		m, n, k := sz[0], sz[1], sz[2]
		r := rand.New(rand.NewPCG(1, 2))
		a := Convert[float32](randSlice(r, m*k))
		bb := Convert[float32](randSlice(r, k*n))
		c := make([]float32, m*n)
		tA := m == 128
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			lda := k
			if tA {
				lda = m
			}
			for b.Loop() {
				Gemm(tA, false, m, n, k, a, lda, bb, n, 0, c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}
