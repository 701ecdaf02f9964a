package nn

import (
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Gemm computes C = op(A) op(B) + beta C for row-major matrices, where
// op(X) is X or its transpose (tA, tB), op(A) is m x k, op(B) is k x n and
// beta is 0 or 1. lda, ldb and ldc are the row strides of A, B and C as
// stored. It uses all workers on large products.
func Gemm[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm(tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc, true)
}

// GemmSerial is Gemm on the calling goroutine only, for use inside
// ParallelFor.
func GemmSerial[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm(tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc, false)
}

func gemm[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, par bool) {
	if m == 0 || n == 0 {
		return
	}
	if beta != 0 && beta != 1 {
		panic("nn: Gemm beta must be 0 or 1")
	}
	switch a := any(a).(type) {
	case []float32:
		b, c := any(b).([]float32), any(c).([]float32)
		if k == 0 {
			if beta == 0 {
				zeroTile(c, ldc, 0, m, 0, n)
			}
			return
		}
		if haveAsm {
			sgemm(tA, tB, m, n, k, a, lda, b, ldb, float32(beta), c, ldc, par)
			return
		}
		gonum.Implementation{}.Sgemm(trans(tA), trans(tB), m, n, k, 1, a, max(lda, 1), b, max(ldb, 1), float32(beta), c, max(ldc, 1))
	case []float64:
		b, c := any(b).([]float64), any(c).([]float64)
		if k == 0 {
			if beta == 0 {
				zeroTile(c, ldc, 0, m, 0, n)
			}
			return
		}
		gonum.Implementation{}.Dgemm(trans(tA), trans(tB), m, n, k, 1, a, max(lda, 1), b, max(ldb, 1), float64(beta), c, max(ldc, 1))
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func zeroTile[T Float](c []T, ldc, i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		clear(c[i*ldc+j0 : i*ldc+j1])
	}
}

// Blocking of the float32 product: a tile of C (mc x nc) is computed by one
// worker over all of k in chunks of kc; within it, 6 x 16 micro-tiles run
// on the AVX2/FMA kernel from packed panels.
const (
	mr = 6
	nr = 16
	mc = 16 * mr // 96
	nc = 16 * nr // 256
	kc = 256
)

type gemmScratch struct {
	a [mr * kc]float32
	b [kc * nc]float32
	c [mr * nr]float32
}

var scratchPool = sync.Pool{New: func() any { return new(gemmScratch) }}

func sgemm(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, par bool) {
	tm := (m + mc - 1) / mc
	if tB && tm > 2 {
		// Many row tiles would each pack the transposed B again: transpose
		// it once instead and read it in place.
		bt := GetScratch[float32](k * n)
		for j := range n {
			src := b[j*ldb : j*ldb+k]
			for p, v := range src {
				bt[p*n+j] = v
			}
		}
		sgemm(tA, false, m, n, k, a, lda, bt, n, beta, c, ldc, par)
		PutScratch(bt)
		return
	}
	tn := (n + nc - 1) / nc
	tiles := tm * tn
	w := 1
	if par && m*n*k >= 1<<16 {
		w = min(Workers(), tiles)
	}
	run := func(t int, s *gemmScratch) {
		i0 := (t / tn) * mc
		j0 := (t % tn) * nc
		sgemmTile(tA, tB, i0, min(i0+mc, m), j0, min(j0+nc, n), k, a, lda, b, ldb, beta, c, ldc, s)
	}
	if w <= 1 {
		s := scratchPool.Get().(*gemmScratch)
		for t := range tiles {
			run(t, s)
		}
		scratchPool.Put(s)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(w)
	for range w {
		go func() {
			defer wg.Done()
			s := scratchPool.Get().(*gemmScratch)
			defer scratchPool.Put(s)
			for {
				t := int(next.Add(1) - 1)
				if t >= tiles {
					return
				}
				run(t, s)
			}
		}()
	}
	wg.Wait()
}

func sgemmTile(tA, tB bool, i0, i1, j0, j1, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, s *gemmScratch) {
	width := j1 - j0
	panels := (width + nr - 1) / nr
	for p0 := 0; p0 < k; p0 += kc {
		kk := min(kc, k-p0)
		acc := 0
		if p0 > 0 || beta != 0 {
			acc = 1
		}
		// B: read in place when it is not transposed and the panel is
		// full; otherwise from packed panels.
		direct := !tB
		switch {
		case tB:
			packB(tB, b, ldb, p0, kk, j0, width, panels, s.b[:])
		case width%nr != 0: // only the last, partial panel is packed
			q := panels - 1
			packB(false, b, ldb, p0, kk, j0+q*nr, width-q*nr, 1, s.b[q*kk*nr:])
		}
		for i := i0; i < i1; i += mr {
			rows := min(mr, i1-i)
			var ap *float32
			var rs, cs int
			switch {
			case rows == mr && !tA:
				ap, rs, cs = &a[i*lda+p0], lda, 1
			case rows == mr && tA:
				ap, rs, cs = &a[p0*lda+i], 1, lda
			default:
				packA(tA, a, lda, i, rows, p0, kk, s.a[:])
				ap, rs, cs = &s.a[0], 1, mr
			}
			for q := range panels {
				j := j0 + q*nr
				cols := min(nr, j1-j)
				bp, bld := &s.b[q*kk*nr], nr
				if direct && cols == nr {
					bp, bld = &b[p0*ldb+j], ldb
				}
				if rows == mr && cols == nr {
					kern6x16(kk, ap, rs, cs, bp, bld, &c[i*ldc+j], ldc, acc)
					continue
				}
				kern6x16(kk, ap, rs, cs, bp, bld, &s.c[0], nr, 0)
				for r := range rows {
					dst := c[(i+r)*ldc+j : (i+r)*ldc+j+cols]
					src := s.c[r*nr : r*nr+cols]
					if acc == 0 {
						copy(dst, src)
						continue
					}
					for jj := range dst {
						dst[jj] += src[jj]
					}
				}
			}
		}
	}
}

// packA writes A[i:i+rows, p0:p0+kk] as dst[p*mr + r], zero-padding rows.
func packA(tA bool, a []float32, lda, i, rows, p0, kk int, dst []float32) {
	dst = dst[:kk*mr]
	if rows < mr {
		clear(dst)
	}
	if !tA {
		for r := range rows {
			src := a[(i+r)*lda+p0 : (i+r)*lda+p0+kk]
			for p, v := range src {
				dst[p*mr+r] = v
			}
		}
		return
	}
	for p := range kk {
		src := a[(p0+p)*lda+i : (p0+p)*lda+i+rows]
		copy(dst[p*mr:p*mr+rows], src)
	}
}

// packB writes B[p0:p0+kk, j0:j0+width] as panels of nr columns:
// dst[q*kk*nr + p*nr + jj], zero-padding the last panel.
func packB(tB bool, b []float32, ldb, p0, kk, j0, width, panels int, dst []float32) {
	for q := range panels {
		cols := min(nr, width-q*nr)
		d := dst[q*kk*nr : (q+1)*kk*nr]
		jq := j0 + q*nr
		if !tB {
			if cols == nr {
				for p := range kk {
					copy(d[p*nr:p*nr+nr], b[(p0+p)*ldb+jq:(p0+p)*ldb+jq+nr])
				}
				continue
			}
			for p := range kk { // a short panel: a loop beats memmove calls
				row := d[p*nr : p*nr+nr]
				src := b[(p0+p)*ldb+jq : (p0+p)*ldb+jq+cols]
				j := 0
				for ; j < len(src); j++ {
					row[j] = src[j]
				}
				for ; j < nr; j++ {
					row[j] = 0
				}
			}
			continue
		}
		if cols < nr {
			clear(d)
		}
		for jj := range cols {
			src := b[(jq+jj)*ldb+p0 : (jq+jj)*ldb+p0+kk]
			for p, v := range src {
				d[p*nr+jj] = v
			}
		}
	}
}
